// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/broadphase/broadphase_index.h"
#include "core/voxel/world.h"
#include "server/service_limits.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::server {

class QueryServiceImpl final : public v1::QueryService::Service {
 public:
  // `index` is the broadphase of `world` (registered as its edit observer); both outlive the
  // service.
  QueryServiceImpl(const World& world, const BroadphaseIndex& index, const ServiceLimits& limits)
      : world_(world), index_(index), limits_(limits) {}
  grpc::Status Raycast(grpc::ServerContext* context, const v1::RaycastRequest* request,
                       v1::RaycastResponse* response) override;
  grpc::Status Overlap(grpc::ServerContext* context, const v1::OverlapRequest* request,
                       v1::OverlapResponse* response) override;

 private:
  const World& world_;
  const BroadphaseIndex& index_;
  ServiceLimits limits_;
};

}  // namespace voxcol::server
