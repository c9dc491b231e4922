// Process metrics under the names every Prometheus client library uses (process_cpu_seconds_total,
// process_resident_memory_bytes, ...), read from /proc at scrape time, and voxcol_build_info.
#pragma once

#include <cstdint>
#include <string>

#include "server/telemetry/metrics.h"

namespace voxcol::server {

void RegisterProcessMetrics(Metrics& registry);

// The file system of the data directory at scrape time (statvfs): voxcol_data_disk_free_bytes
// (available to the server's user) and voxcol_data_disk_reserve_bytes (--min_free_disk_mb: below
// it edits are refused with RESOURCE_EXHAUSTED), so that an alert can fire before edits stop.
void RegisterDiskMetrics(const std::string& data_dir, uint64_t reserve_bytes, Metrics& registry);

}  // namespace voxcol::server
