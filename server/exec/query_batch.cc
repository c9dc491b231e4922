#include "server/exec/query_batch.h"

#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/exec/apply_edits.h"
#include "server/exec/query_kinds.h"
#include "server/exec/query_ops.h"
#include "server/exec/read_at.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

// Waits until the world reaches `version`, up to `until`. Polls: waiting is rare (it only happens
// when a client saw a version from another server) and bounded.
bool WaitForVersion(const World& world, uint64_t version, absl::Time until) {
  while (world.version() < version) {
    if (absl::Now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return true;
}

// A batch query's row in the kinds table and its request message (the oneof's member); no row
// when no kind is set.
struct KindAndRequest {
  const QueryKind* kind = nullptr;
  const google::protobuf::Message* request = nullptr;
};
KindAndRequest KindOf(const v1::QueryRequest& query) {
  // QueryCase values are the oneof members' field numbers.
  const QueryKind* kind = QueryKindOfBatchField(int(query.query_case()));
  if (kind == nullptr) return {};
  return {kind, &query.GetReflection()->GetMessage(query, kind->batch_request_field)};
}

// The query's own read_at (see ReadAt), or null.
const v1::ReadAt* QueryReadAt(const KindAndRequest& q) {
  if (q.kind == nullptr) return nullptr;
  const google::protobuf::Reflection* reflection = q.request->GetReflection();
  if (!reflection->HasField(*q.request, q.kind->read_at_field)) return nullptr;
  return static_cast<const v1::ReadAt*>(&reflection->GetMessage(*q.request, q.kind->read_at_field));
}

// The query's result message in `result` (made the oneof's member).
google::protobuf::Message* ResultOf(const QueryKind& kind, v1::QueryResult* result) {
  return result->GetReflection()->MutableMessage(result, kind.batch_result_field);
}

absl::Status RunKind(const QueryEngine& engine, const ServiceLimits& limits,
                     const KindAndRequest& q, const QueryInterrupt& interrupt,
                     v1::QueryResult* result) {
  if (q.kind == nullptr) return absl::InvalidArgumentError("query: no query kind set");
  q.kind->queries->Add();
  return q.kind->run(engine, limits, *q.request, ResultOf(*q.kind, result), interrupt);
}

}  // namespace

bool IsShortBatch(const v1::QueryBatchRequest& request, int max_queries) {
  if (request.has_edits() || request.min_version() != 0) return false;
  const int packed_rays = request.raycasts().origins_size() / 3;
  if (request.queries_size() + packed_rays > max_queries) return false;
  if (packed_rays > 0) {
    static const QueryKind* const raycast = QueryKindOfMethod("Raycast");  // once, not per batch
    if (raycast == nullptr || !raycast->inline_on_rpc_thread) return false;
  }
  for (const v1::QueryRequest& query : request.queries()) {
    const QueryKind* kind = QueryKindOfBatchField(int(query.query_case()));
    if (kind == nullptr || !kind->inline_on_rpc_thread) return false;
  }
  return true;
}

namespace {

void RunOne(const QueryEngine& engine, const ServiceLimits& limits, const v1::QueryRequest& query,
            const QueryInterrupt& interrupt, v1::QueryResult* result) {
  result->set_client_id(query.client_id());
  const KindAndRequest q = KindOf(query);
  absl::Status status;
  if (const v1::ReadAt* read_at = QueryReadAt(q)) {
    // Its own snapshot, nested in the batch's: this query alone reads the past version.
    absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> past =
        OpenReadAt(engine.world(), *read_at, "read_at");
    status = past.status();
    if (status.ok()) status = RunKind(engine, limits, q, interrupt, result);
    if (status.ok() && *past != nullptr) {
      if ((*past)->expired()) status = SnapshotExpiredError();
      google::protobuf::Message* response = ResultOf(*q.kind, result);
      response->GetReflection()->SetUInt64(response, q.kind->version_field, (*past)->version());
    }
  } else {
    status = RunKind(engine, limits, q, interrupt, result);
  }
  if (!status.ok()) {
    GetServerMetrics().query_failures->Add();
    result->clear_result();
    result->set_code(int(status.code()));
    result->set_message(std::string(status.message()));
  }
}

}  // namespace

google::protobuf::ArenaOptions BatchArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 16 << 10;
  options.max_block_size = 64 << 10;
  return options;
}

