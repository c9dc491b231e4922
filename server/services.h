// gRPC service implementations: validate, call core, convert. No geometry lives here.
#pragma once

#include <grpcpp/grpcpp.h>

#include "core/query/raycast.h"
#include "core/voxel/edit.h"
#include "core/voxel/world.h"
#include "core/worldgen/cave_generator.h"
#include "voxcol/v1/edit_service.grpc.pb.h"
#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol/v1/world_service.grpc.pb.h"

namespace voxcol::server {

struct ServiceLimits {
  QueryLimits query;
  EditLimits edit;
};

class WorldServiceImpl final : public v1::WorldService::Service {
 public:
  WorldServiceImpl(World& world, int32_t sea_level) : world_(world), sea_level_(sea_level) {}
  grpc::Status GetWorldInfo(grpc::ServerContext* context, const v1::GetWorldInfoRequest* request,
                            v1::GetWorldInfoResponse* response) override;

 private:
  World& world_;
  int32_t sea_level_;
};

class QueryServiceImpl final : public v1::QueryService::Service {
 public:
  QueryServiceImpl(const World& world, const ServiceLimits& limits) : world_(world), limits_(limits) {}
  grpc::Status Raycast(grpc::ServerContext* context, const v1::RaycastRequest* request,
                       v1::RaycastResponse* response) override;

 private:
  const World& world_;
  ServiceLimits limits_;
};

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
