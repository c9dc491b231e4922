#include "server/rpc/world_service.h"

#include "absl/strings/str_cat.h"
#include "core/version/version.h"
#include "server/convert/convert.h"

namespace voxcol::server {

namespace {

void ToProto(const WorldRegistry::Summary& s, v1::WorldSummary* out) {
  out->set_world(s.id);
  out->set_version(s.version);
  out->set_resident_chunks(s.resident_chunks);
  out->set_resident_bytes(s.resident_bytes);
  out->set_template_world(s.template_world);
  out->set_template_version(s.template_version);
  out->set_collision_cache_bytes(s.cache_bytes);
  out->set_collision_cache_evictions(s.cache_evictions);
}

// The request's generator settings over `defaults`; INVALID_ARGUMENT naming the field.
absl::StatusOr<WorldConfig> SettingsFromProto(const v1::WorldSettings& settings,
                                              WorldConfig defaults, int64_t max_voxels) {
  if (settings.has_size_voxels()) {
    defaults.size_voxels = {settings.size_voxels().x(), settings.size_voxels().y(),
                            settings.size_voxels().z()};
  }
  if (settings.voxel_size() != 0) defaults.voxel_size = settings.voxel_size();
  if (settings.seed() != 0) defaults.seed = settings.seed();
  if (absl::Status s = ValidateWorldConfig(defaults); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("settings: ", s.message()));
  }
  // Per-chunk tables (broadphase slots) are sized by the world: no larger than the server's own.
  if (WorldVoxelBounds(defaults).Volume() > max_voxels) {
    return absl::InvalidArgumentError(absl::StrCat(
        "settings.size_voxels: more voxels than this server's --world_size (", max_voxels, ")"));
  }
  return defaults;
}

}  // namespace

grpc::Status WorldServiceImpl::GetWorldInfo(grpc::ServerContext*,
                                            const v1::GetWorldInfoRequest* request,
                                            v1::GetWorldInfoResponse* response) {
  absl::StatusOr<WorldHandle> handle = resolver_.Resolve(request->world());
  if (!handle.ok()) return ToGrpcStatus(handle.status());
  const World& world = *(*handle)->world;
  Aabb bounds = world.world_bounds();
  ToProto(bounds.min, response->mutable_bounds()->mutable_min());
  ToProto(bounds.max, response->mutable_bounds()->mutable_max());
  ToProto(world.voxel_bounds().min, response->mutable_voxel_bounds()->mutable_min());
  ToProto(world.voxel_bounds().max, response->mutable_voxel_bounds()->mutable_max());
  response->set_voxel_size(world.voxel_size());
  response->set_version(world.version());
  response->set_seed(world.config().seed);
  response->set_generator_version(world.generator().Version());
  response->set_resident_chunks(world.resident_chunks());
  response->set_sea_level((*handle)->sea_level);
  response->set_server_version(absl::StrCat(VersionString(), " (revision ", GitRevision(), ")"));
  return grpc::Status::OK;
}

grpc::Status WorldServiceImpl::CreateWorld(grpc::ServerContext*,
                                           const v1::CreateWorldRequest* request,
                                           v1::WorldSummary* response) {
  if (registry_ == nullptr) return {grpc::StatusCode::UNIMPLEMENTED, "one world only"};
  if (!change_refusal_.ok()) return ToGrpcStatus(change_refusal_);
  const WorldConfig& own = registry_->default_world().world->config();
  absl::StatusOr<WorldConfig> settings =
      SettingsFromProto(request->settings(), own, WorldVoxelBounds(own).Volume());
  if (!settings.ok()) return ToGrpcStatus(settings.status());
  absl::StatusOr<WorldRegistry::Summary> summary =
      registry_->Create(request->world(), *settings, request->template_world());
  if (!summary.ok()) return ToGrpcStatus(summary.status());
  ToProto(*summary, response);
  return grpc::Status::OK;
}

grpc::Status WorldServiceImpl::DeleteWorld(grpc::ServerContext*,
                                           const v1::DeleteWorldRequest* request,
                                           v1::DeleteWorldResponse*) {
  if (registry_ == nullptr) return {grpc::StatusCode::UNIMPLEMENTED, "one world only"};
  if (!change_refusal_.ok()) return ToGrpcStatus(change_refusal_);
  return ToGrpcStatus(registry_->Delete(request->world()));
}

grpc::Status WorldServiceImpl::ListWorlds(grpc::ServerContext*,
                                          const v1::ListWorldsRequest* request,
                                          v1::ListWorldsResponse* response) {
  if (registry_ == nullptr) {
    WorldRegistry::Summary s;
    s.id = kDefaultWorld;
    absl::StatusOr<WorldHandle> handle = resolver_.Resolve("");
    if (!handle.ok()) return ToGrpcStatus(handle.status());
    s.version = (*handle)->world->version();
    s.resident_chunks = (*handle)->world->resident_chunks();
    s.resident_bytes = s.resident_chunks * sizeof(Chunk);  // an upper bound (uniform are shared)
    ToProto(s, response->add_worlds());
    return grpc::Status::OK;
  }
  for (const WorldRegistry::Summary& s : registry_->List(!request->skip_resident_bytes())) {
    ToProto(s, response->add_worlds());
  }
  return grpc::Status::OK;
}

}  // namespace voxcol::server
