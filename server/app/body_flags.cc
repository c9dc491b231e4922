#include "server/app/body_flags.h"

#include <cstdint>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "core/bodies/body_world.h"

ABSL_FLAG(int32_t, max_bodies, 4096,
          "Live bodies per world (BodyService.UpdateBodies answers RESOURCE_EXHAUSTED past it)");
ABSL_FLAG(int32_t, max_parts_per_body, 16, "Parts (hitboxes) of one body");
ABSL_FLAG(int32_t, body_history_ticks, 60,
          "Game ticks of body poses kept per world, the latest included: how far back body "
          "queries and ValidateHit on a body may look (OUT_OF_RANGE before it)");
ABSL_FLAG(int64_t, max_body_history_mb, 64,
          "Memory of one world's body history and parts, MiB; a body's worst-case history is "
          "reserved when it is created, so creates past it answer RESOURCE_EXHAUSTED");

namespace voxcol::server {

absl::Status BodyLimitsFromFlags(BodyLimits* limits) {
  const int64_t mb = absl::GetFlag(FLAGS_max_body_history_mb);
  if (mb <= 0 || mb > (int64_t{1} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max_body_history_mb must be in 1..1048576, got ", mb));
  }
  BodyLimits l;
  l.max_bodies = absl::GetFlag(FLAGS_max_bodies);
  l.max_parts_per_body = absl::GetFlag(FLAGS_max_parts_per_body);
  l.history_ticks = absl::GetFlag(FLAGS_body_history_ticks);
  l.max_history_bytes = mb << 20;
  // CheckLimits names the core field; the flag is what the operator can change.
  struct Check {
    bool ok;
    const char* flag;
    int64_t value;
  };
  for (const Check& c :
       {Check{l.max_bodies >= 1, "--max_bodies", l.max_bodies},
        Check{l.max_parts_per_body >= 1, "--max_parts_per_body", l.max_parts_per_body},
        Check{l.history_ticks >= 1, "--body_history_ticks", l.history_ticks}}) {
    if (!c.ok) {
      return absl::InvalidArgumentError(absl::StrCat(c.flag, " must be >= 1, got ", c.value));
    }
  }
  if (absl::Status s = BodyWorld::CheckLimits(l); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("body limits: ", s.message()));
  }
  *limits = l;
  return absl::OkStatus();
}

}  // namespace voxcol::server
