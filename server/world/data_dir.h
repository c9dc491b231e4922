// The server's data directory:
//   <data_dir>/store/      RocksDB database: world identity, edited chunks, world version
//   <data_dir>/world.conf  legacy (before the store): read once to adopt an old world's identity
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/store/store.h"
#include "core/voxel/world.h"

namespace voxcol::server {

struct DataDir {
  std::unique_ptr<store::Store> store;
  store::StoredWorld world;
};

// Opens the store in `dir` and the world recorded there, or records `requested` if the directory
// holds none. An existing world keeps its own configuration; a different generator version is
// refused with FAILED_PRECONDITION because regenerated chunks would silently differ.
absl::StatusOr<DataDir> OpenDataDir(const std::string& dir, const WorldConfig& requested,
                                    uint32_t generator_version, const store::StoreOptions& options);

// Where the RocksDB database of data directory `dir` lives.
std::string DataDirStorePath(const std::string& dir);

}  // namespace voxcol::server
