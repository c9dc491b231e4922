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
