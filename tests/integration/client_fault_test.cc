// Network faults between a client and the server (issue 38): the client reaches the server only
// through a FaultProxy (tests/integration/fault_proxy.h) while a writer edits the server directly.
// Calls must end with DEADLINE_EXCEEDED or UNAVAILABLE when the network fails, never hang past
// their deadline, and every OK answer must equal the server's answer at the same version (asked
// directly, with read_at that version).
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/query_batcher.h"
#include "client/voxcol_client.h"
#include "tests/integration/fault_proxy.h"
#include "tests/integration/network_faults.h"
#include "tests/integration/server_process.h"

namespace voxcol::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

bool FailedByNetwork(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
         s.error_code() == grpc::StatusCode::UNAVAILABLE;
}

// 16 rays straight down and 48 random rays; `seed` varies the random ones.
v1::QueryBatchRequest Batch(int seed) {
  v1::QueryBatchRequest request;
  for (int i = 0; i < 16; ++i) *request.add_queries() = DownRay(-52.5 + 7 * i, -40.5 + 5 * i);
  std::mt19937 rng(seed);
  for (int i = 0; i < 48; ++i) *request.add_queries() = RandomRay(rng);
  return request;
}

// Runs `call` on a thread of its own and waits up to `limit` for it. A call still running then
// has no working deadline: that is a failure, and the proxy is healed so that it can end.
template <typename Call>
auto Bounded(FaultProxy& proxy, const char* what, seconds limit, Call call) {
  auto result = std::async(std::launch::async, std::move(call));
  if (result.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << what << " did not end within " << limit.count() << " s";
    proxy.Heal();
  }
  return result.get();
}

class ClientFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A long history, so that every version answered in the test can be read again with read_at.
    ASSERT_TRUE(server_.Start(
        VOXCOL_SERVER_PATH,
        {"--data_dir=" + dir_.path() + "/data", "--seed=5", "--world_size=128,96,128",
         "--query_threads=2", "--history_window_ms=600000", "--history_versions=100000"},
        dir_.path()));
    proxy_ = std::make_unique<FaultProxy>(server_.address());
    ASSERT_TRUE(proxy_->ok());
    direct_ = std::make_unique<client::Client>(server_.address());
    writer_ = std::make_unique<Writer>(server_.address());
    writer_->Start(20);
  }
  void TearDown() override {
    writer_->Stop();
    EXPECT_EQ(writer_->errors(), 0);
    std::printf("%d OK answers checked against the server's at the same version\n", checked_);
  }

  // One batch on a stream of its own through `channel`, with a deadline; `response` when OK.
  static grpc::Status StreamBatch(const std::shared_ptr<grpc::Channel>& channel,
                                  const v1::QueryBatchRequest& request, milliseconds deadline,
                                  v1::QueryBatchResponse* response) {
    auto stub = v1::QueryService::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + deadline);
    auto stream = stub->Query(&context);
    stream->Write(request);
    stream->WritesDone();
    const bool answered = stream->Read(response);
    grpc::Status status = stream->Finish();
    if (status.ok() && !answered) return grpc::Status(grpc::StatusCode::INTERNAL, "no response");
    return status;
  }

  // An OK answer equals the server's own answer at the answer's version, byte for byte.
  void ExpectCorrect(const v1::QueryBatchRequest& request, const v1::QueryBatchResponse& answer) {
    ASSERT_EQ(answer.code(), 0) << answer.message();
    v1::QueryBatchRequest at = request;
    at.clear_min_version();
    at.mutable_read_at()->set_at_version(answer.version());
    const v1::QueryBatchResponse reference = RunBatch(*direct_, at);
    ASSERT_EQ(reference.code(), 0) << reference.message();
    EXPECT_EQ(AnswerBytes(reference), AnswerBytes(answer)) << "at version " << answer.version();
    ++checked_;
  }

  // Batches through `channel` until one answers (at most `limit`), checked.
  void ExpectAnswersAgain(const std::shared_ptr<grpc::Channel>& channel, seconds limit) {
    const auto end = Clock::now() + limit;
    grpc::Status status;
    for (int seed = 100; Clock::now() < end; ++seed) {
      v1::QueryBatchResponse response;
      status = StreamBatch(channel, Batch(seed), milliseconds(2000), &response);
      if (status.ok()) return ExpectCorrect(Batch(seed), response);
      std::this_thread::sleep_for(milliseconds(100));
    }
    ADD_FAILURE() << "no answer through the healed proxy: " << status.error_message();
  }

  TempDir dir_;
  ServerProcess server_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<client::Client> direct_;
  std::unique_ptr<Writer> writer_;
  int checked_ = 0;
};

