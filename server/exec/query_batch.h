// Executes one QueryBatchRequest: limits, min_version, deadline and cancellation, then every query
// on one world version.
#pragma once

#include <atomic>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "google/protobuf/arena.h"
#include "server/exec/query_ops.h"
#include "server/exec/service_limits.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

struct BatchLimits {
  int max_queries = 4096;  // per batch; more -> INVALID_ARGUMENT for the batch
  absl::Duration max_min_version_wait = absl::Seconds(1);
};

// Arena blocks for one batch's request and response. A batch of 256 raycasts takes ~40 KB parsed
// and ~80 KB answered; on the heap that is ~7 objects per query (the results' nested messages), on
// an arena with these blocks a handful of allocations per batch. Blocks stay below glibc's mmap
// threshold so they are recycled rather than mapped.
google::protobuf::ArenaOptions BatchArenaOptions();

// Whether `request` is a short batch, one whose work is small and bounded as a unary raycast's:
// at most `max_queries` queries (packed rays included), every one of a kind that runs on the RPC
// thread (QueryKind::inline_on_rpc_thread), no edits (a store write) and no min_version (a wait).
// The Query stream runs such a batch on the RPC thread that read it (server/rpc/query_service.cc).
bool IsShortBatch(const v1::QueryBatchRequest& request, int max_queries);

// Fills `response` (batch_id, version, code, results). `deadline` is absolute; `cancelled`, if not
// null, is polled between queries so a cancelled stream stops consuming CPU.
void ExecuteBatch(const QueryEngine& engine, const ServiceLimits& limits,
                  const BatchLimits& batch_limits, const v1::QueryBatchRequest& request,
                  absl::Time deadline, const std::atomic<bool>* cancelled,
                  v1::QueryBatchResponse* response);

// ABORTED: the query's snapshot expired because old chunk versions outgrew
// --max_snapshot_history_mb while it ran (edits kept coming); retrying sees the newest version.
absl::Status SnapshotExpiredError();

// Sets a batch-level failure (no results).
void FailBatch(const v1::QueryBatchRequest& request, const absl::Status& status,
               v1::QueryBatchResponse* response);

}  // namespace voxcol::server
