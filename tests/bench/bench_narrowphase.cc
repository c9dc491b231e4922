// Narrowphase micro-benchmarks: GJK distance, EPA penetration and GJK-raycast on fixed sets of
// seeded shape pairs, side by side with libccd (Debian libccd-dev, double precision) on the very
// same pairs: BM_GjkEpa vs BM_LibccdGjkEpa (issue 6), and per pair type BM_<Ours>_<Pair> vs
// BM_Libccd<Algo>_<Pair>. libccd has no distance query, so GJK distance runs alone.
#include <benchmark/benchmark.h>
#include <ccd/ccd.h>
#include <ccd/quat.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/narrowphase/cast_vs_triangle.h"
#include "core/narrowphase/gjk.h"
#include "core/narrowphase/gjk_raycast.h"
#include "core/narrowphase/penetration.h"
#include "tests/core/narrowphase/sat_box_oracle.h"

namespace voxcol {
namespace {

constexpr int kPairs = 1024;  // a power of two: the loop indexes with & (kPairs - 1)

enum class PairKind { kSphereSphere, kSphereBox, kCapsuleCapsule, kBoxBox, kCapsuleBox };

// One pair in both representations: ours and libccd's.
struct CcdShape {
  ShapeType type;
  ccd_vec3_t pos;
  ccd_quat_t rot, inv_rot;
  ccd_real_t half[3], radius, half_height;
};

struct Pair {
  ConvexShape a, b;
  PosedShape pa, pb;
  CcdShape ca, cb;
  Vec3 translation;  // for casts: A moves by this toward B
};

void CcdSupport(const void* obj, const ccd_vec3_t* dir, ccd_vec3_t* out) {
  const CcdShape* s = static_cast<const CcdShape*>(obj);
  ccd_vec3_t d;
  ccdVec3Copy(&d, dir);
  ccdQuatRotVec(&d, &s->inv_rot);
  ccd_real_t len = std::sqrt(ccdVec3Len2(&d));
  ccd_real_t sx = ccdSign(ccdVec3X(&d)) >= 0 ? 1 : -1, sy = ccdSign(ccdVec3Y(&d)) >= 0 ? 1 : -1,
             sz = ccdSign(ccdVec3Z(&d)) >= 0 ? 1 : -1;
  switch (s->type) {
    case ShapeType::kBox:
      ccdVec3Set(out, sx * s->half[0], sy * s->half[1], sz * s->half[2]);
      break;
    case ShapeType::kCapsule:
      ccdVec3Set(out, 0, sy * s->half_height, 0);
      ccdVec3Set(&d, d.v[0] * s->radius / len, d.v[1] * s->radius / len, d.v[2] * s->radius / len);
      ccdVec3Add(out, &d);
      break;
    default:  // sphere
      ccdVec3Set(out, d.v[0] * s->radius / len, d.v[1] * s->radius / len, d.v[2] * s->radius / len);
  }
  ccdQuatRotVec(out, &s->rot);
  ccdVec3Add(out, &s->pos);
}

void CcdCenter(const void* obj, ccd_vec3_t* center) {
  ccdVec3Copy(center, &static_cast<const CcdShape*>(obj)->pos);
}

CcdShape ToCcd(const ConvexShape& s, const RigidTransform& pose) {
  CcdShape c;
  c.type = s.type;
  ccdVec3Set(&c.pos, pose.translation.x, pose.translation.y, pose.translation.z);
  ccdQuatSet(&c.rot, pose.rotation.x, pose.rotation.y, pose.rotation.z, pose.rotation.w);
  ccdQuatInvert2(&c.inv_rot, &c.rot);
  for (int i = 0; i < 3; ++i) c.half[i] = s.half_extents[i];
  c.radius = s.convex_radius;
  c.half_height = s.half_height;
  return c;
}

Quat RandomRotation(std::mt19937& rng) {
  std::normal_distribution<float> n;
  Quat q{n(rng), n(rng), n(rng), n(rng)};
  float len = std::sqrt(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
  return {q.w / len, q.x / len, q.y / len, q.z / len};
}

ConvexShape MakeShape(ShapeType t, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(0.3f, 1.0f);
  if (t == ShapeType::kSphere) return MakeSphere(u(rng));
  if (t == ShapeType::kCapsule) return MakeCapsule(u(rng), 0.5f * u(rng));
  return MakeBox({u(rng), u(rng), u(rng)});
}

// kPairs pairs of unit-scale shapes; `overlap` places B's centre within 0.6 of A's (deep and
// shallow overlaps), otherwise 2.5..4 away (separated, for distance and casts).
std::vector<Pair> MakePairs(PairKind kind, bool overlap, uint32_t seed) {
  static constexpr ShapeType kTypes[][2] = {{ShapeType::kSphere, ShapeType::kSphere},
                                            {ShapeType::kSphere, ShapeType::kBox},
                                            {ShapeType::kCapsule, ShapeType::kCapsule},
                                            {ShapeType::kBox, ShapeType::kBox},
                                            {ShapeType::kCapsule, ShapeType::kBox}};
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<Pair> pairs(kPairs);
  for (Pair& p : pairs) {
    p.a = MakeShape(kTypes[int(kind)][0], rng);
    p.b = MakeShape(kTypes[int(kind)][1], rng);
    Vec3 dir = Normalize(Vec3{u(rng), u(rng), u(rng)} + Vec3{0, 0, 1e-3f});
    float dist = overlap ? 0.6f * std::fabs(u(rng)) : 2.5f + 0.75f * (u(rng) + 1);
    p.pa = {&p.a, {RandomRotation(rng), {}}};
    p.pb = {&p.b, {RandomRotation(rng), dir * dist}};
    p.ca = ToCcd(p.a, p.pa.pose);
    p.cb = ToCcd(p.b, p.pb.pose);
    p.translation = dir * (2 * dist) + Vec3{u(rng), u(rng), u(rng)} * 0.3f;
  }
  // The pointers must follow the vector's storage.
  for (Pair& p : pairs) p.pa.shape = &p.a, p.pb.shape = &p.b;
  return pairs;
}

// Mixed overlapping pairs for the headline comparison: box-box, sphere-box, capsule-box.
std::vector<Pair> MixedOverlaps() {
  std::vector<Pair> all;
  PairKind kinds[] = {PairKind::kBoxBox, PairKind::kSphereBox, PairKind::kCapsuleBox};
  for (int k = 0; k < 3; ++k) {
    std::vector<Pair> some = MakePairs(kinds[k], true, 700 + k);
    all.insert(all.end(), some.begin(), some.begin() + kPairs / 3 + (k == 0));
  }
  for (Pair& p : all) p.pa.shape = &p.a, p.pb.shape = &p.b;
  return all;
}

ccd_t CcdSetup() {
  ccd_t ccd;
  CCD_INIT(&ccd);
  ccd.support1 = ccd.support2 = CcdSupport;
  ccd.center1 = ccd.center2 = CcdCenter;
  ccd.max_iterations = 100;
  return ccd;
}

void RunPenetration(benchmark::State& state, const std::vector<Pair>& pairs) {
  size_t i = 0, failed = 0;
  double depth = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i++ % pairs.size()];
    PenetrationResult r = ComputePenetration(p.pa, p.pb);
    depth += r.depth;
    failed += !r.overlapping || r.epa_failed;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["mean_depth"] = depth / double(state.iterations());
  state.counters["failed"] = double(failed) / double(state.iterations());
}

void RunCcdPenetration(benchmark::State& state, const std::vector<Pair>& pairs, bool mpr) {
  ccd_t ccd = CcdSetup();
  size_t i = 0, failed = 0;
  double depth = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i++ % pairs.size()];
    ccd_real_t d = 0;
    ccd_vec3_t dir, pos;
    int res = mpr ? ccdMPRPenetration(&p.ca, &p.cb, &ccd, &d, &dir, &pos)
                  : ccdGJKPenetration(&p.ca, &p.cb, &ccd, &d, &dir, &pos);
    depth += res == 0 ? d : 0;
    failed += res != 0;
    benchmark::DoNotOptimize(d);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["mean_depth"] = depth / double(state.iterations());
  state.counters["failed"] = double(failed) / double(state.iterations());
}

void BM_GjkEpa(benchmark::State& state) { RunPenetration(state, MixedOverlaps()); }
void BM_LibccdGjkEpa(benchmark::State& state) { RunCcdPenetration(state, MixedOverlaps(), false); }
void BM_LibccdMprPenetration(benchmark::State& state) {
  RunCcdPenetration(state, MixedOverlaps(), true);
}
BENCHMARK(BM_GjkEpa);
BENCHMARK(BM_LibccdGjkEpa);
BENCHMARK(BM_LibccdMprPenetration);

// Mean |depth - SAT depth| over the box pairs (untimed), so speed is read next to accuracy.
template <typename DepthFn>
double MeanErrorVsSat(const std::vector<Pair>& pairs, DepthFn depth) {
  double sum = 0;
  for (const Pair& p : pairs) {
    double exact =
        testing::SatBoxBox(p.pa.pose, p.a.half_extents, p.pb.pose, p.b.half_extents).depth;
    sum += std::fabs(depth(p) - exact);
  }
  return sum / double(pairs.size());
}

void BM_Epa_BoxBox(benchmark::State& state) {
  std::vector<Pair> pairs = MakePairs(PairKind::kBoxBox, true, 11);
  RunPenetration(state, pairs);
  state.counters["mean_err_vs_sat"] =
      MeanErrorVsSat(pairs, [](const Pair& p) { return ComputePenetration(p.pa, p.pb).depth; });
}
void BM_LibccdGjkEpa_BoxBox(benchmark::State& state) {
  std::vector<Pair> pairs = MakePairs(PairKind::kBoxBox, true, 11);
  RunCcdPenetration(state, pairs, false);
  ccd_t ccd = CcdSetup();
  state.counters["mean_err_vs_sat"] = MeanErrorVsSat(pairs, [&](const Pair& p) {
    ccd_real_t d = 0;
    ccd_vec3_t dir, pos;
    ccdGJKPenetration(&p.ca, &p.cb, &ccd, &d, &dir, &pos);
    return double(d);
  });
}
void BM_Epa_SphereBox(benchmark::State& state) {
  RunPenetration(state, MakePairs(PairKind::kSphereBox, true, 12));
}
void BM_LibccdGjkEpa_SphereBox(benchmark::State& state) {
  RunCcdPenetration(state, MakePairs(PairKind::kSphereBox, true, 12), false);
}
BENCHMARK(BM_Epa_BoxBox);
BENCHMARK(BM_LibccdGjkEpa_BoxBox);
BENCHMARK(BM_Epa_SphereBox);
BENCHMARK(BM_LibccdGjkEpa_SphereBox);

void RunDistance(benchmark::State& state, PairKind kind) {
  std::vector<Pair> pairs = MakePairs(kind, false, 20 + int(kind));
  size_t i = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i++ & (kPairs - 1)];
    benchmark::DoNotOptimize(GjkDistance(p.pa, p.pb));
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_GjkDistance_SphereSphere(benchmark::State& s) { RunDistance(s, PairKind::kSphereSphere); }
void BM_GjkDistance_SphereBox(benchmark::State& s) { RunDistance(s, PairKind::kSphereBox); }
void BM_GjkDistance_CapsuleCapsule(benchmark::State& s) {
  RunDistance(s, PairKind::kCapsuleCapsule);
}
void BM_GjkDistance_BoxBox(benchmark::State& s) { RunDistance(s, PairKind::kBoxBox); }
BENCHMARK(BM_GjkDistance_SphereSphere);
BENCHMARK(BM_GjkDistance_SphereBox);
BENCHMARK(BM_GjkDistance_CapsuleCapsule);
BENCHMARK(BM_GjkDistance_BoxBox);

// Boolean intersection on a 50/50 mix of overlapping and separated box pairs.
std::vector<Pair> HalfOverlappingBoxes() {
  std::vector<Pair> pairs = MakePairs(PairKind::kBoxBox, true, 30);
  std::vector<Pair> apart = MakePairs(PairKind::kBoxBox, false, 31);
  for (int i = 0; i < kPairs; i += 2) pairs[i] = apart[i];
  for (Pair& p : pairs) p.pa.shape = &p.a, p.pb.shape = &p.b;
  return pairs;
}
void BM_GjkIntersect_BoxBox(benchmark::State& state) {
  std::vector<Pair> pairs = HalfOverlappingBoxes();
  size_t i = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i++ & (kPairs - 1)];
    benchmark::DoNotOptimize(GjkIntersect(p.pa, p.pb));
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_LibccdGjkIntersect_BoxBox(benchmark::State& state) {
  std::vector<Pair> pairs = HalfOverlappingBoxes();
  ccd_t ccd = CcdSetup();
  size_t i = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i++ & (kPairs - 1)];
    benchmark::DoNotOptimize(ccdGJKIntersect(&p.ca, &p.cb, &ccd));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GjkIntersect_BoxBox);
