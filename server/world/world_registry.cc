#include "server/world/world_registry.h"

#include <malloc.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/worldgen/cave_generator.h"
#include "server/nav/path_watch.h"
#include "server/telemetry/log.h"
#include "server/world/data_dir.h"
#include "server/world/nav_rebuilder.h"

namespace voxcol::server {

namespace fs = std::filesystem;

absl::Status ValidateWorldId(absl::string_view id, absl::string_view field) {
  if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(field, " must not be empty"));
  if (id.size() > kMaxWorldIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, " is ", id.size(), " bytes long, more than ", kMaxWorldIdBytes));
  }
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_')) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, " may hold only the characters a-z, 0-9, '-' and '_'"));
    }
  }
  return absl::OkStatus();
}

SingleWorld::SingleWorld(WorldParts parts)
    : parts_(std::make_shared<const WorldParts>(std::move(parts))) {}

absl::StatusOr<WorldHandle> SingleWorld::Resolve(absl::string_view id,
                                                 absl::string_view field) const {
  if (id.empty() || id == kDefaultWorld) return parts_;
  if (absl::Status s = ValidateWorldId(id, field); !s.ok()) return s;
  return absl::NotFoundError(absl::StrCat(field, ": no world '", id, "' on this server"));
}

namespace {

constexpr char kWorldsDir[] = "worlds";
constexpr char kMetaFile[] = "world.meta";
constexpr size_t kMinWorldBudget = size_t(1) << 20;

// A template's chunks as of one version, shared (immutable) by every copy made at that version.
struct FrozenChunks {
  uint64_t version = 0;
  absl::flat_hash_map<ChunkKey, ChunkPtr> chunks;
};

// A copy's chunk source: chunks the copy never edited come from its template's frozen chunks
// (shared, no copy), everything else from the copy's own store (then the generator).
class CopyLoader final : public ChunkLoader, public EditObserver {
 public:
  CopyLoader(const store::Store& store, std::shared_ptr<const FrozenChunks> frozen)
      : store_(store), frozen_(std::move(frozen)) {}
  absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const override {
    {
      absl::MutexLock lock(&mu_);
      if (edited_.count(key) == 0) {
        auto it = frozen_->chunks.find(key);
        if (it != frozen_->chunks.end()) return it->second;
      }
    }
    return store_.Load(key);
  }
  // Before the edit is visible (and before a failed store write could matter: the store then
  // still holds the content the frozen chunk had), the edited chunks stop being shared.
  absl::Status BeforePublishGroup(const std::vector<const CommittedEdit*>& edits) override {
    absl::MutexLock lock(&mu_);
    for (const CommittedEdit* edit : edits) {
      for (const auto& [key, chunk] : edit->chunks) edited_.insert(key);
    }
    return absl::OkStatus();
  }

 private:
  const store::Store& store_;
  const std::shared_ptr<const FrozenChunks> frozen_;
  mutable absl::Mutex mu_;
  absl::flat_hash_set<ChunkKey> edited_ ABSL_GUARDED_BY(mu_);
};

// Created worlds split the configured budget; 0 stays unlimited.
size_t WorldShare(size_t budget, size_t worlds) {
  if (budget == 0) return 0;
  return std::max(kMinWorldBudget, budget / std::max<size_t>(1, worlds));
}

void WriteMeta(const fs::path& dir, const std::string& template_id, uint64_t version) {
  std::ofstream(dir / kMetaFile) << "template=" << template_id << "\ntemplate_version=" << version
                                 << "\n";
}

void ReadMeta(const fs::path& dir, WorldParts* parts) {
  std::ifstream in(dir / kMetaFile);
  std::string line;
  while (std::getline(in, line)) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, absl::MaxSplits('=', 1));
    if (kv.first == "template") parts->template_world = kv.second;
    if (kv.first == "template_version") (void)absl::SimpleAtoi(kv.second, &parts->template_version);
  }
}

