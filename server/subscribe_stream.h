// Subscribe without a thread per subscriber: each stream is a gRPC callback reactor with a bounded
// buffer, fed from the shared ChangeLog by one pump thread that sleeps until a new version is
// published (or a stream has room again) and never waits for a client.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "core/voxel/change_log.h"
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
  grpc::ServerWriteReactor<v1::SubscribeResponse>* Open(const v1::SubscribeRequest& request,
                                                        const IntBox& region);

  // A call that ends with `status` before streaming anything (e.g. a bad region).
  static grpc::ServerWriteReactor<v1::SubscribeResponse>* Failed(const absl::Status& status);

  SubscribeStats stats() const;

 private:
  friend class SubscribeStream;
  // Wakes the pump for every stream (a new version, or the log was closed).
  void WakeAll();
  // Wakes the pump for one stream (it has room in its buffer again).
  void Wake(SubscribeStream* stream);
  void Remove(SubscribeStream* stream);
  void Run();

  ChangeLog& log_;
  const SubscribeLimits limits_;
  std::atomic<uint64_t> ended_slow_{0};
  mutable absl::Mutex mu_;
  absl::flat_hash_map<SubscribeStream*, std::shared_ptr<SubscribeStream>> streams_
      ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<SubscribeStream*> ready_ ABSL_GUARDED_BY(mu_);
  bool wake_all_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread pump_;
};

}  // namespace voxcol::server
