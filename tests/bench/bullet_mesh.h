// Bullet's view of one chunk mesh, shared by the benchmarks that run Bullet as a peer.
#pragma once

#include <btBulletCollisionCommon.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "core/mesh/chunk_mesh.h"

namespace voxcol::bench {

// The 16-bit indices straight from the ChunkMesh (no copy) over `vertices`, the mesh's decoded
// float vertices (Bullet needs floats). Both must outlive the returned array. `m` must keep its
// indices as built (not ChunkMesh::NarrowIndices'd).
inline std::unique_ptr<btTriangleIndexVertexArray> BulletMesh(const ChunkMesh& m,
                                                              const std::vector<Vec3>& vertices) {
  if (m.narrow()) {
    std::fprintf(stderr, "BulletMesh: the mesh's indices are one byte each; Bullet reads 16-bit\n");
    std::abort();
  }
  btIndexedMesh im;
  im.m_numTriangles = int(m.triangle_count());
  im.m_triangleIndexBase = static_cast<const unsigned char*>(m.IndexData());
  im.m_triangleIndexStride = 3 * sizeof(uint16_t);
  im.m_indexType = PHY_SHORT;
  im.m_numVertices = int(vertices.size());
  im.m_vertexBase = reinterpret_cast<const unsigned char*>(vertices.data());
  im.m_vertexStride = sizeof(Vec3);
  im.m_vertexType = PHY_FLOAT;
  auto array = std::make_unique<btTriangleIndexVertexArray>();
  array->addIndexedMesh(im, PHY_SHORT);
  return array;
}

}  // namespace voxcol::bench
