// Voxel columns to Recast spans, then the Recast pipeline of one tile (Mononen's Recast, the tiled
// build of its Sample_TileMesh, with the heightfield written directly instead of rasterised).
#include "core/nav/nav_tile_build.h"

#include <DetourAlloc.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshBuilder.h>
#include <Recast.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace voxcol {

namespace {

constexpr int kMaxSpanHeight = (1 << RC_SPAN_HEIGHT_BITS) - 1;

// ---- Voxel columns ----

enum RunClass : uint8_t { kEmpty = 0, kSolid = 1, kWater = 2 };

RunClass ClassOf(Voxel v) { return IsSolid(v) ? kSolid : (IsWater(v) ? kWater : kEmpty); }

// The occupancy field of one class at a voxel: what the mesher interpolates for solids.
float FieldOf(Voxel v, RunClass c) {
  const bool member = c == kSolid ? IsSolidMaterial(v.material) : v.material == kMaterialWater;
  return member ? float(v.occupancy) : 0.0f;
}

// Height (voxels above the world's bottom) where the field of class c crosses half occupancy
// between voxel centres y - 1 + 0.5 (value `below`) and y + 0.5 (value `above`).
float Crossing(float below, float above, int y) {
  const float half = float(kHalfOccupancy);
  return float(y) - 0.5f + (half - below) / (above - below);
}

struct Column {
  RunClass run = kEmpty;
  Voxel prev;
  float bottom = 0;
  uint8_t top_material = 0;
};

// Adds the spans of finished runs to the heightfield.
class SpanWriter {
 public:
  SpanWriter(rcContext* ctx, rcHeightfield* hf, int cells_per_voxel, int steps)
      : ctx_(ctx), hf_(hf), cpv_(cells_per_voxel), steps_(float(steps)) {}

  bool Add(int column_x, int column_z, float bottom, float top, uint8_t area) {
    const int smin = std::clamp(int(std::floor(bottom * steps_)), 0, kMaxSpanHeight - 1);
    const int smax = std::clamp(int(std::lround(top * steps_)), smin + 1, kMaxSpanHeight);
    for (int dz = 0; dz < cpv_; ++dz)
      for (int dx = 0; dx < cpv_; ++dx) {
        if (!rcAddSpan(ctx_, *hf_, column_x * cpv_ + dx, column_z * cpv_ + dz,
                       static_cast<unsigned short>(smin), static_cast<unsigned short>(smax), area,
                       1)) {
          return false;
        }
      }
    ++spans_;
    return true;
  }
  int spans() const { return spans_ * cpv_ * cpv_; }

