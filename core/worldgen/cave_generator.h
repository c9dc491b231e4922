// Procedural cave world: a noisy continent with worm tunnels carved out and seas below a level.
//
// Density fields follow the procedural-caves seed document: Φ < 0 is rock, Φ > 0 is air.
//   Φ_continent = y - H_base - A * fBm4(P / L)
//   Φ_cave      = (|N_A(P s)| + |N_B(P s)| - R) / (s g)   (near zero where both noise surfaces
//                                                           meet: a winding tube)
//   Φ           = SmoothMax(Φ_continent, -Φ_cave, k)       (smooth CSG difference)
// All fields are scaled to roughly voxel units so that occupancy = clamp(0.5 - Φ, 0, 1) gives a
// smooth surface. Open ground (continent air) below the sea level is water; tunnels stay dry.
#pragma once

#include <cstdint>

#include "core/voxel/world.h"
#include "core/worldgen/perlin_noise.h"

namespace voxcol {

struct CaveParams {
  float base_height = 0.0f;           // voxels: mean ground level (world y = 0 is the world centre)
  float continent_amplitude = 40.0f;  // voxels: height of the fBm hills
  float continent_wavelength = 160.0f;  // voxels: lowest fBm octave is twice this frequency
  float tunnel_scale = 1.0f / 40.0f;    // noise frequency of the worm fields, per voxel
  float tunnel_radius = 0.2f;           // R in noise units; tubes of roughly 3-6 voxels radius
  float blend = 2.0f;                   // voxels: smoothing width k of the CSG difference
  int32_t sea_level = -4;               // voxel y: open air below this (not tunnels) becomes water
};

class CaveGenerator : public ChunkGenerator {
 public:
  static constexpr uint32_t kVersion = 1;

  CaveGenerator(uint64_t seed, const IntBox& voxel_bounds, CaveParams params = {});

  void Generate(const ChunkKey& key, Chunk* out) const override;
  uint32_t Version() const override { return kVersion; }
  // For the thin parts (a layer, a row, a corner) of neighbours that the broadphase and the
  // mesher read: rows of eight along an axis the part spans whole (LineVoxels), else voxel by
  // voxel (VoxelAt).
  void GeneratePart(const ChunkKey& key, const IntBox& voxels, Chunk* out) const override;
  bool GeneratesPartsAlone() const override { return true; }
  // From interval bounds of the fields over the box's voxel centres, without generating it
  // (cave_bounds.cc): true with *fill when every voxel Generate writes in `voxels` is `fill`
  // (open air, open sea, or rock at full occupancy). False when the bounds do not prove it.
  bool ProvenUniform(const IntBox& voxels, Voxel* fill) const override;
  // From the same bounds: true with *solid when the density keeps every voxel's occupancy on one
  // side of 128 (the iso level), so every voxel is IsSolid or none is.
  bool ProvenSide(const IntBox& voxels, bool* solid) const override;

  // Interval bounds of the continent field and the density over the voxel centres of the box
  // [first, last] (voxel indices, inclusive), float rounding of the generator included. The cave
  // field is bounded only when `with_caves` (else density is bounded below by the continent alone
  // and above by +infinity). Exposed for tests.
  struct FieldBounds {
    PerlinNoise::Range continent, density;
  };
  FieldBounds BoundFields(const Int3& first, const Int3& last, bool with_caves) const;

  // Signed density at a point in voxel coordinates (voxel (i,j,k) has its centre at i+0.5, ...).
  float Density(float x, float y, float z) const;
  // Voxel the generator produces at `voxel` (independent of chunking).
  Voxel VoxelAt(const Int3& voxel) const;

 private:
  // Continent field and density of every voxel centre of a chunk, indexed like Chunk::voxels. In
  // a chunk where every continent value is >= 1 (open throughout, whatever the caves), the density
  // is not computed and holds the continent instead: MakeVoxel gives the same voxels.
  struct ChunkFields {
    float continent[kChunkVoxels];
    float density[kChunkVoxels];
  };
  // Returns true for a chunk open throughout (continent >= 1 everywhere; density not computed).
  bool Fields(const Int3& origin, ChunkFields* fields) const;
  // Generate's fill of an open chunk: water below the sea level inside the world, else air.
  void FillOpen(const Int3& origin, Chunk* out) const;
  // True for a chunk Generate fills as open sky without evaluating the noise: air, and water in
  // the voxels of the world below the sea level.
  bool AboveHills(const Int3& origin) const;
  // ProvenUniform for a box of voxels that all lie in chunks Generate fills from the fields
  // (FieldUniform), or all in AboveHills chunks (SkyUniform).
  bool FieldUniform(const IntBox& box, Voxel* fill) const;
  bool SkyUniform(const IntBox& box, Voxel* fill) const;
  bool FieldSide(const IntBox& box, bool* solid) const;
  // Where the proofs split a box: the lowest voxel row in an AboveHills chunk row, or max.y.
  int32_t SkySplit(const IntBox& box) const;
  // The parameters' signs the bounds assume.
  bool BoundsHold() const;
  // VoxelAt of the eight voxels first + i e_axis, i in [0, 8), into out[i], with
  // PerlinNoise::AtLine. False (out untouched) where AtLine is not available.
  bool LineVoxels(int axis, const Int3& first, Voxel* out) const;
  // LineVoxels' last step: the eight voxels from their fields.
  void WriteLine(int axis, const Int3& first, const float* continent, const float* density,
                 Voxel* out) const;
  // The voxel of a voxel row `vy` with these field values.
  Voxel MakeVoxel(int32_t vy, float continent, float density) const;
  float Continent(float x, float y, float z) const;
  float Cave(float x, float y, float z) const;

  CaveParams params_;
  IntBox bounds_;
  PerlinNoise continent_noise_;
  PerlinNoise tunnel_a_;
  PerlinNoise tunnel_b_;
};

}  // namespace voxcol