// Voxel payload of the resident chunks that are not uniform (uniform chunks are interned: one per
// voxel value for the whole process).
uint64_t PayloadBytes(const World& world) {
  uint64_t bytes = 0;
  for (const ChunkKey& key : world.ResidentKeys()) {
    const ChunkPtr chunk = world.GetChunk(key);
    if (chunk != nullptr && !chunk->IsUniform()) bytes += sizeof(Chunk);
  }
  return bytes;
}

}  // namespace

// Everything one world owns, declared so that each member outlives those that use it.
class WorldRegistry::Owner {
 public:
  ~Owner() {
    watches.reset();  // its thread reads the world and the nav
    // A world deleted while serving: the hub must outlive its streams, which finish
    // asynchronously once the log is closed (at shutdown the server has ended them already).
    for (int i = 0; remove_dir && subscriptions->stats().open > 0 && i < 5000; ++i) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    cache.reset();
    batcher.reset();
    subscriptions.reset();
    change_log.reset();
    broadphase.reset();
    world.reset();
    copy_loader.reset();
    data.store.reset();
    if (remove_dir) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      LogInfo("event=world_deleted world=%s dir=%s ok=%d", parts.id, dir.string(), !ec);
    }
  }

  // The template's chunks at `version` (shared with an earlier copy at the same version), or null
  // when that version can no longer be read consistently (the copy then shares nothing).
  std::shared_ptr<const FrozenChunks> Freeze(uint64_t version) const {
    absl::MutexLock lock(&frozen_mu);
    if (auto last = last_frozen.lock(); last != nullptr && last->version == version) return last;
    // The checkpoint holds every durable edit; published ones follow at once.
    for (int i = 0; world->version() < version && i < 2000; ++i) {
      absl::SleepFor(absl::Milliseconds(1));
    }
    auto snapshot = world->OpenSnapshotAt(version);
    if (!snapshot.ok()) return nullptr;
    auto frozen = std::make_shared<FrozenChunks>();
    frozen->version = version;
    for (const ChunkKey& key : world->ResidentKeys()) {
      absl::StatusOr<ChunkPtr> chunk = world->LoadChunk(key);
      if (chunk.ok() && *chunk != nullptr) frozen->chunks.emplace(key, *std::move(chunk));
    }
    const bool expired = (*snapshot)->expired();
    snapshot->reset();
    if (expired) return nullptr;
    last_frozen = frozen;
    return frozen;
  }

  fs::path dir;
  bool remove_dir = false;
  DataDir data;
  std::unique_ptr<CopyLoader> copy_loader;
  std::unique_ptr<World> world;
  std::unique_ptr<NavWorld> nav;          // an edit observer of `world`, destroyed before it
  std::unique_ptr<PathWatchHub> watches;  // observes after `nav`; null with navigation off
  std::unique_ptr<WorldBodies> bodies;    // session state: starts empty at every open
  std::unique_ptr<BroadphaseIndex> broadphase;
  std::unique_ptr<ChangeLog> change_log;
  std::unique_ptr<SubscriptionHub> subscriptions;
  std::unique_ptr<EditBatcher> batcher;
  std::unique_ptr<ChunkCollisionCache> cache;
  WorldParts parts;
  mutable absl::Mutex frozen_mu;
  mutable std::weak_ptr<const FrozenChunks> last_frozen ABSL_GUARDED_BY(frozen_mu);
};

WorldRegistry::WorldRegistry(WorldRegistryOptions options) : options_(std::move(options)) {}

WorldRegistry::~WorldRegistry() = default;

std::string WorldRegistry::WorldsDir() const {
  return (fs::path(options_.data_dir) / kWorldsDir).string();
}

ChangeLog& WorldRegistry::default_change_log() const {
  absl::MutexLock lock(&mu_);
  return *worlds_.at(kDefaultWorld)->change_log;
}

