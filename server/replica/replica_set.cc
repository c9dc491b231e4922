// ReplicaSet (server/replica/replica.h): one follower per world of the primary, and the poll that
// keeps the replica's set of worlds equal to the primary's.
#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/replica/replica.h"
#include "server/telemetry/log.h"

namespace voxcol::server {

ReplicaSet::ReplicaSet(WorldRegistry& worlds, ReplicaOptions options, uint32_t generator_version)
    : worlds_(worlds), options_(std::move(options)), generator_version_(generator_version) {}

ReplicaSet::~ReplicaSet() { Stop(); }

void ReplicaSet::Start() {
  {
    absl::MutexLock sync(&sync_mu_);
    for (const WorldRegistry::Summary& s : worlds_.List()) StartFollower(s.id);
  }
  poll_thread_ = std::thread([this] { Poll(); });
}

void ReplicaSet::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (poll_thread_.joinable()) poll_thread_.join();
  absl::MutexLock sync(&sync_mu_);
  std::map<std::string, std::unique_ptr<ReplicaFollower>> followers;
  {
    absl::MutexLock lock(&mu_);
    followers.swap(followers_);
  }
  for (auto& [id, follower] : followers) follower->Stop();
}

bool ReplicaSet::SleepUnlessStopped(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping), d);
}

void ReplicaSet::StartFollower(const std::string& id) {
  absl::StatusOr<WorldHandle> world = worlds_.Resolve(id, "world");
  if (!world.ok()) return;  // deleted meanwhile
  auto follower =
      std::make_unique<ReplicaFollower>(*std::move(world), options_, generator_version_);
  follower->Start();
  LogInfo("event=replica_follow world=%s version=%d", id, follower->status().applied_version);
  absl::MutexLock lock(&mu_);
  followers_[id] = std::move(follower);
}

absl::Status ReplicaSet::CopyLocally(const v1::WorldSummary& world) {
  absl::StatusOr<WorldHandle> local = worlds_.Resolve(world.template_world(), "template_world");
  if (!local.ok()) return local.status();
  if ((*local)->world->version() != world.template_version()) {
    return absl::FailedPreconditionError(absl::StrCat("local template at version ",
                                                      (*local)->world->version(), ", copy made at ",
                                                      world.template_version()));
  }
  const WorldConfig config = (*local)->world->config();
  local->reset();
  absl::StatusOr<WorldRegistry::Summary> created =
      worlds_.Create(world.world(), config, world.template_world());
  if (!created.ok()) return created.status();
  if (created->version != world.template_version()) {  // the template moved on meanwhile
    (void)worlds_.Delete(world.world());
    return absl::FailedPreconditionError("the local template moved on during the copy");
  }
  LogInfo("event=replica_world_copied world=%s template=%s version=%d", world.world(),
          world.template_world(), created->version);
  return absl::OkStatus();
}

bool ReplicaSet::DeferCopy(const v1::WorldSummary& world,
                           const std::map<std::string, const v1::WorldSummary*>& primary) {
  constexpr int kMaxDeferrals = 20;
  auto source = primary.find(world.template_world());
  // The primary's template moved on since the copy: no local template will be at that version.
  if (source == primary.end() || source->second->version() != world.template_version()) {
    return false;
  }
  absl::StatusOr<WorldHandle> local = worlds_.Resolve(world.template_world(), "template_world");
  if (!local.ok() || (*local)->world->version() >= world.template_version()) return false;
  return ++copy_deferrals_[world.world()] <= kMaxDeferrals;
}

