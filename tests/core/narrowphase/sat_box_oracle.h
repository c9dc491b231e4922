// Independent penetration oracle for two oriented boxes: the separating axis test over the 15
// candidate axes (3 face normals of each box and the 9 edge-edge cross products), in double. For
// two boxes these axes are exactly the face normals of the Minkowski difference, so the smallest
// overlap is the exact penetration depth.
#pragma once

#include <cmath>
#include <limits>

#include "core/geometry/transform.h"
#include "tests/core/narrowphase/random_cases.h"

namespace voxcol::testing {

struct SatResult {
  double depth;  // smallest overlap (negative: separated along that axis by -depth)
  D3 axis;       // unit axis from A toward B achieving it
};

inline SatResult SatBoxBox(const RigidTransform& pa, const Vec3& ha, const RigidTransform& pb,
                           const Vec3& hb) {
  D3 ua[3], ub[3];
  for (int i = 0; i < 3; ++i) {
    Vec3 e;
    e[i] = 1;
    ua[i] = ToD(pa.rotation.Rotate(e));
    ub[i] = ToD(pb.rotation.Rotate(e));
  }
  D3 t = ToD(pb.translation) - ToD(pa.translation);
  SatResult best{std::numeric_limits<double>::infinity(), {}};
  auto test_axis = [&](D3 l) {
    double len = LenD(l);
    if (len < 1e-9) return;  // parallel edges: the face axes cover this direction
    l = l * (1.0 / len);
    double ra = 0, rb = 0;
    for (int i = 0; i < 3; ++i) {
      ra += ha[i] * std::fabs(DotD(ua[i], l));
      rb += hb[i] * std::fabs(DotD(ub[i], l));
    }
    double d = DotD(t, l);
    double overlap = ra + rb - std::fabs(d);
    if (overlap < best.depth) best = {overlap, d < 0 ? l * -1.0 : l};
  };
  for (int i = 0; i < 3; ++i) test_axis(ua[i]);
  for (int i = 0; i < 3; ++i) test_axis(ub[i]);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) test_axis(CrossD(ua[i], ub[j]));
  }
  return best;
}

}  // namespace voxcol::testing
