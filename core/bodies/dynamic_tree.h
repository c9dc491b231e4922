// Dynamic AABB tree for moving bodies, after Erin Catto's b2DynamicTree (Box2D): leaves hold
// fattened boxes so that small motions change nothing; inserts descend by the surface-area cost of
// each branch (Goldsmith-Salmon); every insert and removal re-balances the path to the root with
// AVL-style rotations. Written for voxcol's bodies: 3D boxes, 32-bit user data, node indices
// instead of pointers, and a ray walk whose clipping distance comes back from the leaf callback.
#pragma once

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "core/geometry/vec3.h"

namespace voxcol {

inline constexpr int32_t kNullNode = -1;

struct DynamicTreeStats {
  int64_t nodes_visited = 0;
  int64_t leaves_visited = 0;
};

class DynamicAabbTree {
 public:
  // margin: how far (world units, >= 0) a leaf's box extends past the box it was given.
  explicit DynamicAabbTree(float margin = 0.1f) : margin_(margin) {}

  // Inserts a leaf for `box` carrying `user_data`; returns its proxy id (a node index).
  int32_t CreateProxy(const Aabb& box, uint32_t user_data);
  // Removes a proxy returned by CreateProxy.
  void DestroyProxy(int32_t proxy);
  // Updates a proxy for the new tight `box`. When the fat box still contains it nothing happens and
  // false is returned; otherwise the leaf is re-inserted with a box fattened by the margin and by
  // `displacement` (the last motion, world units) in its direction, and true is returned.
  bool MoveProxy(int32_t proxy, const Aabb& box, const Vec3& displacement);

  uint32_t UserData(int32_t proxy) const { return nodes_[proxy].user_data(); }
  const Aabb& FatBox(int32_t proxy) const { return nodes_[proxy].box; }
  int32_t proxy_count() const { return leaf_count_; }
  // Height of the tree (0 for a single leaf, -1 when empty).
  int Height() const { return root_ == kNullNode ? -1 : nodes_[root_].height; }

  // Calls visit(user_data) for every leaf whose fat box, grown by `inflate` (>= 0) on every side,
  // overlaps `box`.
  template <typename Visit>
  void Query(const Aabb& box, float inflate, Visit&& visit, DynamicTreeStats* stats) const;

  // Walks the leaves whose fat boxes (grown by `inflate`) the ray origin + t dir, t in [0,
  // max_t], crosses, roughly nearest first. visit(user_data, max_t) returns the new max_t (smaller
  // after a hit, max_t to go on, negative to stop).
  template <typename Visit>
  void RayCast(const Vec3& origin, const Vec3& dir, float max_t, float inflate, Visit&& visit,
               DynamicTreeStats* stats) const;

  // Checks the structure: parent links, heights, leaf count, internal boxes equal the union of
  // their children's and their copies of the children's boxes, free list. Returns false on the
  // first broken invariant. O(nodes): tests, and Apply under VOXCOL_VALIDATE.
  bool Validate() const;

 private:
  // An internal node keeps copies of its children's boxes in its first cache line, so a walk
  // tests both children without loading them (one line per internal node instead of three).
  struct alignas(64) Node {
    Aabb child_box[2];           // internal nodes: the boxes of child1 and child2
    int32_t parent = kNullNode;  // also the next free node while on the free list
    int32_t child1 = kNullNode;
    int32_t child2 = kNullNode;  // leaves: the user data, read in the walk's one line per node
    int32_t height = 0;          // 0 for leaves, -1 for free nodes
    Aabb box;                    // this node's (fat, for leaves) box
    bool IsLeaf() const { return child1 == kNullNode; }
    uint32_t user_data() const { return uint32_t(child2); }
  };

  int32_t AllocateNode();
  void FreeNode(int32_t node);
  void InsertLeaf(int32_t leaf);
  void RemoveLeaf(int32_t leaf);
  int32_t PickSibling(const Aabb& box) const;
  void RefitUpwards(int32_t node);
  void Refit(int32_t node);
  int32_t Balance(int32_t a);
  int32_t Rotate(int32_t a, int32_t up);
  void ReplaceChild(int32_t parent, int32_t old_child, int32_t new_child);
  bool ValidateNode(int32_t node, int* leaves) const;

