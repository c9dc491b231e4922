#include "server/exec/query_batch.h"

#include <memory>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "server/exec/apply_edits.h"
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

// Calls `f` with the query's own request message (RaycastRequest, SweepRequest, ...) and returns
// its result; `none` when no query is set.
template <typename R, typename F>
R VisitQuery(const v1::QueryRequest& query, R none, F&& f) {
  switch (query.query_case()) {
    case v1::QueryRequest::kRaycast:
      return f(query.raycast());
    case v1::QueryRequest::kOverlap:
      return f(query.overlap());
    case v1::QueryRequest::kSweep:
      return f(query.sweep());
    case v1::QueryRequest::kContacts:
      return f(query.contacts());
    case v1::QueryRequest::kProbe:
      return f(query.probe());
    case v1::QueryRequest::kMoveCharacters:
      return f(query.move_characters());
    case v1::QueryRequest::QUERY_NOT_SET:
      break;
  }
  return none;
}

// The query's own read_at (see ReadAt), or null.
const v1::ReadAt* QueryReadAt(const v1::QueryRequest& query) {
  return VisitQuery(query, static_cast<const v1::ReadAt*>(nullptr),
                    [](const auto& q) { return q.has_read_at() ? &q.read_at() : nullptr; });
}

// Reports the version a query with its own read_at read, in its response.
void SetResultVersion(uint64_t version, v1::QueryResult* result) {
  switch (result->result_case()) {
    case v1::QueryResult::kRaycast:
      return result->mutable_raycast()->set_version(version);
    case v1::QueryResult::kSweep:
      return result->mutable_sweep()->set_version(version);
    case v1::QueryResult::kOverlap:
      return result->mutable_overlap()->set_version(version);
    case v1::QueryResult::kContacts:
      return result->mutable_contacts()->set_version(version);
    case v1::QueryResult::kProbe:
      return result->mutable_probe()->set_version(version);
    case v1::QueryResult::kMoveCharacters:
      return result->mutable_move_characters()->set_version(version);
    case v1::QueryResult::RESULT_NOT_SET:
      return;
  }
}

absl::Status RunKind(const QueryEngine& engine, const ServiceLimits& limits,
                     const v1::QueryRequest& query, const QueryInterrupt& interrupt,
                     v1::QueryResult* result) {
  absl::Status status;
  switch (query.query_case()) {
    case v1::QueryRequest::kRaycast:
      GetServerMetrics().queries_raycast->Add();
      status = RunRaycast(engine, limits, query.raycast(), result->mutable_raycast(), interrupt);
      break;
    case v1::QueryRequest::kOverlap:
      GetServerMetrics().queries_overlap->Add();
      status = RunOverlap(engine, limits, query.overlap(), result->mutable_overlap(), interrupt);
      break;
    case v1::QueryRequest::kSweep:
      GetServerMetrics().queries_sweep->Add();
      status = RunSweep(engine, limits, query.sweep(), result->mutable_sweep(), interrupt);
      break;
    case v1::QueryRequest::kContacts:
      GetServerMetrics().queries_contacts->Add();
      status = RunContacts(engine, limits, query.contacts(), result->mutable_contacts(), interrupt);
      break;
    case v1::QueryRequest::kProbe:
      GetServerMetrics().queries_probe->Add();
      status = RunProbe(engine, limits, query.probe(), result->mutable_probe(), interrupt);
      break;
    case v1::QueryRequest::kMoveCharacters:
      GetMoveCharactersMetrics().queries->Add();
      status = RunMoveCharacters(engine, limits, query.move_characters(),
                                 result->mutable_move_characters(), interrupt);
      break;
    case v1::QueryRequest::QUERY_NOT_SET:
      status = absl::InvalidArgumentError("query: no query kind set");
      break;
  }
  return status;
}

void RunOne(const QueryEngine& engine, const ServiceLimits& limits, const v1::QueryRequest& query,
            const QueryInterrupt& interrupt, v1::QueryResult* result) {
  result->set_client_id(query.client_id());
  absl::Status status;
  if (const v1::ReadAt* read_at = QueryReadAt(query)) {
    // Its own snapshot, nested in the batch's: this query alone reads the past version.
    absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> past =
        OpenReadAt(engine.world(), *read_at, "read_at");
    status = past.status();
    if (status.ok()) status = RunKind(engine, limits, query, interrupt, result);
    if (status.ok() && *past != nullptr) {
      if ((*past)->expired()) status = SnapshotExpiredError();
      SetResultVersion((*past)->version(), result);
    }
  } else {
    status = RunKind(engine, limits, query, interrupt, result);
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
    const std::string* world =
        VisitQuery(request.queries(i), static_cast<const std::string*>(nullptr),
                   [](const auto& q) { return &q.world(); });
    if (world != nullptr && differs(*world)) {
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
  // Shape queries stop inside their work at the batch deadline or the stream's cancellation.
  const QueryInterrupt interrupt{deadline, cancelled};
  for (const v1::QueryRequest& query : request.queries()) {
    if ((cancelled && cancelled->load(std::memory_order_relaxed))) {
      return FailBatch(request, absl::CancelledError("stream cancelled"), response);
    }
    if (absl::Now() > deadline) {
      return FailBatch(request, absl::DeadlineExceededError("batch deadline passed"), response);
    }
    RunOne(engine, limits, query, interrupt, response->add_results());
  }
  if (request.has_raycasts()) {
    absl::Status s = RunRaycastArrays(engine, limits, request.raycasts(),
                                      response->mutable_raycasts(), interrupt);
    if (!s.ok()) return FailBatch(request, s, response);
  }
  // Answers read through an expired snapshot may mix versions: never return them.
  if (snapshot.expired()) return FailBatch(request, SnapshotExpiredError(), response);
  timing->set_run_micros(uint32_t(absl::ToInt64Microseconds(absl::Now() - run_start)));
}

}  // namespace voxcol::server