// Sets budgets and observers the way the single-world server always did. A fresh copy shares
// the template's frozen chunks and starts its own change feed and idempotency keys (the
// template's stay with the template); a reopened world restores both from its store.
absl::StatusOr<std::shared_ptr<WorldRegistry::Owner>> WorldRegistry::OpenWorld(
    const std::string& id, const std::string& dir, bool is_default, const WorldConfig& settings,
    const Owner* source) const {
  auto owner = std::make_shared<Owner>();
  owner->dir = dir;
  absl::StatusOr<DataDir> data =
      OpenDataDir(dir, settings, CaveGenerator::kVersion, options_.store);
  if (!data.ok()) return data.status();
  owner->data = *std::move(data);
  store::Store& store = *owner->data.store;
  const WorldConfig& config = owner->data.world.config;
  const uint64_t version = owner->data.world.version;
  owner->world = std::make_unique<World>(
      config, std::make_unique<CaveGenerator>(config.seed, WorldVoxelBounds(config), CaveParams{}));
  World& world = *owner->world;
  std::shared_ptr<const FrozenChunks> frozen = source ? source->Freeze(version) : nullptr;
  if (frozen != nullptr) {
    owner->copy_loader = std::make_unique<CopyLoader>(store, frozen);
    world.SetLoader(owner->copy_loader.get());
  } else {
    world.SetLoader(&store);
  }
  world.AddObserver(&store);
  if (owner->copy_loader) world.AddObserver(owner->copy_loader.get());
  world.RestoreVersion(version);
  auto share = [&](size_t budget) {
    return is_default ? budget : WorldShare(budget, options_.max_worlds);
  };
  world.SetResidentBudget(share(options_.resident_chunk_bytes));
  world.SetHistoryBudget(options_.snapshot_history_bytes);
  world.SetHistoryRetention(options_.history);
  owner->broadphase = std::make_unique<BroadphaseIndex>(world);
  world.AddObserver(owner->broadphase.get());
  if (absl::Status s = OpenNav(id, owner.get()); !s.ok()) return s;
  std::vector<ChangeEntryPtr> feed = store.TakeFeedAtOpen();
  if (source != nullptr) feed.clear();
  owner->change_log = std::make_unique<ChangeLog>(version, options_.change_log, std::move(feed));
  LogInfo(
      "event=change_feed_restored world=%s oldest_resumable_version=%d newest_version=%d bytes=%d",
      id, owner->change_log->oldest_resumable_version(), owner->change_log->newest_version(),
      owner->change_log->retained_bytes());
  world.AddObserver(owner->change_log.get());
  owner->subscriptions = std::make_unique<SubscriptionHub>(*owner->change_log, options_.subscribe);
  owner->batcher = std::make_unique<EditBatcher>(world, options_.edit, options_.idempotency_keys);
  if (!options_.edit_refusal.ok()) owner->batcher->RefuseEdits(options_.edit_refusal);
  if (source == nullptr) {
    for (const store::StoredAck& ack : store.acks_at_open()) {
      owner->batcher->Restore(ack.key, {ack.fingerprint, {ack.version, ack.changed_chunks, false}});
    }
    LogInfo("event=idempotency_keys_restored world=%s count=%d", id, store.acks_at_open().size());
  }
  owner->cache =
      std::make_unique<ChunkCollisionCache>(world, share(options_.chunk_collision_cache_bytes));
  WorldParts& parts = owner->parts;
  parts = MakeWorldParts(&world, owner->broadphase.get(), owner->cache.get(), owner->batcher.get(),
                         owner->subscriptions.get());
  parts.id = id;
  parts.store = &store;
  parts.sea_level = CaveParams{}.sea_level;
  if (owner->nav) parts.nav = {owner->nav.get(), &options_.nav.profiles, owner->watches.get()};
  owner->bodies = std::make_unique<WorldBodies>(options_.bodies);
  parts.bodies = owner->bodies.get();
  if (source != nullptr) {
    parts.template_world = source->parts.id;
    parts.template_version = version;
  } else {
    ReadMeta(dir, &parts);
  }
  LogInfo(
      "event=world_open world=%s data_dir=%s created=%d seed=%d size=%d,%d,%d voxel_size=%g "
      "version=%d template=%s shared_chunks=%d",
      id, dir, owner->data.world.created, config.seed, config.size_voxels.x, config.size_voxels.y,
      config.size_voxels.z, config.voxel_size, version, parts.template_world,
      frozen ? frozen->chunks.size() : 0);
  return owner;
}

