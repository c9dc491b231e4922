#include "server/convert/convert.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace voxcol::server {

namespace {

void SweepHitToProto(const SweepHit& hit, const Vec3& start, const Vec3& dir, v1::SweepHit* out) {
  out->set_distance(hit.distance);
  ToProto(hit.position, out->mutable_position());
  ToProto(hit.normal, out->mutable_normal());
  out->set_material(hit.material);
  ToProto(hit.chunk, out->mutable_chunk());
  out->set_triangle(hit.triangle);
  ToProto(start + dir * hit.distance, out->mutable_shape_position());
}

void ContactToProto(const Contact& contact, v1::Contact* out) {
  ToProto(contact.position, out->mutable_position());
  ToProto(contact.normal, out->mutable_normal());
  out->set_depth(contact.depth);
  out->set_material(contact.material);
  out->set_triangle(contact.triangle);
}

void WaterToProto(const WaterContact& water, v1::WaterContact* out) {
  out->set_in_water(water.in_water);
  out->set_submerged_fraction(water.submerged_fraction);
  out->set_submerged_volume(water.submerged_volume);
  out->set_surface_height(water.surface_height);
  if (water.in_water) ToProto(water.center_of_buoyancy, out->mutable_center_of_buoyancy());
}

template <typename Touched>
void SetClasses(uint8_t classes, Touched* out) {
  out->set_solid(classes & kClassSolid);
  out->set_water(classes & kClassWater);
}

void ChunksToProto(const std::vector<TouchedChunk>& chunks,
                   google::protobuf::RepeatedPtrField<v1::TouchedChunk>* out) {
  for (const TouchedChunk& c : chunks) {
    v1::TouchedChunk* t = out->Add();
    ToProto(c.key, t->mutable_chunk());
    SetClasses(c.classes, t);
  }
}

// A wire float where 0 means the default.
float OrDefault(float value, float default_value) { return value == 0 ? default_value : value; }

absl::Status CheckCapsuleSize(const char* field, float value, float max, bool zero_ok) {
  if (std::isfinite(value) && (zero_ok ? value >= 0 : value > 0) && value <= max) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(field, " must be finite, ",
                                                 zero_ok ? ">= 0" : "> 0", " and at most ", max,
                                                 " (--max_shape_extent), got ", value));
}

}  // namespace

absl::Status SerializeToByteBuffer(const google::protobuf::MessageLite& message,
                                   grpc::ByteBuffer* out) {
  const size_t size = message.ByteSizeLong();
  if (size > size_t(INT32_MAX)) {
    return absl::InternalError(absl::StrCat("message of ", size, " bytes is over 2 GB"));
  }
  grpc::Slice slice(size);
  message.SerializeWithCachedSizesToArray(const_cast<uint8_t*>(slice.begin()));
  grpc::ByteBuffer buffer(&slice, 1);
  out->Swap(&buffer);
  return absl::OkStatus();
}

absl::Status ParseFromByteBuffer(grpc::ByteBuffer* buffer, google::protobuf::MessageLite* message) {
  grpc::Slice slice;
  if (buffer->TrySingleSlice(&slice).ok()) {
    if (message->ParseFromArray(slice.begin(), int(slice.size()))) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("could not parse ", slice.size(), " bytes as ", message->GetTypeName()));
  }
  grpc::ProtoBufferReader reader(buffer);
  if (reader.status().ok() && message->ParseFromZeroCopyStream(&reader)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("could not parse ", buffer->Length(), " bytes as ", message->GetTypeName()));
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  // absl::StatusCode and grpc::StatusCode share the canonical numbering.
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

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

absl::Status FromProto(const v1::PosedShape& in, DecodedShape* out) {
  // The core shape is filled field by field (not with Make*, whose preconditions are asserts):
  // ValidatePosedShape reports bad sizes with the field's name.
  ConvexShape& s = out->shape_;
  s = ConvexShape{};
  out->points_.clear();
  const v1::Shape& shape = in.shape();
  switch (shape.kind_case()) {
    case v1::Shape::kSphere:
      s.type = ShapeType::kSphere;
      s.convex_radius = shape.sphere().radius();
      break;
    case v1::Shape::kCapsule:
      s.type = ShapeType::kCapsule;
      s.convex_radius = shape.capsule().radius();
      s.half_height = shape.capsule().half_height();
      break;
    case v1::Shape::kBox: {
      // Outer half extents on the wire; core keeps the core box inside the rounding.
      const float r = shape.box().convex_radius();
      s.type = ShapeType::kBox;
      s.convex_radius = r;
      s.half_extents = ToCore(shape.box().half_extents()) - Vec3{r, r, r};
      break;
    }
    case v1::Shape::kHull: {
      for (const v1::Vec3& p : shape.hull().points()) out->points_.push_back(ToCore(p));
      s.type = ShapeType::kConvexHull;
      s.convex_radius = shape.hull().convex_radius();
      s.points = out->points_.empty() ? nullptr : out->points_.data();
      s.num_points = int(out->points_.size());
      break;
    }
    default:
      return absl::InvalidArgumentError(
          "shape.shape: one of sphere, capsule, box, hull is required");
  }
  RigidTransform& pose = out->posed_.pose;
  pose.translation = ToCore(in.position());
  // Unset means identity; a set rotation is checked (and normalized) by ValidatePosedShape.
  const v1::Quat& q = in.rotation();
  pose.rotation = in.has_rotation() ? Quat{q.w(), q.x(), q.y(), q.z()} : Quat{};
  return absl::OkStatus();
}

