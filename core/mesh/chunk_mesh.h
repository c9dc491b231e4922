// Indexed triangle mesh of one chunk's terrain surface, the input of the kD-tree. Per triangle:
// three vertex indices (16-bit as built, one byte each once narrowed) and a material byte (none
// when the chunk's triangles share one);
// per vertex: a 16-bit fixed-point position and a normal sum in three half floats. KdTree::Build
// permutes the triangles (indices and materials together) into its leaf order, so that a leaf
// is a range of consecutive triangles; triangle indices always refer to the mesh as stored.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/geometry/vec3.h"
#include "core/mesh/mesh_array.h"

namespace voxcol {

// A vertex in 16-bit fixed point: voxel units relative to the chunk's min corner, in steps of
// kVertexQuantum (a chunk's cells span [0.5, 8.5] voxels, and 8.5 * 4096 < 65536).
using QuantizedVertex = std::array<uint16_t, 3>;
constexpr int32_t kVertexSteps = 4096;                 // fixed-point steps per voxel
constexpr float kVertexQuantum = 1.0f / kVertexSteps;  // voxels

// A vertex normal: three IEEE half floats (binary16) of the area-weighted sum of the face normals
// around the vertex, in voxel^2 units times kNormalScale. The sum keeps its length (the smooth
// normal interpolates the sums, so larger neighbourhoods weigh more); halves keep ~11 bits of
// every component whatever its size. Software conversion: the baseline is SSE2 (no F16C).
using PackedNormal = std::array<uint16_t, 3>;
constexpr float kNormalScale = 512.0f;  // |sum| <= ~30 voxel^2 (valence x max 2 x area) < 65504

namespace mesh_internal {
inline uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace mesh_internal

// Float to half, round to nearest (ties away), saturating at the largest finite half. Exact for
// halves; subnormal halves come out through the float subnormal range (x * 2^-112).
inline uint16_t FloatToHalf(float f) {
  using namespace mesh_internal;
  const uint32_t sign = (FloatBits(f) >> 16) & 0x8000u;
  float a = BitsFloat(FloatBits(f) & 0x7fffffffu);
  if (!(a < 65504.0f)) a = 65504.0f;                  // also NaN -> max
  const uint32_t u = FloatBits(a * 1.92592994e-34f);  // 2^-112: half exponent bias in the float
  return uint16_t(sign | ((u + 0x1000u) >> 13));
}
inline float HalfToFloat(uint16_t h) {
  using namespace mesh_internal;
  const float a = BitsFloat(uint32_t(h & 0x7fffu) << 13) * 5.19229686e33f;  // 2^112
  return BitsFloat(FloatBits(a) | uint32_t(h & 0x8000u) << 16);
}

// The cells of a chunk entirely inside the surface (all eight corners inside: cube case 255), which
// hold no triangles: bit x | z << 3 of word y for the cell whose low corner is local voxel
// (x, y, z), the layout of the broadphase's SliceMasks. MeshChunk computes them beside the mesh.
using SolidCells = std::array<uint64_t, 8>;

struct ChunkMesh {
  Int3 origin;                          // voxel coordinates of the chunk's min corner
  float voxel_size = 1;                 // world units per voxel
  MeshArray<QuantizedVertex> vertices;  // welded: one per crossed lattice edge
  // One solid material per triangle, or none when every triangle has uniform_material (most
  // chunks: CompactMaterials). Read them with Material(tri).
  MeshArray<uint8_t> materials;
  // One per vertex (ComputeVertexNormals) or none (a mesh built by hand).
  MeshArray<PackedNormal> normals;
  uint8_t uniform_material = 0;  // see `materials`

  uint32_t triangle_count() const { return index_count_ / 3; }
  uint32_t vertex_count() const { return uint32_t(vertices.size()); }
  bool empty() const { return index_count_ == 0; }