// The world's NavWorld (it observes the world's edits from here on; no edit is served yet).
absl::Status WorldRegistry::OpenNav(const std::string& id, Owner* owner) const {
  if (!options_.nav.enabled) return absl::OkStatus();
  if (absl::Status s = ValidateNavTileConfig(options_.nav.settings.tiles, owner->world->config());
      !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("world ", id, ": navigation: ", s.message()));
  }
  owner->nav = std::make_unique<NavWorld>(*owner->world, options_.nav.settings);
  // After the nav: it hears an edit once the nav has marked the edit's tiles.
  owner->watches = std::make_unique<PathWatchHub>(*owner->world, *owner->nav);
  owner->world->AddObserver(owner->watches.get());
  return absl::OkStatus();
}

void WorldRegistry::StartNavRebuilder() {
  if (!options_.nav.enabled || options_.nav.rebuild_interval <= absl::ZeroDuration()) return;
  nav_rebuilder_ = std::make_unique<NavRebuilder>(
      [this] {
        std::vector<NavRebuilder::NavHandle> navs;
        absl::ReaderMutexLock lock(&mu_);
        for (const auto& [id, owner] : worlds_) {
          if (owner->nav) navs.emplace_back(owner, owner->nav.get());
        }
        return navs;
      },
      options_.nav.rebuild_interval);
}

absl::Status WorldRegistry::Open() {
  absl::StatusOr<std::shared_ptr<Owner>> main =
      OpenWorld(kDefaultWorld, options_.data_dir, true, options_.new_world, nullptr);
  if (!main.ok()) return main.status();
  default_ = &(*main)->parts;
  absl::MutexLock lock(&mu_);
  worlds_.emplace(kDefaultWorld, *std::move(main));
  std::error_code ec;
  StartNavRebuilder();  // its first pass waits for mu_: after every world below is open
  if (!fs::is_directory(WorldsDir(), ec)) return absl::OkStatus();
  for (const fs::directory_entry& entry : fs::directory_iterator(WorldsDir(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.empty() && name[0] == '.') {  // an unfinished create or delete
      fs::remove_all(entry.path(), ec);
      continue;
    }
    if (!ValidateWorldId(name, "world").ok() || name == kDefaultWorld) continue;
    absl::StatusOr<std::shared_ptr<Owner>> world =
        OpenWorld(name, entry.path().string(), false, options_.new_world, nullptr);
    if (!world.ok()) {
      return absl::Status(world.status().code(),
                          absl::StrCat("world ", name, ": ", world.status().message()));
    }
    worlds_.emplace(name, *std::move(world));
  }
  return absl::OkStatus();
}

absl::StatusOr<WorldHandle> WorldRegistry::Resolve(absl::string_view id,
                                                   absl::string_view field) const {
  if (id.empty()) id = kDefaultWorld;
  {
    // Only valid ids are ever added, so a found id needs no check (the per-request path).
    absl::ReaderMutexLock lock(&mu_);
    auto it = worlds_.find(id);
    if (it != worlds_.end()) return WorldHandle(it->second, &it->second->parts);
  }
  if (absl::Status s = ValidateWorldId(id, field); !s.ok()) return s;
  return absl::NotFoundError(absl::StrCat(field, ": no world '", id, "' on this server"));
}

absl::Status WorldRegistry::CheckpointInto(const Owner& source, const std::string& dir) const {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  return source.data.store->CreateCheckpoint(DataDirStorePath(dir));
}

absl::StatusOr<WorldRegistry::Summary> WorldRegistry::Create(const std::string& id,
                                                             const WorldConfig& settings,
                                                             const std::string& template_id) {
  if (absl::Status s = ValidateWorldId(id, "world"); !s.ok()) return s;
  absl::MutexLock create_lock(&create_mu_);
  std::shared_ptr<Owner> source;
  {
    absl::MutexLock lock(&mu_);
    if (worlds_.count(id) != 0) {
      return absl::AlreadyExistsError(absl::StrCat("world: '", id, "' already exists"));
    }
    if (worlds_.size() > options_.max_worlds) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "world: this server holds its most worlds (--max_worlds=", options_.max_worlds, ")"));
    }
    if (!template_id.empty()) {
      if (absl::Status s = ValidateWorldId(template_id, "template_world"); !s.ok()) return s;
      auto it = worlds_.find(template_id);
      if (it == worlds_.end()) {
        return absl::NotFoundError(
            absl::StrCat("template_world: no world '", template_id, "' on this server"));
      }
      source = it->second;
    }
  }
  const fs::path dir = fs::path(WorldsDir()) / id;
  const fs::path tmp = fs::path(WorldsDir()) / ("." + id + ".new");
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return absl::UnavailableError(absl::StrCat("world: '", id, "' is still being deleted"));
  }
  fs::remove_all(tmp, ec);
  absl::Status status = absl::OkStatus();
  if (source != nullptr) {
    status = CheckpointInto(*source, tmp.string());
    if (status.ok()) WriteMeta(tmp, template_id, 0);
  } else {
    fs::create_directories(tmp, ec);
  }
  if (status.ok()) fs::rename(tmp, dir, ec);
  if (!status.ok() || ec) {
    fs::remove_all(tmp, ec);
    return status.ok() ? absl::InternalError("cannot create the world's directory") : status;
  }
  absl::StatusOr<std::shared_ptr<Owner>> world =
      OpenWorld(id, dir.string(), false, settings, source.get());
  if (!world.ok()) {
    fs::remove_all(dir, ec);
    return world.status();
  }
  if (source != nullptr) WriteMeta(dir, template_id, (*world)->parts.template_version);
  absl::MutexLock lock(&mu_);
  worlds_.emplace(id, *world);
  Summary summary;
  summary.id = id;
  summary.version = (*world)->world->version();
  summary.template_world = (*world)->parts.template_world;
  summary.template_version = (*world)->parts.template_version;
  return summary;
}

