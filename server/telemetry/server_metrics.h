// The server's metric handles, registered once in the process-wide registry (like the default
// registry of Prometheus client libraries), so every service records without plumbing.
#pragma once

#include "server/telemetry/metrics.h"

namespace voxcol::server {

struct ServerMetrics {
  Metrics registry;
  // Latency of unary RPCs and of stream batches, arrival to completion.
  Histogram* raycast_latency;
  Histogram* overlap_latency;
  Histogram* sweep_latency;
  Histogram* contacts_latency;
  Histogram* probe_latency;
  Histogram* batch_latency;
  Histogram* edit_latency;
  Counter* queries_raycast;
  Counter* queries_overlap;
  Counter* queries_sweep;
  Counter* queries_contacts;
  Counter* queries_probe;
  Counter* query_failures;     // queries answered with a non-OK code
  Counter* batches;            // batches received on streams
  Counter* batches_shed;       // refused with RESOURCE_EXHAUSTED
  Counter* batches_deadline;   // DEADLINE_EXCEEDED
  Counter* batches_cancelled;  // stopped because their stream was cancelled
  Counter* edits;              // committed edit batches
  Counter* edit_failures;
  Counter* streams_opened;
};

// The process-wide instance (created on first use).
ServerMetrics& GetServerMetrics();

}  // namespace voxcol::server
