// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "server/world/world_registry.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::server {

class WorldServiceImpl final : public v1::WorldService::Service {
 public:
  // `registry` is null for a single-world service (CreateWorld and DeleteWorld are then
  // UNIMPLEMENTED); `resolver` finds the world of each request.
  WorldServiceImpl(const WorldResolver& resolver, WorldRegistry* registry)
      : resolver_(resolver), registry_(registry) {}
  // A read replica refuses CreateWorld and DeleteWorld with `refusal` (its worlds follow the
  // primary's).
  void RefuseChanges(absl::Status refusal) { change_refusal_ = std::move(refusal); }
  grpc::Status GetWorldInfo(grpc::ServerContext* context, const v1::GetWorldInfoRequest* request,
                            v1::GetWorldInfoResponse* response) override;
  grpc::Status CreateWorld(grpc::ServerContext* context, const v1::CreateWorldRequest* request,
                           v1::WorldSummary* response) override;
  grpc::Status DeleteWorld(grpc::ServerContext* context, const v1::DeleteWorldRequest* request,
                           v1::DeleteWorldResponse* response) override;
  grpc::Status ListWorlds(grpc::ServerContext* context, const v1::ListWorldsRequest* request,
                          v1::ListWorldsResponse* response) override;

 private:
  const WorldResolver& resolver_;
  WorldRegistry* registry_;
  absl::Status change_refusal_;
};

}  // namespace voxcol::server