absl::Status WorldRegistry::Delete(const std::string& id) {
  if (absl::Status s = ValidateWorldId(id, "world"); !s.ok()) return s;
  if (id == kDefaultWorld) {
    return absl::FailedPreconditionError("world: the default world cannot be deleted");
  }
  absl::MutexLock create_lock(&create_mu_);
  std::shared_ptr<Owner> owner;
  {
    absl::MutexLock lock(&mu_);
    auto it = worlds_.find(id);
    if (it == worlds_.end()) {
      return absl::NotFoundError(absl::StrCat("world: no world '", id, "' on this server"));
    }
    owner = std::move(it->second);
    worlds_.erase(it);
  }
  owner->remove_dir = true;
  owner->change_log->Close();  // Subscribe streams end now
  // Calls still running on the world keep it alive; wait a while for them, then leave the last
  // one to free it.
  for (int i = 0; owner.use_count() > 1 && i < 10000; ++i) absl::SleepFor(absl::Milliseconds(1));
  owner.reset();
  malloc_trim(0);  // hand the freed chunk memory back to the system
  return absl::OkStatus();
}

std::vector<WorldRegistry::Summary> WorldRegistry::List(bool payload) const {
  std::vector<Summary> out;
  absl::ReaderMutexLock lock(&mu_);
  for (const auto& [id, owner] : worlds_) {
    Summary s;
    s.id = id;
    s.version = owner->world->version();
    s.resident_chunks = owner->world->resident_chunks();
    if (payload) s.resident_bytes = PayloadBytes(*owner->world);
    s.template_world = owner->parts.template_world;
    s.template_version = owner->parts.template_version;
    const ChunkCollisionCacheStats cache = owner->cache->stats();
    s.cache_bytes = cache.bytes;
    s.cache_evictions = cache.evictions;
    if (owner->nav) s.nav = owner->nav->stats();
    s.bodies = owner->bodies->stats();
    if (const store::Store* store = owner->parts.store) {
      s.store_write_state = uint64_t(store->write_state());
      s.store_write_errors = store->write_errors();
    }
    out.push_back(std::move(s));
  }
  return out;
}