// During a partition every call ends with DEADLINE_EXCEEDED (or UNAVAILABLE) once its deadline
// passed: unary calls of the client library (its per-call timeout), a Query stream with a
// deadline, a call on a new connection, and a QueryBatcher batch with a batch timeout.
TEST_F(ClientFaultTest, PartitionEndsEveryCallAtItsDeadline) {
  client::Client proxied(proxy_->address(), milliseconds(1000));
  for (int seed = 0; seed < 3; ++seed) {
    v1::QueryBatchResponse response;
    ASSERT_TRUE(StreamBatch(proxied.channel(), Batch(seed), milliseconds(5000), &response).ok());
    ExpectCorrect(Batch(seed), response);
  }
  proxy_->Partition(true);
  auto expect_network_failure = [](const char* what, const grpc::Status& status, double took) {
    EXPECT_TRUE(FailedByNetwork(status))
        << what << ": " << status.error_code() << " " << status.error_message();
    EXPECT_GE(took, 0.9) << what << " ended before its deadline";
    std::printf("partition: %-22s code %d after %.2f s\n", what, int(status.error_code()), took);
  };
  auto start = Clock::now();
  grpc::Status status = Bounded(*proxy_, "GetWorldInfo", seconds(6), [&] {
    v1::GetWorldInfoResponse info;
    return proxied.GetWorldInfo(&info);
  });
  expect_network_failure("unary GetWorldInfo", status, SecondsSince(start));
  start = Clock::now();
  status = Bounded(*proxy_, "Raycast", seconds(6), [&] {
    v1::RaycastResponse ray;
    return proxied.Raycast(DownRay(0.5, 0.5).raycast(), &ray);
  });
  expect_network_failure("unary Raycast", status, SecondsSince(start));
  start = Clock::now();
  v1::QueryBatchResponse response;
  status = Bounded(*proxy_, "Query stream", seconds(6), [&] {
    return StreamBatch(proxied.channel(), Batch(7), milliseconds(1000), &response);
  });
  expect_network_failure("Query stream", status, SecondsSince(start));
  // A new connection (other channel arguments: no shared socket) is accepted and never answered.
  grpc::ChannelArguments args;
  args.SetInt("voxcol.fault_test_connection", 2);
  const auto fresh = client::MakeChannel(proxy_->address(), {}, args);
  start = Clock::now();
  status = Bounded(*proxy_, "new connection", seconds(6),
                   [&] { return StreamBatch(fresh, Batch(8), milliseconds(1000), &response); });
  expect_network_failure("new connection", status, SecondsSince(start));
  EXPECT_GE(proxy_->connections_accepted(), 2u);
  proxy_->Partition(false);
  ExpectAnswersAgain(proxied.channel(), seconds(10));
  ExpectAnswersAgain(fresh, seconds(10));
}

