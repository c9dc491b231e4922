// Subscribe without a thread per subscriber: 1,000 concurrent subscribers on a server with two
// query threads all receive every change in order while edits keep being acknowledged and the
// server's thread count stays small; a subscriber that stops reading is ended with
// RESOURCE_EXHAUSTED (telling it to resume) while edits and other subscribers continue.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"

namespace voxcol {
namespace {

using testing::ServerProcess;
using testing::TempDir;

// Threads: line of /proc/PID/status; -1 if unreadable.
int ThreadCount(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// Batch i: a set-mode FillRegion of `edge`^3 voxels with its own material (never generated), so
// every batch changes voxels.
v1::ApplyEditsRequest Batch(int i, int edge) {
  v1::ApplyEditsRequest request;
  v1::FillRegion* fill = request.add_primitives()->mutable_fill_region();
  const int x = -64 + (i * edge) % 128, z = -64 + edge * ((i * edge) / 128 % (128 / edge));
  fill->mutable_region()->mutable_min()->set_x(x);
  fill->mutable_region()->mutable_min()->set_y(-8);
  fill->mutable_region()->mutable_min()->set_z(z);
  fill->mutable_region()->mutable_max()->set_x(x + edge);
  fill->mutable_region()->mutable_max()->set_y(-8 + edge);
  fill->mutable_region()->mutable_max()->set_z(z + edge);
  fill->set_material(10 + i % 200);
  fill->set_mode(v1::EDIT_MODE_SET);
  return request;
}

// A subscriber on gRPC's callback API (no thread of its own) that records the versions it
// receives until it has seen `last`.
class Follower : public grpc::ClientReadReactor<v1::SubscribeResponse> {
 public:
  Follower(v1::EditService::Stub* stub, uint64_t last) : last_(last) {
    request_.set_from_version(0);
    stub->async()->Subscribe(&context_, &request_, this);
    StartRead(&event_);
    StartCall();
  }
  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows
    versions_.push_back(event_.version());
    if (event_.version() >= last_) {
      context_.TryCancel();
      return;
    }
    StartRead(&event_);
  }
  void OnDone(const grpc::Status&) override {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  bool WaitDone(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return done_; });
  }
  const std::vector<uint64_t>& versions() const { return versions_; }

 private:
  const uint64_t last_;
  grpc::ClientContext context_;
  v1::SubscribeRequest request_;
  v1::SubscribeResponse event_;
  std::vector<uint64_t> versions_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

TEST(SubscribeScaleTest, ThousandSubscribersGetEveryChangeAndTheServerStaysUnderAHundredThreads) {
  constexpr int kSubscribers = 1000;
  constexpr int kChannels = 8;
  constexpr int kEdits = 200;
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(
      server.Start(VOXCOL_SERVER_PATH,
                   {"--data_dir=" + dir.path() + "/data", "--seed=4", "--world_size=128,96,128",
                    "--query_threads=2", "--metrics_listen=127.0.0.1:0"},
                   dir.path()))
      << server.Log();
  // Several connections, as many clients would have; distinct arguments keep them apart.
  std::vector<std::unique_ptr<v1::EditService::Stub>> stubs;
  for (int c = 0; c < kChannels; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("voxcol.test_connection", c);
    stubs.push_back(v1::EditService::NewStub(
        grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), args)));
  }
  std::vector<std::unique_ptr<Follower>> followers;
  for (int s = 0; s < kSubscribers; ++s)
    followers.push_back(std::make_unique<Follower>(stubs[s % kChannels].get(), kEdits));

