#include "core/worldgen/cave_generator.h"

#include <emmintrin.h>

#include <algorithm>
#include <cmath>

namespace voxcol {

namespace {

// Polynomial smooth maximum (Quilez): equals max(a, b) when |a - b| >= k, rounded in between.
float SmoothMax(float a, float b, float k) {
  float h = std::clamp(0.5f + 0.5f * (b - a) / k, 0.0f, 1.0f);
  return a + h * (b - a) + k * h * (1.0f - h);
}

// SmoothMax of four lanes: the operations of SmoothMax in the same order. max/min with 0 and 1
// equal std::clamp here (h = 0.5 + x is never -0 or NaN for finite fields).
__m128 SmoothMax4(__m128 a, __m128 b, float k) {
  const __m128 kk = _mm_set1_ps(k), half = _mm_set1_ps(0.5f), one = _mm_set1_ps(1.0f);
  const __m128 d = _mm_sub_ps(b, a);
  __m128 h = _mm_add_ps(half, _mm_div_ps(_mm_mul_ps(half, d), kk));
  h = _mm_min_ps(_mm_max_ps(h, _mm_setzero_ps()), one);
  return _mm_add_ps(_mm_add_ps(a, _mm_mul_ps(h, d)),
                    _mm_mul_ps(_mm_mul_ps(kk, h), _mm_sub_ps(one, h)));
}

// std::lround(f) for f in [0, 255] without the library call: the fraction f - trunc(f) is exact.
uint8_t RoundOccupancy(float f) {
  const int t = int(f);
  return uint8_t(t + (f - float(t) >= 0.5f));
}

// Typical gradient magnitude of one Perlin field per noise unit; turns noise into voxel distances.
constexpr float kNoiseGradient = 1.5f;
// |Perlin| stays below this bound (improved noise peaks near 1.04).
constexpr float kNoiseBound = 1.1f;

// A voxel whose continent field is at least this is open (air or water) whatever the caves: the
// density SmoothMax(c, -cave) is >= c exactly (SmoothMax(a, b) - a = k h^2 in the blend, else
// max(a, b) - a), and in float >= c - 1e-4 (four roundings of values below ~300), so fill =
// clamp(0.5 - density) is 0 and the voxel depends on the continent alone. Fields skips the cave
// noise of a chunk open throughout and gives such voxels density = continent (also >= 0.5).
constexpr float kOpenContinent = 1.0f;

// Where tunnel field B samples its noise, offset from A's point (Cave, Fields, LineVoxels): B is
// offset so the two fields are decorrelated even where their permutations agree.
constexpr float kTunnelOffset[3] = {31.7f, 11.3f, -23.9f};

}  // namespace

CaveGenerator::CaveGenerator(uint64_t seed, const IntBox& voxel_bounds, CaveParams params)
    : params_(params),
      bounds_(voxel_bounds),
      continent_noise_(seed),
      tunnel_a_(seed ^ 0xA5A5A5A5A5A5A5A5ull),
      tunnel_b_(seed ^ 0x5A5A5A5A5A5A5A5Aull) {}

float CaveGenerator::Continent(float x, float y, float z) const {
  float inv = 1.0f / params_.continent_wavelength;
  return y - params_.base_height -
         params_.continent_amplitude * continent_noise_.Fbm(x * inv, y * inv, z * inv, 4);
}

float CaveGenerator::Cave(float x, float y, float z) const {
  float s = params_.tunnel_scale;
  float a = tunnel_a_.At(x * s, y * s, z * s);
  float b =
      tunnel_b_.At(x * s + kTunnelOffset[0], y * s + kTunnelOffset[1], z * s + kTunnelOffset[2]);
  return (std::fabs(a) + std::fabs(b) - params_.tunnel_radius) / (s * kNoiseGradient);
}

float CaveGenerator::Density(float x, float y, float z) const {
  return SmoothMax(Continent(x, y, z), -Cave(x, y, z), params_.blend);
}

Voxel CaveGenerator::VoxelAt(const Int3& v) const {
  if (!bounds_.Contains(v)) return Voxel{};
  float x = v.x + 0.5f, y = v.y + 0.5f, z = v.z + 0.5f;
  float continent = Continent(x, y, z);
  return MakeVoxel(v.y, continent, SmoothMax(continent, -Cave(x, y, z), params_.blend));
}

Voxel CaveGenerator::MakeVoxel(int32_t vy, float continent, float density) const {
  float fill = std::clamp(0.5f - density, 0.0f, 1.0f);
  uint8_t occupancy = RoundOccupancy(fill * 255.0f);
  if (occupancy == 0) {
    // Only open ground below the sea level floods; tunnels under the continent stay dry, otherwise
    // nearly every cave in a deep world would be under water.
    bool open_ground = continent > 0.0f;
    return open_ground && vy < params_.sea_level ? Voxel{kMaterialWater, 255} : Voxel{};
  }
  // Material by depth below the continent surface.
  float depth = -continent;
  uint8_t material = kMaterialRock;
  if (depth < 1.5f) {
    material = vy < params_.sea_level + 2 ? kMaterialSand : kMaterialGrass;
  } else if (depth < 5.0f) {
    material = kMaterialDirt;
  }
  return {material, occupancy};
}

// The fields of a whole chunk with the grid noise (PerlinNoise::AtGrid): the same operations in
// the same order as Continent, Cave and Density, so every value is bit-identical to theirs.
bool CaveGenerator::Fields(const Int3& origin, ChunkFields* f) const {
  constexpr int kN = kChunkSize;
  static_assert(kN == PerlinNoise::kGrid, "AtGrid evaluates one chunk");
  float p[3][kN];  // voxel centres per axis
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < kN; ++i) p[a][i] = Component(origin, a) + i + 0.5f;
  const float inv = 1.0f / params_.continent_wavelength, s = params_.tunnel_scale;
  float c[3][kN], ta[3][kN], tb[3][kN];
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < kN; ++i) {
      c[a][i] = p[a][i] * inv;
      ta[a][i] = p[a][i] * s;
      tb[a][i] = p[a][i] * s + kTunnelOffset[a];
    }
  // Fbm, octave k at frequency 2^k and amplitude 2^-k.
  float fbm[kChunkVoxels] = {}, octave[3][kN], noise[kChunkVoxels];
  float amplitude = 0.5f, frequency = 2.0f;
  for (int k = 1; k <= 4; ++k) {
    for (int a = 0; a < 3; ++a)
      for (int i = 0; i < kN; ++i) octave[a][i] = c[a][i] * frequency;
    continent_noise_.AtGrid(octave[0], octave[1], octave[2], noise);
    for (int i = 0; i < kChunkVoxels; ++i) fbm[i] += amplitude * noise[i];
    amplitude *= 0.5f;
    frequency *= 2.0f;
  }
  // Continent four voxels at a time, each operation as in the scalar code.
  const __m128 amp = _mm_set1_ps(params_.continent_amplitude);
  __m128 lowest = _mm_set1_ps(HUGE_VALF);
  for (int y = 0; y < kN; ++y) {
    const __m128 height = _mm_set1_ps(p[1][y] - params_.base_height);
    for (int i = y * kN * kN; i < (y + 1) * kN * kN; i += 4) {
      const __m128 continent = _mm_sub_ps(height, _mm_mul_ps(amp, _mm_loadu_ps(fbm + i)));
      _mm_storeu_ps(f->continent + i, continent);
      lowest = _mm_min_ps(lowest, continent);
    }
  }
  float low[4];
  _mm_storeu_ps(low, lowest);
  // (For the parameters' signs ProvenUniform also assumes: finite cave field, positive blend.)
  if (params_.blend > 0 && params_.tunnel_scale > 0 &&
      std::min(std::min(low[0], low[1]), std::min(low[2], low[3])) >= kOpenContinent) {
    // Open everywhere: the density is not needed (see kOpenContinent).
    std::copy(f->continent, f->continent + kChunkVoxels, f->density);
    return true;
  }
  float b[kChunkVoxels];
  tunnel_a_.AtGrid(ta[0], ta[1], ta[2], noise);
  tunnel_b_.AtGrid(tb[0], tb[1], tb[2], b);
  const float scale = s * kNoiseGradient;
  // Cave and Density four voxels at a time, each operation as in the scalar code.
  const __m128 sign = _mm_set1_ps(-0.0f);
  const __m128 radius = _mm_set1_ps(params_.tunnel_radius), scale4 = _mm_set1_ps(scale);
  for (int i = 0; i < kChunkVoxels; i += 4) {
    const __m128 continent = _mm_loadu_ps(f->continent + i);
    const __m128 sum = _mm_add_ps(_mm_andnot_ps(sign, _mm_loadu_ps(noise + i)),
                                  _mm_andnot_ps(sign, _mm_loadu_ps(b + i)));
    const __m128 cave = _mm_div_ps(_mm_sub_ps(sum, radius), scale4);
    _mm_storeu_ps(f->density + i, SmoothMax4(continent, _mm_xor_ps(cave, sign), params_.blend));
  }
  return false;
}

