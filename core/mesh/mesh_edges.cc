#include "core/mesh/mesh_edges.h"

#include <algorithm>
#include <array>

#include "core/voxel/chunk.h"

namespace voxcol {

namespace {

// A chunk's cells span [0.5, kChunkSize + 0.5] voxels from its min corner (marching_cubes.h): a
// vertex with a coordinate on either plane lies on a seam with a neighbouring chunk.
constexpr uint16_t kSeamLow = kVertexSteps / 2;
constexpr uint16_t kSeamHigh = (2 * kChunkSize + 1) * kVertexSteps / 2;

bool OnSeam(const QuantizedVertex& q) {
  for (int a = 0; a < 3; ++a) {
    if (q[a] == kSeamLow || q[a] == kSeamHigh) return true;
  }
  return false;
}

uint64_t KeyOf(const QuantizedVertex& q) {
  return uint64_t(q[0]) | uint64_t(q[1]) << 16 | uint64_t(q[2]) << 32;
}

// Corner `ref & 3` of triangle `ref >> 2`, by its vertex's position: welded vertices are one per
// lattice edge, and two edges can meet at one position, so positions (as across seams) decide.
struct CornerRef {
  uint64_t key;
  uint32_t ref;
};

// Per-thread buffers of one computation.
struct Scratch {
  std::vector<CornerRef> corners;  // sorted by key
  std::vector<uint32_t> run;       // per corner (3 * tri + k): where its key's run starts
  std::vector<Vec3> v, normal;     // decoded corners (3 per triangle) and unit normals
};

class EdgeFlagsBuilder {
 public:
  EdgeFlagsBuilder(const ChunkMesh& mesh, Scratch& s, std::vector<uint16_t>* flags)
      : mesh_(mesh), s_(s), flags_(*flags) {}

  void Run() {
    const uint32_t n = mesh_.triangle_count();
    flags_.assign(n, 0);
    Prepare(n);
    for (uint32_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) Edge(i, k);
    for (uint32_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) Corner(i, k);
  }

 private:
  const QuantizedVertex& Q(uint32_t i, int k) const {
    return mesh_.vertices[mesh_.Index(3 * i + uint32_t(k))];
  }

  void Prepare(uint32_t n) {
    s_.corners.resize(3 * size_t(n));
    s_.v.resize(3 * size_t(n));
    s_.normal.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      const std::array<uint32_t, 3> ix = mesh_.TriangleIndices(i);
      for (int k = 0; k < 3; ++k) {
        s_.corners[3 * i + uint32_t(k)] = {KeyOf(mesh_.vertices[ix[k]]), i << 2 | uint32_t(k)};
        s_.v[3 * i + uint32_t(k)] = mesh_.Vertex(ix[k]);
      }
      const Vec3* v = &s_.v[3 * i];
      s_.normal[i] = ChunkMesh::FaceNormal(v[0], v[1], v[2]);  // bit-identical to mesh_.Normal(i)
    }
    std::sort(s_.corners.begin(), s_.corners.end(),
              [](const CornerRef& a, const CornerRef& b) { return a.key < b.key; });
    s_.run.resize(s_.corners.size());
    for (uint32_t m = 0, start = 0; m < s_.corners.size(); ++m) {
      if (s_.corners[m].key != s_.corners[start].key) start = m;
      const uint32_t ref = s_.corners[m].ref;
      s_.run[3 * (ref >> 2) + (ref & 3)] = start;
    }
  }

  // Calls visit(j, c) for every corner c of a triangle j at corner k of triangle i (itself too),
  // until it returns true.
  template <typename Visit>
  void ForEachCornerAt(uint32_t i, int k, Visit&& visit) const {
    uint32_t m = s_.run[3 * i + uint32_t(k)];
    const uint64_t key = s_.corners[m].key;
    for (; m < s_.corners.size() && s_.corners[m].key == key; ++m) {
      if (visit(s_.corners[m].ref >> 2, int(s_.corners[m].ref & 3))) return;
    }
  }

  void Edge(uint32_t i, int k) {
    const int k1 = (k + 1) % 3;
    if (OnSeam(Q(i, k)) && OnSeam(Q(i, k1))) return;  // neighbours may lie in other chunks
    const uint64_t far = KeyOf(Q(i, k1));
    bool any_neighbour = false, convex = false;
    ForEachCornerAt(i, k, [&](uint32_t j, int c) {
      if (j == i) return false;
      if (KeyOf(Q(j, (c + 1) % 3)) != far && KeyOf(Q(j, (c + 2) % 3)) != far) return false;
      any_neighbour = true;
      convex = ConvexAcross(&s_.v[3 * i], s_.normal[i], k, &s_.v[3 * j], s_.normal[j]);
      return convex;
    });
    // No neighbour: the surface ends here (world border), which is a real edge.
    const bool active = convex || !any_neighbour;
    flags_[i] |= edge_flags::EdgeKnown(k) | (active ? edge_flags::EdgeActive(k) : 0);
  }

  // After every edge: the edges at a corner off the seams are all known.
  void Corner(uint32_t i, int k) {
    if (OnSeam(Q(i, k))) return;
    bool active = false;
    ForEachCornerAt(i, k, [&](uint32_t j, int c) {
      // Corner c's edges: edge c (to corner c + 1) and edge c + 2 (from corner c + 2).
      active = (flags_[j] & (edge_flags::EdgeActive(c) | edge_flags::EdgeActive((c + 2) % 3))) != 0;
      return active;
    });
    flags_[i] |= edge_flags::CornerKnown(k) | (active ? edge_flags::CornerActive(k) : 0);
  }

  const ChunkMesh& mesh_;
  Scratch& s_;
  std::vector<uint16_t>& flags_;
};

}  // namespace

void ComputeEdgeFlags(const ChunkMesh& mesh, std::vector<uint16_t>* flags) {
  thread_local Scratch scratch;
  EdgeFlagsBuilder(mesh, scratch, flags).Run();
}

}  // namespace voxcol
