// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/voxel/world.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::server {

class WorldServiceImpl final : public v1::WorldService::Service {
 public:
  WorldServiceImpl(World& world, int32_t sea_level) : world_(world), sea_level_(sea_level) {}
  grpc::Status GetWorldInfo(grpc::ServerContext* context, const v1::GetWorldInfoRequest* request,
                            v1::GetWorldInfoResponse* response) override;

 private:
  World& world_;
  int32_t sea_level_;
};

}  // namespace voxcol::server
