#include "server/admin_service.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/store/region_file.h"
#include "server/convert.h"
#include "server/data_dir.h"
#include "server/log.h"

namespace voxcol::server {
namespace {

IntBox FromProto(const v1::VoxelBox& box) {
  return {{box.min().x(), box.min().y(), box.min().z()},
          {box.max().x(), box.max().y(), box.max().z()}};
}

absl::Status ValidateCheckpointDir(const std::string& dir) {
  if (dir.empty() || !std::filesystem::path(dir).is_absolute()) {
    return absl::InvalidArgumentError("dir must be an absolute path on the server");
  }
  std::error_code ec;
  if (std::filesystem::exists(dir, ec))
    return absl::AlreadyExistsError(absl::StrCat("dir ", dir, " already exists"));
  return absl::OkStatus();
}

}  // namespace

grpc::Status AdminServiceImpl::CreateCheckpoint(grpc::ServerContext*,
                                                const v1::CreateCheckpointRequest* request,
                                                v1::CreateCheckpointResponse* response) {
  if (absl::Status s = ValidateCheckpointDir(request->dir()); !s.ok()) return ToGrpcStatus(s);
  uint64_t version = world_.version();  // published implies durable, so the checkpoint holds it
  // The checkpoint is laid out as a data directory, so a server can start on it directly.
  std::error_code ec;
  std::filesystem::create_directories(request->dir(), ec);
  absl::Status status =
      ec ? absl::InternalError(absl::StrCat("cannot create ", request->dir(), ": ", ec.message()))
         : store_.CreateCheckpoint(DataDirStorePath(request->dir()));
  if (!status.ok()) {
    LogError("event=checkpoint_failed dir=%s message=\"%s\"", request->dir(), status.message());
    return ToGrpcStatus(status);
  }
  LogInfo("event=checkpoint dir=%s version=%d", request->dir(), version);
  response->set_version(version);
  response->set_dir(request->dir());
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::ExportRegion(grpc::ServerContext*,
                                            const v1::ExportRegionRequest* request,
                                            v1::ExportRegionResponse* response) {
  uint64_t version = 0;
  absl::StatusOr<store::Region> region =
      store::ReadRegion(world_, FromProto(request->box()), &version);
  if (!region.ok()) {
    if (absl::IsDataLoss(region.status())) {
      LogError("event=chunk_load_failed rpc=ExportRegion message=\"%s\"",
               region.status().message());
    }
    return ToGrpcStatus(region.status());
  }
  response->set_version(version);
  response->set_region(store::EncodeRegion(*region));
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::ImportRegion(grpc::ServerContext*,
                                            const v1::ImportRegionRequest* request,
                                            v1::EditAck* response) {
  absl::StatusOr<store::Region> region = store::DecodeRegion(request->region());
  if (!region.ok()) return ToGrpcStatus(region.status());
  if (absl::Status s = store::ValidateRegionBox(world_, region->box); !s.ok())
    return ToGrpcStatus(s);
  absl::StatusOr<EditResult> result =
      world_.Edit([&](ChunkEdit& edit) { return store::WriteRegion(*region, edit); });
  if (!result.ok()) return ToGrpcStatus(result.status());
  response->set_version(result->version);
  response->set_changed_chunks(uint32_t(result->changes.size()));
  return grpc::Status::OK;
}

}  // namespace voxcol::server
