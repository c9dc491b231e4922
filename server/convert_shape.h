// Conversions between the shape-query wire types (Sweep, Contacts, posed Overlap) and core types.
// Errors are INVALID_ARGUMENT naming the proto field with its path (e.g. "shape.rotation",
// "posed.shape.sphere.radius"); the shape's geometry is validated by core's ValidatePosedShape.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/query/shape_query.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// A posed shape decoded from the wire. Owns the ConvexShape and the hull points the core view
// points at, so keep it alive for the whole query; not copyable (the view would dangle).
class DecodedShape {
 public:
  DecodedShape() = default;
  DecodedShape(const DecodedShape&) = delete;
  DecodedShape& operator=(const DecodedShape&) = delete;

  PosedShape posed() const { return {&shape_, pose_}; }

 private:
  friend absl::Status FromProto(const v1::PosedShape& in, const std::string& prefix,
                                DecodedShape* out);
  ConvexShape shape_;
  std::vector<Vec3> points_;
  RigidTransform pose_;
};

// Wire-level decoding only: a set Shape kind ("<prefix>shape: one of sphere, capsule, box, hull
// is required"), a rotation of unit length within 1e-3 (normalized; unset means identity). Sizes,
// point counts, position and finiteness are left to ValidatePosedShape, called with the same
// prefix. `prefix` is the path of the PosedShape field ending in '.', e.g. "shape." or "posed.".
absl::Status FromProto(const v1::PosedShape& in, const std::string& prefix, DecodedShape* out);

// The sweep's direction (finite, non-zero), distance (> 0, <= limits.max_sweep_distance) and
// collection; the shape is decoded separately.
absl::Status FromProto(const v1::SweepRequest& request, const ShapeQueryLimits& limits,
                       ShapeSweepInput* input, ShapeSweepSettings* settings);
// The contact margin (finite, >= 0, <= limits.max_extent) and water flag.
absl::Status FromProto(const v1::ContactsRequest& request, const ShapeQueryLimits& limits,
                       ContactSettings* settings);

// `input` is the sweep as run (its shape's start position and the direction, normalized here, give
// SweepHit.shape_position).
void ToProto(const ShapeSweepResult& result, const ShapeSweepInput& input, v1::SweepResponse* out);
// A buried shape's buried_mtd.position is `shape_position` (its centre), as for a buried overlap.
void ToProto(const ContactResult& result, const Vec3& shape_position, bool include_water,
             v1::ContactsResponse* out);
void ToProto(const ShapeOverlapResult& result, bool include_penetration, v1::OverlapResponse* out);

}  // namespace voxcol::server
