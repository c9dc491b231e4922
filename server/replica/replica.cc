#include "server/replica/replica.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/voxel/voxel_io.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/telemetry/log.h"

namespace voxcol::server {

absl::Status ReplicaEditRefusal(const std::string& primary) {
  return absl::FailedPreconditionError(
      absl::StrCat("this server is a read replica: send edits to its primary at ", primary));
}

absl::Status ReplicaWorldRefusal(const std::string& primary) {
  return absl::FailedPreconditionError(absl::StrCat(
      "this server is a read replica: it follows its primary's worlds; create and delete worlds "
      "on its primary at ",
      primary));
}

absl::StatusOr<WorldConfig> PrimaryWorldConfig(const v1::GetWorldInfoResponse& info,
                                               uint32_t generator_version,
                                               const std::string& primary) {
  if (info.generator_version() != generator_version) {
    return absl::FailedPreconditionError(
        absl::StrCat("primary ", primary, " runs generator version ", info.generator_version(),
                     ", this server ", generator_version));
  }
  const IntBox bounds = FromProto(info.voxel_bounds());
  return WorldConfig{bounds.max - bounds.min, info.voxel_size(), info.seed()};
}

absl::StatusOr<WorldConfig> FetchPrimaryWorld(const ReplicaOptions& options,
                                              uint32_t generator_version, absl::Time give_up) {
  client::Client client(options.primary, std::chrono::seconds(5), options.security);
  absl::Duration backoff = options.min_backoff;
  while (true) {
    v1::GetWorldInfoResponse info;
    grpc::Status status = client.GetWorldInfo(&info);
    if (status.ok()) return PrimaryWorldConfig(info, generator_version, options.primary);
    LogInfo("event=replica_primary_unreachable primary=%s message=%s", options.primary,
            status.error_message());
    if (absl::Now() + backoff > give_up) {
      return absl::UnavailableError(
          absl::StrCat("primary ", options.primary, ": ", status.error_message()));
    }
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, options.max_backoff);
  }
}

ReplicaFollower::ReplicaFollower(WorldHandle world, ReplicaOptions options,
                                 uint32_t generator_version)
    : handle_(std::move(world)),
      world_(*handle_->world),
      options_(std::move(options)),
      generator_version_(generator_version) {}

ReplicaFollower::~ReplicaFollower() { Stop(); }

void ReplicaFollower::Start() {
  follow_thread_ = std::thread([this] { Run(); });
}

void ReplicaFollower::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (stream_context_ != nullptr) stream_context_->TryCancel();
  }
  if (follow_thread_.joinable()) follow_thread_.join();
}

bool ReplicaFollower::SleepUnlessStopped(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping), d);
}

void ReplicaFollower::NotePrimaryVersion(uint64_t version, absl::Time asked) {
  {
    absl::MutexLock lock(&mu_);
    last_contact_ = std::max(last_contact_, asked);
  }
  NoteKnown(version);
}

void ReplicaFollower::NoteKnown(uint64_t version) {
  absl::MutexLock lock(&mu_);
  if (version <= primary_version_) return;
  primary_version_ = version;
  if (version > world_.version()) unapplied_.emplace_back(version, absl::Now());
}

void ReplicaFollower::NoteApplied(uint64_t version) {
  absl::MutexLock lock(&mu_);
  while (!unapplied_.empty() && unapplied_.front().first <= version) unapplied_.pop_front();
}

ReplicaStatus ReplicaFollower::status() const {
  absl::MutexLock lock(&mu_);
  ReplicaStatus s;
  s.applied_version = world_.version();
  s.primary_version = std::max(primary_version_, s.applied_version);
  s.lag_versions = s.primary_version - s.applied_version;
  const absl::Time now = absl::Now();
  s.lag_seconds = unapplied_.empty() ? 0.0 : absl::ToDoubleSeconds(now - unapplied_.front().second);
  // The primary has not been asked its version successfully for a while (a partition, a link
  // too slow for the poll's answers, or it is down): what it did since is unknown here, so the
  // replica may be that far behind.
  const absl::Duration silent = now - last_contact_;
  if (silent > options_.contact_timeout) {
    s.lag_seconds = std::max(s.lag_seconds, absl::ToDoubleSeconds(silent));
  }
  s.connected = connected_;
  s.reconnects = reconnects_;
  s.reseeds = reseeds_;
  s.applied_batches = applied_batches_.load(std::memory_order_relaxed);
  s.diverged = diverged_;
  return s;
}

