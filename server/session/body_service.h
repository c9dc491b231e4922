// gRPC BodyService (body_service.proto): the bodies of each world, session state. No geometry
// here: the work is server/bodies'.
#pragma once

#include <grpcpp/grpcpp.h>

#include "server/world/world_registry.h"
#include "voxcol/v1/body_service.grpc.pb.h"

namespace voxcol::server {

class BodyServiceImpl final : public v1::BodyService::Service {
 public:
  // `resolver` finds the world of each request; it must outlive the service.
  explicit BodyServiceImpl(const WorldResolver& resolver) : resolver_(resolver) {}
  grpc::Status UpdateBodies(grpc::ServerContext* context, const v1::UpdateBodiesRequest* request,
                            v1::UpdateBodiesResponse* response) override;
  grpc::Status ListBodies(grpc::ServerContext* context, const v1::ListBodiesRequest* request,
                          v1::ListBodiesResponse* response) override;

 private:
  const WorldResolver& resolver_;
};

}  // namespace voxcol::server