  // Triangles are three corner indices each, counter-clockwise seen from empty space: 16 bits each
  // as built, one byte each once NarrowIndices moved a mesh of at most 256 vertices to that form.
  // Appends a triangle; only before NarrowIndices.
  void AddTriangle(uint16_t a, uint16_t b, uint16_t c) {
    index_words_.insert(index_words_.end(), {a, b, c});
    index_count_ += 3;
  }
  bool narrow() const { return narrow_; }
  // Corner index i (3 * triangle + corner) in either form.
  uint32_t Index(size_t i) const {
    return narrow_ ? uint32_t(NarrowData()[i]) : uint32_t(index_words_[i]);
  }
  // The three corner indices of triangle `tri`, with one test of the form.
  std::array<uint32_t, 3> TriangleIndices(uint32_t tri) const {
    if (!narrow_) {
      const uint16_t* p = index_words_.data() + 3 * size_t(tri);
      return {p[0], p[1], p[2]};
    }
    const uint8_t* p = NarrowData() + 3 * size_t(tri);
    return {p[0], p[1], p[2]};
  }
  // fn(p) with p the first corner index: a uint16_t* or a uint8_t* (const unless the mesh is
  // mutable: KdTree::Build permutes them). A loop that reads many indices chooses the form once.
  template <typename Fn>
  decltype(auto) WithIndices(Fn&& fn) const {
    return narrow_ ? fn(NarrowData()) : fn(static_cast<const uint16_t*>(index_words_.data()));
  }
  template <typename Fn>
  decltype(auto) WithIndices(Fn&& fn) {
    return narrow_ ? fn(reinterpret_cast<uint8_t*>(index_words_.data())) : fn(index_words_.data());
  }
  // The first index's address, whatever its form (a prefetch needs no more).
  const void* IndexData() const { return index_words_.data(); }
  // Moves the indices to one byte each when every vertex index fits (at most 256 vertices), in
  // place: the array keeps its capacity. Triangles, their order and every Index() stay the same.
  void NarrowIndices() {
    if (narrow_ || index_count_ == 0 || vertices.size() > 256) return;
    uint16_t* words = index_words_.data();
    uint8_t* bytes = reinterpret_cast<uint8_t*>(words);
    // Front to back: byte i lies before word i (bytes 2i and 2i + 1), so no word is overwritten
    // before it is read.
    for (uint32_t i = 0; i < index_count_; ++i) bytes[i] = uint8_t(words[i]);
    if (index_count_ % 2 != 0) bytes[index_count_] = 0;  // the last word's spare byte
    index_words_.resize((index_count_ + 1) / 2);
    narrow_ = true;
  }
  size_t IndexBytes() const { return size_t(index_count_) * (narrow_ ? 1 : 2); }
  // The solid material of triangle `tri`.
  uint8_t Material(uint32_t tri) const {
    return materials.empty() ? uniform_material : materials[tri];
  }
  // Stores no per-triangle materials when all triangles have the same one (kept in
  // uniform_material). An empty mesh keeps uniform_material 0.
  void CompactMaterials() {
    if (materials.empty()) return;
    for (uint8_t m : materials) {
      if (m != materials[0]) return;
    }
    uniform_material = materials[0];
    materials.clear();
  }
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
  Vec3 Corner(uint32_t tri, int k) const { return Vertex(Index(3 * tri + k)); }
  // Unit normal of triangle `tri` pointing to empty space.
  Vec3 Normal(uint32_t tri) const {
    return FaceNormal(Corner(tri, 0), Corner(tri, 1), Corner(tri, 2));
  }
  // The unit normal of the triangle (a, b, c) as Normal computes it from decoded corners.
  static Vec3 FaceNormal(const Vec3& a, const Vec3& b, const Vec3& c) {
    return Normalize(Cross(b - a, c - a));
  }
  bool has_normals() const { return !vertices.empty() && normals.size() == vertices.size(); }
  // Area-weighted normal sum of vertex i (ComputeVertexNormals), up to one positive scale shared
  // by every vertex of every mesh: normalize it, or interpolate and then normalize.
  Vec3 VertexNormal(uint32_t i) const {
    const PackedNormal& n = normals[i];
    return Vec3(HalfToFloat(n[0]), HalfToFloat(n[1]), HalfToFloat(n[2]));
  }
  // Fills `normals`: per vertex, the sum of Cross(b - a, c - a) over the triangles using it (twice
  // their area along their normal), from the 16-bit corners, in voxel^2 units x kNormalScale.
  void ComputeVertexNormals() {
    std::vector<std::array<float, 3>>& sums = NormalScratch();
    sums.assign(vertices.size(), {0.0f, 0.0f, 0.0f});
    constexpr float kScale = kNormalScale / (float(kVertexSteps) * float(kVertexSteps));
    for (size_t t = 0; t < 3 * size_t(triangle_count()); t += 3) {
      const QuantizedVertex &a = vertices[Index(t)], &b = vertices[Index(t + 1)],
                            &c = vertices[Index(t + 2)];
      float u[3], v[3];
      for (int k = 0; k < 3; ++k) {
        u[k] = float(int32_t(b[k]) - int32_t(a[k]));  // exact
        v[k] = float(int32_t(c[k]) - int32_t(a[k]));
      }
      const float n[3] = {(u[1] * v[2] - u[2] * v[1]) * kScale,
                          (u[2] * v[0] - u[0] * v[2]) * kScale,
                          (u[0] * v[1] - u[1] * v[0]) * kScale};
      for (int j = 0; j < 3; ++j) {
        std::array<float, 3>& s = sums[Index(t + j)];
        for (int k = 0; k < 3; ++k) s[k] += n[k];
      }
    }
    normals.resize(vertices.size());
    for (size_t i = 0; i < sums.size(); ++i)
      for (int k = 0; k < 3; ++k) normals[i][k] = FloatToHalf(sums[i][k]);
  }
  // Bytes of the arrays as CopyPacked lays them out (2-byte elements first, then the materials).
  size_t ArrayBytes() const {
    return vertices.bytes() + normals.bytes() + index_words_.bytes() + materials.bytes();
  }
  // Makes this mesh a copy of `from` whose arrays lie back to back at `to` (2-byte aligned,
  // from.ArrayBytes() long), which must outlive this mesh's reads (MeshArray::Borrow): one
  // allocation for all of them, and no copy in between.
  void CopyPacked(const ChunkMesh& from, char* to) {
    static_assert(alignof(QuantizedVertex) <= 2 && alignof(PackedNormal) <= 2 &&
                      sizeof(QuantizedVertex) % 2 == 0 && sizeof(PackedNormal) % 2 == 0,
                  "every array but the last (materials, bytes) keeps the next one 2-byte aligned");
    origin = from.origin;
    voxel_size = from.voxel_size;
    uniform_material = from.uniform_material;
    narrow_ = from.narrow_;
    index_count_ = from.index_count_;
    to = vertices.BorrowCopyOf(from.vertices, to);
    to = normals.BorrowCopyOf(from.normals, to);
    to = index_words_.BorrowCopyOf(from.index_words_, to);
    materials.BorrowCopyOf(from.materials, to);
  }
  // Clears the mesh and keeps the capacity for reuse.
  void Clear() {
    vertices.clear();
    index_words_.clear();
    index_count_ = 0;
    narrow_ = false;
    materials.clear();
    uniform_material = 0;
    normals.clear();
  }
  // Bytes of mesh data (payload only, not vector headers or spare capacity).
  size_t DataBytes() const {
    return vertices.size() * sizeof(QuantizedVertex) + IndexBytes() + materials.size() +
           normals.size() * sizeof(PackedNormal);
  }

 private:
  // One-byte indices live in the words' bytes; uint8_t may alias them.
  const uint8_t* NarrowData() const {
    return reinterpret_cast<const uint8_t*>(index_words_.data());
  }
  static std::vector<std::array<float, 3>>& NormalScratch() {
    thread_local std::vector<std::array<float, 3>> sums;
    return sums;
  }

  bool narrow_ = false;       // the indices are one byte each
  uint32_t index_count_ = 0;  // three per triangle
  // The corner indices: 16-bit, or when narrow_ one byte each in the words' bytes (one array for
  // either form).
  MeshArray<uint16_t> index_words_;
};

}  // namespace voxcol