absl::Status SnapshotExpiredError() {
  return absl::AbortedError(
      "the world changed faster than this query's snapshot could be kept: old chunk versions "
      "exceeded --max_snapshot_history_mb while it ran; retry, or use smaller batches");
}

void FailBatch(const v1::QueryBatchRequest& request, const absl::Status& status,
               v1::QueryBatchResponse* response) {
  ServerMetrics& metrics = GetServerMetrics();
  if (status.code() == absl::StatusCode::kResourceExhausted) metrics.batches_shed->Add();
  if (status.code() == absl::StatusCode::kDeadlineExceeded) metrics.batches_deadline->Add();
  if (status.code() == absl::StatusCode::kCancelled) metrics.batches_cancelled->Add();
  response->set_batch_id(request.batch_id());
  response->set_code(int(status.code()));
  response->set_message(std::string(status.message()));
  response->clear_results();
  response->clear_raycasts();
}

namespace {

// The world a query or the edits of a batch name: empty or the batch's own (issue 22).
absl::Status CheckNestedWorlds(const v1::QueryBatchRequest& request) {
  auto differs = [&](const std::string& world) {
    return !world.empty() && world != request.world();
  };
  if (request.has_edits() && differs(request.edits().world())) {
    return absl::InvalidArgumentError("edits.world: must be empty or the batch's world");
  }
  for (int i = 0; i < request.queries_size(); ++i) {
    const KindAndRequest q = KindOf(request.queries(i));
    if (q.kind == nullptr) continue;
    std::string scratch;
    const std::string& world =
        q.request->GetReflection()->GetStringReference(*q.request, q.kind->world_field, &scratch);
    if (differs(world)) {
      return absl::InvalidArgumentError(
          absl::StrCat("queries[", i, "].world: must be empty or the batch's world"));
    }
  }
  return absl::OkStatus();
}

// What fails a batch before anything runs: its size, the worlds it names, malformed raycasts.
absl::Status CheckBatch(const v1::QueryBatchRequest& request, const BatchLimits& batch_limits) {
  const int rays = RaycastArrayCount(request.raycasts());
  if (request.queries_size() + rays > batch_limits.max_queries) {
    return absl::InvalidArgumentError(absl::StrCat(
        rays == 0 ? "queries: " : "queries and raycasts: ", request.queries_size() + rays,
        " queries exceed the limit of ", batch_limits.max_queries));
  }
  if (absl::Status s = CheckNestedWorlds(request); !s.ok()) return s;
  return CheckRaycastArrays(request.raycasts());
}

// Runs the batch's queries, then its packed raycasts, in order; an error fails the batch (the
// stream's cancellation, the deadline, a chunk that fails to load). Shape queries stop inside
// their work at the deadline or the cancellation. One read scope of each kind is held around
// them: the scopes of the queries nest in them and skip their atomic read-modify-writes, four per
// raycast (docs/benchmarks.md, "Read scopes held by the batch"); records and entries retired
// meanwhile are freed after the batch.
absl::Status RunQueries(const QueryEngine& engine, const ServiceLimits& limits,
                        const v1::QueryBatchRequest& request, absl::Time deadline,
                        const std::atomic<bool>* cancelled, v1::QueryBatchResponse* response) {
  const QueryInterrupt interrupt{deadline, cancelled};
  const BroadphaseIndex::ReadScope index_scope(engine.index);
  const ChunkCollisionCache::ReadScope cache_scope(engine.cache);
  for (const v1::QueryRequest& query : request.queries()) {
    if (cancelled && cancelled->load(std::memory_order_relaxed)) {
      return absl::CancelledError("stream cancelled");
    }
    if (absl::Now() > deadline) return absl::DeadlineExceededError("batch deadline passed");
    RunOne(engine, limits, query, interrupt, response->add_results());
  }
  if (!request.has_raycasts()) return absl::OkStatus();
  return RunRaycastArrays(engine, limits, request.raycasts(), response->mutable_raycasts(),
                          interrupt);
}

}  // namespace

