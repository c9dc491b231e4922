// Many worlds per server (issue 22): one context per world (World, broadphase, collision cache,
// edit batcher, store, change feed, Subscribe hub) and the lookup every service uses.
//
// Layout: the default world keeps today's data directory layout (<data_dir>/store); every other
// world lives in <data_dir>/worlds/<id>/ (its own store/, laid out as a data directory, plus
// world.meta naming the template it was copied from) and is reopened at restart.
//
// Copies share memory with their template: a copy's chunk loader answers chunks the copy never
// edited from the template's chunks as of the copy's version (immutable ChunkPtr, shared by every
// copy made at that version), then from its own store (a RocksDB checkpoint of the template's, so
// the template's stored edits are hard links), then the generator. Edits to a copy are written to
// its own store only, and edits to the template after the copy never reach the copy.
//
// Budgets: the default world keeps the configured resident-chunk and collision-cache budgets;
// every created world gets its own budgets of the configured ones divided by max_worlds (at least
// 1 MiB each), so all created worlds together stay within the configured budgets and a busy world
// evicts only its own chunks and cache entries.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/store/store.h"
#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/world.h"
#include "server/bodies/world_bodies.h"
#include "server/exec/query_ops.h"
#include "server/feed/subscribe_stream.h"
#include "server/nav/nav_profiles.h"
#include "server/telemetry/metrics.h"

namespace voxcol::server {

inline constexpr char kDefaultWorld[] = "default";
inline constexpr size_t kMaxWorldIdBytes = 64;

// INVALID_ARGUMENT naming `field` unless `id` is 1..64 bytes of [a-z0-9-_].
absl::Status ValidateWorldId(absl::string_view id, absl::string_view field);

// What the services use of one world. Every pointer but batcher/subscriptions/store is non-null.
struct WorldParts {
  std::string id;
  World* world = nullptr;
  const BroadphaseIndex* broadphase = nullptr;
  ChunkCollisionCache* cache = nullptr;
  EditBatcher* batcher = nullptr;
  SubscriptionHub* subscriptions = nullptr;
  store::Store* store = nullptr;
  int32_t sea_level = 0;
  std::string template_world;  // empty unless copied
  uint64_t template_version = 0;
  NavContext nav;                 // nav.nav null: navigation is off
  WorldBodies* bodies = nullptr;  // the world's bodies (session state); null: not served
  QueryEngine engine() const { return QueryEngine{*broadphase, *cache, batcher, nav, bodies}; }
};
// The parts of a world wired up the single-world way (services built without a registry).
inline WorldParts MakeWorldParts(World* world, const BroadphaseIndex* broadphase,
                                 ChunkCollisionCache* cache, EditBatcher* batcher,
                                 SubscriptionHub* subscriptions) {
  WorldParts parts;
  parts.id = kDefaultWorld;
  parts.world = world;
  parts.broadphase = broadphase;
  parts.cache = cache;
  parts.batcher = batcher;
  parts.subscriptions = subscriptions;
  return parts;
}
// Keeps the world alive while a call uses it (a deleted world is freed when the last one drops).
using WorldHandle = std::shared_ptr<const WorldParts>;

class WorldResolver {
 public:
  virtual ~WorldResolver() = default;
  // The world named `id` ("" = the default world). INVALID_ARGUMENT for a malformed id and
  // NOT_FOUND for an unknown one, both naming `field`.
  virtual absl::StatusOr<WorldHandle> Resolve(absl::string_view id,
                                              absl::string_view field = "world") const = 0;
};

// One world and nothing else (services built the single-world way, e.g. in benchmarks).
class SingleWorld final : public WorldResolver {
 public:
  explicit SingleWorld(WorldParts parts);
  absl::StatusOr<WorldHandle> Resolve(absl::string_view id, absl::string_view field) const override;

