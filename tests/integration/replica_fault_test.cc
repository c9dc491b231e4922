// Network faults between a read replica and its primary (issue 38): the replica reaches its
// primary only through a FaultProxy (tests/integration/fault_proxy.h). It must report the lag
// while the network fails, reconnect after resets, and end byte-identical to the primary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "client/voxcol_client.h"
#include "tests/integration/fault_proxy.h"
#include "tests/integration/network_faults.h"
#include "tests/integration/server_process.h"

namespace voxcol::testing {
namespace {

// One primary and one replica whose --replica_of is the proxy in front of the primary.
class ReplicaFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(primary_.Start(VOXCOL_SERVER_PATH,
                               {"--data_dir=" + dir_.path() + "/p", "--seed=5",
                                "--world_size=128,96,128", "--query_threads=2"},
                               dir_.path()));
    proxy_ = std::make_unique<FaultProxy>(primary_.address());
    ASSERT_TRUE(proxy_->ok());
    const std::string scratch = dir_.path() + "/r";
    std::filesystem::create_directories(scratch);
    ASSERT_TRUE(replica_.Start(VOXCOL_SERVER_PATH,
                               {"--data_dir=" + scratch + "/data",
                                "--replica_of=" + proxy_->address(), "--query_threads=2"},
                               scratch));
    p_ = std::make_unique<client::Client>(primary_.address());
    r_ = std::make_unique<client::Client>(replica_.address());
    // One edit, so that the feed has sent something (`connected` is set by the first batch).
    v1::FillBallRequest ball;
    SetVec(ball.mutable_center(), 0.5, 30.5, 0.5);
    ball.set_radius(3);
    ball.set_material(2);
    v1::EditAck ack;
    ASSERT_TRUE(p_->FillBall(ball, &ack).ok());
    // Followed through the proxy: the stream is open and nothing is missing.
    const auto end = Clock::now() + std::chrono::seconds(20);
    v1::GetReplicaStatusResponse s;
    while (Clock::now() < end && !(Status(&s) && s.connected() && s.lag_seconds() == 0)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(s.connected()) << replica_.Log();
    ASSERT_EQ(s.applied_version(), WorldVersion(*p_));
  }
  void TearDown() override {
    if (HasFailure()) std::printf("replica log:\n%s\n", replica_.Log().c_str());
  }

  bool Status(v1::GetReplicaStatusResponse* s) {
    *s = {};
    return r_->GetReplicaStatus(s).ok();
  }

