// Typed batching over the QueryService.Query stream, the hot path for game servers: queue queries
// during a tick, Flush() once per tick, and read each answer from its future.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "voxcol/v1/query_service.grpc.pb.h"
#include "voxcol_client.h"  // relative: resolves in the tree and in <prefix>/include/voxcol/client

namespace voxcol::client {

// The answer to one query of a batch.
struct QueryAnswer {
  // OK, or why there is no result: the query's own code (e.g. INVALID_ARGUMENT naming the field),
  // its batch's (RESOURCE_EXHAUSTED when the server shed it, DEADLINE_EXCEEDED, ...), or the
  // stream's (UNAVAILABLE when it broke before the answer came).
  grpc::Status status;
  v1::QueryResult result;  // when status.ok(): the result matching the query's kind
  uint64_t version = 0;    // world version the batch read (0 when the batch failed)
};

// The outcome of a whole batch (FlushTick).
struct BatchAnswer {
  grpc::Status status;  // the batch's code, or the stream's
  uint64_t version = 0;
  bool has_edit_ack = false;  // the batch's edits applied (or were replayed)
  v1::EditAck edit_ack;
  uint32_t server_micros = 0;
  v1::RaycastArrayResults raycasts;  // Raycasts(): one entry per ray (when status is OK)
};

struct QueryBatcherOptions {
  // Deadline of every batch, relative to its arrival (QueryBatchRequest.timeout_ms); 0 = none.
  // The client keeps it too: a batch not answered within batch_timeout + answer_grace of its send
  // (the server may never have seen it: a network partition, a dead connection) fails with
  // DEADLINE_EXCEEDED; an answer arriving later is dropped.
  std::chrono::milliseconds batch_timeout{0};
  // The network's share of that client-side wait (both ways), beyond batch_timeout.
  std::chrono::milliseconds answer_grace{1000};
  // Largest batch Flush() sends; more queued queries go out as several batches. At most the
  // server's --max_batch_queries.
  size_t max_batch_queries = 256;
  // After the stream broke, Flush() opens a new one, but not before this delay (doubled after
  // every failed attempt up to max_reconnect_backoff); until then it fails the flushed queries
  // at once with UNAVAILABLE instead of blocking the tick.
  std::chrono::milliseconds reconnect_backoff{100};
  std::chrono::milliseconds max_reconnect_backoff{5000};
};

// Coalesces queries into QueryBatchRequests on one Query stream. Add() and the typed adders queue
// a query and return its future; Flush() sends what is queued (once per game tick); a reader
// thread fulfils the futures as batch responses arrive (batches may be answered out of order).
// Thread-safe: any thread may add and flush. Every future is fulfilled exactly once, also when
// the stream breaks (UNAVAILABLE) or the batcher is destroyed (CANCELLED).
class QueryBatcher {
 public:
  // `client` must outlive the batcher. The stream opens on the first Flush().
  explicit QueryBatcher(Client& client, QueryBatcherOptions options = {});
  // Cancels the stream: answers not yet received complete with CANCELLED. Call Close() first to
  // wait for them.
  ~QueryBatcher();
  QueryBatcher(const QueryBatcher&) = delete;
  QueryBatcher& operator=(const QueryBatcher&) = delete;

  // Queues one query (its client_id is kept; the answer is matched by position anyway).
  std::future<QueryAnswer> Add(v1::QueryRequest query);
  std::future<QueryAnswer> Raycast(v1::RaycastRequest request);
  std::future<QueryAnswer> Sweep(v1::SweepRequest request);
  std::future<QueryAnswer> Overlap(v1::OverlapRequest request);
  std::future<QueryAnswer> Contacts(v1::ContactsRequest request);
  std::future<QueryAnswer> Probe(v1::ProbeRequest request);
  std::future<QueryAnswer> MoveCharacters(v1::MoveCharactersRequest request);
  std::future<QueryAnswer> FindPath(v1::FindPathRequest request);

  // Sends every queued query, in batches of at most max_batch_queries, each waiting for
  // `min_version` (read-your-writes: the version of your last EditAck). Returns how many queries
  // were sent; those that could not be sent are already failed with UNAVAILABLE.
  size_t Flush(uint64_t min_version = 0);
  // A game-server tick: `edits` and every queued query as one batch (not split). The server
  // applies the edits first, durably, and the queries see exactly the version they produced.
  std::future<BatchAnswer> FlushTick(v1::ApplyEditsRequest edits, uint64_t min_version = 0);

  // Sends `rays` now as one batch of packed raycasts (QueryBatchRequest.raycasts; queued queries
  // stay queued) that waits for `min_version`. The answer's `raycasts` has one entry per ray; a
  // bad ray fails alone (its `codes` entry), malformed arrays fail the batch (INVALID_ARGUMENT).
  std::future<BatchAnswer> Raycasts(v1::RaycastArrays rays, uint64_t min_version = 0);

  // Half-closes the stream, waits until every sent batch is answered and returns the stream's
  // status. Queries queued later reopen a stream on their Flush().
  grpc::Status Close();

  size_t queued() const;
  size_t in_flight() const;  // sent queries not yet answered

 private:
  using Stream = grpc::ClientReaderWriter<v1::QueryBatchRequest, v1::QueryBatchResponse>;
  struct Pending {
    std::vector<std::promise<QueryAnswer>> answers;
    std::promise<BatchAnswer> batch;
    bool has_batch_promise = false;
    std::chrono::steady_clock::time_point expires;  // with a batch_timeout: the client gives up
  };
  // One open stream with its reader thread.
  struct Connection {
    std::unique_ptr<grpc::ClientContext> context;
    std::unique_ptr<Stream> stream;
    std::thread reader;
    bool finished = false;  // Finish() was called (guarded by write_mutex_)
    grpc::Status status;    // its result
  };

  std::future<QueryAnswer> Queue(v1::QueryRequest query);
  // Sends one batch of `queries` (moved out of the queue) with their promises; false if the stream
  // could not take it (the promises are failed).
  bool Send(v1::QueryBatchRequest request, Pending pending);
  // An open stream (write_mutex_ held), reopening a finished one when the backoff allows; null
  // while the backoff holds.
  Connection* Connect();
  void ReadLoop(Connection* connection);
  void Deliver(const v1::QueryBatchResponse& response);
  // Fails every pending batch (the stream ended or was cancelled).
  void FailPending(const grpc::Status& status);
  // With a batch_timeout: fails the pending batches whose answer is overdue, until stopped.
  void ExpireOverdue();
  void Shutdown(bool cancel);

  const QueryBatcherOptions options_;
  std::unique_ptr<v1::QueryService::Stub> stub_;

  mutable std::mutex mutex_;  // guards everything below except connection_ internals
  std::vector<v1::QueryRequest> queue_;
  std::vector<std::promise<QueryAnswer>> queued_answers_;
  std::map<uint64_t, Pending> pending_;  // by batch id
  size_t in_flight_ = 0;
  uint64_t next_batch_id_ = 1;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_;
  bool stopping_ = false;
  std::condition_variable overdue_cv_;  // a new pending batch, or stopping_
  std::thread overdue_;                 // ExpireOverdue(), with a batch_timeout only

  std::mutex write_mutex_;  // serializes writes, (re)connects and Finish on the stream
  std::unique_ptr<Connection> connection_;
};

}  // namespace voxcol::client
