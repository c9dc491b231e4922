#include "server/world/nav_rebuilder.h"

#include <utility>

#include "server/telemetry/log.h"

namespace voxcol::server {

NavRebuilder::NavRebuilder(std::function<std::vector<NavHandle>()> worlds, absl::Duration interval)
    : worlds_(std::move(worlds)), interval_(interval), thread_([this] { Run(); }) {}

NavRebuilder::~NavRebuilder() {
  stop_.Notify();
  thread_.join();
}

void NavRebuilder::Run() {
  while (!stop_.WaitForNotificationWithTimeout(interval_)) {
    for (const NavHandle& nav : worlds_()) {
      if (stop_.HasBeenNotified()) return;
      if (!nav->MayHaveStaleTiles()) continue;
      absl::StatusOr<int> rebuilt = nav->RebuildStale();
      // A chunk that cannot be loaded fails the rebuild; the next path through it says so too.
      if (!rebuilt.ok()) {
        LogError("event=nav_rebuild_failed code=%s message=%s",
                 absl::StatusCodeToString(rebuilt.status().code()), rebuilt.status().message());
      }
    }
  }
}

}  // namespace voxcol::server
