// Helpers shared by the tests of server/: proto vector construction and field-wise expectations.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "core/geometry/vec3.h"
#include "voxcol/v1/types.pb.h"

namespace voxcol::server::test_util {

inline v1::Vec3 V(float x, float y, float z) {
  v1::Vec3 v;
  v.set_x(x);
  v.set_y(y);
  v.set_z(z);
  return v;
}

inline void ExpectVec(const v1::Vec3& got, const Vec3& want) {
  EXPECT_FLOAT_EQ(got.x(), want.x);
  EXPECT_FLOAT_EQ(got.y(), want.y);
  EXPECT_FLOAT_EQ(got.z(), want.z);
}

inline void ExpectVec(const Vec3& got, const Vec3& want) {
  EXPECT_FLOAT_EQ(got.x, want.x);
  EXPECT_FLOAT_EQ(got.y, want.y);
  EXPECT_FLOAT_EQ(got.z, want.z);
}

inline void ExpectInt3(const v1::Int3& got, const Int3& want) {
  EXPECT_EQ(got.x(), want.x);
  EXPECT_EQ(got.y(), want.y);
  EXPECT_EQ(got.z(), want.z);
}

// INVALID_ARGUMENT whose message starts with `field` followed by a separator.
inline void ExpectInvalid(const absl::Status& status, const std::string& field) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(absl::StartsWith(status.message(), field + ":") ||
              absl::StartsWith(status.message(), field + " "))
      << "message \"" << status.message() << "\" does not start with field " << field;
}

}  // namespace voxcol::server::test_util
