// Process metrics under the names every Prometheus client library uses (process_cpu_seconds_total,
// process_resident_memory_bytes, ...), read from /proc at scrape time, and voxcol_build_info.
#pragma once

#include "server/telemetry/metrics.h"

namespace voxcol::server {

void RegisterProcessMetrics(Metrics& registry);

}  // namespace voxcol::server
