#include "core/nav/agent_profile.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace voxcol {

namespace {

absl::Status Bad(const char* field, const char* rule, float value) {
  return absl::InvalidArgumentError(absl::StrFormat("%s must be %s, got %g", field, rule, value));
}

}  // namespace

absl::Status ValidateAgentProfile(const AgentProfile& p) {
  // Finite first: a NaN compares false with every bound below.
  if (!std::isfinite(p.radius) || p.radius <= 0) return Bad("radius", "> 0", p.radius);
  if (!std::isfinite(p.height) || p.height <= 0) return Bad("height", "> 0", p.height);
  if (!std::isfinite(p.max_climb) || p.max_climb < 0) return Bad("max_climb", ">= 0", p.max_climb);
  if (!std::isfinite(p.max_slope_degrees) || p.max_slope_degrees < 0 || p.max_slope_degrees >= 90) {
    return Bad("max_slope_degrees", "in [0, 90)", p.max_slope_degrees);
  }
  if (p.can_jump && (!std::isfinite(p.jump_height) || p.jump_height < p.max_climb)) {
    return Bad("jump_height", ">= max_climb when can_jump", p.jump_height);
  }
  return absl::OkStatus();
}

}  // namespace voxcol
