#include "server/edit_service.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/voxel/edit_validation.h"
#include "server/apply_edits.h"
#include "server/convert.h"
#include "server/convert_edit.h"
#include "server/server_metrics.h"

namespace voxcol::server {

namespace {

absl::Status WithPrefix(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

// Records one edit request (latency, committed or failed) and maps its status for gRPC.
grpc::Status FinishEdit(absl::Time start, const absl::Status& status) {
  ServerMetrics& metrics = GetServerMetrics();
  metrics.edit_latency->Observe(absl::ToDoubleSeconds(absl::Now() - start));
  (status.ok() ? metrics.edits : metrics.edit_failures)->Add();
  return ToGrpcStatus(status);
}

// Applies a batch through the batcher and fills the ack.
absl::Status ApplyBatch(EditBatcher& batcher, const EditBatch& batch, v1::EditAck* response) {
  absl::StatusOr<BatchAck> ack = batcher.Apply(batch);
  if (ack.ok()) ToProto(*ack, response);
  return ack.status();
}

}  // namespace

grpc::Status EditServiceImpl::FillBall(grpc::ServerContext*, const v1::FillBallRequest* request,
                                       v1::EditAck* response) {
  absl::Time start = absl::Now();
  if (!batcher_.refusal().ok()) return FinishEdit(start, batcher_.refusal());  // a read replica
  FillBallParams params;
  absl::Status status = FromProto(*request, &params);
  if (status.ok()) status = ValidateFillBall(world_, params, limits_.edit);
  if (status.ok()) {
    absl::StatusOr<EditResult> result =
        world_.Edit([&](ChunkEdit& edit) { return voxcol::FillBall(edit, params, limits_.edit); });
    status = result.status();
    if (result.ok()) {
      response->set_version(result->version);
      response->set_changed_chunks(uint32_t(result->changes.size()));
    }
  }
  return FinishEdit(start, status);
}

grpc::Status EditServiceImpl::ApplyEdits(grpc::ServerContext*, const v1::ApplyEditsRequest* request,
                                         v1::EditAck* response) {
  // Records the edit metrics itself.
  return ToGrpcStatus(ApplyEditsMessage(batcher_, *request, response));
}

grpc::Status EditServiceImpl::ReadVoxels(grpc::ServerContext*, const v1::ReadVoxelsRequest* request,
                                         v1::ReadVoxelsResponse* response) {
  uint64_t version = 0;
  absl::StatusOr<VoxelArrays> voxels =
      voxcol::ReadVoxels(world_, FromProto(request->region()), limits_.edit, &version);
  if (!voxels.ok()) return ToGrpcStatus(voxels.status());
  response->set_version(version);
  ToProto(*voxels, response->mutable_voxels());
  return grpc::Status::OK;
}

grpc::Status EditServiceImpl::WriteVoxels(grpc::ServerContext*,
                                          const v1::WriteVoxelsRequest* request,
                                          v1::EditAck* response) {
  absl::Time start = absl::Now();
  EditBatch batch;
  batch.primitives.push_back(FromProto(request->voxels()));
  // Validate here so that the message names the request's own field path ("voxels.region").
  absl::Status status =
      WithPrefix(ValidatePrimitive(world_, batch.primitives[0], limits_.edit), "voxels.");
  if (status.ok()) status = ApplyBatch(batcher_, batch, response);
  return FinishEdit(start, status);
}

grpc::ServerWriteReactor<v1::SubscribeResponse>* EditServiceImpl::Subscribe(
    grpc::CallbackServerContext*, const v1::SubscribeRequest* request) {
  IntBox region = world_.voxel_bounds();
  if (request->has_region()) {
    region = FromProto(request->region());
    EditLimits unlimited = limits_.edit;  // a subscription may watch the whole world
    unlimited.max_region_voxels = std::numeric_limits<int64_t>::max();
    absl::Status status = ValidateRegion(world_, region, unlimited, "region");
    if (!status.ok()) return SubscriptionHub::Failed(status);
  }
  return subscriptions_.Open(*request, region);
}

}  // namespace voxcol::server
