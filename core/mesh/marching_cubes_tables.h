// Marching-cubes case tables, derived at start-up from the topology of the cube instead of typed.
//
// Cube conventions (used by the mesher and the tables alike):
//   corner c in [0, 8) sits at (c & 1, (c >> 1) & 1, (c >> 2) & 1);
//   edge e in [0, 12) runs along axis a = e / 4 from corner kEdgeCorners[e][0] (the low end) to
//   kEdgeCorners[e][1] = kEdgeCorners[e][0] | (1 << a);
//   the case index has bit c set when corner c is inside (solid).
#pragma once

#include <array>
#include <cstdint>

namespace voxcol {

// Enough for the largest case: loops total at most 12 vertices, so at most 12 - 2 triangles.
constexpr int kMaxCaseTriangles = 10;

struct MarchingCubesCase {
  uint8_t triangle_count = 0;
  // Edge ids, three per triangle, counter-clockwise seen from the outside (empty) side.
  std::array<std::array<uint8_t, 3>, kMaxCaseTriangles> triangles{};
};

// Corner ids of each edge, low end first.
extern const uint8_t kEdgeCorners[12][2];

// The 256 cases. The first call builds the tables (thread-safe); later calls are a load.
const std::array<MarchingCubesCase, 256>& MarchingCubesCases();

}  // namespace voxcol
