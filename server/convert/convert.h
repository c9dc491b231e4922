// Conversions between the voxcol.v1 query wire types and core types, and the one place where an
// absl::Status becomes a grpc::Status.
//
// Decoding is wire-level only: unknown enum values and values the core types cannot represent
// (materials above 255) are INVALID_ARGUMENT naming the field. Everything geometric (finite,
// in the world, within the limits) is checked by core/query/validate.h.
#pragma once

#include <grpcpp/grpcpp.h>

#include <vector>

#include "absl/status/status.h"
#include "core/broadphase/probe.h"
#include "core/geometry/vec3.h"
#include "core/query/character.h"
#include "core/query/contacts.h"
#include "core/query/overlap.h"
#include "core/query/raycast.h"
#include "core/query/sweep.h"
#include "core/voxel/edit.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"
#include "voxcol/v1/types.pb.h"

namespace voxcol::server {

// Maps an absl::Status (code and message) to a grpc::Status. Every grpc::Status the server
// returns with an error is built here (scripts/check-layers.sh keeps `grpc::Status(` out of every
// other file of server/): handlers and streams work with absl::Status and convert at the edge.
grpc::Status ToGrpcStatus(const absl::Status& status);
// The reverse, for calls the server makes itself (a replica's calls to its primary).
absl::Status FromGrpcStatus(const grpc::Status& status);

// Serializes `message` into one contiguous slice of `out`: its size computed once, then one flat
// write. (gRPC's default serializer streams messages over a few bytes through a zero-copy writer
// that computes the size twice.) INTERNAL if the message is over 2 GB.
absl::Status SerializeToByteBuffer(const google::protobuf::MessageLite& message,
                                   grpc::ByteBuffer* out);

// Parses `buffer` into `message` (its arena, if any, holds the parts). A buffer of one slice is
// parsed from its bytes in place; others through gRPC's reader. INVALID_ARGUMENT if the bytes are
// not such a message. `buffer` may be left empty.
absl::Status ParseFromByteBuffer(grpc::ByteBuffer* buffer, google::protobuf::MessageLite* message);

Vec3 ToCore(const v1::Vec3& v);
void ToProto(const Vec3& v, v1::Vec3* out);
void ToProto(const Int3& v, v1::Int3* out);

absl::Status FromProto(const v1::FillBallRequest& request, FillBallParams* params);
absl::Status EditModeFromProto(v1::EditMode mode, EditMode* out);

// A posed shape decoded from the wire. Owns the ConvexShape and the hull points the core view
// points at, so keep it alive for the whole query; not copyable (the view would dangle).
class DecodedShape {
 public:
  DecodedShape() = default;
  DecodedShape(const DecodedShape&) = delete;
  DecodedShape& operator=(const DecodedShape&) = delete;

  // The core view, which ValidatePosedShape checks and normalizes in place.
  PosedShape& posed() { return posed_; }

 private:
  friend absl::Status FromProto(const v1::PosedShape& in, DecodedShape* out);
  ConvexShape shape_;
  std::vector<Vec3> points_;
  PosedShape posed_{&shape_, {}};
};

// "shape.shape: one of sphere, capsule, box, hull is required" when no kind is set; sizes,
// rotation and position are left to core's ValidatePosedShape.
absl::Status FromProto(const v1::PosedShape& in, DecodedShape* out);

// The water and surface modes of a raycast ("water_mode", "mode" for unknown values).
absl::Status FromProto(v1::WaterMode water, v1::RaycastMode mode, RaycastSettings* settings);
absl::Status FromProto(const v1::RaycastRequest& request, RaycastInput* ray,
                       RaycastSettings* settings);
// The sweep's direction, distance and collection; input->shape is set by the caller.
absl::Status FromProto(const v1::SweepRequest& request, SweepInput* input, SweepSettings* settings);
void FromProto(const v1::OverlapRequest& request, OverlapSettings* settings);
void FromProto(const v1::ContactsRequest& request, ContactsSettings* settings);
// A request without a shape is INVALID_ARGUMENT ("shape"). Touched chunks are always collected;
// voxels only with include_voxels, max_voxels 0 meaning `default_max_voxels`.
absl::Status FromProto(const v1::ProbeRequest& request, uint32_t default_max_voxels,
                       ProbeShape* shape, ProbeSettings* settings);

// One character move. Settings left 0 take core's defaults. The capsule's radius and half_height
// are checked here (core builds the capsule with MakeCapsule, whose preconditions are asserts, and
// would name them shape.capsule.*): INVALID_ARGUMENT "radius ..." / "half_height ..." when not
// finite, out of range or together above limits.max_shape_extent. The rest is left to core's
// ValidateCharacterMove.
absl::Status FromProto(const v1::CharacterMove& in, const QueryLimits& limits, CharacterMove* out);
void ToProto(const CharacterSettings& settings, v1::CharacterSettings* out);

// A raycast's nearest hit, with every crossing in `all` (all_hits) when not null.
void ToProto(const RaycastHit& hit, const std::vector<RaycastHit>* all, v1::RaycastResponse* out);
void ToProto(const RaycastHit& hit, v1::RaycastHit* out);
// `input` is the sweep as run: its start position and direction give SweepHit.shape_position.
void ToProto(const SweepResult& result, const SweepInput& input, v1::SweepResponse* out);
void ToProto(const OverlapResult& result, bool include_penetration, v1::OverlapResponse* out);
void ToProto(const ContactsResult& result, bool include_water, v1::ContactsResponse* out);
void ToProto(const ProbeResult& result, v1::ProbeResponse* out);
// Everything but the status, which the caller turns into the request's outcome.
void ToProto(const CharacterResult& result, uint64_t client_id, v1::CharacterResult* out);
void ToProto(const Penetration& penetration, v1::Penetration* out);
void ToProto(const QueryStats& stats, v1::QueryStats* out);

}  // namespace voxcol::server
