// Loose kD-tree build after Kapoulkine, "Voxel terrain: physics" (Roblox): split the longest axis
// of a part's box at the mean of the triangle midpoints, partition by midpoint; if a side would
// get fewer than 25% of the triangles, split at the median midpoint instead (bounds the depth and
// guarantees termination). A node of up to 4 x kLeafMax triangles splits into leaves (<= kLeafMax
// triangles); a larger one splits its largest part while that has more than 4 x kLeafMax, then
// parts that fit two leaves, up to four children (Builder::Process). A leaf is a range of the
// triangle order; at the end the mesh's triangles are permuted into that order, so a leaf refers
// to consecutive mesh triangles. Everything runs on the 16-bit fixed-point vertex coordinates, so
// boxes and midpoint comparisons are exact integers.
#include <emmintrin.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <numeric>
#include <type_traits>

#include "core/kdtree/kd_tree.h"

namespace voxcol {

namespace {

// A range of the triangle order and the fixed-point box of its triangles.
struct Part {
  uint32_t begin = 0, end = 0;
  uint32_t lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  uint32_t size() const { return end - begin; }
};

struct Task {
  uint32_t node;
  Part part;
  int depth;
};

class Builder {
 public:
  Builder(KdBuildScratch& s, MeshArray<KdNode>& nodes, const KdGrid& grid)
      : s_(s), nodes_(nodes), grid_(grid) {}

  // Fills node t.node with the children of t.part. Writes the tasks of its inner children to
  // `inner` and returns how many (<= 4).
  int Process(const Task& t, Task* inner) {
    // A node of up to four full leaves splits into leaves. A larger one splits its largest part
    // while that is larger than one full node, then parts that fit two leaves, which saves a node.
    // A part larger than two leaves but within one node is not halved (that would take two nodes
    // below instead of one); while slots are free, a full leaf is peeled off it instead, which
    // leaves one node below and fills the slot (fewer nodes per triangle).
    constexpr uint32_t L = KdNode::kLeafMax;
    const bool fits = t.part.size() <= 4 * L;
    Part parts[4] = {t.part};
    int n = 1;
    while (n < 4) {
      int best = -1;
      for (int i = 0; i < n; ++i) {
        if (parts[i].size() > L && (best < 0 || parts[i].size() > parts[best].size())) best = i;
      }
      bool peel = false;
      if (!fits && best >= 0 && parts[best].size() <= 4 * L && parts[best].size() > 2 * L) {
        peel = true;
        for (int i = 0; i < n && peel; ++i) {
          if (parts[i].size() > L && parts[i].size() <= 2 * L) best = i, peel = false;
        }
      }
      if (best < 0) break;
      Split(parts[best], peel, &parts[best], &parts[n++]);
    }
    KdNode node;
    int pushed = 0;
    for (int i = 0; i < n; ++i) {
      const Part& p = parts[i];
      for (int a = 0; a < 3; ++a) {
        node.box[a][i] = uint8_t((p.lo[a] - grid_.base[a]) >> grid_.shift);
        node.box[a][4 + i] = uint8_t((p.hi[a] - grid_.base[a]) >> grid_.shift);
      }
      if (p.size() <= L) {
        node.child[i] = KdNode::MakeLeaf(p.begin, p.size());
      } else {
        assert(nodes_.size() < KdNode::kEmpty);
        node.child[i] = uint16_t(nodes_.size());
        nodes_.emplace_back();
        inner[pushed++] = {node.child[i], p, t.depth + 1};
      }
    }
    nodes_[t.node] = node;
    return pushed;
  }

