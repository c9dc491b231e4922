#include "server/convert/convert_edit.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"

namespace voxcol::server {

namespace {

absl::Status MaterialFromProto(uint32_t value, const char* field, uint8_t* out) {
  if (value > 255) {
    return absl::InvalidArgumentError(absl::StrCat(field, " must be in [0, 255], got ", value));
  }
  *out = uint8_t(value);
  return absl::OkStatus();
}

// An unset rotation is the identity; a set one is passed through for core to validate.
Quat RotationFromProto(bool has, const v1::Quat& q) {
  return has ? Quat{q.w(), q.x(), q.y(), q.z()} : Quat{};
}

// Shared by the shape primitives: material and mode.
template <typename Params>
absl::Status MaterialAndMode(uint32_t material, v1::EditMode mode, Params* out) {
  absl::Status status = MaterialFromProto(material, "material", &out->material);
  if (status.ok()) status = EditModeFromProto(mode, &out->mode);
  return status;
}

absl::Status ShapeFromProto(const v1::EditPrimitive& p, EditPrimitive* out) {
  switch (p.primitive_case()) {
    case v1::EditPrimitive::kFillBall: {
      FillBallParams params;
      absl::Status status = FromProto(p.fill_ball(), &params);
      *out = params;
      return status;
    }
    case v1::EditPrimitive::kFillBlock: {
      const v1::FillBlock& b = p.fill_block();
      FillBlockParams params{ToCore(b.center()), RotationFromProto(b.has_rotation(), b.rotation()),
                             ToCore(b.size())};
      *out = params;
      return MaterialAndMode(b.material(), b.mode(), &std::get<FillBlockParams>(*out));
    }
    case v1::EditPrimitive::kFillCylinder: {
      const v1::FillCylinder& c = p.fill_cylinder();
      *out =
          FillCylinderParams{ToCore(c.center()), RotationFromProto(c.has_rotation(), c.rotation()),
                             c.height(), c.radius()};
      return MaterialAndMode(c.material(), c.mode(), &std::get<FillCylinderParams>(*out));
    }
    case v1::EditPrimitive::kFillWedge: {
      const v1::FillWedge& w = p.fill_wedge();
      *out = FillWedgeParams{ToCore(w.center()), RotationFromProto(w.has_rotation(), w.rotation()),
                             ToCore(w.size())};
      return MaterialAndMode(w.material(), w.mode(), &std::get<FillWedgeParams>(*out));
    }
    default:
      return absl::InternalError("not a shape primitive");
  }
}

absl::Status RegionPrimitiveFromProto(const v1::EditPrimitive& p, EditPrimitive* out) {
  switch (p.primitive_case()) {
    case v1::EditPrimitive::kFillRegion:
      *out = FillRegionParams{FromProto(p.fill_region().region())};
      return MaterialAndMode(p.fill_region().material(), p.fill_region().mode(),
                             &std::get<FillRegionParams>(*out));
    case v1::EditPrimitive::kReplaceMaterial: {
      ReplaceMaterialParams params{FromProto(p.replace_material().region())};
      absl::Status status =
          MaterialFromProto(p.replace_material().source(), "source", &params.source);
      if (status.ok())
        status = MaterialFromProto(p.replace_material().target(), "target", &params.target);
      *out = params;
      return status;
    }
    case v1::EditPrimitive::kClear:
      *out = ClearParams{FromProto(p.clear().region())};
      return absl::OkStatus();
    case v1::EditPrimitive::kWriteVoxels:
      *out = FromProto(p.write_voxels());
      return absl::OkStatus();
    default:
      return absl::InternalError("not a region primitive");
  }
}

// Field names of the oneof, for error paths of primitives that failed wire conversion.
const char* OneofName(const v1::EditPrimitive& p) {
  const auto* field = v1::EditPrimitive::descriptor()->FindFieldByNumber(p.primitive_case());
  return field ? field->name().c_str() : "primitive";
}

}  // namespace

IntBox FromProto(const v1::VoxelBox& box) {
  return {{box.min().x(), box.min().y(), box.min().z()},
          {box.max().x(), box.max().y(), box.max().z()}};
}

void ToProto(const IntBox& box, v1::VoxelBox* out) {
  ToProto(box.min, out->mutable_min());
  ToProto(box.max, out->mutable_max());
}

absl::Status FromProto(const v1::EditPrimitive& p, EditPrimitive* out) {
  switch (p.primitive_case()) {
    case v1::EditPrimitive::kFillBall:
    case v1::EditPrimitive::kFillBlock:
    case v1::EditPrimitive::kFillCylinder:
    case v1::EditPrimitive::kFillWedge:
      return ShapeFromProto(p, out);
    case v1::EditPrimitive::PRIMITIVE_NOT_SET:
      return absl::InvalidArgumentError("primitive is not set (one of fill_ball, fill_block, ...)");
    default:
      return RegionPrimitiveFromProto(p, out);
  }
}

namespace {

// 64-bit FNV-1a: fingerprints are stored with their keys and compared by later processes, so the
// hash must not depend on the process (absl::Hash is seeded per process) or the library version.
uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

absl::Status FromProto(const v1::ApplyEditsRequest& request, EditBatch* out) {
  out->primitives.resize(request.primitives_size());
  const uint64_t expected = request.has_expected_version() ? request.expected_version() + 1 : 0;
  char expected_bytes[8];
  for (int b = 0; b < 8; ++b) expected_bytes[b] = char(expected >> (8 * b));
  uint64_t fingerprint = Fnv1a(0xcbf29ce484222325ull, std::string_view(expected_bytes, 8));
  std::string bytes;
  for (int i = 0; i < request.primitives_size(); ++i) {
    const v1::EditPrimitive& p = request.primitives(i);
    absl::Status status = FromProto(p, &out->primitives[i]);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("primitives[", i, "].", OneofName(p), ".", status.message()));
    }
    // Deterministic serialization: equal primitives give equal bytes in any process.
    bytes.clear();
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      p.SerializeToCodedStream(&coded);
    }
    fingerprint = Fnv1a(fingerprint, bytes);
  }
  out->idempotency_key = request.idempotency_key();
  out->fingerprint = fingerprint;
  if (request.has_expected_version()) out->expected_version = request.expected_version();
  return absl::OkStatus();
}

