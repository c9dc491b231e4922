#include "server/rpc/edit_service.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/voxel/edit_validation.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/exec/apply_edits.h"
#include "server/telemetry/server_metrics.h"

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

grpc::Status EditServiceImpl::FillBall(grpc::ServerContext* context,
                                       const v1::FillBallRequest* request, v1::EditAck* response) {
  absl::Time start = absl::Now();
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return FinishEdit(start, handle.status());
  FillBallParams params;
  absl::Status status = FromProto(*request, &params);
  if (status.ok()) status = ValidateFillBall(*(*handle)->world, params, limits_.edit);
  if (status.ok()) {
    // One primitive through the batcher, as ApplyEdits: the same group commit (acknowledged once
    // durable), change feed and replica refusal.
    EditBatch batch;
    batch.primitives.push_back(params);
    status = ApplyBatch(*(*handle)->batcher, batch, response);
  }
  if (status.ok() && audit_ != nullptr) {
    audit_->FillBall(audit_->CallerOf(*context, "/voxcol.v1.EditService/FillBall"), *request,
                     *response);
  }
  return FinishEdit(start, status);
}

grpc::Status EditServiceImpl::ApplyEdits(grpc::ServerContext* context,
                                         const v1::ApplyEditsRequest* request,
                                         v1::EditAck* response) {
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return FinishEdit(absl::Now(), handle.status());
  // Records the edit metrics itself.
  absl::Status status = ApplyEditsMessage(*(*handle)->batcher, *request, response);
  if (status.ok() && audit_ != nullptr) {
    audit_->ApplyEdits(audit_->CallerOf(*context, "/voxcol.v1.EditService/ApplyEdits"), *request,
                       *response);
  }
  return ToGrpcStatus(status);
}

grpc::Status EditServiceImpl::ReadVoxels(grpc::ServerContext*, const v1::ReadVoxelsRequest* request,
                                         v1::ReadVoxelsResponse* response) {
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  uint64_t version = 0;
  absl::StatusOr<VoxelArrays> voxels =
      voxcol::ReadVoxels(*(*handle)->world, FromProto(request->region()), limits_.edit, &version);
  if (!voxels.ok()) return ToGrpcStatus(voxels.status());
  response->set_version(version);
  ToProto(*voxels, response->mutable_voxels());
  return grpc::Status::OK;
}

grpc::Status EditServiceImpl::WriteVoxels(grpc::ServerContext* context,
                                          const v1::WriteVoxelsRequest* request,
                                          v1::EditAck* response) {
  absl::Time start = absl::Now();
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return FinishEdit(start, handle.status());
  EditBatch batch;
  batch.primitives.push_back(FromProto(request->voxels()));
  // Validate here so that the message names the request's own field path ("voxels.region").
  absl::Status status = WithPrefix(
      ValidatePrimitive(*(*handle)->world, batch.primitives[0], limits_.edit), "voxels.");
  if (status.ok()) status = ApplyBatch(*(*handle)->batcher, batch, response);
  if (status.ok() && audit_ != nullptr) {
    audit_->WriteVoxels(audit_->CallerOf(*context, "/voxcol.v1.EditService/WriteVoxels"), *request,
                        *response);
  }
  return FinishEdit(start, status);
}

void EditServiceImpl::AcceptStreams(const RpcThreads& threads) {
  AcceptCalls(threads, WriterMethod(this, &EditServiceImpl::RequestSubscribe,
                                    [this](std::unique_ptr<StreamCall> call) {
                                      return OpenSubscribe(std::move(call));
                                    }));
  AcceptCalls(threads, BidiMethod(this, &EditServiceImpl::RequestEditStream,
                                  [this](std::unique_ptr<StreamCall> call) {
                                    return OpenEditStream(std::move(call));
                                  }));
}

AsyncStream* EditServiceImpl::OpenSubscribe(std::unique_ptr<StreamCall> call) {
  v1::SubscribeRequest parsed;
  absl::Status decoded = ParseFromByteBuffer(&static_cast<WriterCall&>(*call).request, &parsed);
  if (!decoded.ok()) {
    return SubscriptionHub::Failed(
        std::move(call), absl::InvalidArgumentError(absl::StrCat(
                             "the request is not a SubscribeRequest (", decoded.message(), ")")));
  }
  const v1::SubscribeRequest* request = &parsed;
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return SubscriptionHub::Failed(std::move(call), handle.status());
  const World& world = *(*handle)->world;
  IntBox region = world.voxel_bounds();
  if (request->has_region()) {
    region = FromProto(request->region());
    EditLimits unlimited = limits_.edit;  // a subscription may watch the whole world
    unlimited.max_region_voxels = std::numeric_limits<int64_t>::max();
    absl::Status status = ValidateRegion(world, region, unlimited, "region");
    if (!status.ok()) return SubscriptionHub::Failed(std::move(call), status);
  }
  // The stream holds the hub, not the world: deleting the world closes its feed, which ends it.
  return (*handle)->subscriptions->Open(std::move(call), *request, region);
}

}  // namespace voxcol::server