bool CaveGenerator::AboveHills(const Int3& origin) const {
  // Chunks entirely above the highest possible hill are open sky (or sea): skip the noise.
  float highest = params_.base_height + params_.continent_amplitude * 0.9375f * kNoiseBound + 1.0f;
  return origin.y > highest;
}

void CaveGenerator::FillOpen(const Int3& origin, Chunk* out) const {
  for (int y = 0; y < kChunkSize; ++y) {
    int32_t vy = origin.y + y;
    Voxel fill = vy < params_.sea_level ? Voxel{kMaterialWater, 255} : Voxel{};
    for (int z = 0; z < kChunkSize; ++z)
      for (int x = 0; x < kChunkSize; ++x) {
        out->At(x, y, z) = bounds_.Contains(origin + Int3{x, y, z}) ? fill : Voxel{};
      }
  }
}

void CaveGenerator::Generate(const ChunkKey& key, Chunk* out) const {
  Int3 origin = ChunkOrigin(key);
  ChunkFields fields;
  // Open chunks: MakeVoxel with occupancy 0 and continent > 0 is FillOpen's voxel.
  if (AboveHills(origin) || Fields(origin, &fields)) return FillOpen(origin, out);
  const bool inside =
      bounds_.Contains(origin) &&
      bounds_.Contains(origin + Int3{kChunkSize - 1, kChunkSize - 1, kChunkSize - 1});
  for (int y = 0; y < kChunkSize; ++y)
    for (int z = 0; z < kChunkSize; ++z)
      for (int x = 0; x < kChunkSize; ++x) {
        const Int3 v = origin + Int3{x, y, z};
        const int i = LocalIndex(x, y, z);
        out->voxels[i] = inside || bounds_.Contains(v)
                             ? MakeVoxel(v.y, fields.continent[i], fields.density[i])
                             : Voxel{};
      }
}