absl::Status ReplicaSet::Add(client::Client& client, const v1::WorldSummary& world) {
  const std::string& id = world.world();
  if (!world.template_world().empty()) {
    absl::Status copied = CopyLocally(world);
    if (copied.ok()) {
      StartFollower(id);
      return copied;
    }
    LogInfo("event=replica_copy_from_primary world=%s reason=%s", id, copied.message());
  }
  v1::GetWorldInfoRequest request;
  request.set_world(id);
  v1::GetWorldInfoResponse info;
  if (grpc::Status got = client.GetWorldInfo(request, &info); !got.ok()) {
    return absl::UnavailableError(absl::StrCat("GetWorldInfo: ", got.error_message()));
  }
  const absl::StatusOr<WorldConfig> config =
      PrimaryWorldConfig(info, generator_version_, options_.primary);
  if (!config.ok()) return config.status();
  absl::StatusOr<WorldRegistry::Summary> created = worlds_.Create(id, *config, "");
  if (!created.ok() && created.status().code() != absl::StatusCode::kAlreadyExists) {
    return created.status();
  }
  LogInfo("event=replica_world_created world=%s primary_version=%d", id, info.version());
  StartFollower(id);
  return absl::OkStatus();
}

absl::Status ReplicaSet::Remove(const std::string& id) {
  std::unique_ptr<ReplicaFollower> follower;
  {
    absl::MutexLock lock(&mu_);
    auto it = followers_.find(id);
    if (it != followers_.end()) {
      follower = std::move(it->second);
      followers_.erase(it);
    }
  }
  if (follower != nullptr) follower->Stop();
  follower.reset();  // releases its handle on the world
  absl::Status deleted = worlds_.Delete(id);
  if (deleted.code() == absl::StatusCode::kNotFound) deleted = absl::OkStatus();
  LogInfo("event=replica_world_deleted world=%s ok=%d", id, deleted.ok());
  return deleted;
}

void ReplicaSet::Sync(client::Client& client, const v1::ListWorldsResponse& primary_worlds,
                      absl::Time asked) {
  absl::MutexLock sync(&sync_mu_);
  std::map<std::string, const v1::WorldSummary*> primary;
  for (const v1::WorldSummary& w : primary_worlds.worlds()) primary[w.world()] = &w;
  const std::map<std::string, ReplicaStatus> mine = world_status();
  for (const WorldRegistry::Summary& s : worlds_.List()) {
    if (s.id == kDefaultWorld) continue;
    auto status = mine.find(s.id);
    const bool diverged = status != mine.end() && status->second.diverged;
    if (primary.count(s.id) != 0 && !diverged) continue;
    if (diverged) LogInfo("event=replica_world_replaced world=%s", s.id);
    (void)Remove(s.id);
  }
  // Generated worlds first, so that a copy finds its template here.
  for (const bool copies : {false, true}) {
    for (const auto& [id, world] : primary) {
      if (world->template_world().empty() == copies) continue;
      {
        absl::MutexLock lock(&mu_);
        if (stopping_) return;
        if (auto it = followers_.find(id); it != followers_.end()) {
          it->second->NotePrimaryVersion(world->version(), asked);
          continue;
        }
      }
      if (copies && DeferCopy(*world, primary)) continue;
      copy_deferrals_.erase(id);
      if (absl::Status added = Add(client, *world); !added.ok()) {
        LogInfo("event=replica_world_create_failed world=%s code=%d message=%s", id,
                int(added.code()), added.message());
      }
    }
  }
}

void ReplicaSet::Poll() {
  client::Client client(options_.primary, std::chrono::seconds(5), options_.security);
  v1::ListWorldsRequest request;
  request.set_skip_resident_bytes(true);  // no walk over the primary's resident chunks
  do {
    v1::ListWorldsResponse primary_worlds;
    const absl::Time asked = absl::Now();
    if (client.ListWorlds(request, &primary_worlds).ok()) Sync(client, primary_worlds, asked);
  } while (SleepUnlessStopped(options_.poll_interval));
}

std::map<std::string, ReplicaStatus> ReplicaSet::world_status() const {
  std::map<std::string, ReplicaStatus> out;
  absl::MutexLock lock(&mu_);
  for (const auto& [id, follower] : followers_) out[id] = follower->status();
  return out;
}

ReplicaStatus ReplicaSet::status() const {
  absl::MutexLock lock(&mu_);
  auto it = followers_.find(kDefaultWorld);
  return it == followers_.end() ? ReplicaStatus{} : it->second->status();
}

