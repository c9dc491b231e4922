#include "client/query_batcher.h"

#include <algorithm>
#include <utility>

namespace voxcol::client {
namespace {

grpc::Status CodeStatus(int32_t code, const std::string& message) {
  return grpc::Status(static_cast<grpc::StatusCode>(code), message);
}

BatchAnswer FailedBatch(const grpc::Status& status) {
  BatchAnswer answer;
  answer.status = status;
  return answer;
}

void FailAll(std::vector<std::promise<QueryAnswer>>& answers, const grpc::Status& status) {
  for (std::promise<QueryAnswer>& answer : answers) answer.set_value(QueryAnswer{status, {}, 0});
  answers.clear();
}

}  // namespace

QueryBatcher::QueryBatcher(Client& client, QueryBatcherOptions options)
    : options_(options),
      stub_(v1::QueryService::NewStub(client.channel())),
      backoff_(options.reconnect_backoff) {
  if (options_.batch_timeout.count() > 0) overdue_ = std::thread([this] { ExpireOverdue(); });
}

QueryBatcher::~QueryBatcher() { Shutdown(/*cancel=*/true); }

std::future<QueryAnswer> QueryBatcher::Queue(v1::QueryRequest query) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(query));
  queued_answers_.emplace_back();
  return queued_answers_.back().get_future();
}

std::future<QueryAnswer> QueryBatcher::Add(v1::QueryRequest query) {
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::Raycast(v1::RaycastRequest request) {
  v1::QueryRequest query;
  *query.mutable_raycast() = std::move(request);
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::Sweep(v1::SweepRequest request) {
  v1::QueryRequest query;
  *query.mutable_sweep() = std::move(request);
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::Overlap(v1::OverlapRequest request) {
  v1::QueryRequest query;
  *query.mutable_overlap() = std::move(request);
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::Contacts(v1::ContactsRequest request) {
  v1::QueryRequest query;
  *query.mutable_contacts() = std::move(request);
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::Probe(v1::ProbeRequest request) {
  v1::QueryRequest query;
  *query.mutable_probe() = std::move(request);
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::MoveCharacters(v1::MoveCharactersRequest request) {
  v1::QueryRequest query;
  *query.mutable_move_characters() = std::move(request);
  return Queue(std::move(query));
}

std::future<QueryAnswer> QueryBatcher::FindPath(v1::FindPathRequest request) {
  v1::QueryRequest query;
  *query.mutable_find_path() = std::move(request);
  return Queue(std::move(query));
}

size_t QueryBatcher::Flush(uint64_t min_version) {
  std::vector<v1::QueryRequest> queries;
  std::vector<std::promise<QueryAnswer>> answers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queries.swap(queue_);
    answers.swap(queued_answers_);
  }
  size_t sent = 0;
  const size_t step = std::max<size_t>(1, options_.max_batch_queries);
  for (size_t begin = 0; begin < queries.size(); begin += step) {
    size_t end = std::min(queries.size(), begin + step);
    v1::QueryBatchRequest request;
    request.set_min_version(min_version);
    Pending pending;
    for (size_t i = begin; i < end; ++i) {
      *request.add_queries() = std::move(queries[i]);
      pending.answers.push_back(std::move(answers[i]));
    }
    if (Send(std::move(request), std::move(pending))) sent += end - begin;
  }
  return sent;
}

std::future<BatchAnswer> QueryBatcher::FlushTick(v1::ApplyEditsRequest edits,
                                                 uint64_t min_version) {
  v1::QueryBatchRequest request;
  request.set_min_version(min_version);
  *request.mutable_edits() = std::move(edits);
  Pending pending;
  pending.has_batch_promise = true;
  std::future<BatchAnswer> result = pending.batch.get_future();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (v1::QueryRequest& query : queue_) *request.add_queries() = std::move(query);
    pending.answers = std::move(queued_answers_);
    queue_.clear();
    queued_answers_.clear();
  }
  Send(std::move(request), std::move(pending));
  return result;
}

std::future<BatchAnswer> QueryBatcher::Raycasts(v1::RaycastArrays rays, uint64_t min_version) {
  v1::QueryBatchRequest request;
  request.set_min_version(min_version);
  *request.mutable_raycasts() = std::move(rays);
  Pending pending;
  pending.has_batch_promise = true;
  std::future<BatchAnswer> result = pending.batch.get_future();
  Send(std::move(request), std::move(pending));
  return result;
}

bool QueryBatcher::Send(v1::QueryBatchRequest request, Pending pending) {
  std::lock_guard<std::mutex> write_lock(write_mutex_);
  Connection* connection = Connect();
  if (connection == nullptr) {
    grpc::Status status(grpc::StatusCode::UNAVAILABLE,
                        "query stream: reconnecting after the stream broke (backoff)");
    FailAll(pending.answers, status);
    if (pending.has_batch_promise) pending.batch.set_value(FailedBatch(status));
    return false;
  }
  if (options_.batch_timeout.count() > 0) {
    request.set_timeout_ms(static_cast<uint32_t>(options_.batch_timeout.count()));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request.set_batch_id(next_batch_id_++);
    in_flight_ += pending.answers.size();
    pending.expires =
        std::chrono::steady_clock::now() + options_.batch_timeout + options_.answer_grace;
    pending_.emplace(request.batch_id(), std::move(pending));
  }
  overdue_cv_.notify_one();
  // A failed write means the stream broke: the reader sees it end and fails the pending batches,
  // this one included.
  return connection->stream->Write(request);
}

QueryBatcher::Connection* QueryBatcher::Connect() {
  // Called with write_mutex_ held, so `finished` is current: a finished stream is never written.
  if (connection_ != nullptr && !connection_->finished) return connection_.get();
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
  if (connection_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (now < next_attempt_) return nullptr;
    }
    // The reader has finished the stream and fails its pending batches without write_mutex_.
    connection_->reader.join();
    connection_.reset();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    next_attempt_ = now + backoff_;
    backoff_ = std::min(backoff_ * 2, options_.max_reconnect_backoff);
  }
  connection_ = std::make_unique<Connection>();
  connection_->context = std::make_unique<grpc::ClientContext>();
  connection_->stream = stub_->Query(connection_->context.get());
  Connection* connection = connection_.get();
  connection_->reader = std::thread([this, connection] { ReadLoop(connection); });
  return connection;
}

void QueryBatcher::ReadLoop(Connection* connection) {
  v1::QueryBatchResponse response;
  while (connection->stream->Read(&response)) Deliver(response);
  grpc::Status status;
  {
    std::lock_guard<std::mutex> write_lock(write_mutex_);
    connection->status = connection->stream->Finish();
    connection->finished = true;
    status = connection->status;
  }
  if (status.ok()) {
    status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "query stream ended before the answer");
  }
  FailPending(status);
}

void QueryBatcher::Deliver(const v1::QueryBatchResponse& response) {
  Pending pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.find(response.batch_id());
    if (it == pending_.end()) return;
    pending = std::move(it->second);
    pending_.erase(it);
    in_flight_ -= pending.answers.size();
    backoff_ = options_.reconnect_backoff;  // the stream works: the next break retries soon
  }
  grpc::Status batch_status = CodeStatus(response.code(), response.message());
  for (size_t i = 0; i < pending.answers.size(); ++i) {
    QueryAnswer answer;
    if (!batch_status.ok()) {
      answer.status = batch_status;
    } else if (i >= static_cast<size_t>(response.results_size())) {
      answer.status = grpc::Status(grpc::StatusCode::INTERNAL, "batch response without result");
    } else {
      answer.result = response.results(static_cast<int>(i));
      answer.status = CodeStatus(answer.result.code(), answer.result.message());
      answer.version = response.version();
    }
    pending.answers[i].set_value(std::move(answer));
  }
  if (pending.has_batch_promise) {
    BatchAnswer batch = FailedBatch(batch_status);
    batch.version = response.version();
    batch.has_edit_ack = response.has_edit_ack();
    batch.edit_ack = response.edit_ack();
    batch.server_micros = response.server_micros();
    batch.raycasts = response.raycasts();
    pending.batch.set_value(std::move(batch));
  }
}

void QueryBatcher::FailPending(const grpc::Status& status) {
  std::map<uint64_t, Pending> failed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    failed.swap(pending_);
    in_flight_ = 0;
  }
  for (auto& [batch_id, pending] : failed) {
    FailAll(pending.answers, status);
    if (pending.has_batch_promise) pending.batch.set_value(FailedBatch(status));
  }
}