void ExecuteBatch(const QueryEngine& engine, const ServiceLimits& limits,
                  const BatchLimits& batch_limits, const v1::QueryBatchRequest& request,
                  absl::Time deadline, const std::atomic<bool>* cancelled,
                  v1::QueryBatchResponse* response) {
  const World& world = engine.world();
  response->set_batch_id(request.batch_id());
  if (absl::Status s = CheckBatch(request, batch_limits); !s.ok()) {
    return FailBatch(request, s, response);
  }
  const absl::Time wait_start = absl::Now();
  v1::BatchTiming* timing = response->mutable_timing();
  if (!WaitForVersion(world, request.min_version(),
                      std::min(deadline, absl::Now() + batch_limits.max_min_version_wait))) {
    timing->set_wait_micros(uint32_t(absl::ToInt64Microseconds(absl::Now() - wait_start)));
    return FailBatch(request,
                     absl::FailedPreconditionError(
                         absl::StrCat("min_version: world is at version ", world.version(),
                                      ", batch requires ", request.min_version())),
                     response);
  }
  // A tick applies its edits first and reads exactly the version they produced.
  std::unique_ptr<World::ReadSnapshot> pinned;
  if (request.has_edits() && request.read_at().point_case() != v1::ReadAt::POINT_NOT_SET) {
    return FailBatch(
        request,
        absl::InvalidArgumentError("read_at: a batch with edits reads the version they produce"),
        response);
  }
  if (!request.has_edits()) {
    // A past version (lag compensation): the whole batch reads it.
    absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> past =
        OpenReadAt(world, request.read_at(), "read_at");
    if (!past.ok()) return FailBatch(request, past.status(), response);
    pinned = *std::move(past);  // already entered; null: the current version below
  }
  if (request.has_edits()) {
    if (absl::Now() > deadline) {  // never apply edits whose answers nobody waits for
      return FailBatch(
          request, absl::DeadlineExceededError("batch deadline passed before its edits"), response);
    }
    v1::EditAck ack;
    absl::Status edited =
        engine.batcher == nullptr
            ? absl::UnimplementedError("edits: this server does not apply edits in Query batches")
            : PrefixEditsField(ApplyEditsMessage(*engine.batcher, request.edits(), &ack, &pinned));
    if (!edited.ok()) return FailBatch(request, edited, response);
    *response->mutable_edit_ack() = ack;
  }
  std::optional<World::ReadSnapshot> current;
  if (pinned != nullptr) {
    if (request.has_edits()) pinned->Enter();
  } else {
    current.emplace(world);
  }
  const World::ReadSnapshot& snapshot = pinned != nullptr ? *pinned : *current;
  response->set_version(snapshot.version());
  const absl::Time run_start = absl::Now();
  timing->set_wait_micros(uint32_t(absl::ToInt64Microseconds(run_start - wait_start)));
  if (absl::Status s = RunQueries(engine, limits, request, deadline, cancelled, response); !s.ok())
    return FailBatch(request, s, response);
  // Answers read through an expired snapshot may mix versions: never return them.
  if (snapshot.expired()) return FailBatch(request, SnapshotExpiredError(), response);
  timing->set_run_micros(uint32_t(absl::ToInt64Microseconds(absl::Now() - run_start)));
}

}  // namespace voxcol::server
