#include "server/nav/find_path_op.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

constexpr float kMaxMaterialCost = 1e6f;

absl::Status CheckPoint(const World& world, const char* field, bool present, const Vec3& p) {
  if (!present) return absl::InvalidArgumentError(absl::StrCat(field, " is required"));
  if (!IsFinite(p)) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be finite (no NaN or infinity)"));
  }
  if (!world.ContainsPoint(p)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " (", p.x, ", ", p.y, ", ", p.z, ") is outside the world bounds"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeAgentProfile(const NavContext& context, const std::string& name,
                                const v1::AgentProfile& a, AgentProfile* out) {
  absl::StatusOr<AgentProfile> named = context.profiles->Find(name, "profile");
  if (!named.ok()) return named.status();
  AgentProfile p = *named;
  if (a.has_radius()) p.radius = a.radius();
  if (a.has_height()) p.height = a.height();
  if (a.has_max_climb()) p.max_climb = a.max_climb();
  if (a.has_max_slope_degrees()) p.max_slope_degrees = a.max_slope_degrees();
  if (a.has_can_jump()) p.can_jump = a.can_jump();
  if (a.has_jump_height()) p.jump_height = a.jump_height();
  if (a.has_can_swim()) p.can_swim = a.can_swim();
  if (absl::Status s = ValidateAgentProfile(p); !s.ok()) {
    // The named profiles are valid (checked at start-up): the request's agent fields made it bad.
    return absl::InvalidArgumentError(absl::StrCat("agent.", s.message()));
  }
  *out = p;
  return absl::OkStatus();
}

namespace {

absl::Status DecodeCosts(const v1::FindPathRequest& request, FindPathInput* input) {
  input->material_costs.clear();
  bool seen[256] = {};
  for (int i = 0; i < request.material_costs_size(); ++i) {
    const v1::MaterialCost& c = request.material_costs(i);
    const std::string field = absl::StrCat("material_costs[", i, "]");
    if (c.material() == 0 || c.material() > 255) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".material must be in 1..255 (0 is air, which has no surface), got ",
                       c.material()));
    }
    if (seen[c.material()]) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".material ", c.material(), " is given twice"));
    }
    seen[c.material()] = true;
    if (!std::isfinite(c.cost()) || c.cost() <= 0 || c.cost() > kMaxMaterialCost) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".cost must be finite, > 0 and <= 1e6, got ", c.cost()));
    }
    input->material_costs.emplace_back(uint8_t(c.material()), c.cost());
  }
  return absl::OkStatus();
}

// voxcol_nav_paths_total{status}: one counter per PathStatus, registered on first use.
Counter* PathCounter(PathStatus status) {
  static Counter* const counters[] = {
#define VOXCOL_PATH_COUNTER(name)                                                              \
  GetServerMetrics().registry.AddCounter("voxcol_nav_paths_total",                             \
                                         "FindPath answers (unary and in batches), by status", \
                                         "status=\"" name "\"")
      VOXCOL_PATH_COUNTER("ok"),
      VOXCOL_PATH_COUNTER("no_path"),
      VOXCOL_PATH_COUNTER("start_off_mesh"),
      VOXCOL_PATH_COUNTER("goal_off_mesh"),
      VOXCOL_PATH_COUNTER("too_far"),
#undef VOXCOL_PATH_COUNTER
  };
  return counters[int(status)];
}

}  // namespace

v1::PathStatus ToProto(PathStatus status) {
  switch (status) {
    case PathStatus::kOk:
      return v1::PATH_STATUS_OK;
    case PathStatus::kNoPath:
      return v1::PATH_STATUS_NO_PATH;
    case PathStatus::kStartOffMesh:
      return v1::PATH_STATUS_START_OFF_MESH;
    case PathStatus::kGoalOffMesh:
      return v1::PATH_STATUS_GOAL_OFF_MESH;
    case PathStatus::kTooFar:
      return v1::PATH_STATUS_TOO_FAR;
  }
  return v1::PATH_STATUS_UNSPECIFIED;
}

v1::WaypointAction ToProto(WaypointAction action) {
  switch (action) {
    case WaypointAction::kWalk:
      return v1::WAYPOINT_ACTION_WALK;
    case WaypointAction::kJump:
      return v1::WAYPOINT_ACTION_JUMP;
    case WaypointAction::kSwim:
      return v1::WAYPOINT_ACTION_SWIM;
  }
  return v1::WAYPOINT_ACTION_UNSPECIFIED;
}