 private:
  rcContext* ctx_;
  rcHeightfield* hf_;
  int cpv_;
  float steps_;
  int spans_ = 0;
};

// Feeds voxel `v` at height y (voxels above the world's bottom) to a column: closes the run below
// when the class changes and opens the next one.
bool Feed(Column& c, Voxel v, int y, int x, int z, SpanWriter& out) {
  const RunClass k = ClassOf(v);
  if (k != c.run) {
    if (c.run != kEmpty) {
      const float top = Crossing(FieldOf(c.prev, c.run), FieldOf(v, c.run), y);
      const uint8_t area = c.run == kWater ? kNavAreaWater : NavAreaOfMaterial(c.top_material);
      if (!out.Add(x, z, c.bottom, top, area)) return false;
    }
    if (k != kEmpty) c.bottom = y == 0 ? 0.0f : Crossing(FieldOf(c.prev, k), FieldOf(v, k), y);
    c.run = k;
  }
  if (k != kEmpty) c.top_material = v.material;
  c.prev = v;
  return true;
}

// Scans the voxel columns of `area` (world voxels, full world height) into spans. Column (0, 0)
// of the writer is voxel column `origin`.
absl::Status ScanColumns(const World& world, const IntBox& area, const Int3& origin,
                         SpanWriter& out) {
  const Int3 n = area.max - area.min;
  std::vector<Column> columns(size_t(n.x) * size_t(n.z));
  const int y0 = world.voxel_bounds().min.y;
  const IntBox chunks{ChunkOf(area.min), ChunkOf(area.max - Int3{1, 1, 1}) + Int3{1, 1, 1}};
  auto column = [&](int x, int z) -> Column& {
    return columns[size_t(z - area.min.z) * n.x + (x - area.min.x)];
  };
  for (int cy = chunks.min.y; cy < chunks.max.y; ++cy)
    for (int cz = chunks.min.z; cz < chunks.max.z; ++cz)
      for (int cx = chunks.min.x; cx < chunks.max.x; ++cx) {
        const ChunkKey key{cx, cy, cz};
        const Int3 o = ChunkOrigin(key);
        const IntBox part = area.Intersect({o, o + Int3{kChunkSize, kChunkSize, kChunkSize}});
        Voxel uniform;
        ChunkPtr chunk;
        const bool is_uniform = world.UniformVoxel(key, &uniform);
        if (!is_uniform) {
          absl::StatusOr<ChunkPtr> loaded = world.LoadChunk(key);
          if (!loaded.ok()) return loaded.status();
          chunk = *std::move(loaded);
        }
        for (int z = part.min.z; z < part.max.z; ++z)
          for (int x = part.min.x; x < part.max.x; ++x) {
            Column& c = column(x, z);
            // A uniform chunk: its first voxel does all the work, the rest change nothing.
            const int rows = is_uniform ? 1 : kChunkSize;
            for (int ly = 0; ly < rows; ++ly) {
              const Voxel v = is_uniform ? uniform : chunk->At(x - o.x, ly, z - o.z);
              if (ClassOf(v) == c.run) {  // inside a run: the common case
                c.top_material = v.material;
                c.prev = v;
              } else if (!Feed(c, v, o.y + ly - y0, x - origin.x, z - origin.z, out)) {
                return absl::InternalError("rcAddSpan failed");
              }
            }
          }
      }
  // Runs reaching the world's top end there.
  const int top = world.voxel_bounds().max.y;
  for (int z = area.min.z; z < area.max.z; ++z)
    for (int x = area.min.x; x < area.max.x; ++x)
      if (!Feed(column(x, z), Voxel{}, top - y0, x - origin.x, z - origin.z, out)) {
        return absl::InternalError("rcAddSpan failed");
      }
  return absl::OkStatus();
}

// ---- Slope ----

// The height step (in spans' steps) from `top` to the nearest top of column (x, z) within
// `reach`, or -1 when there is none.
int StepTo(const rcHeightfield& hf, int x, int z, int top, int reach) {
  if (x < 0 || z < 0 || x >= hf.width || z >= hf.height) return -1;
  int best = -1;
  for (const rcSpan* s = hf.spans[x + z * hf.width]; s != nullptr; s = s->next) {
    const int d = std::abs(int(s->smax) - top);
    if (d <= reach && (best < 0 || d < best)) best = d;
  }
  return best;
}

// The gentler side's step along one axis (a voxel step has a flat side; a slope has none).
int GentlerStep(int a, int b) {
  if (a < 0) return std::max(b, 0);
  if (b < 0) return a;
  return std::min(a, b);
}

// Marks spans steeper than the slope limit unwalkable.
void FilterSteepSpans(const NavBuildParams& p, rcHeightfield& hf) {
  const float limit = std::tan(p.max_slope_degrees * 3.14159265f / 180) * p.cell_size;
  const float limit_sq = limit * limit;
  const int reach = std::max(p.climb_cells, 1);
  for (int z = 0; z < hf.height; ++z)
    for (int x = 0; x < hf.width; ++x)
      for (rcSpan* s = hf.spans[x + z * hf.width]; s != nullptr; s = s->next) {
        if (s->area == RC_NULL_AREA) continue;
        const int top = s->smax;
        const float dx =
            float(GentlerStep(StepTo(hf, x - 1, z, top, reach), StepTo(hf, x + 1, z, top, reach))) *
            p.cell_height;
        const float dz =
            float(GentlerStep(StepTo(hf, x, z - 1, top, reach), StepTo(hf, x, z + 1, top, reach))) *
            p.cell_height;
        if (dx * dx + dz * dz > limit_sq) s->area = RC_NULL_AREA;
      }
}

// ---- Recast pipeline ----

struct RecastBuffers {
  rcHeightfield* hf = rcAllocHeightfield();
  rcCompactHeightfield* chf = rcAllocCompactHeightfield();
  rcContourSet* cset = rcAllocContourSet();
  rcPolyMesh* pmesh = rcAllocPolyMesh();
  rcPolyMeshDetail* dmesh = rcAllocPolyMeshDetail();
  ~RecastBuffers() {
    rcFreeHeightField(hf);
    rcFreeCompactHeightfield(chf);
    rcFreeContourSet(cset);
    rcFreePolyMesh(pmesh);
    rcFreePolyMeshDetail(dmesh);
  }
};

absl::Status Failed(const char* step) {
  return absl::InternalError(absl::StrFormat("navmesh tile build: %s failed", step));
}

// Filters, compact heightfield, erosion, regions, contours, polygons and detail mesh.
absl::Status RunRecast(const NavBuildParams& p, int border_cells, rcContext* ctx,
                       RecastBuffers& b) {
  // rcFilterLedgeSpans drops ground whose accessible neighbours differ by more than the climb: any
  // slope above atan(climb / (2 cell size)). Only a stricter slope limit needs our own pass.
  const float ledge_limit = std::atan2(float(p.climb_cells) * p.cell_height, 2 * p.cell_size);
  if (p.max_slope_degrees * 3.14159265f / 180 < ledge_limit - 1e-3f) FilterSteepSpans(p, *b.hf);
  rcFilterLowHangingWalkableObstacles(ctx, p.climb_cells, *b.hf);
  rcFilterLedgeSpans(ctx, p.height_cells, p.climb_cells, *b.hf);
  rcFilterWalkableLowHeightSpans(ctx, p.height_cells, *b.hf);
  if (!rcBuildCompactHeightfield(ctx, p.height_cells, p.climb_cells, *b.hf, *b.chf)) {
    return Failed("rcBuildCompactHeightfield");
  }
  if (!rcErodeWalkableArea(ctx, p.radius_cells, *b.chf)) return Failed("rcErodeWalkableArea");
  // Monotone partitioning: no distance field, ~10% of a tile's build (docs/navigation.md). Small
  // regions are kept (a ledge of a few voxels is walkable), small ones merged.
  if (!rcBuildRegionsMonotone(ctx, *b.chf, border_cells, 8, 100)) {
    return Failed("rcBuildRegionsMonotone");
  }
  const int max_edge = int(12 / p.cell_size);  // 12 world units
  if (!rcBuildContours(ctx, *b.chf, 1.3f, max_edge, *b.cset)) return Failed("rcBuildContours");
  if (b.cset->nconts == 0) return absl::OkStatus();
  if (!rcBuildPolyMesh(ctx, *b.cset, DT_VERTS_PER_POLYGON, *b.pmesh)) {
    return Failed("rcBuildPolyMesh");
  }
  if (!rcBuildPolyMeshDetail(ctx, *b.pmesh, *b.chf, 6 * p.cell_size, p.cell_height, *b.dmesh)) {
    return Failed("rcBuildPolyMeshDetail");
  }
  return absl::OkStatus();
}

// dtCreateNavMeshData of the built polygons; data stays null for a tile without polygons.
absl::Status CreateTileData(const NavBuildParams& p, const NavTileCoord& t, RecastBuffers& b,
                            NavTileData* out) {
  rcPolyMesh& pm = *b.pmesh;
  out->polygons = pm.npolys;
  if (pm.npolys == 0) return absl::OkStatus();
  for (int i = 0; i < pm.npolys; ++i) {
    pm.flags[i] = pm.areas[i] == kNavAreaWater ? kNavFlagSwim : kNavFlagWalk;
  }
  dtNavMeshCreateParams c = {};
  c.verts = pm.verts;
  c.vertCount = pm.nverts;
  c.polys = pm.polys;
  c.polyAreas = pm.areas;
  c.polyFlags = pm.flags;
  c.polyCount = pm.npolys;
  c.nvp = pm.nvp;
  c.detailMeshes = b.dmesh->meshes;
  c.detailVerts = b.dmesh->verts;
  c.detailVertsCount = b.dmesh->nverts;
  c.detailTris = b.dmesh->tris;
  c.detailTriCount = b.dmesh->ntris;
  c.walkableHeight = float(p.height_cells) * p.cell_height;
  c.walkableRadius = float(p.radius_cells) * p.cell_size;
  c.walkableClimb = float(p.climb_cells) * p.cell_height;
  c.tileX = t.x;
  c.tileY = t.z;
  rcVcopy(c.bmin, pm.bmin);
  rcVcopy(c.bmax, pm.bmax);
  c.cs = p.cell_size;
  c.ch = p.cell_height;
  c.buildBvTree = true;
  if (!dtCreateNavMeshData(&c, &out->data, &out->size)) return Failed("dtCreateNavMeshData");
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateNavTileConfig(const NavTileConfig& c, const WorldConfig& world) {
  auto bad = [](const char* field, const char* rule, int value) {
    return absl::InvalidArgumentError(absl::StrFormat("%s must be %s, got %d", field, rule, value));
  };
  if (c.tile_voxels < 8 || c.tile_voxels > 256)
    return bad("tile_voxels", "in [8, 256]", c.tile_voxels);
  if (c.cells_per_voxel < 1 || c.cells_per_voxel > 4) {
    return bad("cells_per_voxel", "in [1, 4]", c.cells_per_voxel);
  }
  if (c.height_steps_per_voxel < 1 || c.height_steps_per_voxel > 16) {
    return bad("height_steps_per_voxel", "in [1, 16]", c.height_steps_per_voxel);
  }
  if (c.border_voxels < 1 || c.border_voxels > 16) {
    return bad("border_voxels", "in [1, 16]", c.border_voxels);
  }
  if (int64_t(world.size_voxels.y) * c.height_steps_per_voxel > kMaxSpanHeight) {
    return bad("height_steps_per_voxel", "at most 8191 steps over the world's height",
               c.height_steps_per_voxel);
  }
  return absl::OkStatus();
}

absl::StatusOr<NavBuildParams> MakeNavBuildParams(const AgentProfile& profile,
                                                  const NavTileConfig& tiles, float voxel_size) {
  NavBuildParams p;
  p.tiles = tiles;
  p.voxel_size = voxel_size;
  p.cell_size = voxel_size / float(tiles.cells_per_voxel);
  p.cell_height = voxel_size / float(tiles.height_steps_per_voxel);
  // Recast's chamfer erosion leaves the cell diagonal to a wall's convex corner when it erodes by
  // ceil(radius / cs) cells, one cell short there; one more cell keeps >= 1.4 cells clear at
  // corners and costs one cell along straight walls (docs/navigation.md).
  p.radius_cells = int(std::ceil(profile.radius / p.cell_size - 1e-4f)) + 1;
  p.height_cells = int(std::ceil(profile.height / p.cell_height - 1e-4f));
  p.climb_cells = int(std::floor(NavClimb(profile) / p.cell_height + 1e-4f));
  p.max_slope_degrees = profile.max_slope_degrees;
  const int border_cells = tiles.border_voxels * tiles.cells_per_voxel;
  if (p.radius_cells + 3 > border_cells) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "profile.radius must be at most %g for these nav tiles (border %d voxels), got %g",
        float(border_cells - 4) * p.cell_size, tiles.border_voxels, profile.radius));
  }
  return p;
}