bool CaveGenerator::LineVoxels(int axis, const Int3& first, Voxel* out) const {
  // The points of VoxelAt, eight along `axis` from `first`; each field as Continent, Cave and
  // Density compute it, lane by lane (AtLine is bit-identical to At).
  constexpr int kN = PerlinNoise::kGrid;
  float p[kN], fixed[3];
  for (int a = 0; a < 3; ++a) fixed[a] = Component(first, a) + 0.5f;
  for (int i = 0; i < kN; ++i) p[i] = Component(first, axis) + i + 0.5f;
  const float inv = 1.0f / params_.continent_wavelength, s = params_.tunnel_scale;
  float coords[kN], at[3], noise[kN], fbm[kN] = {};
  float amplitude = 0.5f, frequency = 2.0f;
  for (int k = 1; k <= 4; ++k) {
    for (int i = 0; i < kN; ++i) coords[i] = p[i] * inv * frequency;
    for (int a = 0; a < 3; ++a) at[a] = fixed[a] * inv * frequency;
    if (!continent_noise_.AtLine(axis, coords, at, noise)) return false;
    for (int i = 0; i < kN; ++i) fbm[i] += amplitude * noise[i];
    amplitude *= 0.5f;
    frequency *= 2.0f;
  }
  float continent[kN], density[kN];
  for (int i = 0; i < kN; ++i) {
    const float y = axis == 1 ? p[i] : fixed[1];
    continent[i] = y - params_.base_height - params_.continent_amplitude * fbm[i];
  }
  // Open all along (see kOpenContinent): the voxels depend on the continent alone, as in Fields.
  if (params_.blend > 0 && params_.tunnel_scale > 0 &&
      *std::min_element(continent, continent + kN) >= kOpenContinent) {
    std::copy(continent, continent + kN, density);
    WriteLine(axis, first, continent, density, out);
    return true;
  }
  float a[kN], b[kN];
  for (int i = 0; i < kN; ++i) coords[i] = p[i] * s;
  for (int c = 0; c < 3; ++c) at[c] = fixed[c] * s;
  if (!tunnel_a_.AtLine(axis, coords, at, a)) return false;
  for (int i = 0; i < kN; ++i) coords[i] = p[i] * s + kTunnelOffset[axis];
  for (int c = 0; c < 3; ++c) at[c] = fixed[c] * s + kTunnelOffset[c];
  if (!tunnel_b_.AtLine(axis, coords, at, b)) return false;
  const float scale = s * kNoiseGradient;
  for (int i = 0; i < kN; ++i) {
    const float cave = (std::fabs(a[i]) + std::fabs(b[i]) - params_.tunnel_radius) / scale;
    density[i] = SmoothMax(continent[i], -cave, params_.blend);
  }
  WriteLine(axis, first, continent, density, out);
  return true;
}