// A QueryBatcher batch with a batch timeout ends DEADLINE_EXCEEDED on the client when its answer
// does not come (the server never saw the batch, so its own deadline cannot help), and the
// batcher answers again once the partition heals.
TEST_F(ClientFaultTest, PartitionEndsQueryBatcherBatchesAtTheirTimeout) {
  client::Client proxied(proxy_->address());
  client::QueryBatcherOptions options;
  options.batch_timeout = milliseconds(1000);
  client::QueryBatcher batcher(proxied, options);
  std::future<client::QueryAnswer> healthy = batcher.Raycast(DownRay(0.5, 0.5).raycast());
  batcher.Flush();
  ASSERT_TRUE(healthy.get().status.ok());
  proxy_->Partition(true);
  const auto start = Clock::now();
  std::future<client::QueryAnswer> held = batcher.Raycast(DownRay(0.5, 0.5).raycast());
  batcher.Flush();
  if (held.wait_for(seconds(6)) != std::future_status::ready) {
    ADD_FAILURE() << "a QueryBatcher batch waited past its timeout";
    proxy_->Heal();
  }
  const client::QueryAnswer answer = held.get();
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED)
      << answer.status.error_message();
  const double took = SecondsSince(start);
  EXPECT_GE(took, 1.9);  // batch_timeout + answer_grace (1 s)
  EXPECT_LT(took, 5.0);
  std::printf("partition: QueryBatcher batch code %d after %.2f s\n",
              int(answer.status.error_code()), took);
  proxy_->Partition(false);
  // Answers again (the first flushes may still fail during the reconnect backoff).
  const auto end = Clock::now() + seconds(10);
  client::QueryAnswer again;
  while (Clock::now() < end) {
    std::future<client::QueryAnswer> next = batcher.Raycast(DownRay(0.5, 0.5).raycast());
    batcher.Flush();
    again = next.get();
    if (again.status.ok()) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(again.status.ok()) << again.status.error_message();
  v1::QueryBatchRequest request;
  *request.add_queries() = DownRay(0.5, 0.5);
  v1::QueryBatchResponse response;
  response.set_version(again.version);
  *response.add_results() = again.result;
  ExpectCorrect(request, response);  // its own answer, not the late one of the held batch
}

// A reset in the middle of a Query stream ends it with UNAVAILABLE; the answers before it were
// right, and a new stream through the healed proxy answers right.
TEST_F(ClientFaultTest, ResetMidStreamEndsUnavailable) {
  client::Client proxied(proxy_->address());
  proxy_->SetDelay(milliseconds(50));  // so that bytes are in flight when the reset comes
  auto stub = v1::QueryService::NewStub(proxied.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(20));
  auto stream = stub->Query(&context);
  // The reset comes 20 ms after the sixth batch is written: its request is then still in the
  // proxy's 50 ms delay, whatever the server's speed (a reset on a timer could fall between two
  // round trips, with nothing in flight, on a slow sanitizer build).
  constexpr int kResetAt = 5;
  int answered = 0;
  for (int seed = 0;; ++seed) {
    v1::QueryBatchResponse response;
    if (!stream->Write(Batch(seed))) break;
    if (seed == kResetAt) {
      std::this_thread::sleep_for(milliseconds(20));
      proxy_->ResetAll();
    }
    if (!stream->Read(&response)) break;
    ExpectCorrect(Batch(seed), response);
    ++answered;
  }
  const grpc::Status status = stream->Finish();
  EXPECT_EQ(answered, kResetAt);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  EXPECT_GT(proxy_->bytes_discarded(), 0u) << "the reset cut nothing in flight";
  std::printf("reset: stream ended with code %d (%s) after %d answers\n", int(status.error_code()),
              status.error_message().c_str(), answered);
  proxy_->Heal();
  ExpectAnswersAgain(proxied.channel(), seconds(10));
}