void QueryBatcher::ExpireOverdue() {
  const grpc::Status overdue(
      grpc::StatusCode::DEADLINE_EXCEEDED,
      "query batch: no answer within batch_timeout + answer_grace of its send");
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (pending_.empty()) {
      overdue_cv_.wait(lock);
      continue;
    }
    // Batch ids grow with the send time and every batch gets the same timeout: the first pending
    // batch expires first.
    auto oldest = pending_.begin();
    // A copy: the batch may be answered, and its entry erased, while this thread waits.
    const std::chrono::steady_clock::time_point expires = oldest->second.expires;
    if (std::chrono::steady_clock::now() < expires) {
      overdue_cv_.wait_until(lock, expires);
      continue;
    }
    Pending pending = std::move(oldest->second);
    pending_.erase(oldest);  // a late answer finds no batch and is dropped
    in_flight_ -= pending.answers.size();
    lock.unlock();
    FailAll(pending.answers, overdue);
    if (pending.has_batch_promise) pending.batch.set_value(FailedBatch(overdue));
    lock.lock();
  }
}

grpc::Status QueryBatcher::Close() {
  std::unique_ptr<Connection> connection;
  {
    std::lock_guard<std::mutex> write_lock(write_mutex_);
    connection = std::move(connection_);
    if (connection == nullptr) return grpc::Status::OK;
    if (!connection->finished) connection->stream->WritesDone();
  }
  // The reader drains the answers, then takes write_mutex_ to Finish().
  connection->reader.join();
  return connection->status;
}

void QueryBatcher::Shutdown(bool cancel) {
  std::unique_ptr<Connection> connection;
  {
    std::lock_guard<std::mutex> write_lock(write_mutex_);
    connection = std::move(connection_);
  }
  if (connection != nullptr) {
    if (cancel) connection->context->TryCancel();
    connection->reader.join();
  }
  std::vector<std::promise<QueryAnswer>> answers;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    answers.swap(queued_answers_);
    queue_.clear();
  }
  FailAll(answers, grpc::Status(grpc::StatusCode::CANCELLED, "query batcher destroyed"));
  FailPending(grpc::Status(grpc::StatusCode::CANCELLED, "query batcher destroyed"));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  overdue_cv_.notify_one();
  if (overdue_.joinable()) overdue_.join();
}

size_t QueryBatcher::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

size_t QueryBatcher::in_flight() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_flight_;
}

}  // namespace voxcol::client
