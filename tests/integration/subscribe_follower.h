// A Subscribe stream on gRPC's callback API, for tests and benchmarks that follow the feed with
// many subscribers in one process (no thread per stream).
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "voxcol/v1/edit_service.grpc.pb.h"

namespace voxcol::testing {

// A subscriber on gRPC's callback API (no thread of its own) that records the versions it
// receives until it has seen `last`.
class Follower : public grpc::ClientReadReactor<v1::SubscribeResponse> {
 public:
  Follower(v1::EditService::Stub* stub, uint64_t from, uint64_t last, bool include_voxels = false)
      : last_(last) {
    request_.set_from_version(from);
    request_.set_include_voxels(include_voxels);
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

}  // namespace voxcol::testing
