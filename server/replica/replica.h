// Read replica mode (issue 22): a server that follows its primary's durable change feed, for
// every world of the primary.
//
// ReplicaSet keeps the replica's worlds equal to the primary's: every poll interval it lists the
// primary's worlds (ListWorlds, which also gives each world's version for the lag), creates each
// world it lacks, deletes the local worlds the primary no longer has (their follower stopped
// first), and runs one ReplicaFollower per world. A generated world is created with the
// primary's generator settings (GetWorldInfo of that world) at version 0 and follows the feed.
// A copy of a template is made here the way the primary made it, from the replica's own template
// world, when that is at the copy's template version (the usual case: a template map is not
// edited; the copy then shares the template's chunks and nothing crosses the network); the set
// waits up to 20 polls for a catching-up template. Otherwise the copy is created as a generated
// world at version 0: its feed starts at the copy's version, so the first Subscribe is
// OUT_OF_RANGE and the follower seeds it like a re-seed (ExportRegion of the whole world plus the
// feed up to one pinned version), then follows the feed from there.
//
// Each follower subscribes to the primary's EditService.Subscribe (whole world, include_voxels)
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
#include <map>
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
#include "server/telemetry/metrics.h"
#include "server/world/world_registry.h"
#include "voxcol/v1/replica_service.grpc.pb.h"

namespace voxcol::server {

struct ReplicaOptions {
  std::string primary;  // host:port of the primary; empty: this server is not a replica
  client::ChannelSecurity security;
  absl::Duration min_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // Primary polls: ListWorlds (the set of worlds, and each world's version for the lag).
  absl::Duration poll_interval = absl::Milliseconds(500);
  // A primary whose newest answer about its current version (poll or GetWorldInfo) was asked
  // longer ago than this counts as lag: the replica cannot tell what it missed since (issue 38: a
  // partition, or a link so slow that the answers time out or come late), so lag_seconds is then
  // at least the time since that question.
  absl::Duration contact_timeout = absl::Seconds(2);
};

// The replica flags (server/replica/replica_flags.cc); `primary` empty when --replica_of is not
// set. INVALID_ARGUMENT naming the flag for an unreadable TLS or token file.
absl::StatusOr<ReplicaOptions> ReplicaOptionsFromFlags();

// The refusal every edit on a replica gets: FAILED_PRECONDITION naming the primary's address.
absl::Status ReplicaEditRefusal(const std::string& primary);
// The refusal CreateWorld and DeleteWorld on a replica get, likewise.
absl::Status ReplicaWorldRefusal(const std::string& primary);

// The world a primary's GetWorldInfo describes (size, voxel size, seed); FAILED_PRECONDITION naming
// `primary` when its generator version differs from `generator_version`.
absl::StatusOr<WorldConfig> PrimaryWorldConfig(const v1::GetWorldInfoResponse& info,
                                               uint32_t generator_version,
                                               const std::string& primary);

// The primary's world (PrimaryWorldConfig of its GetWorldInfo), retried with backoff until
// `give_up`.
absl::StatusOr<WorldConfig> FetchPrimaryWorld(const ReplicaOptions& options,
                                              uint32_t generator_version, absl::Time give_up);

struct ReplicaStatus {
  uint64_t applied_version = 0;  // the local world's version
  uint64_t primary_version = 0;  // newest primary version known (feed or GetWorldInfo)
  uint64_t lag_versions = 0;     // primary_version - applied_version (0 when ahead)
  // Since the oldest known but unapplied version became known, or since the primary was last
  // heard from when that is longer ago than ReplicaOptions::contact_timeout; 0 when caught up.
  double lag_seconds = 0;
  bool connected = false;        // the feed stream is open
  uint64_t reconnects = 0;       // feed streams that ended and were reopened
  uint64_t reseeds = 0;          // full copies after falling out of the primary's window
  uint64_t applied_batches = 0;  // feed batches applied (not counting gap fillers)
  // The primary serves another world under this id (other settings, or older than this replica's
  // copy) or none (NOT_FOUND: deleted, maybe re-created since): ReplicaSet deletes a non-default
  // world in that state and creates it again if the primary has it.
  bool diverged = false;
};

// Follows one world of the primary (every request names world->id).
class ReplicaFollower {
 public:
  // `world` must be one of this server's worlds, with its store and observers attached; the
  // follower is its only writer (client edits are refused) and keeps it alive until destroyed.
  ReplicaFollower(WorldHandle world, ReplicaOptions options, uint32_t generator_version);
  ~ReplicaFollower();  // Stop()
  ReplicaFollower(const ReplicaFollower&) = delete;
  ReplicaFollower& operator=(const ReplicaFollower&) = delete;