  std::vector<Node> nodes_;
  int32_t root_ = kNullNode;
  int32_t free_list_ = kNullNode;
  int32_t leaf_count_ = 0;
  float margin_;
  static constexpr int kMaxStack = 256;
  struct RayEntry {
    int32_t node;
    float t;  // where the ray enters the node's box
  };
};

// Union of two boxes.
inline Aabb Union(const Aabb& a, const Aabb& b) { return {Min(a.min, b.min), Max(a.max, b.max)}; }
// Half the surface area of a box: the SAH cost of a node.
inline float HalfArea(const Aabb& b) {
  const Vec3 e = b.Extent();
  return e.x * e.y + e.y * e.z + e.z * e.x;
}
inline Aabb Inflate(const Aabb& b, float r) {
  return {b.min - Vec3{r, r, r}, b.max + Vec3{r, r, r}};
}
inline bool ContainsBox(const Aabb& outer, const Aabb& inner) {
  return outer.min.x <= inner.min.x && outer.min.y <= inner.min.y && outer.min.z <= inner.min.z &&
         inner.max.x <= outer.max.x && inner.max.y <= outer.max.y && inner.max.z <= outer.max.z;
}

// 1 / dir per axis for SlabEnter, with zero components replaced by a huge finite value of the same
// role (Bullet's BT_LARGE_FLOAT): (min - o) * inv then stays finite and never NaN, so the slab test
// needs no special case for axis-parallel rays. A zero component with the origin on a face counts
// as inside that slab.
inline Vec3 SlabInverse(const Vec3& dir) {
  auto inv = [](float d) { return std::fabs(d) > 1e-30f ? 1.0f / d : 1e30f; };
  return {inv(dir.x), inv(dir.y), inv(dir.z)};
}

// Where origin + t dir, t in [0, max_t], enters the box [lo, hi] (Williams et al.'s slabs, without
// branches); negative when it misses.
inline float SlabEnter(const Vec3& o, const Vec3& inv, const Vec3& lo, const Vec3& hi,
                       float max_t) {
  const float x0 = (lo.x - o.x) * inv.x, x1 = (hi.x - o.x) * inv.x;
  const float y0 = (lo.y - o.y) * inv.y, y1 = (hi.y - o.y) * inv.y;
  const float z0 = (lo.z - o.z) * inv.z, z1 = (hi.z - o.z) * inv.z;
  const float t0 =
      std::max(std::max(std::min(x0, x1), std::min(y0, y1)), std::max(std::min(z0, z1), 0.0f));
  const float t1 =
      std::min(std::min(std::max(x0, x1), std::max(y0, y1)), std::min(std::max(z0, z1), max_t));
  return t0 <= t1 ? t0 : -1.0f;
}

template <typename Visit>
void DynamicAabbTree::Query(const Aabb& box, float inflate, Visit&& visit,
                            DynamicTreeStats* stats) const {
  if (root_ == kNullNode) return;
  const Aabb probe = Inflate(box, inflate);  // grow the probe once instead of every node
  // Traversal stacks live on the call stack, so concurrent readers of one tree are safe; they hold
  // at most height + 1 entries.
  if (!nodes_[root_].box.Overlaps(probe)) return;
  absl::InlinedVector<int32_t, 64> stack{root_};
  int64_t visited = 0, leaves = 0;
  while (!stack.empty()) {
    const Node& n = nodes_[stack.back()];
    stack.pop_back();
    ++visited;
    if (n.IsLeaf()) {
      ++leaves;
      visit(n.user_data());
      continue;
    }
    if (n.child_box[0].Overlaps(probe)) stack.push_back(n.child1);
    if (n.child_box[1].Overlaps(probe)) stack.push_back(n.child2);
  }
  if (stats) stats->nodes_visited += visited, stats->leaves_visited += leaves;
}

template <typename Visit>
void DynamicAabbTree::RayCast(const Vec3& origin, const Vec3& dir, float max_t, float inflate,
                              Visit&& visit, DynamicTreeStats* stats) const {
  if (root_ == kNullNode) return;
  const Vec3 inv = SlabInverse(dir);
  const Vec3 grow{inflate, inflate, inflate};
  // Entry distance of the ray into a node's (grown) box, or a negative value on a miss.
  auto enter = [&](const Aabb& b) {
    return inflate == 0 ? SlabEnter(origin, inv, b.min, b.max, max_t)
                        : SlabEnter(origin, inv, b.min - grow, b.max + grow, max_t);
  };
  // A fixed stack: pending entries never exceed height + 1, and rotations keep the height near
  // 1.44 log2(leaves) (AVL), so kMaxStack covers any tree that fits in memory.
  RayEntry ray_stack[kMaxStack];
  int depth = 0;
  if (float t = enter(nodes_[root_].box); t >= 0) ray_stack[depth++] = {root_, t};
  int64_t visited = 0, leaves = 0;
  while (depth > 0) {
    const RayEntry e = ray_stack[--depth];
    if (e.t > max_t) continue;  // entered beyond a hit found since it was pushed
    const Node& n = nodes_[e.node];
    ++visited;
    if (n.IsLeaf()) {
      ++leaves;
      max_t = visit(n.user_data(), max_t);
      if (max_t < 0) break;
      continue;
    }
    // Push the farther child first, so the nearer is walked first and its hit shortens the walk
    // of the other.
    const float t1 = enter(n.child_box[0]), t2 = enter(n.child_box[1]);
    const bool first_is_1 = t2 < 0 || (t1 >= 0 && t1 <= t2);
    const RayEntry near{first_is_1 ? n.child1 : n.child2, first_is_1 ? t1 : t2};
    const RayEntry far{first_is_1 ? n.child2 : n.child1, first_is_1 ? t2 : t1};
    assert(depth + 2 <= kMaxStack);
    if (far.t >= 0) ray_stack[depth++] = far;
    if (near.t >= 0) ray_stack[depth++] = near;
  }
  if (stats) stats->nodes_visited += visited, stats->leaves_visited += leaves;
}

}  // namespace voxcol
