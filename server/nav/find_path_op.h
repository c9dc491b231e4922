// FindPath in the service: the request decoded and validated against the world, the server's
// profiles and limits, the core NavWorld's answer encoded, and the path metrics. Shared by the
// unary RPC and the Query batch kind (through the query kinds table) so both answer identically.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "core/nav/find_path.h"
#include "core/nav/nav_world.h"
#include "core/voxel/world.h"
#include "server/nav/nav_profiles.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

class PathWatchHub;  // path_watch.h

// What FindPath runs against in one world; `nav` null: navigation is off (--nav=false).
struct NavContext {
  NavWorld* nav = nullptr;
  const NavProfiles* profiles = nullptr;
  PathWatchHub* watches = nullptr;  // the world's path watches (WatchPaths); null with nav off
  float max_path_distance = 3000;   // --max_path_distance, world units
};

// Decodes `request` into `input`: the named profile (or the default) changed by the set fields
// of `agent`, costs, max_distance (0: the limit). INVALID_ARGUMENT naming the field (start, goal,
// profile, agent.radius, material_costs[2].cost, max_distance, ...) for anything bad.
absl::Status FindPathFromProto(const World& world, const NavContext& context,
                               const v1::FindPathRequest& request, FindPathInput* input);

// Runs FindPath at the calling thread's version and fills `response` (with that version).
// FAILED_PRECONDITION when navigation is off; INVALID_ARGUMENT as FindPathFromProto;
// DEADLINE_EXCEEDED / CANCELLED when `interrupt` stopped it; DATA_LOSS for a chunk that could not
// be loaded. Counts the answer in voxcol_nav_paths_total{status}.
absl::Status RunFindPath(const World& world, const NavContext& context,
                         const v1::FindPathRequest& request, v1::FindPathResponse* response,
                         const QueryInterrupt& interrupt);

// The server's profile `name` ("" = the default) with the set fields of `agent` over it.
// INVALID_ARGUMENT naming `profile` (unknown) or `agent.<field>`.
absl::Status DecodeAgentProfile(const NavContext& context, const std::string& name,
                                const v1::AgentProfile& agent, AgentProfile* out);

// GetNavMesh: the polygons of the box's tiles. FAILED_PRECONDITION when navigation is off;
// INVALID_ARGUMENT naming min, max, max_polygons or the profile's fields.
absl::Status RunGetNavMesh(const NavContext& context, const v1::GetNavMeshRequest& request,
                           v1::GetNavMeshResponse* response);

v1::PathStatus ToProto(PathStatus status);
v1::WaypointAction ToProto(WaypointAction action);

}  // namespace voxcol::server
