#include "server/services.h"

#include "server/convert.h"

namespace voxcol::server {

grpc::Status WorldServiceImpl::GetWorldInfo(grpc::ServerContext*, const v1::GetWorldInfoRequest*,
                                            v1::GetWorldInfoResponse* response) {
  Aabb bounds = world_.world_bounds();
  ToProto(bounds.min, response->mutable_bounds()->mutable_min());
  ToProto(bounds.max, response->mutable_bounds()->mutable_max());
  ToProto(world_.voxel_bounds().min, response->mutable_voxel_bounds()->mutable_min());
  ToProto(world_.voxel_bounds().max, response->mutable_voxel_bounds()->mutable_max());
  response->set_voxel_size(world_.voxel_size());
  response->set_version(world_.version());
  response->set_seed(world_.config().seed);
  response->set_generator_version(world_.generator().Version());
  response->set_resident_chunks(world_.resident_chunks());
  response->set_sea_level(sea_level_);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::Raycast(grpc::ServerContext*, const v1::RaycastRequest* request,
                                       v1::RaycastResponse* response) {
  RayInput ray;
  RaySettings settings;
  absl::Status status = FromProto(*request, &ray, &settings);
  if (status.ok()) status = ValidateRay(world_, ray, limits_.query);
  if (!status.ok()) return ToGrpcStatus(status);
  uint64_t version = world_.version();
  QueryStats stats;
  RayHit hit = RaycastBlocky(world_, ray, settings, &stats);
  ToProto(hit, response);
  response->set_version(version);
  if (request->include_stats()) {
    response->mutable_stats()->set_voxels_visited(stats.voxels_visited);
    response->mutable_stats()->set_chunks_visited(stats.chunks_visited);
  }
  return grpc::Status::OK;
}

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
