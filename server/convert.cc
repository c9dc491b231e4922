#include "server/convert.h"

#include "absl/strings/str_cat.h"

namespace voxcol::server {

Vec3 ToCore(const v1::Vec3& v) { return {v.x(), v.y(), v.z()}; }

void ToProto(const Vec3& v, v1::Vec3* out) {
  out->set_x(v.x);
  out->set_y(v.y);
  out->set_z(v.z);
}

void ToProto(const Int3& v, v1::Int3* out) {
  out->set_x(v.x);
  out->set_y(v.y);
  out->set_z(v.z);
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share the canonical numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status EditModeFromProto(v1::EditMode mode, EditMode* out) {
  switch (mode) {
    case v1::EDIT_MODE_UNSPECIFIED:
    case v1::EDIT_MODE_ADD:
      *out = EditMode::kAdd;
      return absl::OkStatus();
    case v1::EDIT_MODE_SUBTRACT:
      *out = EditMode::kSubtract;
      return absl::OkStatus();
    case v1::EDIT_MODE_SET:
      *out = EditMode::kSet;
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(absl::StrCat("mode: unknown EditMode value ", int(mode)));
  }
}

absl::Status FromProto(const v1::RaycastRequest& request, RayInput* ray, RaySettings* settings) {
  ray->origin = ToCore(request.origin());
  ray->direction = ToCore(request.direction());
  ray->max_distance = request.max_distance();
  switch (request.water_mode()) {
    case v1::WATER_MODE_UNSPECIFIED:
    case v1::WATER_MODE_PASS_THROUGH:
      settings->water = WaterMode::kPassThrough;
      break;
    case v1::WATER_MODE_STOP_AT_SURFACE:
      settings->water = WaterMode::kStopAtSurface;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("water_mode: unknown WaterMode value ", int(request.water_mode())));
  }
  switch (request.mode()) {
    case v1::RAYCAST_MODE_UNSPECIFIED:
    case v1::RAYCAST_MODE_SMOOTH:
      settings->mode = RaycastMode::kSmooth;
      break;
    case v1::RAYCAST_MODE_BLOCKY:
      settings->mode = RaycastMode::kBlocky;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("mode: unknown RaycastMode value ", int(request.mode())));
  }
  return absl::OkStatus();
}

absl::Status FromProto(const v1::FillBallRequest& request, FillBallParams* params) {
  params->center = ToCore(request.center());
  params->radius = request.radius();
  if (request.material() > 255) {
    return absl::InvalidArgumentError(
        absl::StrCat("material must be in [0, 255], got ", request.material()));
  }
  params->material = uint8_t(request.material());
  return EditModeFromProto(request.mode(), &params->mode);
}

void ToProto(const RayHit& hit, v1::RaycastResponse* out) {
  out->set_hit(hit.hit);
  if (!hit.hit) return;
  out->set_distance(hit.distance);
  ToProto(hit.position, out->mutable_position());
  ToProto(hit.normal, out->mutable_normal());
  out->set_material(hit.value.material);
  out->set_occupancy(hit.value.occupancy);
  ToProto(hit.voxel, out->mutable_voxel());
  out->set_started_inside(hit.started_inside);
  ToProto(hit.chunk, out->mutable_chunk());
  out->set_triangle(hit.triangle);
}

void ToProto(const RayHit& hit, v1::RaycastHit* out) {
  out->set_distance(hit.distance);
  ToProto(hit.position, out->mutable_position());
  ToProto(hit.normal, out->mutable_normal());
  out->set_material(hit.value.material);
  out->set_occupancy(hit.value.occupancy);
  ToProto(hit.voxel, out->mutable_voxel());
  ToProto(hit.chunk, out->mutable_chunk());
  out->set_triangle(hit.triangle);
  out->set_front_face(hit.front_face);
}

void ToProto(const QueryStats& stats, v1::QueryStats* out) {
  out->set_voxels_visited(stats.voxels_visited);
  out->set_chunks_visited(stats.chunks_visited);
  out->set_tree_nodes_visited(stats.tree_nodes_visited);
  out->set_triangles_tested(stats.triangles_tested);
  out->set_cache_builds(stats.cache_builds);
}

absl::Status FromProto(const v1::OverlapRequest& request, uint32_t default_max_voxels,
                       OverlapShape* shape, OverlapSettings* settings) {
  switch (request.shape_case()) {
    case v1::OverlapRequest::kBox:
      shape->is_sphere = false;
      shape->center = ToCore(request.box().center());
      shape->half_extents = ToCore(request.box().half_extents());
      break;
    case v1::OverlapRequest::kSphere:
      shape->is_sphere = true;
      shape->center = ToCore(request.sphere().center());
      shape->radius = request.sphere().radius();
      break;
    default:
      return absl::InvalidArgumentError("shape: set one of box, sphere, posed");
  }
  settings->collect_chunks = true;
  settings->max_voxels = 0;
  if (request.include_voxels()) {
    settings->max_voxels = request.max_voxels() == 0 ? default_max_voxels : request.max_voxels();
  }
  return absl::OkStatus();
}

void ToProto(const std::vector<TouchedChunk>& chunks, v1::OverlapResponse* out) {
  for (const TouchedChunk& c : chunks) {
    v1::OverlapTouch* t = out->add_chunks();
    ToProto(c.key, t->mutable_key());
    t->set_solid(c.classes & kClassSolid);
    t->set_water(c.classes & kClassWater);
  }
}

void ToProto(const OverlapResult& result, v1::OverlapResponse* out) {
  out->set_touches_solid(result.touches_solid);
  out->set_touches_water(result.touches_water);
  ToProto(result.chunks, out);
  for (const TouchedVoxel& v : result.voxels) {
    v1::OverlapTouch* t = out->add_voxels();
    ToProto(v.voxel, t->mutable_key());
    t->set_solid(v.classes & kClassSolid);
    t->set_water(v.classes & kClassWater);
  }
  out->set_voxels_truncated(result.voxels_truncated);
}

}  // namespace voxcol::server
