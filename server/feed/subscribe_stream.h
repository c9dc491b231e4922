// Subscribe without a thread per subscriber: each stream is an AsyncStream with a bounded
// buffer, fed from the shared ChangeLog by one pump thread that sleeps until a new version is
// published (or a stream's write completed) and never waits for a client.
//
// The pump starts every write itself, at most `SubscribeLimits::writes_in_flight` at a time over
// all streams; a completed write only hands its stream back to the pump. So the fan-out of one
// version to 1,000 streams runs at the pump's (lowered) priority in bounded rounds, instead of as
// a chain of write completions on the server's few RPC threads: those threads also poll the
// sockets, and while they are busy with a long queue of completions nobody reads new requests
// (an edit waited up to ~400 ms for its request to be read; docs/benchmarks.md).
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/voxel/change_log.h"
#include "server/stream/async_stream.h"
#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol::server {

class SubscribeStream;

struct SubscribeLimits {
  // Responses, and their serialized bytes, a stream may have prepared but not yet sent (the first
  // response always fits). While it catches up from an old version the pump only refills it as
  // it drains; once it has reached the newest version a stream that would need more is ended
  // with RESOURCE_EXHAUSTED.
  size_t buffer_responses = 1024;
  size_t buffer_bytes = size_t(4) << 20;
  // Writes started and not yet completed, over all streams: the pump waits for completions
  // beyond it. Bounds the work queued on the RPC threads at any time. Writes that do not
  // complete for 50 ms (clients that stopped reading) stop counting.
  size_t writes_in_flight = 64;
};

struct SubscribeStats {
  uint64_t open = 0;        // streams now open
  uint64_t ended_slow = 0;  // streams ended because they fell behind (buffer or window)
};

// The open Subscribe streams and the thread that feeds them. Registers itself as `log`'s listener;
// both must outlive the gRPC server (every stream is finished before the server's Wait returns).
class SubscriptionHub {
 public:
  SubscriptionHub(ChangeLog& log, const SubscribeLimits& limits);
  ~SubscriptionHub();

  // The reactor for one Subscribe call; `region` is already validated. A stream whose cursor is
  // outside the log's window is finished at once with OUT_OF_RANGE.
  AsyncStream* Open(std::unique_ptr<StreamCall> call, const v1::SubscribeRequest& request,
                    const IntBox& region);

  // A call that ends with `status` before streaming anything (e.g. a bad region).
  static AsyncStream* Failed(std::unique_ptr<StreamCall> call, const absl::Status& status);

  SubscribeStats stats() const;

 private:
  friend class SubscribeStream;
  // Wakes the pump for every stream (a new version, or the log was closed).
  void WakeAll();
  // A write of `stream` completed; with `more` the pump visits it again (it has more to send).
  void WriteDone(SubscribeStream* stream, bool more);
  void Remove(SubscribeStream* stream);
  // Queues `stream` for the pump unless it is queued already.
  void EnqueueLocked(SubscribeStream* stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run();

  class EncodedChanges;

  ChangeLog& log_;
  const SubscribeLimits limits_;
  std::atomic<uint64_t> ended_slow_{0};
  mutable absl::Mutex mu_;
  // Each open stream, and whether it is in ready_.
  struct Entry {
    std::shared_ptr<SubscribeStream> stream;
    bool queued = false;
  };
  absl::flat_hash_map<SubscribeStream*, Entry> streams_ ABSL_GUARDED_BY(mu_);
  std::deque<SubscribeStream*> ready_ ABSL_GUARDED_BY(mu_);  // for the pump, first come first
  int64_t in_flight_ ABSL_GUARDED_BY(mu_) = 0;               // writes started, not completed
  // Of those, writes taken as stalled (their clients stopped reading): not counted in the window.
  int64_t stalled_ ABSL_GUARDED_BY(mu_) = 0;
  bool wake_all_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // The responses encoded for recent changes, shared by the streams (the pump thread's only).
  std::unique_ptr<EncodedChanges> encoded_;
  std::thread pump_;
};

}  // namespace voxcol::server
