// Subscribe without a thread per subscriber: 1,000 concurrent subscribers on a server with two
// query threads all receive every change in order while edits are acknowledged about as fast as
// with one subscriber, and the server's thread count stays small; a subscriber that stops reading
// is ended with RESOURCE_EXHAUSTED (telling it to resume) while edits and other subscribers
// continue.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/voxcol_client.h"
#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"
#include "tests/integration/subscribe_follower.h"
namespace voxcol {
namespace {

using testing::Follower;

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

// The subscribers run in a process of their own (as they would on other machines), so that the
// editor's latency measures the server rather than a client process busy reading 1,000 streams.
// This hidden test is that process: it follows versions (from, last] on `channels` connections
// with `count` streams and checks that each stream received exactly those, in order.
TEST(SubscribeScaleTest, DISABLED_FollowerProcess) {
  const char* address = std::getenv("VOXCOL_FOLLOW_ADDRESS");
  ASSERT_NE(address, nullptr);
  const int count = std::atoi(std::getenv("VOXCOL_FOLLOW_COUNT"));
  const uint64_t from = std::strtoull(std::getenv("VOXCOL_FOLLOW_FROM"), nullptr, 10);
  const uint64_t last = std::strtoull(std::getenv("VOXCOL_FOLLOW_LAST"), nullptr, 10);
  // The 1,000 subscribers stand for clients on other machines; here they share the server's two
  // cores. Below the server's priority, their own CPU (decoding 1,000 responses per edit) delays
  // the server's threads less than it would delay them on a shared core; what the test measures
  // is the server's work for them (the pump and its writes), which runs in the server.
  ASSERT_EQ(setpriority(PRIO_PROCESS, 0, 10), 0);
  constexpr int kChannels = 8;
  // Several connections, as many clients would have; distinct arguments keep them apart.
  std::vector<std::unique_ptr<v1::EditService::Stub>> stubs;
  for (int c = 0; c < kChannels; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("voxcol.test_connection", c);
    stubs.push_back(v1::EditService::NewStub(
        grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args)));
  }
  std::vector<std::unique_ptr<Follower>> followers;
  for (int s = 0; s < count; ++s)
    followers.push_back(std::make_unique<Follower>(stubs[s % kChannels].get(), from, last));
  std::vector<uint64_t> all;
  for (uint64_t v = from + 1; v <= last; ++v) all.push_back(v);
  for (int s = 0; s < count; ++s) {
    ASSERT_TRUE(followers[s]->WaitDone(std::chrono::seconds(100))) << "subscriber " << s;
    ASSERT_EQ(followers[s]->versions(), all) << "subscriber " << s;
  }
}

// Starts this test binary as the follower process; returns its pid.
pid_t StartFollowers(const std::string& address, int count, uint64_t from, uint64_t last) {
  std::vector<std::string> env = {
      "VOXCOL_FOLLOW_ADDRESS=" + address, "VOXCOL_FOLLOW_COUNT=" + std::to_string(count),
      "VOXCOL_FOLLOW_FROM=" + std::to_string(from), "VOXCOL_FOLLOW_LAST=" + std::to_string(last)};
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  std::vector<std::string> args = {"/proc/self/exe", "--gtest_also_run_disabled_tests",
                                   "--gtest_filter=SubscribeScaleTest.DISABLED_FollowerProcess"};
  std::vector<char*> cenv, cargs;
  for (std::string& e : env) cenv.push_back(e.data());
  for (std::string& a : args) cargs.push_back(a.data());
  cenv.push_back(nullptr);
  cargs.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execve(cargs[0], cargs.data(), cenv.data());
    _exit(127);
  }
  return pid;
}

// Exit code of `pid` within `timeout`, or -1 (it is killed then).
int WaitExit(pid_t pid, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

struct Latencies {
  double p50 = 0, p99 = 0, max = 0;  // milliseconds
};

Latencies Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[ms.size() * 99 / 100], ms.back()};
}