  // The box of the whole order range [begin, end). Four 16-bit lanes min (low corner) and max
  // (high corner) per triangle; unsigned 16-bit compares as signed ones on values biased by
  // 0x8000 (SSE2 has no unsigned 16-bit min/max).
  Part MakePart(uint32_t begin, uint32_t end) const {
    const __m128i bias = _mm_set1_epi16(int16_t(0x8000));
    __m128i lo = _mm_set1_epi16(0x7fff), hi = _mm_set1_epi16(int16_t(0x8000));  // biased extremes
    for (uint32_t i = begin; i < end; ++i) {
      // Reads the 12 bytes of the box and 4 beyond it (PrepareScratch pads qboxes by one).
      const __m128i q = _mm_xor_si128(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(s_.qboxes[s_.order[i]].data())), bias);
      lo = _mm_min_epi16(lo, q);
      hi = _mm_max_epi16(hi, q);
    }
    alignas(16) uint16_t l[8], h[8];
    _mm_store_si128(reinterpret_cast<__m128i*>(l), _mm_xor_si128(lo, bias));
    _mm_store_si128(reinterpret_cast<__m128i*>(h), _mm_xor_si128(hi, bias));
    Part p;
    p.begin = begin, p.end = end;
    for (int a = 0; a < 3; ++a) p.lo[a] = l[a], p.hi[a] = h[3 + a];
    return p;
  }

 private:
  // Twice the midpoint of triangle `tri`'s box on `axis`.
  uint32_t Center2(uint32_t tri, int axis) const {
    return uint32_t(s_.qboxes[tri][axis]) + s_.qboxes[tri][3 + axis];
  }

  // Splits p on its longest axis; with `peel`, one side gets exactly kLeafMax triangles.
  void Split(Part p, bool peel, Part* left, Part* right) const {
    int axis = 0;
    for (int a = 1; a < 3; ++a) {
      if (p.hi[a] - p.lo[a] > p.hi[axis] - p.lo[axis]) axis = a;
    }
    const uint32_t mid =
        p.begin + Partition(s_.order.data() + p.begin, s_.order.data() + p.end, axis, peel);
    *left = MakePart(p.begin, mid);
    *right = MakePart(mid, p.end);
  }

  // Mean split with the 25% skew fallback to the median. Returns the size of the left part. A peel
  // (n <= 4 x kLeafMax) moves the split to kLeafMax from the nearer end, which keeps both sides at
  // least 25%.
  uint32_t Partition(uint32_t* first, uint32_t* last, int axis, bool peel) const {
    const uint32_t n = uint32_t(last - first);
    uint64_t sum = 0;
    for (uint32_t* p = first; p != last; ++p) sum += Center2(*p, axis);
    // Midpoint below the mean: center2 < sum / n, exactly.
    uint32_t* mid = std::partition(
        first, last, [&](uint32_t tri) { return uint64_t(Center2(tri, axis)) * n < sum; });
    uint32_t left = uint32_t(mid - first);
    auto by_center = [&](uint32_t x, uint32_t y) { return Center2(x, axis) < Center2(y, axis); };
    if (4 * left < n || 4 * (n - left) < n) {
      std::nth_element(first, first + n / 2, last, by_center);
      left = n / 2;
    }
    // Moves the triangles nearest the split across so that the parts fill whole leaves: a part
    // that fits two leaves splits into two leaves; in a larger one, a left part of a multiple of
    // kLeafMax lets every leaf below it be full, which keeps the leaf count near n / kLeafMax.
    constexpr uint32_t L = KdNode::kLeafMax;
    uint32_t target = left;
    if (peel) {
      target = 2 * left <= n ? L : n - L;
    } else if (n <= 2 * L) {
      target = std::min(std::max(left, n - L), L);
    } else if (left % L != 0) {
      auto balanced = [&](uint32_t x) { return 4 * x >= n && 4 * (n - x) >= n; };
      const uint32_t down = left - left % L, up = down + L;
      const bool down_first = left - down <= up - left;
      const uint32_t a = down_first ? down : up, b = down_first ? up : down;
      target = balanced(a) ? a : balanced(b) ? b : left;
    }
    // Usually one or two triangles move: a linear pass each is cheaper than a selection.
    if (target > left + 2) {
      std::nth_element(first + left, first + target, last, by_center);
    } else if (target + 2 < left) {
      std::nth_element(first, first + target, first + left, by_center);
    } else {
      for (uint32_t k = left; k < target; ++k) {  // the lowest of the right part joins the left
        std::iter_swap(first + k, std::min_element(first + k, last, by_center));
      }
      for (uint32_t k = left; k > target; --k) {  // the highest of the left part joins the right
        std::iter_swap(first + k - 1, std::max_element(first, first + k, by_center));
      }
    }
    return target;
  }

