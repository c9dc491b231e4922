#include "core/store/feed_codec.h"

#include <limits>

#include "absl/strings/str_cat.h"

namespace voxcol::store {
namespace {

void PutU32(uint32_t v, std::string* out) {
  for (int b = 0; b < 4; ++b) out->push_back(char(v >> (24 - 8 * b)));
}

void PutInt3(const Int3& v, std::string* out) {
  for (int a = 0; a < 3; ++a) PutU32(uint32_t(v[a]), out);
}

// Reads from the front of `in`, advancing it; false when too short.
bool GetU32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = 0;
  for (int b = 0; b < 4; ++b) *v = (*v << 8) | uint8_t((*in)[b]);
  in->remove_prefix(4);
  return true;
}

bool GetInt3(std::string_view* in, Int3* v) {
  for (int a = 0; a < 3; ++a) {
    uint32_t u = 0;
    if (!GetU32(in, &u)) return false;
    (*v)[a] = int32_t(u);
  }
  return true;
}

bool GetBytes(std::string_view* in, size_t n, std::vector<uint8_t>* out) {
  if (in->size() < n) return false;
  out->assign(in->begin(), in->begin() + n);
  in->remove_prefix(n);
  return true;
}

// One change and its voxels; false when truncated or the box is not a part of the chunk.
bool GetChange(std::string_view* in, ChunkChange* change, VoxelArrays* voxels) {
  IntBox& box = change->changed_voxels;
  uint32_t spare = 0;
  if (!GetInt3(in, &change->key) || !GetInt3(in, &box.min) || !GetInt3(in, &box.max) ||
      !GetU32(in, &spare)) {
    return false;
  }
  // A damaged key whose voxels lie outside int32 is no chunk of any world (and ChunkOrigin would
  // overflow).
  constexpr int32_t kMaxKey = (std::numeric_limits<int32_t>::max() - kChunkSize) / kChunkSize;
  for (int a = 0; a < 3; ++a)
    if (change->key[a] < -kMaxKey || change->key[a] > kMaxKey) return false;
  const Int3 origin = ChunkOrigin(change->key);
  const IntBox chunk_box{origin, origin + Int3{kChunkSize, kChunkSize, kChunkSize}};
  if (box.Empty() || !chunk_box.ContainsBox(box)) return false;
  voxels->region = box;
  const size_t volume = size_t(box.Volume());
  return GetBytes(in, volume, &voxels->materials) && GetBytes(in, volume, &voxels->occupancies);
}

}  // namespace

std::string EncodeChangeEntry(const ChangeEntry& entry) {
  std::string out;
  out.reserve(ChangeEntryBytes(entry));
  PutU32(uint32_t(entry.changes.size()), &out);
  out.append(12, '\0');
  for (size_t i = 0; i < entry.changes.size(); ++i) {
    const ChunkChange& change = entry.changes[i];
    PutInt3(change.key, &out);
    PutInt3(change.changed_voxels.min, &out);
    PutInt3(change.changed_voxels.max, &out);
    PutU32(0, &out);  // spare, keeps a change's header at 40 bytes
    const VoxelArrays& voxels = entry.voxels[i];
    out.append(voxels.materials.begin(), voxels.materials.end());
    out.append(voxels.occupancies.begin(), voxels.occupancies.end());
  }
  return out;
}

absl::StatusOr<ChangeEntryPtr> DecodeChangeEntry(uint64_t version, std::string_view encoded) {
  auto entry = std::make_shared<ChangeEntry>();
  entry->version = version;
  uint32_t count = 0;
  bool ok = GetU32(&encoded, &count) && encoded.size() >= 12;
  if (ok) encoded.remove_prefix(12);
  for (uint32_t i = 0; ok && i < count; ++i) {
    ChunkChange change;
    VoxelArrays voxels;
    ok = GetChange(&encoded, &change, &voxels);
    entry->changes.push_back(change);
    entry->voxels.push_back(std::move(voxels));
  }
  if (!ok || !encoded.empty()) {
    return absl::DataLossError(absl::StrCat("change feed entry of version ", version,
                                            ": truncated or inconsistent record"));
  }
  entry->bytes = ChangeEntryBytes(*entry);
  return ChangeEntryPtr(std::move(entry));
}

}  // namespace voxcol::store
