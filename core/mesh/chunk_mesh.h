// Indexed triangle mesh of one chunk's terrain surface, the input of the kD-tree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/geometry/vec3.h"

namespace voxcol {

// A vertex in 16-bit fixed point: voxel units relative to the chunk's min corner, in steps of
// kVertexQuantum (a chunk's cells span [0.5, 8.5] voxels, and 8.5 * 4096 < 65536).
using QuantizedVertex = std::array<uint16_t, 3>;
constexpr int32_t kVertexSteps = 4096;                 // fixed-point steps per voxel
constexpr float kVertexQuantum = 1.0f / kVertexSteps;  // voxels

struct ChunkMesh {
  Int3 origin;                            // voxel coordinates of the chunk's min corner
  float voxel_size = 1;                   // world units per voxel
  std::vector<QuantizedVertex> vertices;  // welded: one per crossed lattice edge
  std::vector<uint16_t> indices;   // three per triangle, counter-clockwise seen from empty space
  std::vector<uint8_t> materials;  // one solid material per triangle

  uint32_t triangle_count() const { return uint32_t(materials.size()); }
  uint32_t vertex_count() const { return uint32_t(vertices.size()); }
  bool empty() const { return materials.empty(); }
  // The chunk's min corner on `axis` in fixed-point steps: adding a vertex coordinate gives the
  // vertex's global fixed-point value, the same for a lattice edge in every chunk.
  int32_t FixedOrigin(int axis) const { return Component(origin, axis) * kVertexSteps; }
  // Vertex i in world units. origin + q / 4096 is exact in float for |coordinate| < 4096 voxels,
  // so a vertex shared by two chunks (same global fixed-point value) decodes bit-identically.
  Vec3 Vertex(uint32_t i) const { return Decode(vertices[i]); }
  // A fixed-point position of this chunk in world units, as Vertex decodes it. Monotonic in each
  // coordinate, so the decoded min / max of fixed-point values is the min / max of decoded ones.
  Vec3 Decode(const QuantizedVertex& q) const {
    return Vec3(float(origin.x) + float(q[0]) * kVertexQuantum,
                float(origin.y) + float(q[1]) * kVertexQuantum,
                float(origin.z) + float(q[2]) * kVertexQuantum) *
           voxel_size;
  }
  // Corner k (0..2) of triangle `tri`, world units.
  Vec3 Corner(uint32_t tri, int k) const { return Vertex(indices[3 * tri + k]); }
  // Unit normal of triangle `tri` pointing to empty space.
  Vec3 Normal(uint32_t tri) const {
    const Vec3 a = Corner(tri, 0);
    return Normalize(Cross(Corner(tri, 1) - a, Corner(tri, 2) - a));
  }
  // Clears the mesh and keeps the capacity for reuse.
  void Clear() {
    vertices.clear();
    indices.clear();
    materials.clear();
  }
  // Bytes of mesh data (payload only, not vector headers or spare capacity).
  size_t DataBytes() const {
    return vertices.size() * sizeof(QuantizedVertex) + indices.size() * sizeof(uint16_t) +
           materials.size();
  }
};

}  // namespace voxcol
