// The background thread that keeps every world's navigation meshes current (issue 41): every
// --nav_rebuild_interval_ms it rebuilds, at the current version, the built tiles an edit made
// stale (NavWorld::RebuildStale), so that paths after an edit rarely pay for rebuilds. Edits
// never wait for it: their acknowledgement only marks tiles dirty (NavWorld::AfterPublish).
#pragma once

#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "core/nav/nav_world.h"

namespace voxcol::server {

class NavRebuilder {
 public:
  // Keeps a world alive while its tiles are rebuilt (a deleted world is freed afterwards).
  using NavHandle = std::shared_ptr<NavWorld>;
  // `worlds` lists the navigation of every world now; called on the rebuilder's thread.
  NavRebuilder(std::function<std::vector<NavHandle>()> worlds, absl::Duration interval);
  // Stops the thread (after the rebuild running, if any) and joins it.
  ~NavRebuilder();
  NavRebuilder(const NavRebuilder&) = delete;
  NavRebuilder& operator=(const NavRebuilder&) = delete;

 private:
  void Run();

  const std::function<std::vector<NavHandle>()> worlds_;
  const absl::Duration interval_;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace voxcol::server
