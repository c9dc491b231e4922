#include "server/app/store_flags.h"

#include "absl/flags/flag.h"
#include "core/store/storage_faults.h"
#include "server/telemetry/log.h"
#include "server/world/data_dir.h"

ABSL_FLAG(uint64_t, min_free_disk_mb, 64,
          "Edits are refused (RESOURCE_EXHAUSTED) while the data directory's disk has less free "
          "space, and accepted again once it has; 0 = no check (docs/reliability.md)");
ABSL_FLAG(bool, verify_store_on_open, true,
          "Read every stored block at start-up and refuse a damaged store (DATA_LOSS naming the "
          "file); false: damage is found when its chunk is read");
ABSL_FLAG(std::string, restore_from, "",
          "Copy this checkpoint (voxcol checkpoint) into --data_dir, which must be missing or "
          "empty, then start on it");
ABSL_FLAG(std::string, storage_faults_file, "",
          "Tests only: inject the storage faults this file lists (enospc, eio-sync, torn-write; "
          "docs/reliability.md), re-read when it changes; empty: none");

namespace voxcol::server {

void ApplyStoreFaultFlags(store::StoreOptions* options) {
  options->min_free_bytes = absl::GetFlag(FLAGS_min_free_disk_mb) << 20;
  options->verify_on_open = absl::GetFlag(FLAGS_verify_store_on_open);
  options->log = [](const std::string& line) {
    LogLine("WARN", "event=rocksdb message=" + LogValue(line));
  };
  if (const std::string faults = absl::GetFlag(FLAGS_storage_faults_file); !faults.empty()) {
    store::StorageFaults injector;  // its env keeps what it needs
    injector.WatchControlFile(faults);
    options->env = injector.env();
    LogError("event=storage_faults_injected file=%s", faults);
  }
}

bool RestoreIfAsked(const std::string& data_dir) {
  const std::string from = absl::GetFlag(FLAGS_restore_from);
  if (from.empty()) return true;
  absl::Status restored = RestoreCheckpoint(from, data_dir);
  if (!restored.ok()) {
    LogError("event=restore_failed message=%s", restored.message());
    return false;
  }
  LogInfo("event=restored from=%s data_dir=%s", from, data_dir);
  return true;
}

}  // namespace voxcol::server