  KdBuildScratch& s_;
  MeshArray<KdNode>& nodes_;
  const KdGrid& grid_;
};

// Fills the scratch (the identity order and every triangle's fixed-point box) and returns the
// grid: the lowest fixed-point coordinates and the least shift that fits the extent in 256 cells.
KdGrid PrepareScratch(const ChunkMesh& mesh, KdBuildScratch& s) {
  uint32_t n = mesh.triangle_count();
  s.order.resize(n);
  std::iota(s.order.begin(), s.order.end(), 0u);
  s.qboxes.resize(n + 1);  // one spare box: MakePart loads 16 bytes from each 12-byte box
  s.qboxes[n] = {};
  uint32_t lo[3] = {0xffff, 0xffff, 0xffff}, hi[3] = {0, 0, 0};
  for (uint32_t t = 0; t < n; ++t) {
    const QuantizedVertex& a = mesh.vertices[mesh.Index(3 * t)];
    const QuantizedVertex& b = mesh.vertices[mesh.Index(3 * t + 1)];
    const QuantizedVertex& c = mesh.vertices[mesh.Index(3 * t + 2)];
    for (int k = 0; k < 3; ++k) {
      s.qboxes[t][k] = std::min(a[k], std::min(b[k], c[k]));
      s.qboxes[t][3 + k] = std::max(a[k], std::max(b[k], c[k]));
      lo[k] = std::min<uint32_t>(lo[k], s.qboxes[t][k]);
      hi[k] = std::max<uint32_t>(hi[k], s.qboxes[t][3 + k]);
    }
  }
  KdGrid grid;
  uint32_t extent = 0;
  for (int k = 0; k < 3; ++k) {
    grid.base[k] = uint16_t(lo[k]);
    extent = std::max(extent, hi[k] - lo[k]);
  }
  while ((extent >> grid.shift) > 255) ++grid.shift;
  return grid;
}

QuantizedVertex ToVertex(const uint32_t q[3]) {
  return {uint16_t(q[0]), uint16_t(q[1]), uint16_t(q[2])};
}

// Permutes the mesh's triangles (corner indices and materials together) into the build order:
// triangle i becomes old triangle order[i], so each leaf's range names its own triangles.
// The indices keep their form (16-bit or one byte).
void ReorderTriangles(KdBuildScratch& s, ChunkMesh* mesh) {
  const uint32_t n = uint32_t(s.order.size());
  auto permute = [&](auto* indices) {
    using Index = std::remove_pointer_t<decltype(indices)>;
    s.indices.assign(indices, indices + 3 * size_t(n));
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t t = s.order[i];
      for (int k = 0; k < 3; ++k) indices[3 * i + k] = Index(s.indices[3 * t + k]);
    }
  };
  mesh->WithIndices(permute);
  if (mesh->materials.empty()) return;  // one material for all triangles
  s.materials.assign(mesh->materials.begin(), mesh->materials.end());
  uint8_t* materials = mesh->materials.data();
  for (uint32_t i = 0; i < n; ++i) materials[i] = s.materials[s.order[i]];
}

}  // namespace

void KdTree::Build(ChunkMesh* mesh_in, KdBuildScratch* scratch) {
  const ChunkMesh& mesh = *mesh_in;
  nodes_.clear();
  depth_ = 0;
  const uint32_t n = mesh.triangle_count();
  assert(n <= kMaxTriangles);
  // Ray tests decode FixedOrigin + q in int32 (MeshRayFrame, KdBoxDecoder).
  assert(std::abs(mesh.origin.x) < (1 << 18) && std::abs(mesh.origin.y) < (1 << 18) &&
         std::abs(mesh.origin.z) < (1 << 18));
  if (n == 0) {
    grid_ = {};
    hi_ = {};
    return;
  }
  KdBuildScratch local;
  KdBuildScratch& s = scratch ? *scratch : local;
  grid_ = PrepareScratch(mesh, s);
  nodes_.reserve(n / 8 + 1);  // ~n / 9 nodes with leaves of four (BM_KdTreeBuild scene)
  nodes_.emplace_back();
  Builder builder(s, nodes_, grid_);
  const Part root = builder.MakePart(0, n);
  assert(root.lo[0] == grid_.base[0] && root.lo[1] == grid_.base[1] &&
         root.lo[2] == grid_.base[2]);  // bounds() reads the low corner from the grid
  hi_ = ToVertex(root.hi);
  Task stack[kStackSize];  // depth-first: at most three pending siblings per level
  int sp = 0;
  stack[sp++] = {0, root, 0};
  while (sp > 0) {
    Task t = stack[--sp];
    assert(t.depth <= kMaxDepth);
    depth_ = uint8_t(std::max<int>(depth_, t.depth));
    sp += builder.Process(t, stack + sp);
  }
  ReorderTriangles(s, mesh_in);
}

