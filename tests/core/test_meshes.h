// Mesh helpers shared by the core tests.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "core/mesh/chunk_mesh.h"

namespace voxcol::testing {

// The triangles of `m` (three corner indices and the material each), sorted: two meshes with the
// same vertices hold the same triangles, in any order, exactly when these are equal.
inline std::vector<std::array<uint32_t, 4>> SortedTriangles(const ChunkMesh& m) {
  std::vector<std::array<uint32_t, 4>> out(m.triangle_count());
  for (uint32_t t = 0; t < m.triangle_count(); ++t) {
    out[t] = {m.Index(3 * t), m.Index(3 * t + 1), m.Index(3 * t + 2), m.Material(t)};
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace voxcol::testing
