// Building the proto vectors the integration tests send.
#pragma once

#include "voxcol/v1/types.pb.h"

namespace voxcol::testing {

inline void SetVec(v1::Vec3* v, double x, double y, double z) {
  v->set_x(float(x));
  v->set_y(float(y));
  v->set_z(float(z));
}

inline v1::Vec3 ProtoVec(double x, double y, double z) {
  v1::Vec3 v;
  SetVec(&v, x, y, z);
  return v;
}

}  // namespace voxcol::testing