  // The replica's own view and the primary's version, side by side.
  struct Sample {
    double t;                  // seconds since the phase began
    uint64_t primary_version;  // asked the primary directly, just before the replica
    v1::GetReplicaStatusResponse status;
  };
  // Samples every 100 ms for `seconds`.
  std::vector<Sample> Observe(const char* phase, double seconds) {
    std::vector<Sample> samples;
    const auto start = Clock::now();
    while (SecondsSince(start) < seconds) {
      Sample s{SecondsSince(start), WorldVersion(*p_), {}};
      EXPECT_TRUE(Status(&s.status));
      samples.push_back(s);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const Sample& last = samples.back();
    double max_lag = 0;
    for (const Sample& s : samples) max_lag = std::max(max_lag, s.status.lag_seconds());
    std::printf(
        "%-10s primary %4lu replica %4lu (reported primary %4lu, lag %2lu versions, %.2f s, max "
        "%.2f s) connected %d reconnects %lu\n",
        phase, (unsigned long)last.primary_version, (unsigned long)last.status.applied_version(),
        (unsigned long)last.status.primary_version(), (unsigned long)last.status.lag_versions(),
        last.status.lag_seconds(), max_lag, last.status.connected(),
        (unsigned long)last.status.reconnects());
    return samples;
  }

  // Waits until the writer is stopped and the replica has the primary's version.
  uint64_t WaitForConvergence() {
    const uint64_t version = WorldVersion(*p_);
    const auto end = Clock::now() + std::chrono::seconds(30);
    v1::GetReplicaStatusResponse s;
    while (Clock::now() < end && !(Status(&s) && s.applied_version() == version)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(s.applied_version(), version);
    return version;
  }

  TempDir dir_;
  ServerProcess primary_, replica_;
  std::unique_ptr<FaultProxy> proxy_;
  std::unique_ptr<client::Client> p_, r_;
};

// Done-means 3 of issue 38: continuous edits on the primary through a 5 s partition, a 200 ms
// delay, a throttled link and a reset mid-batch; lag reported during the faults, a reconnect
// after the reset, and byte-identical answers at the same version at the end.
TEST_F(ReplicaFaultTest, PartitionDelayThrottleResetConvergeByteIdentical) {
  Writer writer(primary_.address());
  writer.Start(25);
  const uint64_t down_before = proxy_->bytes_to_client();
  const std::vector<Sample> healthy = Observe("healthy", 1.5);
  const double feed_rate = double(proxy_->bytes_to_client() - down_before) / 1.5;
  EXPECT_GT(healthy.back().status.applied_version(), healthy.front().status.applied_version());

  // Partition: nothing crosses; the replica cannot know what it misses, but it reports the
  // silence as lag (ReplicaOptions::contact_timeout, 2 s) and the lag keeps growing.
  proxy_->Partition(true);
  const std::vector<Sample> partition = Observe("partition", 5);
  const Sample& at_1s =
      *std::find_if(partition.begin(), partition.end(), [](const Sample& s) { return s.t >= 1.0; });
  EXPECT_EQ(partition.back().status.applied_version(), at_1s.status.applied_version());
  EXPECT_GE(partition.back().primary_version, partition.front().primary_version + 50);
  EXPECT_GE(partition.back().status.lag_seconds(), 2.5);
  double first_lag = 0;
  for (const Sample& s : partition) {
    if (first_lag == 0) first_lag = s.status.lag_seconds();
  }
  EXPECT_GE(partition.back().status.lag_seconds(), first_lag + 1.0);  // growing
  // The held connection is silence, not a close: the feed stream stays open, no reconnect.
  EXPECT_TRUE(partition.back().status.connected());
  EXPECT_EQ(partition.back().status.reconnects(), partition.front().status.reconnects());

  // Healed behind a 200 ms delay: the held batches arrive and the replica keeps up, 200 ms behind.
  proxy_->SetDelay(std::chrono::milliseconds(200));
  proxy_->Partition(false);
  const std::vector<Sample> delay = Observe("delay", 3);
  EXPECT_GE(delay.back().status.applied_version(), partition.back().primary_version);
  int behind = 0, late = 0;
  for (const Sample& s : delay) {
    if (s.t < 1.5) continue;
    ++late;
    behind += s.primary_version > s.status.applied_version();
    EXPECT_LT(s.status.lag_seconds(), 2.0) << "a slow link is not silence";
  }
  EXPECT_GE(behind, late / 2) << "200 ms at 25 batches/s: about 5 versions behind";

  // Throttled to an eighth of the feed's rate: the replica falls behind and reports it. The
  // poll's answers queue behind the feed's bytes (the HTTP/2 window, 64 kB or more, takes seconds
  // at this rate): they come late or time out, and count from when they were asked; feed batches
  // keep coming, but they are no answer of the primary about its version.
  proxy_->SetDelay(std::chrono::milliseconds(0));
  proxy_->SetThrottle(std::max<int64_t>(2000, int64_t(feed_rate / 8)));
  std::printf("feed %.0f bytes/s, throttled to an eighth\n", feed_rate);
  const std::vector<Sample> throttle = Observe("throttle", 5);
  const auto gap = [](const Sample& s) {
    return int64_t(s.primary_version) - int64_t(s.status.applied_version());
  };
  EXPECT_GE(gap(throttle.back()), gap(throttle.front()) + 10);
  EXPECT_GE(throttle.back().status.lag_seconds(), 3.0);  // 5 s at an eighth: about 5 s

  // Reset while batches are in flight (still throttled, and delayed): the cut loses bytes of
  // batches the replica had not received; it reconnects and resumes from its own version.
  proxy_->SetDelay(std::chrono::milliseconds(200));
  Observe("slow", 1);
  const uint64_t reconnects = Observe("before", 0.1).back().status.reconnects();
  proxy_->ResetAll();
  EXPECT_GT(proxy_->bytes_discarded(), 0u) << "the reset cut no batch in flight";
  proxy_->Heal();
  Observe("reset", 2);
  writer.Stop();
  EXPECT_EQ(writer.errors(), 0);
  const uint64_t version = WaitForConvergence();
  v1::GetReplicaStatusResponse s;
  ASSERT_TRUE(Status(&s));
  EXPECT_GT(s.reconnects(), reconnects);
  EXPECT_TRUE(s.connected());
  EXPECT_EQ(s.lag_versions(), 0u);
  std::printf("converged at version %lu after %d batches; %lu connections through the proxy\n",
              (unsigned long)version, writer.batches(),
              (unsigned long)proxy_->connections_accepted());
  ExpectByteIdentical(*p_, *r_, version);
}

// With an idle primary nothing is ever known and unapplied, so only the silence can show the
// partition: lag_seconds 0 while the primary answers, then at least the silence once it has been
// silent for longer than the contact timeout, and 0 again once it answers.
TEST_F(ReplicaFaultTest, SilentPrimaryCountsAsLagUntilItAnswersAgain) {
  const uint64_t version = WorldVersion(*p_);
  const std::vector<Sample> healthy = Observe("idle", 1);
  EXPECT_EQ(healthy.back().status.applied_version(), version);
  EXPECT_EQ(healthy.back().status.lag_seconds(), 0);
  proxy_->Partition(true);
  const std::vector<Sample> partition = Observe("partition", 3.5);
  for (const Sample& s : partition) {
    EXPECT_EQ(s.status.lag_versions(), 0u);  // it knows of no version it lacks
    if (s.t < 1.0) {
      EXPECT_EQ(s.status.lag_seconds(), 0) << "at " << s.t << " s";
    }
  }
  EXPECT_GE(partition.back().status.lag_seconds(), 2.0);
  EXPECT_LE(partition.back().status.lag_seconds(), 5.0);
  proxy_->Partition(false);
  const auto end = Clock::now() + std::chrono::seconds(10);
  v1::GetReplicaStatusResponse s;
  while (Clock::now() < end && !(Status(&s) && s.lag_seconds() == 0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.lag_seconds(), 0);
  EXPECT_EQ(s.applied_version(), version);
}

}  // namespace
}  // namespace voxcol::testing
