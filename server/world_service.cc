#include "server/world_service.h"

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

}  // namespace voxcol::server