// With `subscribers` streams following from the current version `from`, applies `edits` batches
// one at a time and returns each one's ack latency; samples the server's thread count.
void RunEditsWhileFollowed(const ServerProcess& server, int subscribers, uint64_t from, int edits,
                           std::vector<double>* latencies_ms, int* max_threads) {
  pid_t followers = StartFollowers(server.address(), subscribers, from, from + edits);
  ASSERT_GT(followers, 0);
  // All streams are open (the server's gauge) before the edits start.
  double open = 0;
  for (int tries = 0; tries < 1200 && open != subscribers; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    open = testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"),
                                "voxcol_subscribers");
  }
  ASSERT_EQ(open, subscribers);
  client::Client editor(server.address());
  *max_threads = std::max(*max_threads, ThreadCount(server.pid()));
  for (int i = 0; i < edits; ++i) {
    v1::EditAck ack;
    auto start = std::chrono::steady_clock::now();
    grpc::Status status = editor.ApplyEdits(Batch(int(from) + i, 2), &ack);
    latencies_ms->push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(ack.version(), from + i + 1);
    *max_threads = std::max(*max_threads, ThreadCount(server.pid()));
  }
  EXPECT_EQ(WaitExit(followers, std::chrono::seconds(120)), 0)
      << "the follower process failed (a stream missed a version or got one twice)";
  *max_threads = std::max(*max_threads, ThreadCount(server.pid()));
}

struct Measured {
  Latencies one, many;  // ack latency with 1 subscriber, and with kSubscribers
  int max_threads = 0;
};

constexpr int kSubscribers = 1000;

// On a fresh server with `--store_sync=sync`: 100 edits followed by one subscriber, 200 followed
// by 1,000 (every stream checked to receive exactly its versions, in order), 100 more followed by
// one. The one-subscriber phases bracket the other in time, so a slow stretch of the disk or the
// host is less likely to fall into one condition only.
Measured MeasureAcks(bool sync) {
  constexpr int kEdits = 200;
  Measured out;
  TempDir dir;
  ServerProcess server;
  EXPECT_TRUE(
      server.Start(VOXCOL_SERVER_PATH,
                   {"--data_dir=" + dir.path() + "/data", "--seed=4", "--world_size=128,96,128",
                    "--query_threads=2", std::string("--store_sync=") + (sync ? "true" : "false")},
                   dir.path()))
      << server.Log();
  if (!server.Running()) return out;
  std::vector<double> one, many;
  RunEditsWhileFollowed(server, 1, 0, kEdits / 2, &one, &out.max_threads);
  RunEditsWhileFollowed(server, kSubscribers, kEdits / 2, kEdits, &many, &out.max_threads);
  RunEditsWhileFollowed(server, 1, kEdits * 3 / 2, kEdits / 2, &one, &out.max_threads);
  if (one.size() < kEdits || many.size() < kEdits) {
    ADD_FAILURE() << "edits failed";
    return out;
  }
  out.one = Summarize(one);
  out.many = Summarize(many);
  const char* store = sync ? "synced store" : "unsynced store";
  std::printf("%s, ack latency with 1 subscriber: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", store,
              out.one.p50, out.one.p99, out.one.max);
  std::printf("%s, ack latency with %d subscribers: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", store,
              kSubscribers, out.many.p50, out.many.p99, out.many.max);
  std::printf("%s, server threads (max sampled): %d\n", store, out.max_threads);
  return out;
}