absl::Status FromProto(v1::WaterMode water, v1::RaycastMode mode, RaycastSettings* settings) {
  switch (water) {
    case v1::WATER_MODE_UNSPECIFIED:
    case v1::WATER_MODE_PASS_THROUGH:
      settings->water = WaterMode::kPassThrough;
      break;
    case v1::WATER_MODE_STOP_AT_SURFACE:
      settings->water = WaterMode::kStopAtSurface;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("water_mode: unknown WaterMode value ", int(water)));
  }
  switch (mode) {
    case v1::RAYCAST_MODE_UNSPECIFIED:
    case v1::RAYCAST_MODE_SMOOTH:
      settings->mode = RaycastMode::kSmooth;
      break;
    case v1::RAYCAST_MODE_BLOCKY:
      settings->mode = RaycastMode::kBlocky;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("mode: unknown RaycastMode value ", int(mode)));
  }
  return absl::OkStatus();
}

absl::Status FromProto(const v1::RaycastRequest& request, RaycastInput* ray,
                       RaycastSettings* settings) {
  ray->origin = ToCore(request.origin());
  ray->direction = ToCore(request.direction());
  ray->max_distance = request.max_distance();
  return FromProto(request.water_mode(), request.mode(), settings);
}

absl::Status FromProto(const v1::SweepRequest& request, SweepInput* input,
                       SweepSettings* settings) {
  input->direction = ToCore(request.direction());
  input->distance = request.distance();
  switch (request.collection()) {
    case v1::HIT_COLLECTION_UNSPECIFIED:
    case v1::HIT_COLLECTION_CLOSEST:
      settings->collection = HitCollection::kClosest;
      return absl::OkStatus();
    case v1::HIT_COLLECTION_ANY:
      settings->collection = HitCollection::kAny;
      return absl::OkStatus();
    case v1::HIT_COLLECTION_ALL:
      settings->collection = HitCollection::kAll;
      return absl::OkStatus();
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("collection: unknown HitCollection value ", int(request.collection())));
  }
}

void FromProto(const v1::OverlapRequest& request, OverlapSettings* settings) {
  settings->include_penetration = request.include_penetration();
}

void FromProto(const v1::ContactsRequest& request, ContactsSettings* settings) {
  settings->margin = request.margin();
  settings->water = !request.skip_water();
}

absl::Status FromProto(const v1::ProbeRequest& request, uint32_t default_max_voxels,
                       ProbeShape* shape, ProbeSettings* settings) {
  switch (request.shape_case()) {
    case v1::ProbeRequest::kBox:
      shape->is_sphere = false;
      shape->center = ToCore(request.box().center());
      shape->half_extents = ToCore(request.box().half_extents());
      break;
    case v1::ProbeRequest::kSphere:
      shape->is_sphere = true;
      shape->center = ToCore(request.sphere().center());
      shape->radius = request.sphere().radius();
      break;
    default:
      return absl::InvalidArgumentError("shape: set one of box, sphere");
  }
  settings->collect_chunks = true;
  settings->max_voxels = 0;
  if (request.include_voxels()) {
    settings->max_voxels = request.max_voxels() == 0 ? default_max_voxels : request.max_voxels();
  }
  return absl::OkStatus();
}

absl::Status FromProto(const v1::CharacterMove& in, const QueryLimits& limits, CharacterMove* out) {
  const float max = limits.max_shape_extent;
  if (absl::Status s = CheckCapsuleSize("radius", in.radius(), max, false); !s.ok()) return s;
  if (absl::Status s = CheckCapsuleSize("half_height", in.half_height(), max, true); !s.ok()) {
    return s;
  }
  if (in.radius() + in.half_height() > max) {
    return absl::InvalidArgumentError(
        absl::StrCat("half_height: half_height + radius exceeds --max_shape_extent ", max, ", got ",
                     in.radius() + in.half_height()));
  }
  out->radius = in.radius();
  out->half_height = in.half_height();
  out->position = ToCore(in.position());
  out->displacement = ToCore(in.displacement());
  const CharacterSettings defaults;
  const v1::CharacterSettings& w = in.settings();
  CharacterSettings& s = out->settings;
  s.step_offset = OrDefault(w.step_offset(), defaults.step_offset);
  s.slope_limit_degrees = OrDefault(w.slope_limit_degrees(), defaults.slope_limit_degrees);
  s.snap_distance = OrDefault(w.snap_distance(), defaults.snap_distance);
  // Values past the range stay past it (core names them); the clamp only avoids an int overflow.
  s.max_slide_iterations = w.max_slide_iterations() == 0
                               ? defaults.max_slide_iterations
                               : int(std::min<uint32_t>(w.max_slide_iterations(), 1 << 20));
  s.skin_width = OrDefault(w.skin_width(), defaults.skin_width);
  s.swim_threshold = OrDefault(w.swim_threshold(), defaults.swim_threshold);
  return absl::OkStatus();
}

