// The flags of the store's fault handling (issue 38, docs/reliability.md): --min_free_disk_mb,
// --verify_store_on_open, --storage_faults_file (tests only) and --restore_from.
#pragma once

#include <string>

#include "core/store/store.h"

namespace voxcol::server {

// Sets the fault-handling fields of `options` from the flags, and routes RocksDB's own log lines
// to the server's log.
void ApplyStoreFaultFlags(store::StoreOptions* options);

// --restore_from: copies that checkpoint into `data_dir` first. False (logged as
// event=restore_failed) when it cannot; true when it did or the flag is unset.
bool RestoreIfAsked(const std::string& data_dir);

}  // namespace voxcol::server
