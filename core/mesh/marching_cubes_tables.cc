// Marching-cubes tables derived from the cube's topology.
//
// Lorensen & Cline, "Marching Cubes: A High Resolution 3D Surface Construction Algorithm"
// (SIGGRAPH 1987) tabulate, for each of the 256 inside/outside patterns of a cube's corners, the
// triangles of the iso-surface inside the cube. Instead of typing the table we derive it: on each
// of the 6 faces, the iso-contour is a set of segments between the crossing edges of that face; the
// segments of all faces join into closed loops on the cube's surface, and each loop is fanned into
// triangles. Ambiguous faces (two diagonal inside corners) always separate the inside corners, so
// the two cubes sharing a face agree on its segments and the surface has no cracks (the asymptotic
// decider of Nielson & Hamann would also be consistent; a fixed rule is enough for watertightness).
// Segments are oriented so that the inside lies on a fixed side, which makes every loop, and hence
// every triangle, counter-clockwise seen from the empty side.
#include "core/mesh/marching_cubes_tables.h"

#include <cassert>
#include <utility>

namespace voxcol {

namespace {

constexpr int kNoEdge = -1;

// Low corner of edge e: axis a = e / 4, the other two corner bits from e % 4.
constexpr uint8_t EdgeLowCorner(int e) {
  int a = e / 4, u = (a + 1) % 3, v = (a + 2) % 3, k = e % 4;
  return uint8_t(((k & 1) << u) | (((k >> 1) & 1) << v));
}

// Edge joining two corners that differ in exactly one bit.
int EdgeBetween(int c0, int c1) {
  int diff = c0 ^ c1;
  int a = diff == 1 ? 0 : (diff == 2 ? 1 : 2);
  int low = c0 & c1, u = (a + 1) % 3, v = (a + 2) % 3;
  return a * 4 + ((low >> u) & 1) + 2 * ((low >> v) & 1);
}

// Corner position in doubled integer coordinates (so edge midpoints are integers too).
struct I3 {
  int x, y, z;
};
I3 Corner2(int c) { return {2 * (c & 1), 2 * ((c >> 1) & 1), 2 * ((c >> 2) & 1)}; }
I3 Mid2(int e) {
  I3 a = Corner2(kEdgeCorners[e][0]), b = Corner2(kEdgeCorners[e][1]);
  return {(a.x + b.x) / 2, (a.y + b.y) / 2, (a.z + b.z) / 2};
}
I3 Sub(I3 a, I3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
I3 Cross(I3 a, I3 b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
int Dot(I3 a, I3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

// Adds the oriented segment p -> q of a face with outward normal n to next[]. The inside must lie
// to the left of p -> q seen from outside: with d pointing from p to the inside end of p's edge,
// (q - p) x d points into the cube.
void AddSegment(int cube_case, int p, int q, I3 n, int next[12]) {
  int inside_end = (cube_case >> kEdgeCorners[p][0]) & 1 ? kEdgeCorners[p][0] : kEdgeCorners[p][1];
  I3 d = Sub(Corner2(inside_end), Mid2(p));
  if (Dot(Cross(Sub(Mid2(q), Mid2(p)), d), n) > 0) std::swap(p, q);
  assert(next[p] == kNoEdge);
  next[p] = q;
}

// Contour segments of one face (axis a, side s) for a case.
void FaceSegments(int cube_case, int a, int s, int next[12]) {
  int u = (a + 1) % 3, v = (a + 2) % 3;
  int corners[4];
  const int cu[4] = {0, 1, 1, 0}, cv[4] = {0, 0, 1, 1};
  for (int k = 0; k < 4; ++k) corners[k] = (s << a) | (cu[k] << u) | (cv[k] << v);
  I3 n{0, 0, 0};
  (a == 0 ? n.x : (a == 1 ? n.y : n.z)) = s ? 1 : -1;
  auto inside = [&](int k) { return (cube_case >> corners[k & 3]) & 1; };
  int crossing[4], crossings = 0;  // face edge k joins corners k and k + 1
  for (int k = 0; k < 4; ++k) {
    if (inside(k) != inside(k + 1)) crossing[crossings++] = k;
  }
  auto face_edge = [&](int k) { return EdgeBetween(corners[k & 3], corners[(k + 1) & 3]); };
  if (crossings == 2) {
    AddSegment(cube_case, face_edge(crossing[0]), face_edge(crossing[1]), n, next);
  } else if (crossings == 4) {
    // Ambiguous face: each inside corner gets its own segment, cutting it off.
    for (int k = 0; k < 4; ++k) {
      if (inside(k)) AddSegment(cube_case, face_edge(k + 3), face_edge(k), n, next);
    }
  }
}

// Bit mask of the two cube faces (axis * 2 + side) that contain edge e.
int EdgeFaces(int e) {
  int a = e / 4, u = (a + 1) % 3, v = (a + 2) % 3, c0 = kEdgeCorners[e][0];
  return (1 << (u * 2 + ((c0 >> u) & 1))) | (1 << (v * 2 + ((c0 >> v) & 1)));
}

// A diagonal may not join two vertices on one cube face: such a chord lies in the face, and the
// cube on the other side could produce the same chord, giving an edge with four triangles. (Two
// vertices share a face only on an ambiguous face; elsewhere they are neighbours on the loop.)
bool DiagonalAllowed(int e0, int e1) { return (EdgeFaces(e0) & EdgeFaces(e1)) == 0; }

// Triangulates loop[i..j] (i -> j is a loop edge or an allowed diagonal): picks an apex k whose two
// sides are loop edges or allowed diagonals and recurses. Returns false if none exists.
bool Triangulate(const int* loop, int i, int j, MarchingCubesCase* out) {
  if (j - i < 2) return true;
  for (int k = i + 1; k < j; ++k) {
    if ((k - i > 1 && !DiagonalAllowed(loop[i], loop[k])) ||
        (j - k > 1 && !DiagonalAllowed(loop[k], loop[j]))) {
      continue;
    }
    MarchingCubesCase trial = *out;
    trial.triangles[trial.triangle_count++] = {uint8_t(loop[i]), uint8_t(loop[k]),
                                               uint8_t(loop[j])};
    if (Triangulate(loop, i, k, &trial) && Triangulate(loop, k, j, &trial)) {
      *out = trial;
      return true;
    }
  }
  return false;
}

// Joins the face segments into loops and triangulates each loop.
MarchingCubesCase BuildCase(int cube_case) {
  int next[12];
  for (int& e : next) e = kNoEdge;
  for (int a = 0; a < 3; ++a)
    for (int s = 0; s < 2; ++s) FaceSegments(cube_case, a, s, next);
  MarchingCubesCase out;
  bool used[12] = {};
  for (int start = 0; start < 12; ++start) {
    if (next[start] == kNoEdge || used[start]) continue;
    int loop[12], n = 0;
    for (int e = start; !used[e]; e = next[e]) {
      used[e] = true;
      loop[n++] = e;
    }
    assert(n >= 3);
    // Rotate the loop until the closing edge loop[n-1] -> loop[0] admits a triangulation.
    bool done = false;
    for (int r = 0; r < n && !done; ++r) {
      int rotated[12];
      for (int i = 0; i < n; ++i) rotated[i] = loop[(i + r) % n];
      done = Triangulate(rotated, 0, n - 1, &out);
    }
    assert(done);
  }
  return out;
}

std::array<MarchingCubesCase, 256> BuildAllCases() {
  std::array<MarchingCubesCase, 256> cases;
  for (int c = 0; c < 256; ++c) cases[c] = BuildCase(c);
  return cases;
}

}  // namespace

const uint8_t kEdgeCorners[12][2] = {
#define VOXCOL_EDGE(e) \
  { EdgeLowCorner(e), uint8_t(EdgeLowCorner(e) | (1 << ((e) / 4))) }
    VOXCOL_EDGE(0), VOXCOL_EDGE(1), VOXCOL_EDGE(2),  VOXCOL_EDGE(3),
    VOXCOL_EDGE(4), VOXCOL_EDGE(5), VOXCOL_EDGE(6),  VOXCOL_EDGE(7),
    VOXCOL_EDGE(8), VOXCOL_EDGE(9), VOXCOL_EDGE(10), VOXCOL_EDGE(11),
#undef VOXCOL_EDGE
};

const std::array<MarchingCubesCase, 256>& MarchingCubesCases() {
  static const std::array<MarchingCubesCase, 256> cases = BuildAllCases();
  return cases;
}

}  // namespace voxcol