BENCHMARK(BM_LibccdGjkIntersect_BoxBox);

void RunCast(benchmark::State& state, PairKind kind) {
  std::vector<Pair> pairs = MakePairs(kind, false, 40 + int(kind));
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const Pair& p = pairs[i++ & (kPairs - 1)];
    CastResult r = GjkRaycast(p.pa, p.translation, p.pb);
    hits += r.hit;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
}
void BM_GjkRaycast_SphereBox(benchmark::State& s) { RunCast(s, PairKind::kSphereBox); }
void BM_GjkRaycast_CapsuleCapsule(benchmark::State& s) { RunCast(s, PairKind::kCapsuleCapsule); }
void BM_GjkRaycast_BoxBox(benchmark::State& s) { RunCast(s, PairKind::kBoxBox); }
BENCHMARK(BM_GjkRaycast_SphereBox);
BENCHMARK(BM_GjkRaycast_CapsuleCapsule);
BENCHMARK(BM_GjkRaycast_BoxBox);

// Casts against single triangles, the terrain primitive: the sphere closed form next to
// GJK-raycast on the same sphere-triangle cases, and capsules (GJK-raycast only).
struct TriangleCast {
  Vec3 a, b, c, start, translation;
  Quat rotation;
};

std::vector<TriangleCast> TriangleCasts() {
  std::mt19937 rng(50);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<TriangleCast> casts(kPairs);
  for (TriangleCast& t : casts) {
    t.a = {u(rng), 0.2f * u(rng), u(rng)}, t.b = {u(rng), 0.2f * u(rng), u(rng)};
    t.c = {u(rng), 0.2f * u(rng), u(rng)};
    t.start = {0.5f * u(rng), 2, 0.5f * u(rng)};
    t.translation = Vec3{0.5f * u(rng), -4, 0.5f * u(rng)};
    t.rotation = RandomRotation(rng);
  }
  return casts;
}

