// AdminService: online checkpoints and region export/import over the durable store.
#pragma once

#include "core/store/store.h"
#include "core/voxel/world.h"
#include "voxcol/v1/admin_service.grpc.pb.h"

namespace voxcol::server {

class AdminServiceImpl final : public v1::AdminService::Service {
 public:
  AdminServiceImpl(World& world, store::Store& store) : world_(world), store_(store) {}

  grpc::Status CreateCheckpoint(grpc::ServerContext* context,
                                const v1::CreateCheckpointRequest* request,
                                v1::CreateCheckpointResponse* response) override;
  grpc::Status ExportRegion(grpc::ServerContext* context, const v1::ExportRegionRequest* request,
                            v1::ExportRegionResponse* response) override;
  grpc::Status ImportRegion(grpc::ServerContext* context, const v1::ImportRegionRequest* request,
                            v1::EditAck* response) override;

 private:
  World& world_;
  store::Store& store_;
};

}  // namespace voxcol::server