absl::Status ReplicaFollower::Apply(const v1::SubscribeResponse& response) {
  const uint64_t target = response.version();
  NoteKnown(target);
  // Batches that changed nothing are not in the feed; each still had its own version.
  while (world_.version() + 1 < target) {
    // An explicit version: an edit that changes nothing would otherwise create none.
    const uint64_t next = world_.version() + 1;
    absl::StatusOr<EditResult> filler = world_.Edit([next](ChunkEdit& edit) {
      edit.SetVersion(next);
      return absl::OkStatus();
    });
    if (!filler.ok()) return filler.status();
  }
  if (world_.version() >= target) {  // already applied (a resent entry)
    NoteApplied(world_.version());
    return absl::OkStatus();
  }
  EditLimits limits;
  limits.max_region_voxels = std::numeric_limits<int64_t>::max();
  absl::StatusOr<EditResult> result = world_.Edit([&](ChunkEdit& edit) {
    // Explicitly at the primary's version: a batch that changed nothing (a keyed one has a
    // version of its own on the primary) would otherwise create no version here.
    edit.SetVersion(target);
    for (const v1::ChunkChange& change : response.changes()) {
      if (absl::Status s = WriteVoxels(edit, FromProto(change.voxels()), limits); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  });
  if (!result.ok()) return result.status();
  if (result->version != target) {
    return absl::InternalError(absl::StrCat("replica applied feed version ", target,
                                            " as local version ", result->version));
  }
  NoteApplied(target);
  applied_batches_.fetch_add(1, std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::Status ReplicaFollower::CheckPrimaryWorld(client::Client& client) {
  v1::GetWorldInfoResponse info;
  const absl::Time asked = absl::Now();
  if (grpc::Status s = client.GetWorldInfo(&info); !s.ok()) return FromGrpcStatus(s);
  const absl::StatusOr<WorldConfig> theirs =
      PrimaryWorldConfig(info, generator_version_, options_.primary);
  const WorldConfig& mine = world_.config();
  if (!theirs.ok() || !(theirs->size_voxels == mine.size_voxels) ||
      theirs->voxel_size != mine.voxel_size || theirs->seed != mine.seed) {
    return absl::FailedPreconditionError(
        absl::StrCat("primary ", options_.primary, " serves another world '", handle_->id,
                     "' (size, voxel size, seed or generator) than this replica's"));
  }
  NotePrimaryVersion(info.version(), asked);
  return absl::OkStatus();
}

absl::Status ReplicaFollower::FollowOnce(client::Client& client) {
  if (absl::Status s = CheckPrimaryWorld(client); !s.ok()) return s;
  grpc::ClientContext context;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return absl::CancelledError("stopping");
    stream_context_ = &context;
  }
  v1::SubscribeRequest request;
  request.set_from_version(world_.version());
  request.set_include_voxels(true);
  request.set_include_empty(true);
  auto reader = client.Subscribe(&context, request);
  v1::SubscribeResponse response;
  absl::Status applied;
  bool first = true;
  while (reader->Read(&response)) {
    if (first) {
      absl::MutexLock lock(&mu_);
      connected_ = true;
      first = false;
    }
    applied = Apply(response);
    if (!applied.ok()) {
      context.TryCancel();
      break;
    }
  }
  grpc::Status finished = reader->Finish();
  absl::MutexLock lock(&mu_);
  stream_context_ = nullptr;
  connected_ = false;
  return applied.ok() ? FromGrpcStatus(finished) : applied;
}

void ReplicaFollower::Run() {
  client::Client client(options_.primary, std::chrono::seconds(10), options_.security);
  client.SetWorld(handle_->id);  // every Subscribe, ExportRegion and GetWorldInfo names it
  absl::Duration backoff = options_.min_backoff;
  while (true) {
    const uint64_t before = world_.version();
    absl::Status ended = FollowOnce(client);
    if (ended.code() == absl::StatusCode::kOutOfRange) {
      LogInfo("event=replica_reseed world=%s version=%d message=%s", handle_->id, world_.version(),
              ended.message());
      ended = ReseedFromPrimary(client);
      if (ended.ok()) {
        absl::MutexLock lock(&mu_);
        ++reseeds_;
      }
    }
    if (world_.version() > before) backoff = options_.min_backoff;  // made progress
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      ++reconnects_;
      // Another world under this id on the primary (settings differ, or it is behind this copy).
      if (ended.code() == absl::StatusCode::kFailedPrecondition ||
          ended.code() == absl::StatusCode::kNotFound) {
        diverged_ = true;
      }
    }
    LogInfo(
        "event=replica_feed_ended primary=%s world=%s version=%d code=%d message=%s backoff_ms=%d",
        options_.primary, handle_->id, world_.version(), int(ended.code()), ended.message(),
        absl::ToInt64Milliseconds(backoff));
    if (!SleepUnlessStopped(backoff)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace voxcol::server
