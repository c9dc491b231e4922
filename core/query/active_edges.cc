#include "core/query/active_edges.h"

namespace voxcol::terrain {

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