void ReplicaSet::RegisterMetrics(Metrics& registry) const {
  auto gauge = [this, &registry](const char* name, const char* help, auto field) {
    registry.AddGauge(name, help, [this, field] { return double(status().*field); });
  };
  gauge("voxcol_replica_applied_version", "Primary version this replica has applied",
        &ReplicaStatus::applied_version);
  gauge("voxcol_replica_primary_version", "Newest primary version this replica knows of",
        &ReplicaStatus::primary_version);
  gauge("voxcol_replica_lag_versions", "Known primary versions not yet applied",
        &ReplicaStatus::lag_versions);
  gauge("voxcol_replica_lag_seconds",
        "Age of the oldest known primary version not yet applied (0 when caught up); at least the "
        "age of the newest poll the primary answered once that is over 2 s",
        &ReplicaStatus::lag_seconds);
  gauge("voxcol_replica_connected", "1 while the change feed stream is open",
        &ReplicaStatus::connected);
  registry.AddCounterCallback("voxcol_replica_reconnects_total", "Feed streams reopened",
                              [this] { return double(status().reconnects); });
  registry.AddCounterCallback("voxcol_replica_reseeds_total",
                              "Full copies after falling out of the primary's feed window",
                              [this] { return double(status().reseeds); });
  registry.AddCounterCallback("voxcol_replica_applied_batches_total", "Feed batches applied",
                              [this] { return double(status().applied_batches); });
  // The same per world, labelled `world`.
  auto family = [this, &registry](const char* name, const char* help, const char* type,
                                  auto field) {
    registry.AddFamilyCallback(name, help, type, [this, field] {
      Metrics::Samples samples;
      for (const auto& [id, s] : world_status()) {
        samples.emplace_back(absl::StrCat("world=\"", id, "\""), double(s.*field));
      }
      return samples;
    });
  };
  family("voxcol_replica_world_applied_version", "Primary version applied, per world", "gauge",
         &ReplicaStatus::applied_version);
  family("voxcol_replica_world_primary_version", "Newest primary version known, per world", "gauge",
         &ReplicaStatus::primary_version);
  family("voxcol_replica_world_lag_versions", "Known primary versions not yet applied, per world",
         "gauge", &ReplicaStatus::lag_versions);
  family("voxcol_replica_world_lag_seconds",
         "Age of the oldest known unapplied primary version, per world", "gauge",
         &ReplicaStatus::lag_seconds);
  family("voxcol_replica_world_connected", "1 while the world's feed stream is open", "gauge",
         &ReplicaStatus::connected);
  family("voxcol_replica_world_reseeds_total", "Full copies of the world (re-seeds and seeds)",
         "counter", &ReplicaStatus::reseeds);
}

namespace {

template <typename Out>
void FillStatus(const ReplicaStatus& s, Out* out) {
  out->set_applied_version(s.applied_version);
  out->set_primary_version(s.primary_version);
  out->set_lag_versions(s.lag_versions);
  out->set_lag_seconds(s.lag_seconds);
  out->set_connected(s.connected);
  out->set_reconnects(s.reconnects);
  out->set_reseeds(s.reseeds);
}

}  // namespace

grpc::Status ReplicaServiceImpl::GetReplicaStatus(grpc::ServerContext*,
                                                  const v1::GetReplicaStatusRequest*,
                                                  v1::GetReplicaStatusResponse* response) {
  if (replicas_ == nullptr) {
    return ToGrpcStatus(
        absl::FailedPreconditionError("this server is a primary (started without --replica_of)"));
  }
  response->set_primary(primary_);
  FillStatus(replicas_->status(), response);
  for (const auto& [id, s] : replicas_->world_status()) {
    v1::WorldReplicaStatus* world = response->add_worlds();
    world->set_world(id);
    FillStatus(s, world);
  }
  return grpc::Status::OK;
}

}  // namespace voxcol::server