void BM_CastSphereVsTriangle(benchmark::State& state) {
  std::vector<TriangleCast> casts = TriangleCasts();
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const TriangleCast& t = casts[i++ & (kPairs - 1)];
    CastResult r = CastSphereVsTriangle(t.start, 0.4f, t.translation, t.a, t.b, t.c);
    hits += r.hit;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
}
void BM_GjkRaycast_SphereTriangle(benchmark::State& state) {
  std::vector<TriangleCast> casts = TriangleCasts();
  ConvexShape sphere = MakeSphere(0.4f);
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const TriangleCast& t = casts[i++ & (kPairs - 1)];
    CastResult r = CastConvexVsTriangle({&sphere, {{}, t.start}}, t.translation, t.a, t.b, t.c);
    hits += r.hit;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
}
void BM_GjkRaycast_CapsuleTriangle(benchmark::State& state) {
  std::vector<TriangleCast> casts = TriangleCasts();
  ConvexShape capsule = MakeCapsule(0.5f, 0.3f);
  size_t i = 0, hits = 0;
  for (auto _ : state) {
    const TriangleCast& t = casts[i++ & (kPairs - 1)];
    CastResult r =
        CastConvexVsTriangle({&capsule, {t.rotation, t.start}}, t.translation, t.a, t.b, t.c);
    hits += r.hit;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["hit_ratio"] = double(hits) / double(state.iterations());
}
BENCHMARK(BM_CastSphereVsTriangle);
BENCHMARK(BM_GjkRaycast_SphereTriangle);
BENCHMARK(BM_GjkRaycast_CapsuleTriangle);

}  // namespace
}  // namespace voxcol
