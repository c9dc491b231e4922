// WorkerPool: the bounded queue, and TryRunHere's place-taking (a task run by a caller counts
// against the pool's bound on running tasks, issue 35).
#include "server/exec/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/synchronization/notification.h"

namespace voxcol::server {
namespace {

using std::chrono::milliseconds;

// Occupies one worker of `pool` until the returned notification is notified (before the pool is
// destroyed); returns once that task runs. The task shares `started`: Notify() may still touch it
// after the waiter woke.
std::shared_ptr<absl::Notification> HoldAWorker(WorkerPool& pool) {
  auto release = std::make_shared<absl::Notification>();
  auto started = std::make_shared<absl::Notification>();
  EXPECT_TRUE(pool.TrySubmit([started, release] {
    started->Notify();
    release->WaitForNotification();
  }));
  started->WaitForNotification();
  return release;
}

TEST(WorkerPoolTest, TryRunHereRunsOnTheCallerWhenIdle) {
  WorkerPool pool(2, 4);
  std::thread::id ran_on;
  EXPECT_TRUE(pool.TryRunHere([&] { ran_on = std::this_thread::get_id(); }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(WorkerPoolTest, TryRunHereRefusesWhileEveryWorkerRuns) {
  WorkerPool pool(1, 4);
  std::shared_ptr<absl::Notification> release = HoldAWorker(pool);
  bool ran = false;
  EXPECT_FALSE(pool.TryRunHere([&] { ran = true; }));
  EXPECT_FALSE(ran);
  release->Notify();
  // The worker gives its place back once its task returned.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!pool.TryRunHere([&] { ran = true; }) && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_TRUE(ran);
}

TEST(WorkerPoolTest, TryRunHereRefusesWhileTasksAreQueued) {
  WorkerPool pool(1, 4);
  std::shared_ptr<absl::Notification> release = HoldAWorker(pool);
  ASSERT_TRUE(pool.TrySubmit([] {}));
  EXPECT_EQ(pool.queued(), 1u);
  bool ran = false;
  EXPECT_FALSE(pool.TryRunHere([&] { ran = true; }));
  EXPECT_FALSE(ran);
  release->Notify();
}

TEST(WorkerPoolTest, ACallersTaskHoldsAWorkersPlace) {
  WorkerPool pool(1, 4);
  std::atomic<bool> queued_ran{false};
  EXPECT_TRUE(pool.TryRunHere([&] {
    ASSERT_TRUE(pool.TrySubmit([&] { queued_ran = true; }));
    // The pool's one place is taken by this task: the worker must not start the queued one.
    std::this_thread::sleep_for(milliseconds(100));
    EXPECT_FALSE(queued_ran.load());
  }));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!queued_ran.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_TRUE(queued_ran.load());
}

TEST(WorkerPoolTest, TheQueueIsBoundedAndDrainedOnDestruction) {
  std::atomic<int> ran{0};
  {
    absl::Notification started, release;  // outlive the pool, whose worker waits on them
    WorkerPool pool(1, 2);
    ASSERT_TRUE(pool.TrySubmit([&] {
      started.Notify();
      release.WaitForNotification();
      ++ran;
    }));
    started.WaitForNotification();
    EXPECT_TRUE(pool.TrySubmit([&] { ++ran; }));
    EXPECT_TRUE(pool.TrySubmit([&] { ++ran; }));
    EXPECT_FALSE(pool.TrySubmit([&] { ++ran; })) << "a third task waited beyond max_queued = 2";
    release.Notify();
  }
  EXPECT_EQ(ran.load(), 3);
}

}  // namespace
}  // namespace voxcol::server
