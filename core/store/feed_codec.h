// Encoding of change-feed entries (ChangeEntry) as stored under "f" + version (see keys.h).
//
//   u32 change count, then per change: chunk key (3 x i32), changed box min and max (6 x i32),
//   then the box's materials and occupancies (volume bytes each). Big endian. The size is exactly
//   ChangeEntryBytes: 16 + per change 40 + 2 * volume (the 12 spare bytes of the header are zero).
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/voxel/change_log.h"

namespace voxcol::store {

std::string EncodeChangeEntry(const ChangeEntry& entry);
// DATA_LOSS naming the version when the record is truncated or inconsistent.
absl::StatusOr<ChangeEntryPtr> DecodeChangeEntry(uint64_t version, std::string_view encoded);

}  // namespace voxcol::store
