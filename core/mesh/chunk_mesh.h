// Indexed triangle mesh of one chunk's terrain surface, the input of the kD-tree.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/geometry/vec3.h"

namespace voxcol {

struct ChunkMesh {
  std::vector<Vec3> vertices;      // world units, welded: one per crossed lattice edge
  std::vector<uint16_t> indices;   // three per triangle, counter-clockwise seen from empty space
  std::vector<uint8_t> materials;  // one solid material per triangle

  uint32_t triangle_count() const { return uint32_t(materials.size()); }
  bool empty() const { return materials.empty(); }
  // Corner k (0..2) of triangle `tri`, world units.
  const Vec3& Corner(uint32_t tri, int k) const { return vertices[indices[3 * tri + k]]; }
  // Unit normal of triangle `tri` pointing to empty space.
  Vec3 Normal(uint32_t tri) const {
    const Vec3& a = Corner(tri, 0);
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
    return vertices.size() * sizeof(Vec3) + indices.size() * sizeof(uint16_t) + materials.size();
  }
};

}  // namespace voxcol
