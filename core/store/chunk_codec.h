// Encoding of one chunk as a store value, with its own checksum so that a damaged record is
// reported (DATA_LOSS) instead of served as terrain.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/voxel/chunk.h"

namespace voxcol::store {

// Value layout (little endian): format byte, CRC-32 (IEEE) of the payload, payload.
//   format 1 (uniform): payload = material, occupancy.
//   format 2 (planar):  payload = 512 materials then 512 occupancies, chunk order (X, Z, Y).
// Planar arrays compress better than interleaved pairs; RocksDB compresses the block (zstd).
std::string EncodeChunk(const Chunk& chunk);

// Decodes a value written by EncodeChunk. DATA_LOSS (naming `what`) for a wrong size, an unknown
// format or a checksum mismatch. Uniform chunks come back as the shared UniformChunk instance.
absl::StatusOr<ChunkPtr> DecodeChunk(std::string_view value, absl::string_view what);

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of `data`.
uint32_t Crc32(std::string_view data);

}  // namespace voxcol::store
