// One Embree 3 scene holding the triangles of every meshed chunk of a world (WorldMeshes), shared
// by the whole-world benchmark peer and the Embree oracle test.
#pragma once

#include <embree3/rtcore.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "tests/bench/world_scenes.h"

namespace voxcol::bench {

class EmbreeWorld {
 public:
  // One device ("threads=1": the build and every query on the calling thread), one scene, one
  // triangle geometry: all chunk meshes concatenated (float vertices, 32-bit indices).
  explicit EmbreeWorld(const WorldMeshes& m) {
    device_ = rtcNewDevice("threads=1");
    scene_ = rtcNewScene(device_);
    size_t vertex_count = 0;
    for (const std::vector<Vec3>& fv : m.float_vertices) vertex_count += fv.size();
    RTCGeometry g = rtcNewGeometry(device_, RTC_GEOMETRY_TYPE_TRIANGLE);
    auto* v = static_cast<Vec3*>(rtcSetNewGeometryBuffer(
        g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3, sizeof(Vec3), vertex_count));
    auto* idx = static_cast<uint32_t*>(rtcSetNewGeometryBuffer(
        g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3, 3 * sizeof(uint32_t), m.triangles));
    uint32_t base = 0, triangles = 0;
    for (size_t c = 0; c < m.meshes.size(); ++c) {
      const std::vector<Vec3>& fv = m.float_vertices[c];
      std::memcpy(v + base, fv.data(), fv.size() * sizeof(Vec3));
      const ChunkMesh& mesh = m.meshes[c];
      for (uint32_t i = 0; i < 3 * mesh.triangle_count(); ++i) *idx++ = base + mesh.Index(i);
      first_triangle_.push_back(triangles);
      triangles += m.meshes[c].triangle_count();
      base += uint32_t(fv.size());
    }
    rtcCommitGeometry(g);
    rtcAttachGeometry(scene_, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(scene_);
    rtcInitIntersectContext(&context_);
  }
  ~EmbreeWorld() {
    rtcReleaseScene(scene_);
    rtcReleaseDevice(device_);
  }
  EmbreeWorld(const EmbreeWorld&) = delete;
  EmbreeWorld& operator=(const EmbreeWorld&) = delete;

  // Closest hit along the normalized direction within max_distance; both faces count (Embree's
  // default: no back-face culling). Returns the distance, or a negative value on a miss. Sets
  // *chunk (index into WorldMeshes) and *triangle (in that chunk's mesh) when given.
  float Closest(const RaycastInput& r, size_t* chunk = nullptr,
                uint32_t* triangle = nullptr) const {
    const Vec3 d = Normalize(r.direction);
    RTCRayHit rh;
    rh.ray = {r.origin.x, r.origin.y, r.origin.z,     0.0f, d.x, d.y,
              d.z,        0.0f,       r.max_distance, ~0u,  0,   0};
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rtcIntersect1(scene_, &context_, &rh);
    if (rh.hit.geomID == RTC_INVALID_GEOMETRY_ID) return -1;
    if (chunk != nullptr || triangle != nullptr) {
      const size_t c =
          size_t(std::upper_bound(first_triangle_.begin(), first_triangle_.end(), rh.hit.primID) -
                 first_triangle_.begin()) -
          1;
      if (chunk != nullptr) *chunk = c;
      if (triangle != nullptr) *triangle = rh.hit.primID - first_triangle_[c];
    }
    return rh.ray.tfar;
  }

 private:
  RTCDevice device_;
  RTCScene scene_;
  mutable RTCIntersectContext context_;
  std::vector<uint32_t> first_triangle_;  // per chunk: index of its first triangle in the scene
};

}  // namespace voxcol::bench
