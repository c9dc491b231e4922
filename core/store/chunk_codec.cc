#include "core/store/chunk_codec.h"

#include <array>

#include "absl/strings/str_cat.h"

namespace voxcol::store {
namespace {

constexpr uint8_t kFormatUniform = 1;
constexpr uint8_t kFormatPlanar = 2;
constexpr size_t kHeaderBytes = 5;

const std::array<uint32_t, 256>& CrcTable() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  return table;
}

void PutHeader(uint8_t format, std::string* out) {
  uint32_t crc = Crc32(std::string_view(*out).substr(kHeaderBytes));
  (*out)[0] = char(format);
  for (int i = 0; i < 4; ++i) (*out)[1 + i] = char(crc >> (8 * i));
}

}  // namespace

uint32_t Crc32(std::string_view data) {
  const auto& table = CrcTable();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : data) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string EncodeChunk(const Chunk& chunk) {
  std::string out(kHeaderBytes, '\0');
  if (chunk.IsUniform()) {
    out.push_back(char(chunk.voxels[0].material));
    out.push_back(char(chunk.voxels[0].occupancy));
    PutHeader(kFormatUniform, &out);
    return out;
  }
  out.resize(kHeaderBytes + 2 * kChunkVoxels);
  for (int i = 0; i < kChunkVoxels; ++i) {
    out[kHeaderBytes + i] = char(chunk.voxels[i].material);
    out[kHeaderBytes + kChunkVoxels + i] = char(chunk.voxels[i].occupancy);
  }
  PutHeader(kFormatPlanar, &out);
  return out;
}

absl::StatusOr<ChunkPtr> DecodeChunk(std::string_view value, absl::string_view what) {
  if (value.size() < kHeaderBytes) {
    return absl::DataLossError(absl::StrCat(what, ": truncated record (", value.size(), " bytes)"));
  }
  uint8_t format = uint8_t(value[0]);
  uint32_t crc = 0;
  for (int i = 0; i < 4; ++i) crc |= uint32_t(uint8_t(value[1 + i])) << (8 * i);
  std::string_view payload = value.substr(kHeaderBytes);
  size_t expected = format == kFormatUniform ? 2 : format == kFormatPlanar ? 2 * kChunkVoxels : 0;
  if (expected == 0 || payload.size() != expected) {
    return absl::DataLossError(
        absl::StrCat(what, ": bad record (format ", format, ", ", payload.size(), " bytes)"));
  }
  if (Crc32(payload) != crc)
    return absl::DataLossError(absl::StrCat(what, ": record checksum mismatch"));
  if (format == kFormatUniform)
    return UniformChunk(Canonical(Voxel{uint8_t(payload[0]), uint8_t(payload[1])}));
  auto chunk = std::make_shared<Chunk>();
  for (int i = 0; i < kChunkVoxels; ++i) {
    chunk->voxels[i] = Voxel{uint8_t(payload[i]), uint8_t(payload[kChunkVoxels + i])};
  }
  return ChunkPtr(std::move(chunk));
}

}  // namespace voxcol::store
