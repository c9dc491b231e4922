// AdminService: online checkpoints and region export/import over the durable store.
#pragma once

#include <string>
#include <utility>

#include "core/store/store.h"
#include "core/voxel/world.h"
#include "server/world/world_registry.h"
#include "voxcol/v1/admin_service.grpc.pb.h"

namespace voxcol::server {

class AdminServiceImpl final : public v1::AdminService::Service {
 public:
  // Checkpoints are written only inside `backup_root`.
  // Every request names its world (empty: the default one), found by `resolver`.
  AdminServiceImpl(const WorldResolver& resolver, std::string backup_root)
      : resolver_(resolver), backup_root_(std::move(backup_root)) {}

  grpc::Status CreateCheckpoint(grpc::ServerContext* context,
                                const v1::CreateCheckpointRequest* request,
                                v1::CreateCheckpointResponse* response) override;
  grpc::Status ExportRegion(grpc::ServerContext* context, const v1::ExportRegionRequest* request,
                            v1::ExportRegionResponse* response) override;
  grpc::Status ImportRegion(grpc::ServerContext* context, const v1::ImportRegionRequest* request,
                            v1::EditAck* response) override;
  // A read replica refuses ImportRegion with `refusal` (it would diverge from its primary).
  void RefuseImports(absl::Status refusal) { import_refusal_ = std::move(refusal); }

 private:
  const WorldResolver& resolver_;
  const std::string backup_root_;
  absl::Status import_refusal_;
};

}  // namespace voxcol::server
