#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

ServerMetrics* Create() {
  auto* m = new ServerMetrics;
  Metrics& r = m->registry;
  const char* latency = "Time from arrival to completion on the server, seconds";
  m->batch_latency = r.AddHistogram("voxcol_rpc_latency_seconds", latency, "method=\"QueryBatch\"");
  m->edit_latency = r.AddHistogram("voxcol_rpc_latency_seconds", latency, "method=\"Edit\"");
  m->query_failures =
      r.AddCounter("voxcol_query_failures_total", "Queries answered with a non-OK code");
  m->batches = r.AddCounter("voxcol_batches_total", "Query batches received on streams");
  m->batches_inline =
      r.AddCounter("voxcol_batches_inline_total",
                   "Query batches run on the RPC thread that read them instead of the query pool");
  m->batches_shed =
      r.AddCounter("voxcol_batches_shed_total", "Batches refused with RESOURCE_EXHAUSTED");
  m->batches_deadline =
      r.AddCounter("voxcol_batches_deadline_exceeded_total", "Batches past their deadline");
  m->batches_cancelled =
      r.AddCounter("voxcol_batches_cancelled_total", "Batches stopped by stream cancellation");
  m->edits = r.AddCounter("voxcol_edits_total", "Committed edit batches");
  m->edit_failures = r.AddCounter("voxcol_edit_failures_total", "Edit requests rejected or failed");
  m->streams_opened = r.AddCounter("voxcol_query_streams_total", "Query streams opened");
  m->streams_ended_slow = r.AddCounter(
      "voxcol_query_streams_ended_slow_total",
      "Query streams ended with RESOURCE_EXHAUSTED because their client did not read its "
      "responses (queued responses past --max_stream_pending_mb)");
  r.AddGauge("voxcol_query_stream_pending_bytes",
             "Serialized Query stream responses queued for their clients, over all streams (each "
             "stream at most --max_stream_pending_mb, or its one largest response)",
             [m] { return double(m->query_stream_pending_bytes.load()); });
  r.AddGauge("voxcol_subscribe_buffered_bytes",
             "Serialized Subscribe responses buffered for their streams, over all streams (each "
             "stream at most --subscribe_buffer_mb, or its one largest response; a response "
             "shared by several streams counts in each)",
             [m] { return double(m->subscribe_buffered_bytes.load()); });
  m->subscribe_encodings =
      r.AddCounter("voxcol_subscribe_encodings_total",
                   "Subscribe responses serialized: one per change and subscriber filter (region, "
                   "include_voxels), shared by every subscriber with that filter");
  return m;
}

}  // namespace

ServerMetrics& GetServerMetrics() {
  static ServerMetrics* metrics = Create();
  return *metrics;
}

}  // namespace voxcol::server
