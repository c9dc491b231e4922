// Internal to core/nav: NavWorld's per-profile mesh and its tile states, shared by its two
// translation units (nav_world.cc: tiles, eviction and FindPath; nav_world_watch.cc: what path
// watchers and drawing ask).
#pragma once

#include <DetourAlloc.h>
#include <DetourNavMesh.h>
#include <DetourNavMeshQuery.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/nav/nav_world.h"

namespace voxcol {

namespace nav_internal {

struct TileState {
  bool built = false;
  uint64_t version = 0;  // snapshot version the tile was built from
  int32_t bytes = 0;     // its Detour data (0: no walkable polygon, nothing held)
};

// See the header: current at `version` when built from it, or untouched since both.
inline bool Current(const TileState& t, uint64_t dirty, uint64_t version) {
  return t.built && (t.version == version || dirty <= std::min(t.version, version));
}

}  // namespace nav_internal

// A Detour query object and its buffers; pooled per mesh so a search allocates nothing.
struct NavWorld::QuerySlot {
  dtNavMeshQuery* query = dtAllocNavMeshQuery();
  nav_internal::PathScratch scratch;
  ~QuerySlot() { dtFreeNavMeshQuery(query); }
};

struct NavWorld::Mesh {
  ~Mesh() { dtFreeNavMesh(nav); }
  NavBuildParams params;  // immutable
  mutable absl::Mutex mu;
  dtNavMesh* nav ABSL_PT_GUARDED_BY(mu) = nullptr;  // the pointer itself never changes
  std::vector<nav_internal::TileState> tiles ABSL_GUARDED_BY(mu);
  int64_t bytes ABSL_GUARDED_BY(mu) = 0;  // sum of tiles[i].bytes
  // Per tile, NavWorld::search_clock_ when a search last needed it; written under a shared lock.
  std::unique_ptr<std::atomic<uint64_t>[]> last_search;
  absl::Mutex pool_mu;
  std::vector<std::unique_ptr<QuerySlot>> pool ABSL_GUARDED_BY(pool_mu);
};

}  // namespace voxcol
