// Read replica mode (issue 22): a server that follows its primary's durable change feed.
//
// The follower subscribes to the primary's EditService.Subscribe (whole world, include_voxels)
// from the replica's own stored version, and applies every batch in order as one local World::Edit
// that overwrites the changed boxes with the batch's voxels, so the replica's version equals the
// primary's after each batch. Batches that changed nothing arrive too (include_empty) and become
// empty local edits (each is still a version, as on the primary); should a version be missing
// anyway, the gap is filled with empty edits before the next batch. The
// replica's own store makes every applied batch durable, so a restarted replica resumes from its
// stored version. On any stream error it reconnects with exponential backoff; a replica whose
// version fell out of the primary's retention window (OUT_OF_RANGE) re-seeds (ReseedFromPrimary).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "client/voxcol_client.h"
#include "core/voxel/world.h"
#include "server/metrics.h"
#include "voxcol/v1/replica_service.grpc.pb.h"

namespace voxcol::server {

struct ReplicaOptions {
  std::string primary;  // host:port of the primary; empty: this server is not a replica
  client::ChannelSecurity security;
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  absl::Duration poll_interval = absl::Milliseconds(500);  // primary version polls (lag)
};

// The replica flags (server/replica_flags.cc); `primary` empty when --replica_of is not set.
// INVALID_ARGUMENT naming the flag for an unreadable TLS or token file.
absl::StatusOr<ReplicaOptions> ReplicaOptionsFromFlags();

// The refusal every edit on a replica gets: FAILED_PRECONDITION naming the primary's address.
absl::Status ReplicaEditRefusal(const std::string& primary);

// The primary's world (GetWorldInfo: size, voxel size, seed), retried with backoff until
// `give_up`. FAILED_PRECONDITION when its generator version differs from `generator_version`.
absl::StatusOr<WorldConfig> FetchPrimaryWorld(const ReplicaOptions& options,
                                              uint32_t generator_version, absl::Time give_up);

struct ReplicaStatus {
  uint64_t applied_version = 0;  // the local world's version
  uint64_t primary_version = 0;  // newest primary version known (feed or GetWorldInfo)
  uint64_t lag_versions = 0;     // primary_version - applied_version (0 when ahead)
  double lag_seconds = 0;        // since the oldest known but unapplied version became known
  bool connected = false;        // the feed stream is open
  uint64_t reconnects = 0;       // feed streams that ended and were reopened
  uint64_t reseeds = 0;          // full copies after falling out of the primary's window
  uint64_t applied_batches = 0;  // feed batches applied (not counting gap fillers)
};

class ReplicaFollower {
 public:
  // `world` must be this server's world, with its store and observers attached; the follower is
  // its only writer (client edits are refused).
  ReplicaFollower(World& world, ReplicaOptions options, uint32_t generator_version);
  ~ReplicaFollower();  // Stop()
  ReplicaFollower(const ReplicaFollower&) = delete;
  ReplicaFollower& operator=(const ReplicaFollower&) = delete;

  void Start();
  // Cancels the feed stream and joins the threads. Idempotent.
  void Stop();
  ReplicaStatus status() const;
  // voxcol_replica_* gauges and counters; the follower must outlive the registry's server.
  void RegisterMetrics(Metrics& registry) const;

  // Applies one feed response (exposed for tests): version gaps become empty edits; INTERNAL if
  // the local version does not come out equal to the response's.
  absl::Status Apply(const v1::SubscribeResponse& response);

 private:
  void Run();
  void PollPrimary();
  // One Subscribe from the local version; returns why it ended.
  absl::Status FollowOnce(client::Client& client);
  // Copies the primary's world at one version and resumes the feed there (replica_reseed.cc).
  absl::Status ReseedFromPrimary(client::Client& client);
  absl::Status CheckPrimaryWorld(client::Client& client);
  void NoteKnown(uint64_t version);
  void NoteApplied(uint64_t version);
  bool SleepUnlessStopped(absl::Duration d);

  World& world_;
  const ReplicaOptions options_;
  const uint32_t generator_version_;
  std::thread follow_thread_, poll_thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* stream_context_ ABSL_GUARDED_BY(mu_) = nullptr;  // to cancel on Stop
  uint64_t primary_version_ ABSL_GUARDED_BY(mu_) = 0;
  // Known primary versions above the applied one with when each became known (ascending).
  std::deque<std::pair<uint64_t, absl::Time>> unapplied_ ABSL_GUARDED_BY(mu_);
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reseeds_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<uint64_t> applied_batches_{0};
};

// ReplicaService.GetReplicaStatus: the follower's status; FAILED_PRECONDITION without one.
class ReplicaServiceImpl final : public v1::ReplicaService::Service {
 public:
  // `follower` (null on a primary) must outlive the service.
  ReplicaServiceImpl(const ReplicaFollower* follower, std::string primary)
      : follower_(follower), primary_(std::move(primary)) {}
  grpc::Status GetReplicaStatus(grpc::ServerContext* context,
                                const v1::GetReplicaStatusRequest* request,
                                v1::GetReplicaStatusResponse* response) override;

 private:
  const ReplicaFollower* follower_;
  const std::string primary_;
};

}  // namespace voxcol::server
