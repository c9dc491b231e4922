// Dynamic AABB tree after Catto's b2DynamicTree; see dynamic_tree.h.
#include "core/bodies/dynamic_tree.h"

#include <algorithm>
#include <cassert>

namespace voxcol {

int32_t DynamicAabbTree::AllocateNode() {
  if (free_list_ == kNullNode) {
    nodes_.emplace_back();
    return int32_t(nodes_.size() - 1);
  }
  const int32_t node = free_list_;
  free_list_ = nodes_[node].parent;
  nodes_[node] = Node{};
  return node;
}

void DynamicAabbTree::FreeNode(int32_t node) {
  nodes_[node].parent = free_list_;
  nodes_[node].height = -1;
  free_list_ = node;
}

int32_t DynamicAabbTree::CreateProxy(const Aabb& box, uint32_t user_data) {
  const int32_t leaf = AllocateNode();
  nodes_[leaf].box = Inflate(box, margin_);
  nodes_[leaf].child2 = int32_t(user_data);
  InsertLeaf(leaf);
  ++leaf_count_;
  return leaf;
}

void DynamicAabbTree::DestroyProxy(int32_t proxy) {
  assert(proxy >= 0 && proxy < int32_t(nodes_.size()) && nodes_[proxy].IsLeaf());
  RemoveLeaf(proxy);
  FreeNode(proxy);
  --leaf_count_;
}

bool DynamicAabbTree::MoveProxy(int32_t proxy, const Aabb& box, const Vec3& displacement) {
  if (ContainsBox(nodes_[proxy].box, box)) return false;
  RemoveLeaf(proxy);
  // Fatten by the margin, then stretch along the motion: a body moving steadily then stays inside
  // its fat box for a few ticks (Box2D's displacement multiplier).
  Aabb fat = Inflate(box, margin_);
  constexpr float kDisplacementMultiplier = 2;
  for (int a = 0; a < 3; ++a) {
    const float d = kDisplacementMultiplier * displacement[a];
    if (d < 0) fat.min[a] += d;
    if (d > 0) fat.max[a] += d;
  }
  nodes_[proxy].box = fat;
  InsertLeaf(proxy);
  return true;
}

// Descends from the root to the node whose pairing with `box` costs least in surface area
// (Goldsmith and Salmon's insertion cost as Box2D uses it): stopping here costs a new parent of
// this node and the box; going down adds the growth of this node ("inheritance") to the child's
// cost.
int32_t DynamicAabbTree::PickSibling(const Aabb& box) const {
  int32_t index = root_;
  while (!nodes_[index].IsLeaf()) {
    const Node& n = nodes_[index];
    const float area = HalfArea(n.box);
    const float combined = HalfArea(Union(n.box, box));
    const float here = 2 * combined;
    const float inheritance = 2 * (combined - area);
    auto descend_cost = [&](int32_t child) {
      const Node& c = nodes_[child];
      const float grown = HalfArea(Union(c.box, box));
      return (c.IsLeaf() ? grown : grown - HalfArea(c.box)) + inheritance;
    };
    const float cost1 = descend_cost(n.child1), cost2 = descend_cost(n.child2);
    if (here < cost1 && here < cost2) break;
    index = cost1 < cost2 ? n.child1 : n.child2;
  }
  return index;
}

void DynamicAabbTree::ReplaceChild(int32_t parent, int32_t old_child, int32_t new_child) {
  if (parent == kNullNode) {
    root_ = new_child;
  } else if (nodes_[parent].child1 == old_child) {
    nodes_[parent].child1 = new_child;
  } else {
    assert(nodes_[parent].child2 == old_child);
    nodes_[parent].child2 = new_child;
  }
}

void DynamicAabbTree::InsertLeaf(int32_t leaf) {
  if (root_ == kNullNode) {
    root_ = leaf;
    nodes_[leaf].parent = kNullNode;
    return;
  }
  const int32_t sibling = PickSibling(nodes_[leaf].box);
  const int32_t new_parent = AllocateNode();  // may move nodes_: index only from here on
  const int32_t old_parent = nodes_[sibling].parent;
  Node& p = nodes_[new_parent];
  p.parent = old_parent;
  p.child1 = sibling;
  p.child2 = leaf;
  ReplaceChild(old_parent, sibling, new_parent);
  nodes_[sibling].parent = new_parent;
  nodes_[leaf].parent = new_parent;
  RefitUpwards(new_parent);  // boxes, heights and the child box copies up to the root
}

void DynamicAabbTree::RemoveLeaf(int32_t leaf) {
  if (leaf == root_) {
    root_ = kNullNode;
    return;
  }
  const int32_t parent = nodes_[leaf].parent;
  const int32_t grand = nodes_[parent].parent;
  const int32_t sibling =
      nodes_[parent].child1 == leaf ? nodes_[parent].child2 : nodes_[parent].child1;
  ReplaceChild(grand, parent, sibling);
  nodes_[sibling].parent = grand;
  FreeNode(parent);
  nodes_[leaf].parent = kNullNode;
  RefitUpwards(grand);
}

void DynamicAabbTree::Refit(int32_t node) {
  Node& n = nodes_[node];
  const Node &c1 = nodes_[n.child1], &c2 = nodes_[n.child2];
  n.child_box[0] = c1.box;
  n.child_box[1] = c2.box;
  n.box = Union(c1.box, c2.box);
  n.height = 1 + std::max(c1.height, c2.height);
}

void DynamicAabbTree::RefitUpwards(int32_t node) {
  while (node != kNullNode) {
    node = Balance(node);
    Refit(node);
    node = nodes_[node].parent;
  }
}

// A rotation: child `up` of `a` takes a's place, a becomes up's child, and the shorter of up's
// children moves down to a, in up's old slot. The taller one stays with up. Heights then differ by
// at most one level less on this path.
int32_t DynamicAabbTree::Rotate(int32_t a, int32_t up) {
  const int32_t f = nodes_[up].child1, g = nodes_[up].child2;
  const bool f_taller = nodes_[f].height > nodes_[g].height;
  const int32_t taller = f_taller ? f : g, shorter = f_taller ? g : f;
  const int32_t a_parent = nodes_[a].parent;
  nodes_[up].child1 = a;
  nodes_[up].child2 = taller;
  nodes_[up].parent = a_parent;
  ReplaceChild(a_parent, a, up);
  nodes_[a].parent = up;
  if (nodes_[a].child1 == up) {
    nodes_[a].child1 = shorter;
  } else {
    nodes_[a].child2 = shorter;
  }
  nodes_[shorter].parent = a;
  Refit(a);
  Refit(up);
  return up;
}

// AVL-style balance of a node whose children differ in height by more than one: the taller child
// rotates up. Returns the node now at a's place.
int32_t DynamicAabbTree::Balance(int32_t a) {
  const Node& n = nodes_[a];
  if (n.IsLeaf() || n.height < 2) return a;
  const int balance = nodes_[n.child2].height - nodes_[n.child1].height;
  if (balance > 1) return Rotate(a, n.child2);
  if (balance < -1) return Rotate(a, n.child1);
  return a;
}

bool DynamicAabbTree::ValidateNode(int32_t node, int* leaves) const {
  const Node& n = nodes_[node];
  if (n.IsLeaf()) {
    ++*leaves;
    return n.height == 0;
  }
  const Node &c1 = nodes_[n.child1], &c2 = nodes_[n.child2];
  if (c1.parent != node || c2.parent != node) return false;
  if (n.height != 1 + std::max(c1.height, c2.height)) return false;
  const Aabb u = Union(c1.box, c2.box);
  if (!(u.min == n.box.min && u.max == n.box.max)) return false;
  auto same = [](const Aabb& a, const Aabb& b) { return a.min == b.min && a.max == b.max; };
  if (!same(n.child_box[0], c1.box) || !same(n.child_box[1], c2.box)) return false;
  return ValidateNode(n.child1, leaves) && ValidateNode(n.child2, leaves);
}

bool DynamicAabbTree::Validate() const {
  if (root_ == kNullNode) return leaf_count_ == 0;
  if (nodes_[root_].parent != kNullNode) return false;
  int leaves = 0;
  if (!ValidateNode(root_, &leaves)) return false;
  int free_nodes = 0;
  for (int32_t f = free_list_; f != kNullNode; f = nodes_[f].parent) ++free_nodes;
  // Every node is either free or in the tree: 2 * leaves - 1 of them.
  return leaves == leaf_count_ && free_nodes + 2 * leaves - 1 == int(nodes_.size());
}

}  // namespace voxcol