absl::Status FindPathFromProto(const World& world, const NavContext& context,
                               const v1::FindPathRequest& request, FindPathInput* input) {
  input->start = ToCore(request.start());
  input->goal = ToCore(request.goal());
  if (absl::Status s = CheckPoint(world, "start", request.has_start(), input->start); !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckPoint(world, "goal", request.has_goal(), input->goal); !s.ok())
    return s;
  if (absl::Status s =
          DecodeAgentProfile(context, request.profile(), request.agent(), &input->profile);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = DecodeCosts(request, input); !s.ok()) return s;
  const float d = request.max_distance();
  if (!std::isfinite(d) || d < 0 || d > context.max_path_distance) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_distance must be finite, >= 0 (0: the server's limit) and at most the "
                     "server's --max_path_distance of ",
                     context.max_path_distance, ", got ", d));
  }
  input->max_distance = d == 0 ? context.max_path_distance : d;
  return ValidateFindPath(*input);
}

absl::Status RunFindPath(const World& world, const NavContext& context,
                         const v1::FindPathRequest& request, v1::FindPathResponse* response,
                         const QueryInterrupt& interrupt) {
  if (context.nav == nullptr || context.profiles == nullptr) {
    return absl::FailedPreconditionError("navigation is off on this server (--nav=false)");
  }
  FindPathInput input;
  if (absl::Status s = FindPathFromProto(world, context, request, &input); !s.ok()) return s;
  input.interrupt = &interrupt;
  absl::StatusOr<FindPathResult> result = context.nav->FindPath(input);
  if (!result.ok()) {
    const absl::Status& s = result.status();
    // The core names the profile's fields "profile.<field>" (e.g. a radius the tile border cannot
    // hold): in the request they are agent fields, or the named profile's when it set none.
    if (absl::IsInvalidArgument(s) && absl::StartsWith(s.message(), "profile.")) {
      const std::string where = request.has_agent()
                                    ? std::string("agent.")
                                    : absl::StrCat("profile: the server's profile \"",
                                                   request.profile(), "\" (--nav_profiles) has ");
      return absl::InvalidArgumentError(absl::StrCat(where, s.message().substr(8)));
    }
    return s;
  }
  PathCounter(result->status)->Add();
  response->set_status(ToProto(result->status));
  for (const Waypoint& w : result->waypoints) {
    v1::Waypoint* out = response->add_waypoints();
    ToProto(w.position, out->mutable_position());
    out->set_action(ToProto(w.action));
  }
  response->set_length(result->length);
  response->set_version(result->version);
  response->set_tiles_built(uint32_t(result->tiles_built));
  response->set_corridor_polygons(uint32_t(result->corridor_polygons));
  return absl::OkStatus();
}

absl::Status RunGetNavMesh(const NavContext& context, const v1::GetNavMeshRequest& request,
                           v1::GetNavMeshResponse* response) {
  if (context.nav == nullptr || context.profiles == nullptr) {
    return absl::FailedPreconditionError("navigation is off on this server (--nav=false)");
  }
  const Vec3 min = ToCore(request.min()), max = ToCore(request.max());
  if (!request.has_min() || !IsFinite(min)) {
    return absl::InvalidArgumentError("min is required and must be finite");
  }
  if (!request.has_max() || !IsFinite(max)) {
    return absl::InvalidArgumentError("max is required and must be finite");
  }
  constexpr uint32_t kDefaultPolygons = 50000, kMaxPolygons = 200000;
  if (request.max_polygons() > kMaxPolygons) {
    return absl::InvalidArgumentError(absl::StrCat("max_polygons must be at most ", kMaxPolygons,
                                                   ", got ", request.max_polygons()));
  }
  AgentProfile profile;
  if (absl::Status s = DecodeAgentProfile(context, request.profile(), request.agent(), &profile);
      !s.ok()) {
    return s;
  }
  const uint32_t limit = request.max_polygons() == 0 ? kDefaultPolygons : request.max_polygons();
  absl::StatusOr<NavPolygons> polygons =
      context.nav->PolygonsIn(profile, Min(min, max), Max(min, max), limit);
  if (!polygons.ok()) return polygons.status();
  for (const NavPolygon& p : polygons->polygons) {
    v1::NavMeshPolygon* out = response->add_polygons();
    for (const Vec3& v : p.vertices) {
      out->add_vertices(v.x);
      out->add_vertices(v.y);
      out->add_vertices(v.z);
    }
    out->set_area(p.area);
  }
  response->set_version(polygons->version);
  response->set_truncated(polygons->truncated);
  return absl::OkStatus();
}

}  // namespace voxcol::server
