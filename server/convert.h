// Conversions between the voxcol.v1 wire types and core types, and the one place where
// absl::Status becomes grpc::Status.
#pragma once

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "core/broadphase/overlap.h"
#include "core/geometry/vec3.h"
#include "core/query/raycast.h"
#include "core/voxel/edit.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"
#include "voxcol/v1/types.pb.h"

namespace voxcol::server {

Vec3 ToCore(const v1::Vec3& v);
void ToProto(const Vec3& v, v1::Vec3* out);
void ToProto(const Int3& v, v1::Int3* out);

// Maps an absl::Status (code and message) to a grpc::Status.
grpc::Status ToGrpcStatus(const absl::Status& status);

// Request -> core input; INVALID_ARGUMENT naming the proto field for values the core types cannot
// represent (unknown enum values, materials above 255). Geometric validation happens in core.
absl::Status FromProto(const v1::RaycastRequest& request, RayInput* ray, RaySettings* settings);
absl::Status FromProto(const v1::FillBallRequest& request, FillBallParams* params);
absl::Status EditModeFromProto(v1::EditMode mode, EditMode* out);
// Box and sphere requests (posed ones go through convert_shape.h). A request without a shape is
// INVALID_ARGUMENT ("shape"). Touched chunks are always collected;
// voxels only with include_voxels, max_voxels 0 meaning `default_max_voxels`.
absl::Status FromProto(const v1::OverlapRequest& request, uint32_t default_max_voxels,
                       OverlapShape* shape, OverlapSettings* settings);

void ToProto(const RayHit& hit, v1::RaycastResponse* out);
void ToProto(const OverlapResult& result, v1::OverlapResponse* out);
// Appends the touched chunks (broadphase or exact overlap) to out->chunks.
void ToProto(const std::vector<TouchedChunk>& chunks, v1::OverlapResponse* out);
void ToProto(const RayHit& hit, v1::RaycastHit* out);
void ToProto(const QueryStats& stats, v1::QueryStats* out);

}  // namespace voxcol::server
