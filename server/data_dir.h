// The server's data directory: the world's identity (seed, size, voxel size, generator version).
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "core/voxel/world.h"

namespace voxcol::server {

struct StoredWorld {
  WorldConfig config;
  uint32_t generator_version = 0;
  bool created = false;  // true when this call created the directory's world
};

// Opens the world recorded in `dir`, or records `requested` there if the directory holds none.
// An existing world keeps its own configuration; a different generator version is refused with
// FAILED_PRECONDITION because regenerated chunks would silently differ.
absl::StatusOr<StoredWorld> OpenDataDir(const std::string& dir, const WorldConfig& requested,
                                        uint32_t generator_version);

}  // namespace voxcol::server
