// server/convert/convert.h, wire -> core: the absl -> gRPC status mapping and the decoding of every
// request and posed shape, field by field; unknown enum values must name their field.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/convert/convert.h"
#include "tests/server/server_test_util.h"

namespace voxcol::server {
namespace {

using test_util::ExpectInt3;
using test_util::ExpectInvalid;
using test_util::ExpectVec;
using test_util::V;

// ---- Status mapping.

TEST(ToGrpcStatus, MapsEveryAbslCodeToTheSameGrpcCodeAndKeepsTheMessage) {
  const std::vector<std::pair<absl::StatusCode, grpc::StatusCode>> codes = {
      {absl::StatusCode::kCancelled, grpc::StatusCode::CANCELLED},
      {absl::StatusCode::kUnknown, grpc::StatusCode::UNKNOWN},
      {absl::StatusCode::kInvalidArgument, grpc::StatusCode::INVALID_ARGUMENT},
      {absl::StatusCode::kDeadlineExceeded, grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::StatusCode::kNotFound, grpc::StatusCode::NOT_FOUND},
      {absl::StatusCode::kAlreadyExists, grpc::StatusCode::ALREADY_EXISTS},
      {absl::StatusCode::kPermissionDenied, grpc::StatusCode::PERMISSION_DENIED},
      {absl::StatusCode::kResourceExhausted, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::StatusCode::kFailedPrecondition, grpc::StatusCode::FAILED_PRECONDITION},
      {absl::StatusCode::kAborted, grpc::StatusCode::ABORTED},
      {absl::StatusCode::kOutOfRange, grpc::StatusCode::OUT_OF_RANGE},
      {absl::StatusCode::kUnimplemented, grpc::StatusCode::UNIMPLEMENTED},
      {absl::StatusCode::kInternal, grpc::StatusCode::INTERNAL},
      {absl::StatusCode::kUnavailable, grpc::StatusCode::UNAVAILABLE},
      {absl::StatusCode::kDataLoss, grpc::StatusCode::DATA_LOSS},
      {absl::StatusCode::kUnauthenticated, grpc::StatusCode::UNAUTHENTICATED},
  };
  for (const auto& [absl_code, grpc_code] : codes) {
    const std::string message = "field.x: something about " + absl::StatusCodeToString(absl_code);
    grpc::Status status = ToGrpcStatus(absl::Status(absl_code, message));
    EXPECT_EQ(status.error_code(), grpc_code) << absl::StatusCodeToString(absl_code);
    EXPECT_EQ(status.error_message(), message);
    EXPECT_FALSE(status.ok());
  }
}

TEST(ToGrpcStatus, OkIsOk) {
  grpc::Status status = ToGrpcStatus(absl::OkStatus());
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::OK);
  EXPECT_EQ(status.error_message(), "");
}

// ---- Requests.

TEST(RaycastFromProto, CopiesTheRayAndMapsTheEnums) {
  v1::RaycastRequest request;
  *request.mutable_origin() = V(1, 2, 3);
  *request.mutable_direction() = V(0, -2, 0);
  request.set_max_distance(50);
  request.set_water_mode(v1::WATER_MODE_STOP_AT_SURFACE);
  request.set_mode(v1::RAYCAST_MODE_BLOCKY);
  RaycastInput ray;
  RaycastSettings settings;
  ASSERT_TRUE(FromProto(request, &ray, &settings).ok());
  ExpectVec(ray.origin, {1, 2, 3});
  ExpectVec(ray.direction, {0, -2, 0});  // normalized by the query, not here
  EXPECT_EQ(ray.max_distance, 50);
  EXPECT_EQ(settings.water, WaterMode::kStopAtSurface);
  EXPECT_EQ(settings.mode, RaycastMode::kBlocky);

  request.set_water_mode(v1::WATER_MODE_PASS_THROUGH);
  request.set_mode(v1::RAYCAST_MODE_SMOOTH);
  ASSERT_TRUE(FromProto(request, &ray, &settings).ok());
  EXPECT_EQ(settings.water, WaterMode::kPassThrough);
  EXPECT_EQ(settings.mode, RaycastMode::kSmooth);
}

TEST(RaycastFromProto, UnspecifiedEnumsMeanPassThroughAndSmooth) {
  v1::RaycastRequest request;
  RaycastInput ray;
  RaycastSettings settings;
  settings.water = WaterMode::kStopAtSurface;
  settings.mode = RaycastMode::kBlocky;
  ASSERT_TRUE(FromProto(request, &ray, &settings).ok());
  EXPECT_EQ(settings.water, WaterMode::kPassThrough);
  EXPECT_EQ(settings.mode, RaycastMode::kSmooth);
}

TEST(RaycastFromProto, UnknownEnumValuesAreInvalidArgumentNamingTheField) {
  RaycastInput ray;
  RaycastSettings settings;
  v1::RaycastRequest request;
  request.set_water_mode(static_cast<v1::WaterMode>(42));
  ExpectInvalid(FromProto(request, &ray, &settings), "water_mode");
  request.set_water_mode(v1::WATER_MODE_PASS_THROUGH);
  request.set_mode(static_cast<v1::RaycastMode>(-3));
  ExpectInvalid(FromProto(request, &ray, &settings), "mode");
}

TEST(SweepFromProto, CopiesDirectionDistanceAndMapsTheCollection) {
  const std::pair<v1::HitCollection, HitCollection> cases[] = {
      {v1::HIT_COLLECTION_UNSPECIFIED, HitCollection::kClosest},
      {v1::HIT_COLLECTION_CLOSEST, HitCollection::kClosest},
      {v1::HIT_COLLECTION_ANY, HitCollection::kAny},
      {v1::HIT_COLLECTION_ALL, HitCollection::kAll},
  };
  for (const auto& [wire, core] : cases) {
    v1::SweepRequest request;
    *request.mutable_direction() = V(0, 0, -3);
    request.set_distance(7.5f);
    request.set_collection(wire);
    SweepInput input;
    SweepSettings settings;
    settings.collection = core == HitCollection::kAll ? HitCollection::kAny : HitCollection::kAll;
    ASSERT_TRUE(FromProto(request, &input, &settings).ok());
    ExpectVec(input.direction, {0, 0, -3});
    EXPECT_EQ(input.distance, 7.5f);
    EXPECT_EQ(settings.collection, core) << v1::HitCollection_Name(wire);
  }
}

TEST(SweepFromProto, UnknownCollectionIsInvalidArgumentNamingTheField) {
  v1::SweepRequest request;
  request.set_collection(static_cast<v1::HitCollection>(17));
  SweepInput input;
  SweepSettings settings;
  ExpectInvalid(FromProto(request, &input, &settings), "collection");
}

TEST(OverlapAndContactsFromProto, CopyTheirSettings) {
  v1::OverlapRequest overlap;
  OverlapSettings overlap_settings;
  overlap.set_include_penetration(true);
  FromProto(overlap, &overlap_settings);
  EXPECT_TRUE(overlap_settings.include_penetration);
  overlap.set_include_penetration(false);
  FromProto(overlap, &overlap_settings);
  EXPECT_FALSE(overlap_settings.include_penetration);

  v1::ContactsRequest contacts;
  ContactsSettings contacts_settings;
  contacts.set_margin(0.25f);
  FromProto(contacts, &contacts_settings);
  EXPECT_EQ(contacts_settings.margin, 0.25f);
  EXPECT_TRUE(contacts_settings.water);
  contacts.set_skip_water(true);
  FromProto(contacts, &contacts_settings);
  EXPECT_FALSE(contacts_settings.water);
}

TEST(ProbeFromProto, BoxAndSphere) {
  v1::ProbeRequest request;
  *request.mutable_box()->mutable_center() = V(1, 2, 3);
  *request.mutable_box()->mutable_half_extents() = V(4, 5, 6);
  ProbeShape shape;
  ProbeSettings settings;
  ASSERT_TRUE(FromProto(request, 100, &shape, &settings).ok());
  EXPECT_FALSE(shape.is_sphere);
  ExpectVec(shape.center, {1, 2, 3});
  ExpectVec(shape.half_extents, {4, 5, 6});
  EXPECT_TRUE(settings.collect_chunks);
  EXPECT_EQ(settings.max_voxels, 0u);  // no voxels without include_voxels

  *request.mutable_sphere()->mutable_center() = V(-1, -2, -3);
  request.mutable_sphere()->set_radius(2.5f);
  ASSERT_TRUE(FromProto(request, 100, &shape, &settings).ok());
  EXPECT_TRUE(shape.is_sphere);
  ExpectVec(shape.center, {-1, -2, -3});
  EXPECT_EQ(shape.radius, 2.5f);
}

TEST(ProbeFromProto, MaxVoxelsZeroMeansTheServerDefault) {
  v1::ProbeRequest request;
  request.mutable_sphere()->set_radius(1);
  request.set_include_voxels(true);
  ProbeShape shape;
  ProbeSettings settings;
  ASSERT_TRUE(FromProto(request, 100, &shape, &settings).ok());
  EXPECT_EQ(settings.max_voxels, 100u);
  request.set_max_voxels(7);
  ASSERT_TRUE(FromProto(request, 100, &shape, &settings).ok());
  EXPECT_EQ(settings.max_voxels, 7u);
}

TEST(ProbeFromProto, MissingShapeIsInvalidArgumentNamingTheField) {
  v1::ProbeRequest request;
  ProbeShape shape;
  ProbeSettings settings;
  ExpectInvalid(FromProto(request, 100, &shape, &settings), "shape");
}

TEST(FillBallFromProto, MaterialAboveByteAndUnknownModeAreInvalidArgument) {
  v1::FillBallRequest request;
  *request.mutable_center() = V(1, 2, 3);
  request.set_radius(4);
  request.set_material(255);
  request.set_mode(v1::EDIT_MODE_SUBTRACT);
  FillBallParams params;
  ASSERT_TRUE(FromProto(request, &params).ok());
  ExpectVec(params.center, {1, 2, 3});
  EXPECT_EQ(params.radius, 4);
  EXPECT_EQ(params.material, 255);
  EXPECT_EQ(params.mode, EditMode::kSubtract);
  request.set_material(256);
  ExpectInvalid(FromProto(request, &params), "material");
  request.set_material(3);
  request.set_mode(static_cast<v1::EditMode>(9));
  ExpectInvalid(FromProto(request, &params), "mode");
}

// ---- Posed shapes.

v1::PosedShape Posed(const v1::Shape& shape) {
  v1::PosedShape posed;
  *posed.mutable_shape() = shape;
  *posed.mutable_position() = V(1, 2, 3);
  return posed;
}

TEST(PosedShapeFromProto, Sphere) {
  v1::Shape shape;
  shape.mutable_sphere()->set_radius(1.5f);
  DecodedShape decoded;
  ASSERT_TRUE(FromProto(Posed(shape), &decoded).ok());
  const PosedShape& posed = decoded.posed();
  EXPECT_EQ(posed.shape->type, ShapeType::kSphere);
  EXPECT_EQ(posed.shape->convex_radius, 1.5f);
  ExpectVec(posed.pose.translation, {1, 2, 3});
}

TEST(PosedShapeFromProto, Capsule) {
  v1::Shape shape;
  shape.mutable_capsule()->set_half_height(0.75f);
  shape.mutable_capsule()->set_radius(0.4f);
  DecodedShape decoded;
  ASSERT_TRUE(FromProto(Posed(shape), &decoded).ok());
  EXPECT_EQ(decoded.posed().shape->type, ShapeType::kCapsule);
  EXPECT_EQ(decoded.posed().shape->half_height, 0.75f);
  EXPECT_EQ(decoded.posed().shape->convex_radius, 0.4f);
}

TEST(PosedShapeFromProto, BoxOuterHalfExtentsBecomeCoreHalfExtents) {
  v1::Shape shape;
  *shape.mutable_box()->mutable_half_extents() = V(2, 3, 4);
  shape.mutable_box()->set_convex_radius(0.5f);
  DecodedShape decoded;
  ASSERT_TRUE(FromProto(Posed(shape), &decoded).ok());
  const ConvexShape& s = *decoded.posed().shape;
  EXPECT_EQ(s.type, ShapeType::kBox);
  EXPECT_EQ(s.convex_radius, 0.5f);
  ExpectVec(s.half_extents, {1.5f, 2.5f, 3.5f});
  // The rounded box reaches the wire's outer half extents.
  EXPECT_FLOAT_EQ(s.Support({1, 0, 0}).x, 2);
  EXPECT_FLOAT_EQ(s.Support({0, 0, -1}).z, -4);
}

TEST(PosedShapeFromProto, HullPointsAreCopiedAndOwned) {
  v1::Shape shape;
  v1::ConvexHullShape* hull = shape.mutable_hull();
  *hull->add_points() = V(0, 0, 0);
  *hull->add_points() = V(1, 0, 0);
  *hull->add_points() = V(0, 1, 0);
  *hull->add_points() = V(0, 0, 1);
  hull->set_convex_radius(0.1f);
  DecodedShape decoded;
  {
    v1::PosedShape wire = Posed(shape);
    ASSERT_TRUE(FromProto(wire, &decoded).ok());
  }  // the wire message is gone: the decoded shape must not point into it
  const ConvexShape& s = *decoded.posed().shape;
  EXPECT_EQ(s.type, ShapeType::kConvexHull);
  EXPECT_EQ(s.convex_radius, 0.1f);
  ASSERT_EQ(s.num_points, 4);
  ASSERT_NE(s.points, nullptr);
  ExpectVec(s.points[0], {0, 0, 0});
  ExpectVec(s.points[1], {1, 0, 0});
  ExpectVec(s.points[2], {0, 1, 0});
  ExpectVec(s.points[3], {0, 0, 1});
}

TEST(PosedShapeFromProto, DecodingAgainReplacesTheShape) {
  v1::Shape hull;
  for (int i = 0; i < 5; ++i) *hull.mutable_hull()->add_points() = V(float(i), 0, 0);
  v1::Shape sphere;
  sphere.mutable_sphere()->set_radius(2);
  DecodedShape decoded;
  ASSERT_TRUE(FromProto(Posed(hull), &decoded).ok());
  ASSERT_TRUE(FromProto(Posed(sphere), &decoded).ok());
  EXPECT_EQ(decoded.posed().shape->type, ShapeType::kSphere);
  EXPECT_EQ(decoded.posed().shape->num_points, 0);
  EXPECT_EQ(decoded.posed().shape->points, nullptr);
}

TEST(PosedShapeFromProto, MissingKindIsInvalidArgumentNamingShapeShape) {
  v1::PosedShape posed;
  *posed.mutable_position() = V(1, 2, 3);
  DecodedShape decoded;
  ExpectInvalid(FromProto(posed, &decoded), "shape.shape");
}

TEST(PosedShapeFromProto, UnsetRotationIsIdentity) {
  v1::Shape shape;
  shape.mutable_sphere()->set_radius(1);
  DecodedShape decoded;
  ASSERT_TRUE(FromProto(Posed(shape), &decoded).ok());
  const Quat& q = decoded.posed().pose.rotation;
  EXPECT_EQ(q.w, 1);
  EXPECT_EQ(q.x, 0);
  EXPECT_EQ(q.y, 0);
  EXPECT_EQ(q.z, 0);
}

TEST(PosedShapeFromProto, SetRotationIsPassedOnUnchecked) {
  v1::Shape shape;
  shape.mutable_sphere()->set_radius(1);
  v1::PosedShape posed = Posed(shape);
  // An explicit all-zero quaternion is not "unset": core validation must see and refuse it.
  posed.mutable_rotation()->set_w(0);
  DecodedShape decoded;
  ASSERT_TRUE(FromProto(posed, &decoded).ok());
  EXPECT_EQ(decoded.posed().pose.rotation.w, 0);

  posed.mutable_rotation()->set_w(0.5f);
  posed.mutable_rotation()->set_x(0.5f);
  posed.mutable_rotation()->set_y(-0.5f);
  posed.mutable_rotation()->set_z(0.5f);
  ASSERT_TRUE(FromProto(posed, &decoded).ok());
  const Quat& q = decoded.posed().pose.rotation;
  EXPECT_EQ(q.w, 0.5f);
  EXPECT_EQ(q.x, 0.5f);
  EXPECT_EQ(q.y, -0.5f);
  EXPECT_EQ(q.z, 0.5f);
}

}  // namespace
}  // namespace voxcol::server