IntBox NavTileVoxels(const World& world, const NavTileConfig& config, const NavTileCoord& t) {
  const IntBox b = world.voxel_bounds();
  const Int3 min{b.min.x + t.x * config.tile_voxels, b.min.y, b.min.z + t.z * config.tile_voxels};
  return IntBox{min, Int3{min.x + config.tile_voxels, b.max.y, min.z + config.tile_voxels}}
      .Intersect(b);
}

IntBox NavTileReach(const World& world, const NavTileConfig& config, const NavTileCoord& t) {
  IntBox r = NavTileVoxels(world, config, t);
  const int g = config.border_voxels + 1;
  r.min = r.min - Int3{g, 0, g};
  r.max = r.max + Int3{g, 0, g};
  return r;
}

NavTileData::NavTileData(NavTileData&& o) noexcept { *this = std::move(o); }

NavTileData& NavTileData::operator=(NavTileData&& o) noexcept {
  if (this != &o) {
    dtFree(data);
    data = std::exchange(o.data, nullptr);
    size = std::exchange(o.size, 0);
    spans = o.spans;
    polygons = o.polygons;
  }
  return *this;
}

NavTileData::~NavTileData() { dtFree(data); }

unsigned char* NavTileData::Release() {
  size = 0;
  return std::exchange(data, nullptr);
}