// The bound is asserted with an unsynced store, where an ack's latency is the server's own path
// (request read, apply, publish to the feed, response written): exactly what 1,000 subscribers
// could slow down. With a synced store each ack also waits for one fdatasync of the WAL, which on
// this shared VM stalls for tens of milliseconds at times (traced inside Store::Write, in both
// phases); those numbers are printed (docs/benchmarks.md).
TEST(SubscribeScaleTest, ThousandSubscribersGetEveryChangeAndEditsAreAckedAsWithOne) {
  const Measured unsynced = MeasureAcks(/*sync=*/false);
  // Before the pump started every write itself (docs/benchmarks.md) the 1,000-subscriber p99 was
  // 100-600 ms here: gRPC's callback threads, busy with chains of write completions, stopped
  // polling and an edit's request sat unread in its socket.
  EXPECT_LE(unsynced.many.p99, 2 * unsynced.one.p99 + 10)
      << "1,000 subscribers slowed the acks beyond 2x the 1-subscriber p99 plus 10 ms";
  EXPECT_GT(unsynced.max_threads, 0);
  EXPECT_LT(unsynced.max_threads, 100);
  const Measured synced = MeasureAcks(/*sync=*/true);
  EXPECT_GT(synced.max_threads, 0);
  EXPECT_LT(synced.max_threads, 100);
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
  // The other subscriber reads while the edits are applied, and the edits wait for it: edit i
  // is sent only once it has read version i - 1, so at most two of its responses are ever
  // outstanding, within any buffer this test sets. Without that wait a loaded machine (a fresh
  // container running the suite in parallel) delayed its reads or the server's writes to it until
  // more than --subscribe_buffer=4 responses queued, and the server rightly ended it too.
  std::vector<uint64_t> fast_seen;
  absl::Mutex fast_mu;
  std::thread fast_reader([&] {
    v1::SubscribeResponse e;
    while (fast->Read(&e)) {
      absl::MutexLock lock(&fast_mu);
      fast_seen.push_back(e.version());
      if (fast_seen.size() == size_t(kEdits)) break;
    }
  });

  for (int i = 0; i < kEdits; ++i) {
    const size_t read_before = size_t(std::max(i - 1, 0));
    bool caught_up = false;
    {
      absl::MutexLock lock(&fast_mu);
      const auto has_read = [&] { return fast_seen.size() >= read_before; };
      caught_up = fast_mu.AwaitWithTimeout(absl::Condition(&has_read), absl::Seconds(30));
    }
    if (!caught_up) {
      ADD_FAILURE() << "the reading subscriber did not receive version " << read_before;
      break;
    }
    v1::EditAck ack;
    grpc::Status status = client.ApplyEdits(Batch(i, 32), &ack);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(ack.version(), uint64_t(i + 1));
  }
  if (::testing::Test::HasFailure()) fast_context.TryCancel();  // the reader would wait forever
  fast_reader.join();
  ASSERT_EQ(fast_seen.size(), size_t(kEdits));
  for (size_t k = 0; k < fast_seen.size(); ++k) EXPECT_EQ(fast_seen[k], k + 1);
  fast_context.TryCancel();
  fast->Finish();
  v1::SubscribeResponse event;

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

// A change is serialized once per subscriber filter, however many subscribers share the filter
// (issue 36): 200 subscribers of the whole world and 100 more with include_voxels follow 20
// edits; the server counts exactly 20 x 2 encodings (voxcol_subscribe_encodings_total), and every
// subscriber receives every version in order.
TEST(SubscribeScaleTest, OneEncodingPerChangeAndFilterHoweverManySubscribers) {
  constexpr int kPlain = 200, kWithVoxels = 100, kEdits = 20;
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH,
                           {"--data_dir=" + dir.path() + "/data", "--seed=4",
                            "--world_size=128,96,128", "--store_sync=false"},
                           dir.path()))
      << server.Log();
  std::vector<std::unique_ptr<v1::EditService::Stub>> stubs;
  for (int c = 0; c < 4; ++c) {
    grpc::ChannelArguments args;
    args.SetInt("voxcol.test_connection", c);
    stubs.push_back(v1::EditService::NewStub(
        grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), args)));
  }
  std::vector<std::unique_ptr<Follower>> followers;
  for (int s = 0; s < kPlain + kWithVoxels; ++s) {
    followers.push_back(
        std::make_unique<Follower>(stubs[s % 4].get(), 0, kEdits, /*include_voxels=*/s >= kPlain));
  }
  auto metric = [&](const std::string& name) {
    return testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"), name);
  };
  for (int wait = 0; wait < 500 && metric("voxcol_subscribers") < kPlain + kWithVoxels; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(metric("voxcol_subscribers"), kPlain + kWithVoxels);
  const double before = metric("voxcol_subscribe_encodings_total");
  ASSERT_GE(before, 0);
  auto stub = v1::EditService::NewStub(
      grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()));
  for (int i = 0; i < kEdits; ++i) {
    grpc::ClientContext context;
    v1::EditAck ack;
    ASSERT_TRUE(stub->ApplyEdits(&context, Batch(i, 4), &ack).ok());
    ASSERT_EQ(ack.version(), uint64_t(i + 1));
  }
  std::vector<uint64_t> all;
  for (uint64_t v = 1; v <= kEdits; ++v) all.push_back(v);
  for (size_t s = 0; s < followers.size(); ++s) {
    ASSERT_TRUE(followers[s]->WaitDone(std::chrono::seconds(60))) << "subscriber " << s;
    ASSERT_EQ(followers[s]->versions(), all) << "subscriber " << s;
  }
  EXPECT_EQ(metric("voxcol_subscribe_encodings_total") - before, 2 * kEdits);
}

