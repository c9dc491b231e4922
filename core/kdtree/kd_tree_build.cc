// Loose kD-tree build after Kapoulkine, "Voxel terrain: physics" (Roblox): split the longest axis
// of the node's box at the mean of the triangle midpoints, partition by midpoint, recompute both
// planes from all three vertices; if a side would get fewer than 25% of the triangles, split at
// the median midpoint instead (bounds the depth and guarantees termination).
#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "core/kdtree/kd_tree.h"

namespace voxcol {

namespace {

Aabb EmptyBox() {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  return {{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};
}

Aabb Union(const Aabb& a, const Aabb& b) { return {Min(a.min, b.min), Max(a.max, b.max)}; }

int LongestAxis(const Aabb& box) {
  Vec3 e = box.Extent();
  return e.x >= e.y ? (e.x >= e.z ? 0 : 2) : (e.y >= e.z ? 1 : 2);
}

struct Task {
  uint32_t node, begin, end;
  Aabb box;
  int depth;
};

class Builder {
 public:
  Builder(KdBuildScratch& s, std::vector<KdNode>& nodes, const ChunkMesh& mesh,
          const KdLeafGrid& grid)
      : s_(s), nodes_(nodes), mesh_(mesh), grid_(grid) {}

  // Splits [begin, end) of the order into two children, or writes a leaf. Returns the child tasks.
  int Process(const Task& t, Task children[2]) {
    uint32_t n = t.end - t.begin;
    uint32_t* order = s_.order.data();
    if (n <= 2) {
      WriteLeaf(order + t.begin, n, nodes_[t.node]);
      return 0;
    }
    int axis = LongestAxis(t.box);
    uint32_t mid = Partition(order + t.begin, order + t.end, axis);
    Aabb left = Bounds(t.begin, t.begin + mid), right = Bounds(t.begin + mid, t.end);
    uint32_t child = uint32_t(nodes_.size());
    nodes_.resize(nodes_.size() + 2);
    KdNode& branch = nodes_[t.node];
    std::memcpy(&branch.a, &left.max[axis], sizeof(float));
    std::memcpy(&branch.b, &right.min[axis], sizeof(float));
    branch.meta = uint32_t(axis) | (child << 2);
    children[0] = {child, t.begin, t.begin + mid, left, t.depth + 1};
    children[1] = {child + 1, t.begin + mid, t.end, right, t.depth + 1};
    return 2;
  }

 private:
  float Center(uint32_t tri, int axis) const { return s_.centers[3 * tri + axis]; }

  // Mean split with the 25% skew fallback to the median. Returns the size of the left part.
  uint32_t Partition(uint32_t* first, uint32_t* last, int axis) {
    uint32_t n = uint32_t(last - first);
    double sum = 0;
    for (uint32_t* p = first; p != last; ++p) sum += Center(*p, axis);
    float mean = float(sum / n);
    uint32_t* mid =
        std::partition(first, last, [&](uint32_t tri) { return Center(tri, axis) < mean; });
    uint32_t left = uint32_t(mid - first);
    if (4 * left < n || 4 * (n - left) < n) {
      std::nth_element(first, first + n / 2, last,
                       [&](uint32_t x, uint32_t y) { return Center(x, axis) < Center(y, axis); });
      left = n / 2;
    }
    return MakeLeftEven(first, last, left, axis);
  }

  // Leaves hold two triangles: an even left part lets every leaf below it be full, which keeps the
  // node count near one per triangle. Moves the triangle nearest the split across (O(n)).
  uint32_t MakeLeftEven(uint32_t* first, uint32_t* last, uint32_t left, int axis) {
    uint32_t n = uint32_t(last - first);
    if (left % 2 == 0 || n <= 2) return left;
    auto by_center = [&](uint32_t x, uint32_t y) { return Center(x, axis) < Center(y, axis); };
    if (4 * (n - left - 1) >= n) {  // take the right part's lowest triangle
      std::iter_swap(first + left, std::min_element(first + left, last, by_center));
      return left + 1;
    }
    std::iter_swap(first + left - 1, std::max_element(first, first + left, by_center));
    return left - 1;
  }

  Aabb Bounds(uint32_t begin, uint32_t end) const {
    Aabb box = EmptyBox();
    for (uint32_t i = begin; i < end; ++i) box = Union(box, s_.boxes[s_.order[i]]);
    return box;
  }

  // A leaf of n (1 or 2) triangles with its box on the leaf grid.
  void WriteLeaf(const uint32_t* tris, uint32_t n, KdNode& leaf) const {
    uint32_t lo[3] = {0xffff, 0xffff, 0xffff}, hi[3] = {0, 0, 0};
    for (uint32_t i = 0; i < n; ++i) {
      const std::array<uint16_t, 6>& q = s_.qboxes[tris[i]];
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min<uint32_t>(lo[a], q[a]);
        hi[a] = std::max<uint32_t>(hi[a], q[3 + a]);
      }
    }
    leaf.a = tris[0] | (n == 2 ? tris[1] << 16 : 0);
    leaf.b = 0;
    leaf.meta = KdNode::kLeafAxis | (n << 2);
    for (int a = 0; a < 3; ++a) {
      leaf.b |= ((lo[a] - grid_.base[a]) >> grid_.shift) << (8 * a);
      leaf.meta |= ((hi[a] - grid_.base[a]) >> grid_.shift) << (8 + 8 * a);
    }
  }

  KdBuildScratch& s_;
  std::vector<KdNode>& nodes_;
  const ChunkMesh& mesh_;
  const KdLeafGrid& grid_;
};

// Fills the scratch: per triangle its fixed-point box, its world box (the decoded fixed-point
// corners, equal to TriangleBounds since decoding is monotonic) and centre. Returns the leaf grid:
// the lowest fixed-point coordinates and the least shift that fits the extent in 256 cells.
KdLeafGrid PrepareScratch(const ChunkMesh& mesh, KdBuildScratch& s) {
  uint32_t n = mesh.triangle_count();
  s.order.resize(n);
  std::iota(s.order.begin(), s.order.end(), 0u);
  s.boxes.resize(n);
  s.centers.resize(3 * size_t(n));
  s.qboxes.resize(n);
  uint32_t lo[3] = {0xffff, 0xffff, 0xffff}, hi[3] = {0, 0, 0};
  for (uint32_t t = 0; t < n; ++t) {
    const QuantizedVertex& a = mesh.vertices[mesh.indices[3 * t]];
    const QuantizedVertex& b = mesh.vertices[mesh.indices[3 * t + 1]];
    const QuantizedVertex& c = mesh.vertices[mesh.indices[3 * t + 2]];
    QuantizedVertex qmin, qmax;
    for (int k = 0; k < 3; ++k) {
      qmin[k] = std::min(a[k], std::min(b[k], c[k]));
      qmax[k] = std::max(a[k], std::max(b[k], c[k]));
      s.qboxes[t][k] = qmin[k];
      s.qboxes[t][3 + k] = qmax[k];
      lo[k] = std::min<uint32_t>(lo[k], qmin[k]);
      hi[k] = std::max<uint32_t>(hi[k], qmax[k]);
    }
    s.boxes[t] = {mesh.Decode(qmin), mesh.Decode(qmax)};
    Vec3 center = s.boxes[t].Center();
    s.centers[3 * t] = center.x, s.centers[3 * t + 1] = center.y, s.centers[3 * t + 2] = center.z;
  }
  KdLeafGrid grid;
  uint32_t extent = 0;
  for (int k = 0; k < 3; ++k) {
    grid.base[k] = uint16_t(lo[k]);
    extent = std::max(extent, hi[k] - lo[k]);
  }
  while ((extent >> grid.shift) > 255) ++grid.shift;
  return grid;
}

}  // namespace

void KdTree::Build(const ChunkMesh& mesh, KdBuildScratch* scratch) {
  nodes_.clear();
  depth_ = 0;
  const uint32_t n = mesh.triangle_count();
  assert(n <= kMaxTriangles);
  // Ray tests decode origin * 4096 + q in int32 (MeshRayFrame, KdLeafBoxClip).
  assert(std::abs(mesh.origin.x) < (1 << 18) && std::abs(mesh.origin.y) < (1 << 18) &&
         std::abs(mesh.origin.z) < (1 << 18));
  if (n == 0) {
    bounds_ = {};
    grid_ = {};
    return;
  }
  KdBuildScratch local;
  KdBuildScratch& s = scratch ? *scratch : local;
  grid_ = PrepareScratch(mesh, s);
  bounds_ = EmptyBox();
  for (const Aabb& box : s.boxes) bounds_ = Union(bounds_, box);
  nodes_.reserve(n + n / 2);  // ~n nodes for leaves of two; slack for odd leaves
  nodes_.emplace_back();
  Builder builder(s, nodes_, mesh, grid_);
  Task stack[kMaxDepth + 2];  // depth-first: at most one pending sibling per level
  int sp = 0;
  stack[sp++] = {0, 0, n, bounds_, 0};
  while (sp > 0) {
    Task t = stack[--sp];
    depth_ = std::max(depth_, t.depth);
    assert(depth_ <= kMaxDepth);
    sp += builder.Process(t, stack + sp);
  }
  nodes_.shrink_to_fit();
}

bool KdTree::Validate(const ChunkMesh& mesh) const {
  const uint32_t n = mesh.triangle_count();
  if (n == 0) return nodes_.empty();
  std::vector<int> seen(n, 0);
  bool ok = depth_ <= kMaxDepth;
  struct Frame {
    uint32_t node;
    int depth;
  };
  std::vector<Frame> stack{{0, 0}};
  std::vector<Aabb> boxes(nodes_.size(), EmptyBox());
  std::vector<uint32_t> post;  // nodes in pre-order; walk backwards to fill subtree boxes
  while (!stack.empty() && ok) {
    Frame f = stack.back();
    stack.pop_back();
    ok = f.node < nodes_.size() && f.depth <= depth_;
    if (!ok) break;
    post.push_back(f.node);
    const KdNode& node = nodes_[f.node];
    if (node.is_leaf()) {
      ok = node.count() >= 1 && node.count() <= 2 && (node.count() == 2 || node.a >> 16 == 0);
      for (uint32_t i = 0; ok && i < node.count(); ++i) {
        uint32_t tri = node.triangle(i);
        ok = tri < n && ++seen[tri] == 1;
        if (ok) boxes[f.node] = Union(boxes[f.node], TriangleBounds(mesh, tri));
        for (int k = 0; ok && k < 3; ++k) {
          const QuantizedVertex& q = mesh.vertices[mesh.indices[3 * tri + k]];
          for (int a = 0; ok && a < 3; ++a) {
            const uint32_t lo = grid_.base[a] + (node.box_lo(a) << grid_.shift);
            const uint32_t hi = grid_.base[a] + ((node.box_hi(a) + 1) << grid_.shift) - 1;
            ok = lo <= q[a] && q[a] <= hi;
          }
        }
      }
    } else {
      stack.push_back({node.child(), f.depth + 1});
      stack.push_back({node.child() + 1, f.depth + 1});
    }
  }
  for (auto it = post.rbegin(); ok && it != post.rend(); ++it) {
    const KdNode& node = nodes_[*it];
    if (node.is_leaf()) continue;
    const Aabb &l = boxes[node.child()], &r = boxes[node.child() + 1];
    int axis = int(node.axis());
    ok = l.max[axis] == node.split(0) && r.min[axis] == node.split(1);
    boxes[*it] = Union(l, r);
  }
  for (uint32_t t = 0; ok && t < n; ++t) ok = seen[t] == 1;
  return ok && boxes[0].min == bounds_.min && boxes[0].max == bounds_.max;
}

}  // namespace voxcol