absl::StatusOr<NavTileData> BuildNavTile(const World& world, const NavBuildParams& p,
                                         const NavTileCoord& t) {
  // 1. The heightfield: the tile plus its border, over the world's height.
  const NavTileConfig& c = p.tiles;
  const IntBox tile = NavTileVoxels(world, c, t);
  const Int3 origin = tile.min - Int3{c.border_voxels, 0, c.border_voxels};
  const int border_cells = c.border_voxels * c.cells_per_voxel;
  const int width = (c.tile_voxels + 2 * c.border_voxels) * c.cells_per_voxel;
  const float h = p.voxel_size;
  const float bmin[3] = {float(origin.x) * h, float(tile.min.y) * h, float(origin.z) * h};
  const float bmax[3] = {bmin[0] + float(width) * p.cell_size, float(tile.max.y) * h + 4 * h,
                         bmin[2] + float(width) * p.cell_size};
  rcContext ctx(false);
  RecastBuffers b;
  if (!rcCreateHeightfield(&ctx, *b.hf, width, width, bmin, bmax, p.cell_size, p.cell_height)) {
    return Failed("rcCreateHeightfield");
  }
  // 2. Spans from the voxel columns (the border clipped to the world).
  IntBox area{origin, Int3{origin.x + width / c.cells_per_voxel, tile.max.y,
                           origin.z + width / c.cells_per_voxel}};
  area = area.Intersect(world.voxel_bounds());
  SpanWriter writer(&ctx, b.hf, c.cells_per_voxel, c.height_steps_per_voxel);
  if (absl::Status s = ScanColumns(world, area, origin, writer); !s.ok()) return s;
  // 3. Recast, then Detour's tile data.
  if (absl::Status s = RunRecast(p, border_cells, &ctx, b); !s.ok()) return s;
  NavTileData out;
  out.spans = writer.spans();
  if (absl::Status s = CreateTileData(p, t, b, &out); !s.ok()) return s;
  return out;
}

}  // namespace voxcol
