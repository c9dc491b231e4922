#include "server/edit_service.h"

#include "server/convert.h"

namespace voxcol::server {

grpc::Status EditServiceImpl::FillBall(grpc::ServerContext*, const v1::FillBallRequest* request,
                                       v1::EditAck* response) {
  FillBallParams params;
  absl::Status status = FromProto(*request, &params);
  if (status.ok()) status = ValidateFillBall(world_, params, limits_.edit);
  if (!status.ok()) return ToGrpcStatus(status);
  absl::StatusOr<EditResult> result =
      world_.Edit([&](ChunkEdit& edit) { return voxcol::FillBall(edit, params, limits_.edit); });
  if (!result.ok()) return ToGrpcStatus(result.status());
  response->set_version(result->version);
  response->set_changed_chunks(uint32_t(result->changes.size()));
  return grpc::Status::OK;
}

}  // namespace voxcol::server
