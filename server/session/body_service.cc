#include "server/session/body_service.h"

#include "server/bodies/body_ops.h"
#include "server/convert/convert.h"

namespace voxcol::server {

namespace {

absl::Status NotServed() {
  return absl::FailedPreconditionError("world: bodies are not served for this world");
}

}  // namespace

grpc::Status BodyServiceImpl::UpdateBodies(grpc::ServerContext*,
                                           const v1::UpdateBodiesRequest* request,
                                           v1::UpdateBodiesResponse* response) {
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  if ((*handle)->bodies == nullptr) return ToGrpcStatus(NotServed());
  return ToGrpcStatus(RunUpdateBodies(*(*handle)->bodies, *request, response));
}

grpc::Status BodyServiceImpl::ListBodies(grpc::ServerContext*, const v1::ListBodiesRequest* request,
                                         v1::ListBodiesResponse* response) {
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  if ((*handle)->bodies == nullptr) return ToGrpcStatus(NotServed());
  RunListBodies(*(*handle)->bodies, response);
  return grpc::Status::OK;
}

}  // namespace voxcol::server
