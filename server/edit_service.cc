#include "server/edit_service.h"

#include "server/convert.h"
#include "server/server_metrics.h"

#include "absl/time/clock.h"

namespace voxcol::server {

grpc::Status EditServiceImpl::FillBall(grpc::ServerContext*, const v1::FillBallRequest* request,
                                       v1::EditAck* response) {
  absl::Time start = absl::Now();
  ServerMetrics& metrics = GetServerMetrics();
  FillBallParams params;
  absl::Status status = FromProto(*request, &params);
  if (status.ok()) status = ValidateFillBall(world_, params, limits_.edit);
  absl::StatusOr<EditResult> result =
      status.ok() ? world_.Edit([&](ChunkEdit& edit) { return voxcol::FillBall(edit, params, limits_.edit); })
                  : absl::StatusOr<EditResult>(status);
  metrics.edit_latency->Observe(absl::ToDoubleSeconds(absl::Now() - start));
  if (!result.ok()) {
    metrics.edit_failures->Add();
    return ToGrpcStatus(result.status());
  }
  metrics.edits->Add();
  response->set_version(result->version);
  response->set_changed_chunks(uint32_t(result->changes.size()));
  return grpc::Status::OK;
}

}  // namespace voxcol::server
