// Agent profiles: the size and abilities of a walking character, which decide the navigation mesh
// it moves on (radius, height, climb and slope shape the mesh; jumping and swimming decide which
// parts it may use).
#pragma once

#include <cstdint>
#include <utility>

#include "absl/status/status.h"

namespace voxcol {

// Distances in world units; the up axis is world +Y.
struct AgentProfile {
  float radius = 0.5f;  // horizontal clearance kept to walls, > 0
  float height = 2.0f;  // vertical clearance needed above the floor, > 0
  // Highest step walked up without a jump, >= 0. Recast also treats ground whose neighbouring
  // cells differ by more than this as a ledge, so slopes above atan(max_climb / (2 cell size)) are
  // not walkable whatever max_slope_degrees says: one voxel keeps 45 degrees at 2 cells per voxel.
  float max_climb = 1.0f;
  float max_slope_degrees = 45;  // steepest walkable ground, in [0, 90)
  bool can_jump = false;         // steps up to jump_height connect (waypoint action kJump)
  float jump_height = 2.0f;      // with can_jump: highest step jumped up, >= max_climb
  bool can_swim = false;         // may cross water surfaces (waypoint action kSwim)
};

// Checks every field; the message names the first bad one ("radius must be > 0, got -1").
absl::Status ValidateAgentProfile(const AgentProfile& profile);

// The step height the navmesh of `profile` connects: jump_height with can_jump, else max_climb.
inline float NavClimb(const AgentProfile& p) { return p.can_jump ? p.jump_height : p.max_climb; }

// The fields that shape a navmesh, in build units (cells): profiles with equal keys share one
// mesh. can_swim does not shape the mesh (water polygons are always built, a query filter excludes
// them).
struct NavMeshKey {
  int radius_cells = 0;
  int height_cells = 0;
  int climb_cells = 0;
  int slope_centidegrees = 0;
  bool operator==(const NavMeshKey& o) const {
    return radius_cells == o.radius_cells && height_cells == o.height_cells &&
           climb_cells == o.climb_cells && slope_centidegrees == o.slope_centidegrees;
  }
  template <typename H>
  friend H AbslHashValue(H h, const NavMeshKey& k) {
    return H::combine(std::move(h), k.radius_cells, k.height_cells, k.climb_cells,
                      k.slope_centidegrees);
  }
};

}  // namespace voxcol
