// Fuzz target: decoding of stored records and packed regions (core/store), the bytes a damaged or
// hostile store or an ImportRegion request hands the server.
//
// Input: one selector byte, then the record. Decoders must refuse malformed input with an error
// (never crash), and what they accept must round-trip:
//   0 packed region (ImportRegion): re-encodes to the same bytes; if inside the world it is written
//     into a fresh world as ImportRegion does and read back (ExportRegion) equal, voxel by voxel
//     in canonical form;
//   1 chunk record: re-encoded and decoded again it holds the same voxels;
//   2 change-feed entry: its size is the entry's byte count and encode/decode/encode is stable;
//   3 keys, versions and idempotency acks: decode(x) ok implies encode(decode(x)) == x.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "core/store/chunk_codec.h"
#include "core/store/feed_codec.h"
#include "core/store/keys.h"
#include "core/store/region_file.h"
#include "tests/fuzz/fuzz_world.h"

namespace voxcol::fuzz {
namespace {

void Require(bool condition, const char* what) {
  if (condition) return;
  std::fprintf(stderr, "fuzz_decode: %s\n", what);
  std::abort();
}

void Region(std::string_view bytes) {
  absl::StatusOr<store::Region> region = store::DecodeRegion(bytes);
  if (!region.ok()) return;
  Require(store::EncodeRegion(*region) == bytes, "region does not re-encode to its bytes");
  std::unique_ptr<World> world = MakeFuzzWorld(1.0f);
  if (!store::ValidateRegionBox(*world, region->box).ok()) return;
  absl::StatusOr<EditResult> edit =
      world->Edit([&](ChunkEdit& e) { return store::WriteRegion(*region, e); });
  Require(edit.ok(), "a valid region could not be written");
  absl::StatusOr<store::Region> back = store::ReadRegion(*world, region->box);
  Require(back.ok(), "a written region could not be read");
  for (size_t i = 0; i < region->materials.size(); ++i) {
    Voxel want = Canonical(Voxel{region->materials[i], region->occupancy[i]});
    Require(back->materials[i] == want.material && back->occupancy[i] == want.occupancy,
            "region read back differs from what was imported");
  }
}

void ChunkRecord(std::string_view bytes) {
  absl::StatusOr<ChunkPtr> chunk = store::DecodeChunk(bytes, "fuzz");
  if (!chunk.ok()) return;
  absl::StatusOr<ChunkPtr> again = store::DecodeChunk(store::EncodeChunk(**chunk), "fuzz");
  Require(again.ok(), "a decoded chunk does not decode after re-encoding");
  for (int y = 0; y < kChunkSize; ++y)
    for (int z = 0; z < kChunkSize; ++z)
      for (int x = 0; x < kChunkSize; ++x)
        Require((*chunk)->At(x, y, z) == (*again)->At(x, y, z), "chunk round trip changed a voxel");
}

void FeedEntry(std::string_view bytes) {
  absl::StatusOr<ChangeEntryPtr> entry = store::DecodeChangeEntry(7, bytes);
  if (!entry.ok()) return;
  Require((*entry)->bytes == bytes.size(), "entry size is not its record's size");
  std::string encoded = store::EncodeChangeEntry(**entry);
  absl::StatusOr<ChangeEntryPtr> again = store::DecodeChangeEntry(7, encoded);
  Require(again.ok() && store::EncodeChangeEntry(**again) == encoded, "entry round trip unstable");
}

void Keys(std::string_view bytes) {
  Int3 key;
  for (char prefix : {store::kChunkPrefix, store::kRegionPrefix})
    if (store::DecodeKey(bytes, prefix, &key))
      Require(store::EncodeKey(prefix, key) == bytes, "key round trip");
  uint64_t version = 0, fingerprint = 0;
  if (store::DecodeVersion(bytes, &version))
    Require(store::EncodeVersion(version) == bytes, "version round trip");
  uint32_t chunks = 0;
  if (store::DecodeAck(bytes, &fingerprint, &version, &chunks))
    Require(store::EncodeAck(fingerprint, version, chunks) == bytes, "ack round trip");
}

}  // namespace
}  // namespace voxcol::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      voxcol::fuzz::Region(bytes);
      break;
    case 1:
      voxcol::fuzz::ChunkRecord(bytes);
      break;
    case 2:
      voxcol::fuzz::FeedEntry(bytes);
      break;
    default:
      voxcol::fuzz::Keys(bytes);
      break;
  }
  return 0;
}
