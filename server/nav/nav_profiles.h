// Named agent profiles of the service (--nav_profiles): FindPath requests name one (or take the
// default) and may change its fields per call.
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/nav/agent_profile.h"
#include "core/nav/nav_world.h"

namespace voxcol::server {

struct NavProfiles {
  // Every profile by name; always holds `default_name`.
  std::map<std::string, AgentProfile, std::less<>> named;
  std::string default_name = "default";

  // The profile named `name` ("" = the default one). INVALID_ARGUMENT naming `field` for an
  // unknown name (the message lists the known ones).
  absl::StatusOr<AgentProfile> Find(absl::string_view name, absl::string_view field) const;
};

// How every world of the server navigates (the --nav* flags, server/app/nav_flags.cc).
struct NavOptions {
  bool enabled = true;  // --nav: one NavWorld per world
  NavProfiles profiles;
  NavSettings settings;
  // --nav_rebuild_interval_ms: how often the background thread looks for stale tiles.
  absl::Duration rebuild_interval = absl::Milliseconds(20);
};

// Parses the --nav_profiles value: profiles separated by ';', each `name:key=value,key=value`
// with keys radius, height, max_climb, max_slope_degrees, can_jump, jump_height, can_swim (fields
// not given keep AgentProfile's defaults), e.g. "small:radius=0.3,height=1;swimmer:can_swim=true".
// A profile named "default" (AgentProfile's defaults) exists unless the spec defines it;
// `default_name` picks the one requests get without a name. INVALID_ARGUMENT naming the flag and
// the profile for malformed text, an unknown key, a bad value, a profile that fails
// ValidateAgentProfile, a repeated or malformed name, or an unknown default.
absl::StatusOr<NavProfiles> ParseNavProfiles(absl::string_view spec,
                                             absl::string_view default_name);

}  // namespace voxcol::server