TEST(SubscribeScaleTest, SubscriberThatStopsReadingIsEndedByItsResponseBuffer) {
  RunSubscriberThatStopsReading("--subscribe_buffer=4");
}

TEST(SubscribeScaleTest, SubscriberThatStopsReadingIsEndedByItsByteBuffer) {
  // 1 MiB holds about 15 responses of 64 KiB; the count limit (1024) is never reached.
  RunSubscriberThatStopsReading("--subscribe_buffer_mb=1");
}

// More subscribers that stop reading than the pump's write window (64 writes in flight): their
// writes never complete, yet a reading subscriber still receives every version (the pump stops
// counting writes that stall) while the edits go on.
TEST(SubscribeScaleTest, StalledSubscribersBeyondTheWriteWindowDoNotStopTheOthers) {
  constexpr int kStalled = 100;
  constexpr int kEdits = 20;
  TempDir dir;
  ServerProcess server;
  ASSERT_TRUE(server.Start(VOXCOL_SERVER_PATH,
                           {"--data_dir=" + dir.path() + "/data", "--seed=4",
                            "--world_size=128,96,128", "--store_sync=false"},
                           dir.path()))
      << server.Log();
  // One connection with HTTP/2's initial 64 KiB window (no growth) for the stalled streams: the
  // first 64 KiB response fills it, so no further write on it can complete.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  args.SetInt("voxcol.test_connection", 1);
  auto stalled_stub = v1::EditService::NewStub(
      grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), args));
  v1::SubscribeRequest stalled_request;
  stalled_request.set_from_version(0);
  stalled_request.set_include_voxels(true);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::SubscribeResponse>>> stalled;
  for (int s = 0; s < kStalled; ++s) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stalled.push_back(stalled_stub->Subscribe(contexts.back().get(), stalled_request));
  }
  client::Client client(server.address());
  grpc::ClientContext reader_context;
  reader_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  v1::SubscribeRequest request;
  request.set_from_version(0);
  request.set_include_voxels(true);
  auto reader = client.Subscribe(&reader_context, request);
  double open = 0;
  for (int tries = 0; tries < 600 && open != kStalled + 1; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    open = testing::MetricValue(testing::HttpGet(server.metrics_port(), "/metrics"),
                                "voxcol_subscribers");
  }
  ASSERT_EQ(open, kStalled + 1);
  for (int i = 0; i < kEdits; ++i) {
    v1::EditAck ack;
    grpc::Status status = client.ApplyEdits(Batch(i, 32), &ack);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(ack.version(), uint64_t(i + 1));
  }
  v1::SubscribeResponse event;
  for (uint64_t v = 1; v <= kEdits; ++v) {
    ASSERT_TRUE(reader->Read(&event))
        << "version " << v << ": " << reader->Finish().error_message();
    ASSERT_EQ(event.version(), v);
  }
  reader_context.TryCancel();
  reader->Finish();
  for (auto& context : contexts) context->TryCancel();
  for (auto& s : stalled) s->Finish();
}

}  // namespace
}  // namespace voxcol
