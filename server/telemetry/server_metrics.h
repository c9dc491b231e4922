// The server's metric handles, registered once in the process-wide registry (like the default
// registry of Prometheus client libraries), so every service records without plumbing.
#pragma once

#include <atomic>
#include <cstdint>

#include "server/telemetry/metrics.h"

namespace voxcol::server {

struct ServerMetrics {
  Metrics registry;
  // Latency of stream batches and edits, arrival to completion (the unary queries' series, and
  // voxcol_queries_total per kind, are registered by the query kinds table, server/exec).
  Histogram* batch_latency;
  Histogram* edit_latency;
  Counter* query_failures;     // queries answered with a non-OK code
  Counter* batches;            // batches received on streams
  Counter* batches_inline;     // of those, short batches run on the RPC thread
  Counter* batches_shed;       // refused with RESOURCE_EXHAUSTED
  Counter* batches_deadline;   // DEADLINE_EXCEEDED
  Counter* batches_cancelled;  // stopped because their stream was cancelled
  Counter* edits;              // committed edit batches
  Counter* edit_failures;
  Counter* streams_opened;
  Counter* streams_ended_slow;  // Query streams ended for not reading (--max_stream_pending_mb)
  // Serialized Query stream responses queued for their clients, over all streams (a gauge).
  std::atomic<int64_t> query_stream_pending_bytes{0};
  // Serialized Subscribe responses buffered for their streams, over all streams of all worlds (a
  // gauge; a response shared by several streams counts once per stream).
  std::atomic<int64_t> subscribe_buffered_bytes{0};
  Counter* subscribe_encodings;  // Subscribe responses serialized (one per change and filter)
};

// The process-wide instance (created on first use).
ServerMetrics& GetServerMetrics();

}  // namespace voxcol::server
