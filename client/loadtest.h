// `voxcol loadtest`: concurrent Query streams of mixed batches plus an editing client, bounded in
// time, against one server. Reports throughput, latency percentiles and outcome counts.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "client/voxcol_client.h"

namespace voxcol::client {

struct LoadTestOptions {
  std::string server;
  ChannelSecurity security;  // TLS and token, as the CLI's other commands
  int streams = 32;
  double seconds = 60;
  int batch_size = 64;
  double edits_per_second = 20;  // FillBall edits from a separate client; 0 disables
  float extent =
      64;  // queries and edits stay within |x|, |z| <= extent (world units); 0 = whole world
  // Mix terrain shape queries in: per eight queries, one capsule sweep replaces a downward ray and
  // one capsule contacts query replaces a line-of-sight ray. Off by default, so the measured
  // raycast/probe mix stays comparable.
  bool shape_queries = false;
  uint64_t seed = 1;
  // Called about once a second while the load runs (on the calling thread), with the totals so
  // far and the last interval's rate and latency.
  std::function<void(const struct LoadTestProgress&)> progress;
};

struct LoadTestProgress {
  double elapsed_seconds = 0;
  uint64_t batches = 0, shed = 0, failed = 0, queries = 0;  // so far
  double queries_per_second = 0;                            // over the last interval
  double p99_ms = 0, max_ms = 0;  // batch round trip over the last interval (p99: bucket bound)
};

struct LoadTestReport {
  uint64_t batches_ok = 0, batches_shed = 0, batches_failed = 0, queries = 0, query_errors = 0;
  uint64_t edits_ok = 0, edits_failed = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0, p999_ms = 0, max_ms = 0;  // client-observed batch round trip
  // Batches slower than kSlowBatchMs, by the part of their round trip that dominated (from the
  // server's BatchTiming and the queries' stats).
  uint64_t slow_batches = 0;
  uint64_t slow_outside = 0;  // outside the server: network, gRPC, the client
  uint64_t slow_queue = 0;    // waiting for a query thread
  uint64_t slow_wait = 0;     // waiting for min_version or the read snapshot (an edit publishing)
  uint64_t slow_cold = 0;     // running, with chunk meshes and trees built in the batch
  uint64_t slow_warm = 0;     // running, on cached chunks only
  // The slowest batch: its round trip and the server's parts, milliseconds.
  double slowest_ms = 0, slowest_queue_ms = 0, slowest_wait_ms = 0, slowest_run_ms = 0;
  uint32_t slowest_cache_builds = 0;
  std::string first_error;
};

constexpr double kSlowBatchMs = 100;

// Runs the load; returns when `seconds` have passed and every stream has drained.
LoadTestReport RunLoadTest(const LoadTestOptions& options);

}  // namespace voxcol::client
