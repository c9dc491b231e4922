// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/voxel/world.h"
#include "server/service_limits.h"
#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol::server {

class EditServiceImpl final : public v1::EditService::Service {
 public:
  EditServiceImpl(World& world, const ServiceLimits& limits) : world_(world), limits_(limits) {}
  grpc::Status FillBall(grpc::ServerContext* context, const v1::FillBallRequest* request,
                        v1::EditAck* response) override;

 private:
  World& world_;
  ServiceLimits limits_;
};

}  // namespace voxcol::server
