// Navigation tiles: one Recast/Detour navmesh tile per square of tile_voxels x tile_voxels voxel
// columns over the world's full height, built straight from the voxels.
//
// Voxels become heightfield spans without rasterising triangles: every vertical run of solid
// voxels (IsSolid) in a voxel column is one span, every run of water voxels (IsWater) another. A
// run's top and bottom are where the occupancy field, sampled at voxel centres as the mesher
// samples it, crosses half occupancy along the column (linear interpolation, as marching cubes
// places its vertices on vertical cell edges), so a smooth slope gives smooth heights, not a
// staircase. Each voxel column covers cells_per_voxel^2 heightfield cells. The span's area id is
// its top voxel's material (water 1, solids their material up to 61, others 62): the query filter
// prices them per material. Spans steeper than the profile's slope (the gentler one-sided height
// difference to the neighbouring cells, per axis) are not walkable. Then the usual Recast pipeline:
// ledge and clearance filters, compact heightfield, erosion by the agent radius, watershed regions,
// contours, polygons, detail mesh, and dtCreateNavMeshData.
//
// A tile reads the voxels of its square plus a border of border_voxels on every side (clipped to
// the world), so an edit within border_voxels + 1 voxels of a tile changes it (NavTileReach).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "core/geometry/vec3.h"
#include "core/nav/agent_profile.h"
#include "core/voxel/world.h"

namespace voxcol {

// How the world is cut into tiles and sampled; the same for every profile of a world.
struct NavTileConfig {
  int tile_voxels = 24;            // tile edge in voxels (X and Z), in [8, 256]
  int cells_per_voxel = 2;         // heightfield cells per voxel edge (X and Z), in [1, 4]
  int height_steps_per_voxel = 4;  // heightfield steps per voxel (Y), in [1, 16]
  int border_voxels = 3;           // voxels read around a tile on each side, in [1, 16]
};

// Checks the configuration against the world (the world's height in steps must fit Recast's 13
// bit span heights); the message names the field.
absl::Status ValidateNavTileConfig(const NavTileConfig& config, const WorldConfig& world);

// What a profile becomes in heightfield units for one world and tile configuration.
struct NavBuildParams {
  NavTileConfig tiles;
  float voxel_size = 1;
  float cell_size = 0.5f;     // world units per cell (X, Z)
  float cell_height = 0.25f;  // world units per step (Y)
  int radius_cells = 0;  // erosion; one cell more than the radius needs (see MakeNavBuildParams)
  int height_cells = 0;  // clearance, in steps
  int climb_cells = 0;   // step height, in steps
  float max_slope_degrees = 45;
  // The mesh identity of the profile: equal keys build identical tiles.
  NavMeshKey key() const {
    return {radius_cells, height_cells, climb_cells, int(max_slope_degrees * 100 + 0.5f)};
  }
};

// Build parameters of a validated profile. InvalidArgument naming `profile.radius` when the
// erosion needs more than the tile border holds (radius_cells + 3 > border cells).
absl::StatusOr<NavBuildParams> MakeNavBuildParams(const AgentProfile& profile,
                                                  const NavTileConfig& tiles, float voxel_size);

// Tile coordinates: tile (x, z) covers voxel columns [min.x + x * T, min.x + (x + 1) * T) along X
// (likewise Z), where min is the world's minimum voxel and T is tile_voxels.
struct NavTileCoord {
  int x = 0;
  int z = 0;
  bool operator==(const NavTileCoord& o) const { return x == o.x && z == o.z; }
};

// The voxel columns tile `t` covers (Y spans the world), max exclusive.
IntBox NavTileVoxels(const World& world, const NavTileConfig& config, const NavTileCoord& t);
// The voxels whose change can alter tile `t`: its columns grown by border_voxels + 1 in X and Z
// (the +1 is the slope and interpolation neighbours of the border's edge).
IntBox NavTileReach(const World& world, const NavTileConfig& config, const NavTileCoord& t);

// Detour tile data (dtCreateNavMeshData's output) and what the build found.
struct NavTileData {
  NavTileData() = default;
  NavTileData(NavTileData&& o) noexcept;
  NavTileData& operator=(NavTileData&& o) noexcept;
  ~NavTileData();
  // Gives up ownership (the caller frees it with dtFree, or hands it to dtNavMesh::addTile with
  // DT_TILE_FREE_DATA).
  unsigned char* Release();

  unsigned char* data = nullptr;  // null: the tile has no walkable polygon
  int size = 0;
  int spans = 0;     // heightfield spans added
  int polygons = 0;  // navmesh polygons
};

// Builds tile `t` from the world's voxels as of the calling thread's ReadSnapshot (the newest
// version without one). Errors: a chunk that fails to load (World::LoadChunk), INTERNAL when Recast
// fails. Thread-safe; allocates its own Recast buffers.
absl::StatusOr<NavTileData> BuildNavTile(const World& world, const NavBuildParams& params,
                                         const NavTileCoord& t);

// Area ids of the navmesh polygons: the material of the surface (see the header comment).
constexpr uint8_t kNavAreaWater = kMaterialWater;
constexpr uint8_t kNavAreaOtherSolid = 62;
constexpr uint8_t NavAreaOfMaterial(uint8_t material) {
  return material < kNavAreaOtherSolid ? material : kNavAreaOtherSolid;
}
// Polygon flags: query filters include kNavFlagSwim only for profiles that swim.
constexpr uint16_t kNavFlagWalk = 1;
constexpr uint16_t kNavFlagSwim = 2;

}  // namespace voxcol
