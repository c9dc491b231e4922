// Contacts of a convex shape with gathered terrain triangles: the closest feature per triangle
// (closed forms for spheres and capsules, SAT for boxes, GJK / EPA otherwise), internal edges
// fixed (active_edges.h), and face contacts for boxes and capsules lying on a face. Internal to
// core/query.
#pragma once

#include <vector>

#include "core/query/terrain_triangles.h"

namespace voxcol::terrain {

// Closest-feature contact of the shape with one triangle when they are within `margin`. Contacts
// from behind the triangle (the shape's core inside the solid) push out through the front face.
// `core` is RoundCore(s), taken once per query.
bool ContactWithTriangle(const PosedShape& s, const RoundCore& core, const Tri& t, float margin,
                         RawContact* out);

// The shape's feature facing the triangle, as core points: the box face (4 corners) whose outward
// normal is most opposed to `n`, or the capsule's segment (2 points). 0 for other shapes. With
// out == nullptr only the count.
int IncidentFeature(const PosedShape& s, const Vec3& n, Vec3 out[4]);

// Contacts of the shape with every gathered triangle within `margin`, internal edges fixed. With
// `face_points`, a contact along a triangle's face normal is replaced by the clipped incident
// feature of boxes and capsules (AddFacePoints), so a box resting on the ground reports its
// corners and a lying capsule both ends.
// Stops early (out then holds what was found so far) when g.Interrupted(); callers check g.stopped.
void CollectContacts(const PosedShape& s, Gathered& g, float margin, bool face_points,
                     std::vector<RawContact>* out);

}  // namespace voxcol::terrain
