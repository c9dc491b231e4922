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

// Copies `checkpoint` (a directory made by CreateCheckpoint, itself a data directory) to
// `data_dir`, which must be missing or empty (FAILED_PRECONDITION otherwise: a restore never
// overwrites). INVALID_ARGUMENT naming --restore_from when `checkpoint` is not a checkpoint. The
// store checks the copy when it opens (a cut-short copy is refused there).
absl::Status RestoreCheckpoint(const std::string& checkpoint, const std::string& data_dir);

}  // namespace voxcol::server
