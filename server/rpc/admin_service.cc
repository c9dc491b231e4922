#include "server/rpc/admin_service.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/store/region_file.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/telemetry/log.h"
#include "server/world/data_dir.h"

namespace voxcol::server {
namespace {

namespace fs = std::filesystem;

// Longest path component most file systems accept (NAME_MAX).
constexpr size_t kMaxComponentBytes = 255;

// Where a checkpoint named `dir` goes: inside `root` (relative names are taken from it; absolute
// paths must already lie in it), with symlinks of the existing part resolved, so that a client
// cannot write elsewhere on the server. Client mistakes are INVALID_ARGUMENT naming `dir`.
absl::StatusOr<fs::path> CheckpointPath(const fs::path& root, const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("dir must not be empty");
  for (const fs::path& part : fs::path(dir)) {
    if (part.native().size() > kMaxComponentBytes) {
      return absl::InvalidArgumentError(absl::StrCat("dir has a path component of ",
                                                     part.native().size(), " bytes, more than ",
                                                     kMaxComponentBytes));
    }
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(root, ec);
  if (ec) return absl::FailedPreconditionError("the server's --backup_root cannot be resolved");
  const fs::path target = fs::weakly_canonical(base / dir, ec);
  const auto [end, _] = std::mismatch(base.begin(), base.end(), target.begin(), target.end());
  if (ec || end != base.end() || target == base) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dir must name a new directory inside the server's --backup_root (", base.string(), ")"));
  }
  if (fs::exists(target, ec)) {
    return absl::AlreadyExistsError(absl::StrCat("dir ", target.string(), " already exists"));
  }
  return target;
}

// Creates the checkpoint's directory; a path through a regular file or without permission is the
// caller's precondition, not a server fault.
absl::Status CreateCheckpointDir(const fs::path& path) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (!ec) return absl::OkStatus();
  const std::string why = absl::StrCat("dir ", path.string(), " cannot be created: ", ec.message());
  if (ec == std::errc::not_a_directory || ec == std::errc::permission_denied ||
      ec == std::errc::file_exists || ec == std::errc::read_only_file_system) {
    return absl::FailedPreconditionError(why);
  }
  if (ec == std::errc::filename_too_long) return absl::InvalidArgumentError(why);
  return absl::InternalError(why);
}

}  // namespace

grpc::Status AdminServiceImpl::CreateCheckpoint(grpc::ServerContext*,
                                                const v1::CreateCheckpointRequest* request,
                                                v1::CreateCheckpointResponse* response) {
  absl::StatusOr<WorldHandle> world = resolver_.Resolve(request->world());
  if (!world.ok()) return ToGrpcStatus(world.status());
  absl::StatusOr<fs::path> path = CheckpointPath(backup_root_, request->dir());
  if (!path.ok()) return ToGrpcStatus(path.status());
  uint64_t version =
      (*world)->world->version();  // published implies durable, so the checkpoint holds it
  // The checkpoint is laid out as a data directory, so a server can start on it directly.
  absl::Status status = CreateCheckpointDir(*path);
  if (status.ok()) status = (*world)->store->CreateCheckpoint(DataDirStorePath(path->string()));
  if (!status.ok()) {
    LogError("event=checkpoint_failed dir=%s message=%s", path->string(), status.message());
    return ToGrpcStatus(status);
  }
  LogInfo("event=checkpoint dir=%s version=%d", path->string(), version);
  response->set_version(version);
  response->set_dir(path->string());
  return grpc::Status::OK;
}

grpc::Status AdminServiceImpl::ExportRegion(grpc::ServerContext*,
                                            const v1::ExportRegionRequest* request,
                                            v1::ExportRegionResponse* response) {
  absl::StatusOr<WorldHandle> world = resolver_.Resolve(request->world());
  if (!world.ok()) return ToGrpcStatus(world.status());
  uint64_t version = 0;
  absl::StatusOr<store::Region> region =
      store::ReadRegion(*(*world)->world, FromProto(request->box()), &version);
  if (!region.ok()) {
    if (absl::IsDataLoss(region.status())) {
      LogError("event=chunk_load_failed rpc=ExportRegion message=%s", region.status().message());
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
  absl::StatusOr<WorldHandle> world = resolver_.Resolve(request->world());
  if (!world.ok()) return ToGrpcStatus(world.status());
  if (!import_refusal_.ok()) return ToGrpcStatus(import_refusal_);
  absl::StatusOr<store::Region> region = store::DecodeRegion(request->region());
  if (!region.ok()) return ToGrpcStatus(region.status());
  if (absl::Status s = store::ValidateRegionBox(*(*world)->world, region->box); !s.ok())
    return ToGrpcStatus(s);
  absl::StatusOr<EditResult> result =
      (*world)->world->Edit([&](ChunkEdit& edit) { return store::WriteRegion(*region, edit); });
  if (!result.ok()) return ToGrpcStatus(result.status());
  response->set_version(result->version);
  response->set_changed_chunks(uint32_t(result->changes.size()));
  return grpc::Status::OK;
}

}  // namespace voxcol::server