// The client library's QueryBatcher across a reset: batches in flight fail UNAVAILABLE, the
// batcher reconnects, and no answer is ever matched to another batch (every OK answer is right).
TEST_F(ClientFaultTest, QueryBatcherAcrossAResetNeverAnswersWrong) {
  client::Client proxied(proxy_->address());
  client::QueryBatcher batcher(proxied);
  proxy_->SetDelay(milliseconds(50));
  struct Tick {
    v1::QueryBatchRequest request;
    std::vector<std::future<client::QueryAnswer>> answers;
    bool after_reset = false;
  };
  std::vector<Tick> ticks;
  const auto start = Clock::now();
  bool reset = false;
  for (int seed = 0; SecondsSince(start) < 3; ++seed) {
    Tick tick;
    tick.request = Batch(seed);
    tick.after_reset = reset;
    for (const v1::QueryRequest& q : tick.request.queries()) tick.answers.push_back(batcher.Add(q));
    batcher.Flush();
    ticks.push_back(std::move(tick));
    if (!reset && SecondsSince(start) > 1) {
      proxy_->ResetAll();
      reset = true;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
  int ok = 0, ok_after_reset = 0, unavailable = 0;
  for (Tick& tick : ticks) {
    v1::QueryBatchResponse answer;  // the tick's OK answers, as one response to compare
    for (std::future<client::QueryAnswer>& future : tick.answers) {
      ASSERT_EQ(future.wait_for(seconds(20)), std::future_status::ready);
      const client::QueryAnswer a = future.get();
      if (a.status.error_code() == grpc::StatusCode::UNAVAILABLE) {
        ++unavailable;
        continue;
      }
      ASSERT_TRUE(a.status.ok()) << a.status.error_code() << " " << a.status.error_message();
      answer.set_version(a.version);
      *answer.add_results() = a.result;
      ++ok;
      ok_after_reset += tick.after_reset;
    }
    // All or nothing per batch: the queries of one Flush travel in one batch.
    if (answer.results_size() == 0) continue;
    ASSERT_EQ(answer.results_size(), tick.request.queries_size());
    ExpectCorrect(tick.request, answer);
  }
  std::printf(
      "QueryBatcher across a reset: %d OK (%d after the reset), %d UNAVAILABLE answers in %zu "
      "ticks\n",
      ok, ok_after_reset, unavailable, ticks.size());
  EXPECT_GT(unavailable, 0);
  EXPECT_GT(ok - ok_after_reset, 0);
  EXPECT_GT(ok_after_reset, 0);  // it reconnected
}

// A 200 ms delay: answers right, in no less than the round trip; a deadline shorter than the
// round trip ends DEADLINE_EXCEEDED. A throttled link: a large answer arrives right, slowly, or
// the call ends DEADLINE_EXCEEDED.
TEST_F(ClientFaultTest, DelayAndThrottleAnswerRightOrExceedTheDeadline) {
  client::Client proxied(proxy_->address());
  proxy_->SetDelay(milliseconds(200));
  for (int seed = 0; seed < 3; ++seed) {
    const auto start = Clock::now();
    v1::QueryBatchResponse response;
    ASSERT_TRUE(StreamBatch(proxied.channel(), Batch(seed), milliseconds(5000), &response).ok());
    EXPECT_GE(SecondsSince(start), 0.35);  // 200 ms each way
    ExpectCorrect(Batch(seed), response);
  }
  client::Client impatient(proxy_->address(), milliseconds(300));
  v1::GetWorldInfoResponse info;
  EXPECT_EQ(impatient.GetWorldInfo(&info).error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);

  proxy_->SetDelay(milliseconds(0));
  proxy_->SetThrottle(50000);
  v1::QueryBatchRequest large;
  std::mt19937 rng(3);
  for (int i = 0; i < 1500; ++i) *large.add_queries() = RandomRay(rng);
  auto start = Clock::now();
  v1::QueryBatchResponse response;
  ASSERT_TRUE(StreamBatch(proxied.channel(), large, milliseconds(30000), &response).ok());
  const double took = SecondsSince(start);
  ExpectCorrect(large, response);
  const double bytes = double(response.ByteSizeLong());
  std::printf("throttle: %.0f bytes answered in %.2f s at 50 kB/s\n", bytes, took);
  EXPECT_GE(took, 0.8 * (bytes - 5000) / 50000);
  start = Clock::now();
  const grpc::Status late = StreamBatch(proxied.channel(), large, milliseconds(500), &response);
  EXPECT_EQ(late.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << late.error_message();
  EXPECT_LT(SecondsSince(start), 3.0);
}

}  // namespace
}  // namespace voxcol::testing
