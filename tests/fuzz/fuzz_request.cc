// Fuzz target: request decoding, proto-to-core conversion and core validation of every RPC.
//
// Input: one selector byte (which request message; bit 7 splits the rest into two slices so the
// server's multi-slice parse path runs too), then the message's wire bytes. The bytes go through
// the server's ParseFromByteBuffer, then the same FromProto and Validate* calls the service runs
// before doing any work, and every status through ToGrpcStatus. Edit requests that validate are
// applied to a fresh small world, as the server would (without a store), to run the edit
// primitives on arbitrary valid parameters. Queries are not run here (fuzz_query.cc does).
#include <grpcpp/grpcpp.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/query/character.h"
#include "core/query/validate.h"
#include "core/store/region_file.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/edit_validation.h"
#include "google/protobuf/stubs/logging.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/exec/service_limits.h"
#include "tests/fuzz/fuzz_world.h"
#include "voxcol/v1/admin_service.pb.h"
#include "voxcol/v1/edit_service.pb.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::fuzz {
namespace {

const World& QueryWorld() {
  static const World* world = MakeFuzzWorld(1.0f).release();
  return *world;
}

const server::ServiceLimits& Limits() {
  static const server::ServiceLimits limits;
  return limits;
}

// Every status the server returns goes through ToGrpcStatus.
void Finish(const absl::Status& status) { (void)server::ToGrpcStatus(status); }

bool Parse(const uint8_t* data, size_t size, bool split, google::protobuf::MessageLite* message) {
  std::vector<grpc::Slice> slices;
  size_t half = split ? size / 2 : size;
  slices.emplace_back(data, half);
  if (split) slices.emplace_back(data + half, size - half);
  grpc::ByteBuffer buffer(slices.data(), slices.size());
  absl::Status status = server::ParseFromByteBuffer(&buffer, message);
  Finish(status);
  return status.ok();
}

absl::Status CheckRaycast(const v1::RaycastRequest& request) {
  RaycastInput ray;
  RaycastSettings settings;
  if (absl::Status s = server::FromProto(request, &ray, &settings); !s.ok()) return s;
  return ValidateRaycast(QueryWorld(), &ray, Limits().query);
}

absl::Status CheckSweep(const v1::SweepRequest& request) {
  server::DecodedShape shape;
  if (absl::Status s = server::FromProto(request.shape(), &shape); !s.ok()) return s;
  SweepInput input{shape.posed(), {}, 0};
  SweepSettings settings;
  if (absl::Status s = server::FromProto(request, &input, &settings); !s.ok()) return s;
  input.shape = shape.posed();
  return ValidateSweep(QueryWorld(), &input, &settings, Limits().query);
}

absl::Status CheckOverlap(const v1::OverlapRequest& request) {
  server::DecodedShape shape;
  OverlapSettings settings;
  server::FromProto(request, &settings);
  if (absl::Status s = server::FromProto(request.shape(), &shape); !s.ok()) return s;
  return ValidateOverlap(QueryWorld(), &shape.posed(), Limits().query);
}

absl::Status CheckContacts(const v1::ContactsRequest& request) {
  server::DecodedShape shape;
  ContactsSettings settings;
  server::FromProto(request, &settings);
  if (absl::Status s = server::FromProto(request.shape(), &shape); !s.ok()) return s;
  return ValidateContacts(QueryWorld(), &shape.posed(), settings, Limits().query);
}

absl::Status CheckProbe(const v1::ProbeRequest& request) {
  ProbeShape shape;
  ProbeSettings settings;
  if (absl::Status s = server::FromProto(request, 4096, &shape, &settings); !s.ok()) return s;
  return ValidateProbe(QueryWorld(), shape, settings, Limits().query);
}

absl::Status CheckMoves(const v1::MoveCharactersRequest& request) {
  for (int i = 0; i < request.moves_size(); ++i) {
    CharacterMove move;
    absl::Status s = server::FromProto(request.moves(i), Limits().query, &move);
    if (s.ok()) s = ValidateCharacterMove(QueryWorld(), move, Limits().query, "moves[0].");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CheckQuery(const v1::QueryRequest& query) {
  switch (query.query_case()) {
    case v1::QueryRequest::kRaycast:
      return CheckRaycast(query.raycast());
    case v1::QueryRequest::kSweep:
      return CheckSweep(query.sweep());
    case v1::QueryRequest::kOverlap:
      return CheckOverlap(query.overlap());
    case v1::QueryRequest::kContacts:
      return CheckContacts(query.contacts());
    case v1::QueryRequest::kProbe:
      return CheckProbe(query.probe());
    case v1::QueryRequest::kMoveCharacters:
      return CheckMoves(query.move_characters());
    default:
      return absl::InvalidArgumentError("query: not set");
  }
}

// An edit batch: converted, validated against the query world, then applied to a fresh world
// through an EditBatcher (validation again, one World::Edit), as ApplyEdits does.
absl::Status CheckEdits(const v1::ApplyEditsRequest& request) {
  EditBatch batch;
  if (absl::Status s = server::FromProto(request, &batch); !s.ok()) return s;
  if (absl::Status s = ValidateEditBatch(QueryWorld(), batch, Limits().edit); !s.ok()) return s;
  std::unique_ptr<World> world = MakeFuzzWorld(1.0f);
  EditBatcher batcher(*world, Limits().edit, 4);
  return batcher.Apply(batch).status();
}

absl::Status CheckFillBall(const v1::FillBallRequest& request) {
  FillBallParams params;
  if (absl::Status s = server::FromProto(request, &params); !s.ok()) return s;
  if (absl::Status s = ValidateFillBall(QueryWorld(), params, Limits().edit); !s.ok()) return s;
  std::unique_ptr<World> world = MakeFuzzWorld(1.0f);
  return world->Edit([&](ChunkEdit& edit) { return FillBall(edit, params, Limits().edit); })
      .status();
}

absl::Status CheckRegion(const v1::VoxelBox& box) {
  return ValidateRegion(QueryWorld(), server::FromProto(box), Limits().edit, "region");
}

absl::Status CheckWriteVoxels(const v1::WriteVoxelsRequest& request) {
  EditBatch batch;
  batch.primitives.push_back(server::FromProto(request.voxels()));
  if (absl::Status s = ValidatePrimitive(QueryWorld(), batch.primitives[0], Limits().edit); !s.ok())
    return s;
  std::unique_ptr<World> world = MakeFuzzWorld(1.0f);
  EditBatcher batcher(*world, Limits().edit, 4);
  return batcher.Apply(batch).status();
}

absl::Status CheckImport(const v1::ImportRegionRequest& request) {
  absl::StatusOr<store::Region> region = store::DecodeRegion(request.region());
  if (!region.ok()) return region.status();
  if (absl::Status s = store::ValidateRegionBox(QueryWorld(), region->box); !s.ok()) return s;
  std::unique_ptr<World> world = MakeFuzzWorld(1.0f);
  return world->Edit([&](ChunkEdit& edit) { return store::WriteRegion(*region, edit); }).status();
}

template <typename Message, typename Check>
void Run(const uint8_t* data, size_t size, bool split, Check check) {
  Message message;
  if (Parse(data, size, split, &message)) Finish(check(message));
}

}  // namespace
}  // namespace voxcol::fuzz

// Protobuf logs every string field with invalid UTF-8 it parses; the fuzzer makes many.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace voxcol;
  using namespace voxcol::fuzz;
  if (size < 1) return 0;
  const bool split = data[0] & 0x80;
  const int kind = data[0] & 0x7f;
  ++data;
  --size;
  switch (kind % 16) {
    case 0:
      Run<v1::RaycastRequest>(data, size, split, CheckRaycast);
      break;
    case 1:
      Run<v1::SweepRequest>(data, size, split, CheckSweep);
      break;
    case 2:
      Run<v1::OverlapRequest>(data, size, split, CheckOverlap);
      break;
    case 3:
      Run<v1::ContactsRequest>(data, size, split, CheckContacts);
      break;
    case 4:
      Run<v1::ProbeRequest>(data, size, split, CheckProbe);
      break;
    case 5:
      Run<v1::MoveCharactersRequest>(data, size, split, CheckMoves);
      break;
    case 6:
      Run<v1::QueryBatchRequest>(data, size, split, [](const v1::QueryBatchRequest& batch) {
        for (const v1::QueryRequest& query : batch.queries()) Finish(CheckQuery(query));
        return batch.has_edits() ? CheckEdits(batch.edits()) : absl::OkStatus();
      });
      break;
    case 7:
      Run<v1::FillBallRequest>(data, size, split, CheckFillBall);
      break;
    case 8:
      Run<v1::ApplyEditsRequest>(data, size, split, CheckEdits);
      break;
    case 9:
      Run<v1::EditStreamRequest>(data, size, split, [](const v1::EditStreamRequest& request) {
        return CheckEdits(request.edits());
      });
      break;
    case 10:
      Run<v1::ReadVoxelsRequest>(data, size, split, [](const v1::ReadVoxelsRequest& request) {
        return CheckRegion(request.region());
      });
      break;
    case 11:
      Run<v1::WriteVoxelsRequest>(data, size, split, CheckWriteVoxels);
      break;
    case 12:
      Run<v1::SubscribeRequest>(data, size, split, [](const v1::SubscribeRequest& request) {
        return CheckRegion(request.region());
      });
      break;
    case 13:
      Run<v1::ExportRegionRequest>(data, size, split, [](const v1::ExportRegionRequest& request) {
        return store::ValidateRegionBox(QueryWorld(), server::FromProto(request.box()));
      });
      break;
    case 14:
      Run<v1::ImportRegionRequest>(data, size, split, CheckImport);
      break;
    default:
      Run<v1::QueryRequest>(data, size, split, CheckQuery);
      break;
  }
  return 0;
}