  void Start();
  // Cancels the feed stream and joins the thread. Idempotent.
  void Stop();
  ReplicaStatus status() const;
  const std::string& world_id() const { return handle_->id; }
  // A primary version seen in the feed (or a re-seed).
  void NoteKnown(uint64_t version);
  // The primary's current version as it answered a question sent at `asked` (the ReplicaSet's
  // poll, GetWorldInfo): the last contact is `asked`, since an answer that took long tells an old
  // version. Feed batches are no contact: they may be old news queued behind a slow link.
  void NotePrimaryVersion(uint64_t version, absl::Time asked);

  // Applies one feed response (exposed for tests): version gaps become empty edits; INTERNAL if
  // the local version does not come out equal to the response's.
  absl::Status Apply(const v1::SubscribeResponse& response);

 private:
  void Run();
  // One Subscribe from the local version; returns why it ended.
  absl::Status FollowOnce(client::Client& client);
  // Copies the primary's world at one version and resumes the feed there (replica_reseed.cc).
  absl::Status ReseedFromPrimary(client::Client& client);
  absl::Status CheckPrimaryWorld(client::Client& client);
  void NoteApplied(uint64_t version);
  bool SleepUnlessStopped(absl::Duration d);

  const WorldHandle handle_;
  World& world_;
  const ReplicaOptions options_;
  const uint32_t generator_version_;
  std::thread follow_thread_;

  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* stream_context_ ABSL_GUARDED_BY(mu_) = nullptr;  // to cancel on Stop
  uint64_t primary_version_ ABSL_GUARDED_BY(mu_) = 0;
  // Known primary versions above the applied one with when each became known (ascending).
  std::deque<std::pair<uint64_t, absl::Time>> unapplied_ ABSL_GUARDED_BY(mu_);
  absl::Time last_contact_ ABSL_GUARDED_BY(mu_) = absl::Now();  // the last NotePrimaryVersion
  bool connected_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t reseeds_ ABSL_GUARDED_BY(mu_) = 0;
  bool diverged_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> applied_batches_{0};
};

// The followers of every world of the primary (replica_set.cc).
class ReplicaSet {
 public:
  // `worlds` must outlive the set; its worlds must refuse client edits (edit_refusal).
  ReplicaSet(WorldRegistry& worlds, ReplicaOptions options, uint32_t generator_version);
  ~ReplicaSet();  // Stop()
  ReplicaSet(const ReplicaSet&) = delete;
  ReplicaSet& operator=(const ReplicaSet&) = delete;

  // Starts a follower for every local world, then the poll thread that syncs the set of worlds.
  void Start();
  // Stops the poll thread and every follower. Idempotent.
  void Stop();
  // Status of every followed world, by id; status() is the default world's.
  std::map<std::string, ReplicaStatus> world_status() const;
  ReplicaStatus status() const;
  // voxcol_replica_* (the default world, unlabelled) and voxcol_replica_world_* (every world,
  // label `world`); the set must outlive the registry's server.
  void RegisterMetrics(Metrics& registry) const;

 private:
  void Poll();
  // One sync with the primary's ListWorlds answer to a request sent at `asked`.
  void Sync(client::Client& client, const v1::ListWorldsResponse& primary_worlds, absl::Time asked);
  // Creates the primary's world `world` here and starts its follower.
  absl::Status Add(client::Client& client, const v1::WorldSummary& world);
  // Makes copy `world` from the local template; FAILED_PRECONDITION if that is not at the copy's
  // template version.
  absl::Status CopyLocally(const v1::WorldSummary& world);
  // Whether to wait with copy `world` for the local template to reach its template version.
  bool DeferCopy(const v1::WorldSummary& world,
                 const std::map<std::string, const v1::WorldSummary*>& primary)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(sync_mu_);
  // Stops the follower of `id` and deletes the local world (never the default one).
  absl::Status Remove(const std::string& id);
  void StartFollower(const std::string& id);
  bool SleepUnlessStopped(absl::Duration d);

  WorldRegistry& worlds_;
  const ReplicaOptions options_;
  const uint32_t generator_version_;
  std::thread poll_thread_;
  absl::Mutex sync_mu_;  // one Sync/Stop changes the followers at a time
  std::map<std::string, int> copy_deferrals_ ABSL_GUARDED_BY(sync_mu_);
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::unique_ptr<ReplicaFollower>> followers_ ABSL_GUARDED_BY(mu_);
};

// ReplicaService.GetReplicaStatus: the followers' status; FAILED_PRECONDITION without them.
class ReplicaServiceImpl final : public v1::ReplicaService::Service {
 public:
  // `replicas` (null on a primary) must outlive the service.
  ReplicaServiceImpl(const ReplicaSet* replicas, std::string primary)
      : replicas_(replicas), primary_(std::move(primary)) {}
  grpc::Status GetReplicaStatus(grpc::ServerContext* context,
                                const v1::GetReplicaStatusRequest* request,
                                v1::GetReplicaStatusResponse* response) override;

 private:
  const ReplicaSet* replicas_;
  const std::string primary_;
};

}  // namespace voxcol::server
