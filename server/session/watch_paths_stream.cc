#include "server/session/watch_paths_stream.h"

#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/convert/convert.h"
#include "server/nav/path_watch.h"
#include "server/world/world_registry.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

namespace {

v1::WatchPathsResponse Refused(uint64_t id, const absl::Status& status) {
  v1::WatchPathsResponse r;
  r.set_watch_id(id);
  r.set_event(v1::PATH_WATCH_EVENT_REFUSED);
  r.set_error_code(int32_t(status.code()));
  r.set_error_message(std::string(status.message()));
  return r;
}

// One WatchPaths call. Requests are handled on the RPC thread that read them (a watch without
// waypoints plans its path there); events come from the worlds' hub threads through the sink.
// Responses queue here and are written one at a time. The client's half-close ends the call once
// the queued responses are written. Finish() is the last thing a method does with `this`.
class WatchPathsStream final : public AsyncStream {
 public:
  WatchPathsStream(const WorldResolver& resolver, float max_path_distance,
                   std::unique_ptr<StreamCall> call)
      : AsyncStream(std::move(call)),
        resolver_(resolver),
        max_path_distance_(max_path_distance),
        sink_(std::make_shared<Sink>(this)) {
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    v1::WatchPathsRequest request;
    grpc::Status parsed = grpc::Status::OK;
    if (ok) {
      parsed = grpc::SerializationTraits<v1::WatchPathsRequest>::Deserialize(&request_, &request);
      ++messages_read_;
    }
    if (!ok || !parsed.ok()) {
      absl::ReleasableMutexLock lock(&mu_);
      if (!parsed.ok()) {
        error_ = absl::InvalidArgumentError(absl::StrCat(
            "WatchPaths: message ", messages_read_, " on the stream is not a WatchPathsRequest (",
            parsed.error_message(), "); the stream ends here"));
      }
      reads_done_ = true;
      FinishIfDone(lock);
      return;
    }
    // Not under mu_: the hubs deliver events under their own lock, which then takes mu_.
    Handle(request);
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    absl::ReleasableMutexLock lock(&mu_);
    writes_.pop_front();
    writing_ = false;
    if (!ok) cancelled_ = true;
    StartNextWrite();
    FinishIfDone(lock);
  }

  void OnCancel() override {
    absl::ReleasableMutexLock lock(&mu_);
    cancelled_ = true;
    FinishIfDone(lock);
  }

  void OnDone() override {
    sink_->Detach();
    for (const auto& [id, world] : watches_) world->nav.watches->RemoveAll(sink_.get());
    delete this;
  }

  // Serializes `response` and queues it for writing.
  void Queue(const v1::WatchPathsResponse& response) {
    grpc::ByteBuffer buffer;
    bool own = false;
    grpc::SerializationTraits<v1::WatchPathsResponse>::Serialize(response, &buffer, &own);
    absl::MutexLock lock(&mu_);
    if (finished_ || cancelled_) return;
    writes_.push_back(std::move(buffer));
    StartNextWrite();
  }

 private:
  // Delivers hub events to the stream until Detach() (OnDone): afterwards nothing reaches it.
  class Sink final : public PathWatchSink {
   public:
    explicit Sink(WatchPathsStream* stream) : stream_(stream) {}
    void Deliver(v1::WatchPathsResponse response) override {
      absl::MutexLock lock(&mu_);
      if (stream_ != nullptr) stream_->Queue(response);
    }
    void Detach() {
      absl::MutexLock lock(&mu_);
      stream_ = nullptr;
    }

   private:
    absl::Mutex mu_;
    WatchPathsStream* stream_ ABSL_GUARDED_BY(mu_);
  };

  void Handle(const v1::WatchPathsRequest& request) {
    if (request.has_watch()) {
      Watch(request.watch());
    } else if (request.kind_case() == v1::WatchPathsRequest::kUnwatch) {
      Unwatch(request.unwatch());
    } else {
      Queue(Refused(0, absl::InvalidArgumentError("WatchPathsRequest: set watch or unwatch")));
    }
  }