  // All streams are open (the server's gauge) before the edits start.
  double open = 0;
  for (int tries = 0; tries < 600 && open < kSubscribers; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    open = testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"),
                                "voxcol_subscribers");
  }
  ASSERT_EQ(open, kSubscribers);
  client::Client editor(server.address());
  std::vector<double> latencies_ms;
  int max_threads = ThreadCount(server.pid());
  for (int i = 0; i < kEdits; ++i) {
    v1::EditAck ack;
    auto start = std::chrono::steady_clock::now();
    grpc::Status status = editor.ApplyEdits(Batch(i, 2), &ack);
    latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(ack.version(), uint64_t(i + 1));
    max_threads = std::max(max_threads, ThreadCount(server.pid()));
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  std::printf("ack latency with %d subscribers: p50 %.2f ms, p99 %.2f ms\n", kSubscribers,
              latencies_ms[latencies_ms.size() / 2], latencies_ms[latencies_ms.size() * 99 / 100]);

  std::vector<uint64_t> all(kEdits);
  for (int i = 0; i < kEdits; ++i) all[i] = i + 1;
  for (int s = 0; s < kSubscribers; ++s) {
    ASSERT_TRUE(followers[s]->WaitDone(std::chrono::seconds(60))) << "subscriber " << s;
    ASSERT_EQ(followers[s]->versions(), all) << "subscriber " << s;
  }
  max_threads = std::max(max_threads, ThreadCount(server.pid()));
  std::printf("server threads (max sampled): %d\n", max_threads);
  EXPECT_GT(max_threads, 0);
  EXPECT_LT(max_threads, 100);
}

// A subscriber that never reads, on a server with `buffer_flag`: it is ended with
// RESOURCE_EXHAUSTED after a prefix of the versions while the edits and another subscriber get
// everything, and resubscribing from its last version delivers the rest.
void RunSubscriberThatStopsReading(const std::string& buffer_flag) {
  constexpr int kEdits = 40;
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(
      VOXCOL_SERVER_PATH,
      {"--data_dir=" + dir.path() + "/data", "--seed=4", "--world_size=128,96,128", buffer_flag},
      dir.path()))
      << server.Log();
  // The slow subscriber's connection keeps HTTP/2's initial 64 KiB window (no growth), and each
  // response carries 32^3 voxels (64 KiB of arrays), so the server soon cannot send it more.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt("voxcol.test_connection", 1);
  auto slow_stub = v1::EditService::NewStub(
      grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext slow_context;
  v1::SubscribeRequest slow_request;
  slow_request.set_from_version(0);
  slow_request.set_include_voxels(true);
  auto slow = slow_stub->Subscribe(&slow_context, slow_request);
  client::Client client(server.address());
  grpc::ClientContext fast_context;
  v1::SubscribeRequest fast_request;
  fast_request.set_from_version(0);
  auto fast = client.Subscribe(&fast_context, fast_request);

  for (int i = 0; i < kEdits; ++i) {
    v1::EditAck ack;
    grpc::Status status = client.ApplyEdits(Batch(i, 32), &ack);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(ack.version(), uint64_t(i + 1));
  }
  v1::SubscribeResponse event;
  for (uint64_t v = 1; v <= kEdits; ++v) {
    ASSERT_TRUE(fast->Read(&event));
    ASSERT_EQ(event.version(), v);
  }
  fast_context.TryCancel();
  fast->Finish();

  // Now the slow one reads: a prefix of the versions, then the status that tells it to resume.
  std::vector<uint64_t> seen;
  while (slow->Read(&event)) seen.push_back(event.version());
  grpc::Status status = slow->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_NE(status.error_message().find("from_version"), std::string::npos)
      << status.error_message();
  ASSERT_LT(seen.size(), size_t(kEdits));
  for (size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], k + 1);

  // Resuming from the last version received delivers the rest.
  grpc::ClientContext resume_context;
  v1::SubscribeRequest resume;
  resume.set_from_version(seen.empty() ? 0 : seen.back());
  auto resumed = client.Subscribe(&resume_context, resume);
  for (uint64_t v = seen.size() + 1; v <= kEdits; ++v) {
    ASSERT_TRUE(resumed->Read(&event));
    ASSERT_EQ(event.version(), v);
  }
  resume_context.TryCancel();
  resumed->Finish();
}

TEST(SubscribeScaleTest, SubscriberThatStopsReadingIsEndedByItsResponseBuffer) {
  RunSubscriberThatStopsReading("--subscribe_buffer=4");
}

TEST(SubscribeScaleTest, SubscriberThatStopsReadingIsEndedByItsByteBuffer) {
  // 1 MiB holds about 15 responses of 64 KiB; the count limit (1024) is never reached.
  RunSubscriberThatStopsReading("--subscribe_buffer_mb=1");
}

}  // namespace
}  // namespace voxcol
