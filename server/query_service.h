// gRPC service: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/cache/narrowphase_cache.h"
#include "core/voxel/world.h"
#include "server/service_limits.h"
#include "voxcol/v1/query_service.grpc.pb.h"

namespace voxcol::server {

class QueryServiceImpl final : public v1::QueryService::Service {
 public:
  // `cache` holds the lazily built meshes and trees of smooth queries; it must observe `world`.
  QueryServiceImpl(const World& world, NarrowphaseCache& cache, const ServiceLimits& limits)
      : world_(world), cache_(cache), limits_(limits) {}
  grpc::Status Raycast(grpc::ServerContext* context, const v1::RaycastRequest* request,
                       v1::RaycastResponse* response) override;

 private:
  const World& world_;
  NarrowphaseCache& cache_;
  ServiceLimits limits_;
};

}  // namespace voxcol::server