VoxelArrays FromProto(const v1::VoxelData& data) {
  const std::string& m = data.materials();
  const std::string& o = data.occupancies();
  return {FromProto(data.region()), std::vector<uint8_t>(m.begin(), m.end()),
          std::vector<uint8_t>(o.begin(), o.end())};
}

void ToProto(const VoxelArrays& voxels, v1::VoxelData* out) {
  ToProto(voxels.region, out->mutable_region());
  out->set_materials(reinterpret_cast<const char*>(voxels.materials.data()),
                     voxels.materials.size());
  out->set_occupancies(reinterpret_cast<const char*>(voxels.occupancies.data()),
                       voxels.occupancies.size());
}

void ToProto(const BatchAck& ack, v1::EditAck* out) {
  out->set_version(ack.version);
  out->set_changed_chunks(ack.changed_chunks);
  out->set_replayed(ack.replayed);
}

bool ToProto(const ChangeEntry& entry, const IntBox& region, bool include_voxels,
             v1::SubscribeResponse* out) {
  out->Clear();
  out->set_version(entry.version);
  for (size_t i = 0; i < entry.changes.size(); ++i) {
    IntBox box = entry.changes[i].changed_voxels.Intersect(region);
    if (box.Empty()) continue;
    v1::ChunkChange* change = out->add_changes();
    ToProto(entry.changes[i].key, change->mutable_chunk());
    ToProto(box, change->mutable_changed_voxels());
    if (!include_voxels) continue;
    if (box.min == entry.voxels[i].region.min && box.max == entry.voxels[i].region.max) {
      ToProto(entry.voxels[i], change->mutable_voxels());
      continue;
    }
    // Clipped by the region: copy the rows of the part inside it (X runs are contiguous).
    const VoxelArrays& from = entry.voxels[i];
    VoxelArrays voxels{box, std::vector<uint8_t>(box.Volume()), std::vector<uint8_t>(box.Volume())};
    const int row = box.max.x - box.min.x;
    for (int y = box.min.y; y < box.max.y; ++y)
      for (int z = box.min.z; z < box.max.z; ++z) {
        const int64_t src = VoxelArrayIndex(from.region, {box.min.x, y, z});
        const int64_t dst = VoxelArrayIndex(box, {box.min.x, y, z});
        std::copy_n(from.materials.begin() + src, row, voxels.materials.begin() + dst);
        std::copy_n(from.occupancies.begin() + src, row, voxels.occupancies.begin() + dst);
      }
    ToProto(voxels, change->mutable_voxels());
  }
  return out->changes_size() > 0;
}

}  // namespace voxcol::server