void ToProto(const CharacterSettings& settings, v1::CharacterSettings* out) {
  out->set_step_offset(settings.step_offset);
  out->set_slope_limit_degrees(settings.slope_limit_degrees);
  out->set_snap_distance(settings.snap_distance);
  out->set_max_slide_iterations(uint32_t(std::max(settings.max_slide_iterations, 0)));
  out->set_skin_width(settings.skin_width);
  out->set_swim_threshold(settings.swim_threshold);
}

void ToProto(const CharacterResult& result, uint64_t client_id, v1::CharacterResult* out) {
  out->set_client_id(client_id);
  ToProto(result.position, out->mutable_position());
  switch (result.ground) {
    case GroundState::kAirborne:
      out->set_ground(v1::GROUND_STATE_AIRBORNE);
      break;
    case GroundState::kOnGround:
      out->set_ground(v1::GROUND_STATE_ON_GROUND);
      break;
    case GroundState::kOnSteepSlope:
      out->set_ground(v1::GROUND_STATE_ON_STEEP_SLOPE);
      break;
  }
  if (result.ground != GroundState::kAirborne) {
    ToProto(result.ground_normal, out->mutable_ground_normal());
    out->set_ground_material(result.ground_material);
  }
  out->set_collision_flags(result.collisions);
  out->set_on_obstacle(result.on_obstacle);
  out->set_recovered(result.recovered);
  out->set_stepped(result.stepped);
  for (uint8_t m : result.touched_materials) out->add_touched_materials(m);
  out->set_swimming(result.swimming);
  out->set_submerged_fraction(result.submerged_fraction);
}

void ToProto(const RaycastHit& hit, v1::RaycastHit* out) {
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

void ToProto(const RaycastHit& hit, const std::vector<RaycastHit>* all, v1::RaycastResponse* out) {
  if (all != nullptr) {
    for (const RaycastHit& h : *all) ToProto(h, out->add_hits());
  }
  out->set_hit(hit.hit);
  if (!hit.hit) return;
  ToProto(hit, out->mutable_first());
  out->set_started_inside(hit.started_inside);
}

void ToProto(const SweepResult& result, const SweepInput& input, v1::SweepResponse* out) {
  out->set_hit(result.hit);
  if (!result.hit) return;
  const Vec3 start = input.shape.pose.translation;
  const Vec3 dir = Normalize(input.direction);
  SweepHitToProto(result.first, start, dir, out->mutable_first());
  for (const SweepHit& h : result.hits) SweepHitToProto(h, start, dir, out->add_hits());
  out->set_hits_truncated(result.hits_truncated);
  if (result.initial_overlap) {
    out->set_initial_overlap(true);
    ToProto(result.penetration, out->mutable_penetration());
  }
}

void ToProto(const OverlapResult& result, bool include_penetration, v1::OverlapResponse* out) {
  out->set_touches_solid(result.touches_solid);
  out->set_touches_water(result.touches_water);
  ChunksToProto(result.chunks, out->mutable_chunks());
  if (include_penetration && result.touches_solid) {
    ToProto(result.penetration, out->mutable_penetration());
  }
}

void ToProto(const ContactsResult& result, bool include_water, v1::ContactsResponse* out) {
  for (const ChunkContacts& m : result.chunks) {
    v1::ChunkContacts* c = out->add_chunks();
    ToProto(m.chunk, c->mutable_chunk());
    for (int i = 0; i < m.count; ++i) ContactToProto(m.points[i], c->add_points());
  }
  if (result.buried) {
    out->set_buried(true);
    ToProto(result.penetration, out->mutable_penetration());
  }
  if (include_water) WaterToProto(result.water, out->mutable_water());
}

void ToProto(const ProbeResult& result, v1::ProbeResponse* out) {
  out->set_may_touch_solid(result.may_touch_solid);
  out->set_may_touch_water(result.may_touch_water);
  ChunksToProto(result.chunks, out->mutable_chunks());
  for (const TouchedVoxel& v : result.voxels) {
    v1::TouchedVoxel* t = out->add_voxels();
    ToProto(v.voxel, t->mutable_voxel());
    SetClasses(v.classes, t);
  }
  out->set_voxels_truncated(result.voxels_truncated);
}

void ToProto(const Penetration& penetration, v1::Penetration* out) {
  out->set_depth(penetration.depth);
  ToProto(penetration.normal, out->mutable_normal());
  ToProto(penetration.position, out->mutable_position());
}

void ToProto(const QueryStats& stats, v1::QueryStats* out) {
  out->set_voxels_visited(stats.voxels_visited);
  out->set_chunks_visited(stats.chunks_visited);
  out->set_tree_nodes_visited(stats.tree_nodes_visited);
  out->set_triangles_tested(stats.triangles_tested);
  out->set_cache_builds(stats.cache_builds);
}

}  // namespace voxcol::server