void CaveGenerator::WriteLine(int axis, const Int3& first, const float* continent,
                              const float* density, Voxel* out) const {
  for (int i = 0; i < PerlinNoise::kGrid; ++i) {
    Int3 v = first;
    v[axis] += i;
    out[i] = bounds_.Contains(v) ? MakeVoxel(v.y, continent[i], density[i]) : Voxel{};
  }
}

void CaveGenerator::GeneratePart(const ChunkKey& key, const IntBox& voxels, Chunk* out) const {
  // Along an axis the part spans whole (a chunk's width), eight voxels per AtLine.
  const Int3 origin = ChunkOrigin(key);
  int axis = -1;
  for (int a = 0; a < 3; ++a) {
    if (voxels.min[a] == origin[a] && voxels.max[a] == origin[a] + kChunkSize) axis = a;
  }
  if (axis >= 0) {
    const int u = axis == 0 ? 1 : 0, w = axis == 2 ? 1 : 2;
    const int stride = LocalIndex(axis == 0, axis == 1, axis == 2);  // one voxel along `axis`
    Voxel line[kChunkSize];
    bool avx2 = true;
    for (int32_t j = voxels.min[u]; avx2 && j < voxels.max[u]; ++j)
      for (int32_t k = voxels.min[w]; k < voxels.max[w]; ++k) {
        Int3 first = origin;
        first[u] = j;
        first[w] = k;
        if (!LineVoxels(axis, first, line)) {
          avx2 = false;
          break;
        }
        const Int3 local = LocalOf(first);  // 0 on `axis`
        Voxel* row = &out->voxels[LocalIndex(local.x, local.y, local.z)];
        for (int i = 0; i < kChunkSize; ++i) row[i * stride] = line[i];
      }
    if (avx2) return;
  }
  for (int32_t y = voxels.min.y; y < voxels.max.y; ++y)
    for (int32_t z = voxels.min.z; z < voxels.max.z; ++z)
      for (int32_t x = voxels.min.x; x < voxels.max.x; ++x) {
        const Int3 v{x, y, z};
        out->At(LocalOf(v)) = VoxelAt(v);
      }
}

}  // namespace voxcol
