// Which edges and corners of a chunk mesh's triangles are real edges of the solid, as far as the
// chunk's own triangles decide it. The contact queries (core/query/active_edges.h) give a contact
// on an edge or corner that only splits a flat or concave surface the triangle's face normal; they
// used to find every triangle's neighbours among the triangles a query gathered, through an index
// built per query (most of a large sphere's contacts time). Here the answer is computed once per
// chunk mesh and kept with it.
//
// A neighbour across an edge shares both of its corners. A corner that lies on one of the chunk's
// boundary planes (a seam vertex) can also belong to triangles of the neighbouring chunks, so an
// edge with both corners on seams, and a seam corner, are left unknown: the query decides them
// from the gathered triangles of both chunks as before. Every other answer needs only this chunk's
// triangles: an edge with one corner off the seams has all of its neighbours here, and so does a
// corner off the seams. The answers are those of the same test on the same decoded floats
// (ChunkMesh::Corner, ChunkMesh::Normal), made over the whole mesh instead of the gathered part.
#pragma once

#include <cstdint>
#include <vector>

#include "core/geometry/vec3.h"
#include "core/mesh/chunk_mesh.h"

namespace voxcol {

// An edge whose two faces bend by less than this (cosine of ~5 degrees) is flat for contacts.
constexpr float kActiveEdgeCos = 0.996f;

// The neighbour test across edge k of triangle t (corners tv, unit normal tn) for a triangle u
// (corners uv, unit normal un) that shares the edge: true for a convex edge (u behind t's face)
// bent by more than kActiveEdgeCos, false for a flat or concave one.
inline bool ConvexAcross(const Vec3 tv[3], const Vec3& tn, int k, const Vec3 uv[3],
                         const Vec3& un) {
  if (Dot(tn, un) >= kActiveEdgeCos) return false;  // flat
  // The neighbour lies behind this face for a convex edge, in front of it for a concave one.
  const Vec3 centroid = (uv[0] + uv[1] + uv[2]) * (1.0f / 3.0f);
  return Dot(centroid - tv[k], tn) < 0;
}

// The bits of a triangle's edge flags: edge k runs from corner k to corner k + 1.
namespace edge_flags {
constexpr uint16_t EdgeKnown(int k) { return uint16_t(1u << k); }
constexpr uint16_t EdgeActive(int k) { return uint16_t(1u << (3 + k)); }
constexpr uint16_t CornerKnown(int k) { return uint16_t(1u << (6 + k)); }
constexpr uint16_t CornerActive(int k) { return uint16_t(1u << (9 + k)); }
// Every edge and corner known: the triangle has no corner on a seam.
constexpr uint16_t kAllKnown = 0x1c7;
}  // namespace edge_flags

// Fills `flags` with one entry per triangle of `mesh` (edge_flags bits). An edge is active when a
// neighbour makes it convex or it has no neighbour (the surface ends there); a corner is active
// when any edge that meets there is.
void ComputeEdgeFlags(const ChunkMesh& mesh, std::vector<uint16_t>* flags);

}  // namespace voxcol
