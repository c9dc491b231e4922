// RocksDB key layout. Keys sort bytewise, so integers are big endian with the sign bit flipped:
// chunks of one region and neighbouring regions sit next to each other in the LSM tree.
//
//   "c" x y z   one edited chunk (4 bytes each)          value: EncodeChunk
//   "r" x y z   a region (4^3 chunks) with edited chunks  value: empty
//   "m:config"  world identity (text, see store.cc)
//   "m:version" world version after the last durable edit (8 bytes big endian)
//   "k" key     an idempotency key of an applied batch    value: EncodeAck
//   "f" version a change-feed entry (8 bytes big endian)  value: EncodeChangeEntry (feed_codec.h)
#pragma once

#include <string>
#include <string_view>

#include "core/voxel/chunk.h"

namespace voxcol::store {

constexpr char kChunkPrefix = 'c';
constexpr char kRegionPrefix = 'r';
constexpr char kAckPrefix = 'k';
constexpr char kFeedPrefix = 'f';
constexpr char kConfigKey[] = "m:config";
constexpr char kVersionKey[] = "m:version";

// Chunks per region edge, as a shift: regions of 4^3 chunks (32^3 voxels).
constexpr int kRegionBits = 2;

// Region holding a chunk (floor division, correct for negative keys).
constexpr Int3 RegionOf(const ChunkKey& chunk) {
  return {chunk.x >> kRegionBits, chunk.y >> kRegionBits, chunk.z >> kRegionBits};
}

// "prefix" followed by the three coordinates, order-preserving.
std::string EncodeKey(char prefix, const Int3& key);
// Inverse of EncodeKey; false when `encoded` is not 13 bytes starting with `prefix`.
bool DecodeKey(std::string_view encoded, char prefix, Int3* key);

std::string EncodeVersion(uint64_t version);
// "f" + EncodeVersion(version): feed entries sort by version.
std::string FeedKey(uint64_t version);
bool DecodeVersion(std::string_view encoded, uint64_t* version);

// The ack of a keyed batch: fingerprint, version (8 bytes each) and changed chunks (4), big endian.
std::string EncodeAck(uint64_t fingerprint, uint64_t version, uint32_t changed_chunks);
bool DecodeAck(std::string_view encoded, uint64_t* fingerprint, uint64_t* version,
               uint32_t* changed_chunks);

}  // namespace voxcol::store