void RegisterWorldMetrics(const WorldRegistry& worlds, Metrics& registry) {
  auto family = [&](const char* name, const char* help, const char* type,
                    uint64_t (*field)(const WorldRegistry::Summary&)) {
    registry.AddFamilyCallback(name, help, type, [&worlds, field] {
      Metrics::Samples samples;
      for (const WorldRegistry::Summary& s : worlds.List()) {
        samples.emplace_back(absl::StrCat("world=\"", s.id, "\""), double(field(s)));
      }
      return samples;
    });
  };
  family("voxcol_worlds_version", "Committed edit batches, per world", "gauge",
         [](const WorldRegistry::Summary& s) { return s.version; });
  family("voxcol_worlds_resident_chunks", "Chunks held in memory, per world (shared ones in each)",
         "gauge", [](const WorldRegistry::Summary& s) { return s.resident_chunks; });
  family("voxcol_worlds_collision_cache_bytes", "Bytes of cached meshes and trees, per world",
         "gauge", [](const WorldRegistry::Summary& s) { return s.cache_bytes; });
  family("voxcol_worlds_collision_cache_evictions_total",
         "Collision cache entries evicted over the world's budget", "counter",
         [](const WorldRegistry::Summary& s) { return s.cache_evictions; });
  family("voxcol_worlds_store_write_state",
         "Whether the world's store takes edits: 0 yes, 1 its disk is full (edits refused until "
         "space returns), 2 a write or fsync failed (edits refused until a restart)",
         "gauge", [](const WorldRegistry::Summary& s) { return s.store_write_state; });
  family("voxcol_worlds_store_write_errors_total",
         "Edit writes the world's store failed (each refuses its whole group of edits)", "counter",
         [](const WorldRegistry::Summary& s) { return s.store_write_errors; });
  family("voxcol_worlds_nav_tile_builds_total",
         "Navmesh tiles built or rebuilt (FindPath and the background rebuild), per world",
         "counter", [](const WorldRegistry::Summary& s) { return s.nav.tiles_built; });
  registry.AddFamilyCallback("voxcol_worlds_nav_tile_build_seconds_total",
                             "Time spent building navmesh tiles, per world", "counter", [&worlds] {
                               Metrics::Samples samples;
                               for (const WorldRegistry::Summary& s : worlds.List()) {
                                 samples.emplace_back(absl::StrCat("world=\"", s.id, "\""),
                                                      1e-6 * s.nav.tile_build_us);
                               }
                               return samples;
                             });
  family("voxcol_worlds_nav_tiles", "Navmesh tiles built and held, per world (over all profiles)",
         "gauge", [](const WorldRegistry::Summary& s) { return uint64_t(s.nav.tiles_resident); });
  family("voxcol_worlds_nav_stale_tiles",
         "Built navmesh tiles an edit made stale and not yet rebuilt, per world", "gauge",
         [](const WorldRegistry::Summary& s) { return uint64_t(s.nav.stale_tiles); });
  family("voxcol_worlds_nav_tile_bytes", "Navmesh tile data held, per world (over all profiles)",
         "gauge", [](const WorldRegistry::Summary& s) { return s.nav.tile_bytes; });
  family("voxcol_worlds_nav_tiles_evicted_total",
         "Navmesh tiles dropped for --nav_max_tile_mb (built again when a path needs them)",
         "counter", [](const WorldRegistry::Summary& s) { return s.nav.tiles_evicted; });
  family("voxcol_bodies", "Live bodies (session state, UpdateBodies), per world", "gauge",
         [](const WorldRegistry::Summary& s) { return uint64_t(s.bodies.bodies); });
  family("voxcol_body_history_bytes",
         "Bytes held for the body pose history and parts (bounded by --max_body_history_bytes), "
         "per world",
         "gauge", [](const WorldRegistry::Summary& s) { return uint64_t(s.bodies.history_bytes); });
}

void WorldRegistry::CloseFeeds() {
  absl::MutexLock lock(&mu_);
  for (const auto& [id, owner] : worlds_) owner->change_log->Close();
}

}  // namespace voxcol::server
