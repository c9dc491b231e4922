#include "core/query/active_edges.h"

#include <utility>

namespace voxcol::terrain {

size_t EdgeTable::Bucket(const VertexKey& v) const {
  const uint32_t x = uint32_t(v.x >> kCellShift), y = uint32_t(v.y >> kCellShift),
                 z = uint32_t(v.z >> kCellShift);
  return size_t((x * 0x9E3779B1u ^ y * 0x85EBCA77u ^ z * 0xC2B2AE3Du) >> 7) & bucket_mask_;
}

namespace {

// Index buffers given back by finished tables on this thread.
template <typename Buffers>
std::vector<std::unique_ptr<Buffers>>& BufferPool() {
  thread_local std::vector<std::unique_ptr<Buffers>> pool;
  return pool;
}

}  // namespace

EdgeTable::~EdgeTable() {
  if (buf_) ReleaseBuffers(std::move(buf_));
}

std::unique_ptr<EdgeTable::Buffers> EdgeTable::AcquireBuffers() {
  auto& pool = BufferPool<Buffers>();
  if (pool.empty()) return std::make_unique<Buffers>();
  std::unique_ptr<Buffers> b = std::move(pool.back());
  pool.pop_back();
  return b;
}

void EdgeTable::ReleaseBuffers(std::unique_ptr<Buffers> b) {
  const size_t bytes =
      b->corners.capacity() * sizeof(Corner) + b->unknown.capacity() * sizeof(Corner) +
      (b->bucket_begin.capacity() + b->next.capacity()) * sizeof(uint32_t) + b->memo.capacity();
  auto& pool = BufferPool<Buffers>();
  if (bytes <= kKeptBufferBytes && pool.size() < 4) pool.push_back(std::move(b));
}

void EdgeTable::BuildIndex() const {
  if (!buf_) buf_ = AcquireBuffers();
  Buffers& buf = *buf_;
  // 1. The corners whose chunk does not know them (on a seam, or a triangle without a chunk):
  // every look-up is at such a vertex (an unknown edge has both corners there), and every corner
  // there is one of them.
  indexed_ = uint32_t(tris_.size());
  buf.memo.assign(tris_.size() * 3, 0);
  buf.unknown.clear();
  const ChunkCollision* chunk = nullptr;  // triangles come chunk by chunk: one look-up per run
  const uint16_t* flags = nullptr;
  for (uint32_t j = 0; j < tris_.size(); ++j) {  // one pass over the triangles, in order
    const Tri& t = tris_[j];
    if (t.chunk != chunk) chunk = t.chunk, flags = chunk != nullptr ? chunk->EdgeFlags() : nullptr;
    const uint16_t f = flags != nullptr ? flags[t.index] : 0;
    if (f == edge_flags::kAllKnown) continue;
    for (int c = 0; c < 3; ++c) {
      if ((f & edge_flags::CornerKnown(c)) == 0) buf.unknown.push_back(CornerOf(j, c));
    }
  }
  // 2. A power of two of buckets, about kPairsPerBucket pairs each.
  const size_t pairs = buf.unknown.size();
  size_t buckets = 64;
  while (buckets * kPairsPerBucket < pairs) buckets *= 2;
  bucket_mask_ = buckets - 1;
  // 3. Counting sort of the pairs by bucket.
  buf.bucket_begin.assign(buckets + 1, 0);
  for (const Corner& c : buf.unknown) ++buf.bucket_begin[Bucket(c.key) + 1];
  for (size_t b = 0; b < buckets; ++b) buf.bucket_begin[b + 1] += buf.bucket_begin[b];
  buf.next.assign(buf.bucket_begin.begin(), buf.bucket_begin.end() - 1);
  if (buf.corners.size() < pairs) buf.corners.resize(pairs);
  for (const Corner& c : buf.unknown) buf.corners[buf.next[Bucket(c.key)]++] = c;
  // 4. Large buckets in key order (the order among equal keys changes no answer: Active and
  // VertexActive ask whether any neighbour qualifies).
  for (size_t b = 0; b < buckets; ++b) {
    const uint32_t lo = buf.bucket_begin[b], hi = buf.bucket_begin[b + 1];
    if (hi - lo <= uint32_t(kScannedBucket)) continue;
    std::sort(buf.corners.begin() + lo, buf.corners.begin() + hi,
              [](const Corner& a, const Corner& o) { return KeyLess(a.key, o.key); });
  }
}

int EdgeTable::Neighbour(uint32_t i, int k, uint32_t j) const {
  const Tri& t = tris_[i];
  const Tri& u = tris_[j];
  if (j == i || !Has(u, t.key[k]) || !Has(u, t.key[(k + 1) % 3])) return -1;
  return ConvexAcross(t.v, t.normal, k, u.v, u.normal) ? 1 : 0;
}

uint8_t* EdgeTable::Memo(uint32_t i, int k) const {
  if (tris_.size() <= kIndexedTriangles) return nullptr;
  // A sweep gathers box after box: index (and forget answers) again when triangles were added.
  if (indexed_ != tris_.size()) BuildIndex();
  return &buf_->memo[3 * size_t(i) + size_t(k)];
}

bool EdgeTable::Active(uint32_t i, int k) const {
  if (const uint16_t f = FlagsOf(i); (f & edge_flags::EdgeKnown(k)) != 0) {
    return (f & edge_flags::EdgeActive(k)) != 0;
  }
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

bool EdgeTable::ActiveAround(uint32_t i, int k, uint16_t far_hash, const Corner* around,
                             int count) const {
  if (const uint16_t f = FlagsOf(i); (f & edge_flags::EdgeKnown(k)) != 0) {
    return (f & edge_flags::EdgeActive(k)) != 0;
  }
  uint8_t* memo = Memo(i, k);
  if (memo != nullptr && (*memo & 3) != 0) return (*memo & 3) == 2;
  bool any_neighbour = false, convex = false;
  for (int m = 0; m < count && !convex; ++m) {
    const Corner& c = around[m];
    if (c.next_hash != far_hash && c.prev_hash != far_hash) continue;
    const int n = Neighbour(i, k, c.tri);
    any_neighbour |= n >= 0;
    convex = n == 1;
  }
  const bool active = convex || !any_neighbour;  // as in Active
  if (memo != nullptr) *memo |= active ? 2 : 1;
  return active;
}

bool EdgeTable::VertexActive(uint32_t i, int k) const {
  if (const uint16_t f = FlagsOf(i); (f & edge_flags::CornerKnown(k)) != 0) {
    return (f & edge_flags::CornerActive(k)) != 0;
  }
  const uint8_t* memo = Memo(i, k);
  if (memo != nullptr && (*memo & 12) != 0) return (*memo & 12) == 8;
  const VertexKey& v = tris_[i].key[k];
  // Every neighbour across an edge at v has a corner at v too: one look-up finds them all.
  Corner around[kMaxAround];
  int count = 0;
  const bool crowded = ForEachCornerAt(v, [&](const Corner& c) {
    if (count == kMaxAround) return true;
    around[count++] = c;
    return false;
  });
  bool active = false;
  if (crowded) {
    active = ForEachCornerAt(v, [&](const Corner& c) {
      return Active(c.tri, c.corner) || Active(c.tri, (c.corner + 2) % 3);
    });
  } else {
    // Corner c's edges at v: edge c (v to corner c + 1) and edge c + 2 (corner c + 2 to v).
    for (int m = 0; m < count && !active; ++m) {
      const Corner& c = around[m];
      active = ActiveAround(c.tri, c.corner, c.next_hash, around, count) ||
               ActiveAround(c.tri, (c.corner + 2) % 3, c.prev_hash, around, count);
    }
  }
  // The answer belongs to the vertex: every corner there shares it.
  if (memo != nullptr) {
    auto mark = [&](const Corner& c) {
      buf_->memo[3 * size_t(c.tri) + c.corner] |= active ? 8 : 4;
      return false;
    };
    if (crowded) {
      ForEachCornerAt(v, mark);
    } else {
      for (int m = 0; m < count; ++m) mark(around[m]);
    }
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
