#include "core/query/active_edges.h"

#include <limits>

namespace voxcol::terrain {

int64_t EdgeTable::Bucket(const VertexKey& v) const {
  if (one_bucket_) return 0;
  const int64_t x = int64_t(v.x >> kCellShift) - cell_min_.x;
  const int64_t y = int64_t(v.y >> kCellShift) - cell_min_.y;
  const int64_t z = int64_t(v.z >> kCellShift) - cell_min_.z;
  if (x < 0 || y < 0 || z < 0 || x >= cell_count_.x || y >= cell_count_.y || z >= cell_count_.z) {
    return -1;
  }
  return (z * cell_count_.y + y) * cell_count_.x + x;
}

void EdgeTable::BuildIndex() const {
  // 1. The box of cells the keys fall in, or one bucket when that box is mostly empty.
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  Int3 lo{kMax, kMax, kMax}, hi{-kMax, -kMax, -kMax};
  for (const Tri& t : tris_) {
    for (const VertexKey& k : t.key) {
      const Int3 c{k.x >> kCellShift, k.y >> kCellShift, k.z >> kCellShift};
      lo = {std::min(lo.x, c.x), std::min(lo.y, c.y), std::min(lo.z, c.z)};
      hi = {std::max(hi.x, c.x), std::max(hi.y, c.y), std::max(hi.z, c.z)};
    }
  }
  indexed_ = uint32_t(tris_.size());
  memo_.assign(tris_.size() * 3, 0);
  const size_t pairs = tris_.size() * 3;
  cell_min_ = lo;
  cell_count_ = {hi.x - lo.x + 1, hi.y - lo.y + 1, hi.z - lo.z + 1};
  const uint64_t cells = uint64_t(cell_count_.x) * uint64_t(cell_count_.y) * cell_count_.z;
  one_bucket_ = cells > kMaxCellsPerCorner * pairs;
  const size_t buckets = one_bucket_ ? 1 : size_t(cells);
  // 2. Counting sort of the pairs by bucket.
  bucket_begin_.assign(buckets + 1, 0);
  for (const Tri& t : tris_) {
    for (const VertexKey& k : t.key) ++bucket_begin_[size_t(Bucket(k)) + 1];
  }
  for (size_t b = 0; b < buckets; ++b) bucket_begin_[b + 1] += bucket_begin_[b];
  std::vector<uint32_t> next(bucket_begin_.begin(), bucket_begin_.end() - 1);
  corners_.resize(pairs);
  for (uint32_t j = 0; j < tris_.size(); ++j) {
    for (int c = 0; c < 3; ++c) {
      corners_[next[size_t(Bucket(tris_[j].key[c]))]++] = CornerOf(j, c);
    }
  }
  // 3. Each bucket in key order (the order among equal keys changes no answer: Active and
  // VertexActive ask whether any neighbour qualifies).
  for (size_t b = 0; b < buckets; ++b) {
    std::sort(corners_.begin() + bucket_begin_[b], corners_.begin() + bucket_begin_[b + 1],
              [](const Corner& a, const Corner& o) { return KeyLess(a.key, o.key); });
  }
}

int EdgeTable::Neighbour(uint32_t i, int k, uint32_t j) const {
  const Tri& t = tris_[i];
  const Tri& u = tris_[j];
  if (j == i || !Has(u, t.key[k]) || !Has(u, t.key[(k + 1) % 3])) return -1;
  if (Dot(t.normal, u.normal) >= kActiveEdgeCos) return 0;  // flat
  // The neighbour lies behind this face for a convex edge, in front of it for a concave one.
  const Vec3 centroid = (u.v[0] + u.v[1] + u.v[2]) * (1.0f / 3.0f);
  return Dot(centroid - t.v[k], t.normal) < 0 ? 1 : 0;
}

uint8_t* EdgeTable::Memo(uint32_t i, int k) const {
  if (tris_.size() <= kIndexedTriangles) return nullptr;
  if (corners_.empty()) BuildIndex();
  // Triangles gathered after the index was built (a sweep gathers box after box) are not in it.
  if (i >= indexed_) return nullptr;
  return &memo_[3 * size_t(i) + size_t(k)];
}

bool EdgeTable::Active(uint32_t i, int k) const {
  uint8_t* memo = Memo(i, k);
  if (memo != nullptr && (*memo & 3) != 0) return (*memo & 3) == 2;
  bool any_neighbour = false;
  // Every neighbour has a corner at the edge's first vertex.
  const uint16_t other = Hash16(tris_[i].key[(k + 1) % 3]);
  const bool convex = ForEachCornerAt(tris_[i].key[k], [&](const Corner& c) {
    if (c.next_hash != other && c.prev_hash != other) return false;  // not at the edge's end
    const int n = Neighbour(i, k, c.tri);
    any_neighbour |= n >= 0;
    return n == 1;
  });
  // No neighbour: the surface ends here (world border), which is a real edge.
  const bool active = convex || !any_neighbour;
  if (memo != nullptr) *memo |= active ? 2 : 1;
  return active;
}

bool EdgeTable::VertexActive(uint32_t i, int k) const {
  const uint8_t* memo = Memo(i, k);
  if (memo != nullptr && (*memo & 12) != 0) return (*memo & 12) == 8;
  const VertexKey& v = tris_[i].key[k];
  const bool active = ForEachCornerAt(v, [&](const Corner& c) {
    return Active(c.tri, c.corner) || Active(c.tri, (c.corner + 2) % 3);
  });
  // The answer belongs to the vertex: every corner there shares it.
  if (memo != nullptr) {
    ForEachCornerAt(v, [&](const Corner& c) {
      memo_[3 * size_t(c.tri) + c.corner] |= active ? 8 : 4;
      return false;
    });
  }
  return active;
}

bool FixInternalEdge(const PosedShape& s, const Tri& t, uint32_t tri_index, const EdgeTable& edges,
                     bool recompute_depth, RawContact* c) {
  if (Dot(c->normal, t.normal) >= 0.99995f) return false;  // already the face normal (~0.6 deg)
  // Barycentric coordinates of the contact point.
  const Vec3 e1 = t.v[1] - t.v[0], e2 = t.v[2] - t.v[0], p = c->position - t.v[0];
  const Vec3 n = Cross(e1, e2);
  const float inv = 1.0f / LengthSq(n);
  const float w1 = Dot(Cross(p, e2), n) * inv, w2 = Dot(Cross(e1, p), n) * inv;
  const float w[3] = {1.0f - w1 - w2, w1, w2};
  int small = 0, mask = 0;
  for (int k = 0; k < 3; ++k) {
    if (w[k] < kFeatureEpsilon) ++small, mask |= 1 << k;
  }
  bool active;
  if (small == 0) {
    active = false;  // a face point: its normal is the face normal
  } else if (small == 1) {
    // On the edge opposite the small corner: corners k+1, k+2, i.e. edge (k + 1) % 3.
    int opposite = mask == 1 ? 0 : (mask == 2 ? 1 : 2);
    active = edges.Active(tri_index, (opposite + 1) % 3);
  } else {
    // At a vertex: the corner whose weight is not small.
    int v = (mask & 1) == 0 ? 0 : ((mask & 2) == 0 ? 1 : 2);
    active = edges.VertexActive(tri_index, v);
  }
  if (active) return false;
  c->normal = t.normal;
  if (recompute_depth) c->depth = PlaneDepth(s, t);
  return true;
}

}  // namespace voxcol::terrain