namespace {

// Validation of one subtree: fills the exact fixed-point box of its triangles' corners.
struct Validator {
  const ChunkMesh& mesh;
  const MeshArray<KdNode>& nodes;
  const KdGrid& grid;
  std::vector<int> seen_triangles, seen_nodes;

  bool Node(uint32_t index, int depth, int max_depth, uint32_t lo[3], uint32_t hi[3]) {
    if (index >= nodes.size() || ++seen_nodes[index] != 1 || depth > max_depth) return false;
    const KdNode& node = nodes[index];
    for (int a = 0; a < 3; ++a) lo[a] = 0xffff, hi[a] = 0;
    int children = 0;
    for (int i = 0; i < 4; ++i) {
      const uint32_t ref = node.child[i];
      uint32_t clo[3] = {0xffff, 0xffff, 0xffff}, chi[3] = {0, 0, 0};
      if (ref == KdNode::kEmpty) {
        for (int a = 0; a < 3; ++a) {
          if (node.lo(a, i) != 0 || node.hi(a, i) != 0) return false;
        }
        continue;
      }
      ++children;
      if (KdNode::IsLeaf(ref)) {
        for (uint32_t k = 0; k < KdNode::LeafCount(ref); ++k) {
          const uint32_t tri = KdNode::LeafFirst(ref) + k;
          if (tri >= seen_triangles.size() || ++seen_triangles[tri] != 1) return false;
          for (int c = 0; c < 3; ++c) {
            const QuantizedVertex& q = mesh.vertices[mesh.Index(3 * tri + c)];
            for (int a = 0; a < 3; ++a) {
              clo[a] = std::min<uint32_t>(clo[a], q[a]);
              chi[a] = std::max<uint32_t>(chi[a], q[a]);
            }
          }
        }
      } else if (!Node(ref, depth + 1, max_depth, clo, chi)) {
        return false;
      }
      for (int a = 0; a < 3; ++a) {
        const uint32_t box_lo = grid.base[a] + (node.lo(a, i) << grid.shift);
        const uint32_t box_hi = grid.base[a] + ((node.hi(a, i) + 1) << grid.shift) - 1;
        if (clo[a] < box_lo || chi[a] > box_hi) return false;
        lo[a] = std::min(lo[a], clo[a]);
        hi[a] = std::max(hi[a], chi[a]);
      }
    }
    return children > 0;
  }
};

}  // namespace

bool KdTree::Validate(const ChunkMesh& mesh) const {
  const uint32_t n = mesh.triangle_count();
  if (n == 0) return nodes_.empty();
  // Traversal shifts box bytes in 16-bit lanes (KdBoxDecoder::Decode4): 255 << shift must fit.
  if (nodes_.empty() || depth_ > kMaxDepth || grid_.shift > 8) return false;
  Validator v{mesh, nodes_, grid_, std::vector<int>(n, 0), std::vector<int>(nodes_.size(), 0)};
  uint32_t lo[3], hi[3];
  if (!v.Node(0, 0, depth_, lo, hi)) return false;
  for (uint32_t t = 0; t < n; ++t) {
    if (v.seen_triangles[t] != 1) return false;
  }
  for (int seen : v.seen_nodes) {
    if (seen != 1) return false;
  }
  for (int a = 0; a < 3; ++a) {
    if (grid_.base[a] != lo[a]) return false;  // the grid starts at the lowest coordinate
  }
  return ToVertex(hi) == hi_;  // and the low corner is the grid's base (above)
}

}  // namespace voxcol
