#include "server/query_service.h"

#include "server/convert.h"

namespace voxcol::server {

grpc::Status QueryServiceImpl::Raycast(grpc::ServerContext*, const v1::RaycastRequest* request,
                                       v1::RaycastResponse* response) {
  RayInput ray;
  RaySettings settings;
  absl::Status status = FromProto(*request, &ray, &settings);
  if (status.ok()) status = ValidateRay(world_, ray, limits_.query);
  if (!status.ok()) return ToGrpcStatus(status);
  uint64_t version = world_.version();
  QueryStats stats;
  RayHit hit = RaycastBlocky(index_, ray, settings, &stats);
  ToProto(hit, response);
  response->set_version(version);
  if (request->include_stats()) {
    response->mutable_stats()->set_voxels_visited(stats.voxels_visited);
    response->mutable_stats()->set_chunks_visited(stats.chunks_visited);
  }
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::Overlap(grpc::ServerContext*, const v1::OverlapRequest* request,
                                       v1::OverlapResponse* response) {
  OverlapShape shape;
  OverlapSettings settings;
  absl::Status status = FromProto(*request, limits_.overlap.max_voxels, &shape, &settings);
  if (status.ok()) status = ValidateOverlap(world_, shape, settings, limits_.overlap);
  if (!status.ok()) return ToGrpcStatus(status);
  uint64_t version = world_.version();
  // One result per thread: its vectors keep their capacity, so steady-state queries do not
  // allocate.
  thread_local OverlapResult result;
  voxcol::Overlap(index_, shape, settings, &result);
  ToProto(result, response);
  response->set_version(version);
  if (request->include_stats())
    response->mutable_stats()->set_chunks_visited(result.chunks_visited);
  return grpc::Status::OK;
}

}  // namespace voxcol::server