 private:
  std::shared_ptr<const WorldParts> parts_;
};

struct WorldRegistryOptions {
  std::string data_dir;
  WorldConfig new_world;  // generator settings that CreateWorld leaves unset
  store::StoreOptions store;
  uint64_t resident_chunk_bytes = 0;  // the configured (default world's) budgets; 0 = unlimited
  uint64_t snapshot_history_bytes = 0;
  World::HistoryRetention history;
  ChangeLogConfig change_log;
  SubscribeLimits subscribe;
  EditLimits edit;
  uint64_t idempotency_keys = 0;
  size_t chunk_collision_cache_bytes = 0;
  size_t max_worlds = 128;  // created worlds, the default one not counted
  NavOptions nav;           // every world's navigation (profiles, tiles, the background rebuild)
  BodyLimits bodies;        // every world's body registry (--max_bodies, ...); checked limits
  // Not OK on a read replica: every world's batcher refuses client edits with it (the replica's
  // followers write with World::Edit).
  absl::Status edit_refusal;
};

class NavRebuilder;  // nav_rebuilder.h

class WorldRegistry final : public WorldResolver {
 public:
  struct Summary {
    std::string id, template_world;
    uint64_t version = 0, template_version = 0, resident_chunks = 0, resident_bytes = 0;
    uint64_t cache_bytes = 0, cache_evictions = 0;
    // The store's store::Store::WriteState (0 ok, 1 disk full, 2 failed) and failed edit writes.
    uint64_t store_write_state = 0, store_write_errors = 0;
    NavStats nav;  // zero when navigation is off
    WorldBodies::Stats bodies;
  };
  explicit WorldRegistry(WorldRegistryOptions options);
  ~WorldRegistry() override;

  // Opens the default world (today's layout) and every world under <data_dir>/worlds.
  absl::Status Open();
  absl::StatusOr<WorldHandle> Resolve(absl::string_view id, absl::string_view field) const override;
  // The default world; valid after Open() succeeded, for the registry's lifetime.
  const WorldParts& default_world() const { return *default_; }
  ChangeLog& default_change_log() const;

  // `settings` fields left zero take the configured values; `template_id` non-empty copies it.
  absl::StatusOr<Summary> Create(const std::string& id, const WorldConfig& settings,
                                 const std::string& template_id);
  absl::Status Delete(const std::string& id);
  // Sorted by id; `payload` also counts resident_bytes (walks every resident chunk).
  std::vector<Summary> List(bool payload = false) const;
  // Closes every change feed (Subscribe streams end), for shutdown.
  void CloseFeeds();

  class Owner;  // world_registry.cc

 private:
  // Opens data directory `dir` as world `id`; `source` is the template of a copy being created.
  absl::StatusOr<std::shared_ptr<Owner>> OpenWorld(const std::string& id, const std::string& dir,
                                                   bool is_default, const WorldConfig& settings,
                                                   const Owner* source) const;
  // Checkpoints `source` into the new world directory `dir`.
  absl::Status CheckpointInto(const Owner& source, const std::string& dir) const;
  std::string WorldsDir() const;
  absl::Status OpenNav(const std::string& id, Owner* owner) const;
  // Starts the background rebuild of stale navmesh tiles (after Open).
  void StartNavRebuilder();

  const WorldRegistryOptions options_;
  WorldParts* default_ = nullptr;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Owner>, std::less<>> worlds_ ABSL_GUARDED_BY(mu_);
  absl::Mutex create_mu_;  // one Create/Delete at a time (directories, checkpoints)
  uint64_t deleted_ = 0;   // names of directories being removed
  // Last: stopped first, before the worlds it rebuilds are closed.
  std::unique_ptr<NavRebuilder> nav_rebuilder_;
};

// Per-world families labelled `world` (version, resident chunks, collision cache bytes and
// evictions), read from `worlds` at scrape time; `worlds` must outlive the metrics server.
void RegisterWorldMetrics(const WorldRegistry& worlds, Metrics& registry);

}  // namespace voxcol::server