  void Watch(const v1::PathWatch& watch) {
    const uint64_t id = watch.watch_id();
    Forget(id);
    if (watches_.size() >= size_t(kMaxWatchesPerStream)) Forget(std::nullopt);
    if (watches_.contains(id)) {
      Queue(Refused(id, absl::InvalidArgumentError(absl::StrCat(
                            "watch.watch_id ", id, " is already watched on this stream"))));
      return;
    }
    if (watches_.size() >= size_t(kMaxWatchesPerStream)) {
      Queue(Refused(id, absl::ResourceExhaustedError(absl::StrCat(
                            "watch.watch_id: at most ", kMaxWatchesPerStream,
                            " watches on one stream; unwatch one or open another stream"))));
      return;
    }
    absl::StatusOr<WorldHandle> world = resolver_.Resolve(watch.path().world(), "watch.path.world");
    if (!world.ok()) {
      Queue(Refused(id, world.status()));
      return;
    }
    NavContext context = (*world)->nav;
    context.max_path_distance = max_path_distance_;
    PathWatchSpec spec;
    v1::WatchPathsResponse registered;
    absl::Status s =
        DecodePathWatch(*(*world)->world, context, watch, &spec, registered.mutable_path());
    registered.set_watch_id(id);
    registered.set_event(v1::PATH_WATCH_EVENT_REGISTERED);
    registered.set_version(spec.version);
    registered.set_watched_length(spec.length);
    if (!watch.waypoints().empty()) registered.clear_path();
    // Queued before the hub may send an event for it.
    if (s.ok()) Queue(registered);
    if (s.ok()) s = context.watches->Add(sink_, std::move(spec));
    if (!s.ok()) {
      Queue(Refused(id, s));
      return;
    }
    watches_.emplace(id, *std::move(world));
  }

  // Drops watches that ended in their hub (blocked): `id`, or every one.
  void Forget(std::optional<uint64_t> id) {
    for (auto it = watches_.begin(); it != watches_.end();) {
      auto here = it++;
      if (id.has_value() && here->first != *id) continue;
      if (!here->second->nav.watches->Contains(sink_.get(), here->first)) watches_.erase(here);
    }
  }

  void Unwatch(uint64_t id) {
    auto it = watches_.find(id);
    // A watch that ended (blocked) is unknown to its hub, and forgotten here.
    const bool known = it != watches_.end() && it->second->nav.watches->Remove(sink_.get(), id);
    if (it != watches_.end()) watches_.erase(it);
    if (!known) {
      Queue(Refused(id, absl::NotFoundError(absl::StrCat("unwatch: no open watch ", id))));
      return;
    }
    v1::WatchPathsResponse r;
    r.set_watch_id(id);
    r.set_event(v1::PATH_WATCH_EVENT_UNWATCHED);
    Queue(r);
  }

  void StartNextWrite() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || writes_.empty() || cancelled_) return;
    writing_ = true;
    StartWrite(&writes_.front());
  }

  void FinishIfDone(absl::ReleasableMutexLock& lock) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_ || !(reads_done_ || cancelled_)) return;
    if (!cancelled_ && !writes_.empty()) return;
    finished_ = true;
    grpc::Status status =
        cancelled_ && error_.ok() ? ToGrpcStatus(absl::CancelledError("")) : ToGrpcStatus(error_);
    lock.Release();
    Finish(status);
  }

  const WorldResolver& resolver_;
  const float max_path_distance_;
  const std::shared_ptr<Sink> sink_;
  grpc::ByteBuffer request_;   // read buffer; only touched by the reading side
  int64_t messages_read_ = 0;  // only touched by the reading side
  // Open watches by id and their worlds (kept alive while watched); reading side only.
  absl::flat_hash_map<uint64_t, WorldHandle> watches_;
  absl::Mutex mu_;
  std::deque<grpc::ByteBuffer> writes_ ABSL_GUARDED_BY(mu_);  // the front one is being written
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

AsyncStream* OpenWatchPaths(const WorldResolver& resolver, float max_path_distance,
                            std::unique_ptr<StreamCall> call) {
  return new WatchPathsStream(resolver, max_path_distance, std::move(call));
}

}  // namespace voxcol::server
