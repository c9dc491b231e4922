// Path watching (issue 41, Roblox's Path.Blocked): the watches registered on WatchPaths streams for
// one world and the thread that checks them after edits.
//
// The edit path only notes the published version and wakes the thread (one mutex, no nav work).
// The thread, once the version is visible, asks the NavWorld which of the watched tiles an edit
// touched since it last looked (NavWorld::ChangedTiles over the tile -> watches index) and checks
// only the watches on those tiles: a watch whose path crosses a changed tile is walked on the
// navmesh at the new version (NavWorld::CheckPath); a blocked one gets BLOCKED with a re-plan and
// ends. A watch with a shorter_margin also re-plans when a tile of the box a shorter path could lie
// in changed, and gets SHORTER when the re-plan beats the watched (and last offered) length by
// more than the margin. An edit touching no watched tile costs one look per watched tile.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "core/nav/find_path.h"
#include "core/nav/nav_world.h"
#include "core/voxel/world.h"
#include "server/nav/find_path_op.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

inline constexpr int kMaxWatchesPerStream = 256;
inline constexpr int kMaxWatchWaypoints = 1024;
inline constexpr size_t kMaxShorterTiles = 4096;

// Where a watch's events go (a WatchPaths stream). Deliver may be called from the hub's thread
// at any time until the sink is removed from every hub it registered in; it must not block.
class PathWatchSink {
 public:
  virtual ~PathWatchSink() = default;
  virtual void Deliver(v1::WatchPathsResponse response) = 0;
};

// A decoded watch (PathWatch after validation).
struct PathWatchSpec {
  uint64_t id = 0;
  FindPathInput plan;           // start, goal, profile, costs, max_distance; no interrupt
  std::vector<Vec3> waypoints;  // at least one
  float length = 0;             // world units, of the waypoints
  uint64_t version = 0;         // the waypoints hold at this version
  float shorter_margin = 0;     // world units; 0: no SHORTER events
};

class PathWatchHub final : public EditObserver {
 public:
  // Register with world.AddObserver after `nav`, so that the nav's dirty tiles are marked before
  // the hub hears of an edit. Both must outlive the hub.
  PathWatchHub(World& world, NavWorld& nav);
  ~PathWatchHub() override;
  PathWatchHub(const PathWatchHub&) = delete;
  PathWatchHub& operator=(const PathWatchHub&) = delete;

  // Registers `spec` for `sink` (ids are per sink). RESOURCE_EXHAUSTED naming
  // watch.shorter_margin when its box covers more than kMaxShorterTiles tiles. If an edit after
  // spec.version already touched the path's tiles, the check runs at once on the hub's thread.
  absl::Status Add(const std::shared_ptr<PathWatchSink>& sink, PathWatchSpec spec);
  // Unregisters one watch of `sink`; false if it was not registered (or ended, e.g. blocked).
  bool Remove(const PathWatchSink* sink, uint64_t id);
  // Whether `sink` has watch `id` open here.
  bool Contains(const PathWatchSink* sink, uint64_t id) const;
  // Unregisters every watch of `sink` (its stream ended).
  void RemoveAll(const PathWatchSink* sink);

  void AfterPublish(const CommittedEdit& edit) override;

  // Open watches of this world.
  size_t size() const;

 private:
  struct Watch;
  struct Candidate;
  using Key = std::pair<const PathWatchSink*, uint64_t>;

  void Run();
  // One pass at the newest visible version >= `target`: the watches on changed tiles.
  void Sweep(uint64_t target);
  // Checks one watch at the calling thread's version; fills `event` when it has one to send.
  bool Check(const Candidate& c, v1::WatchPathsResponse* event);
  void IndexLocked(Watch* w, bool add) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseLocked(const Key& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartThreadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  World& world_;
  NavWorld& nav_;
  std::atomic<size_t> count_{0};  // watches, read without the lock on the edit path
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<Watch>> watches_ ABSL_GUARDED_BY(mu_);
  // Tile (x, z) -> the watches on it, with whether the path itself crosses it (else only the box
  // a shorter path could lie in does).
  struct Entry {
    Watch* watch;
    bool path;
  };
  absl::flat_hash_map<uint64_t, std::vector<Entry>> index_ ABSL_GUARDED_BY(mu_);  // TileKey
  std::vector<std::shared_ptr<Watch>> recheck_ ABSL_GUARDED_BY(mu_);  // added after a change
  uint64_t checked_ ABSL_GUARDED_BY(mu_) = 0;  // every watch is checked up to this version
  uint64_t target_ ABSL_GUARDED_BY(mu_) = 0;   // the newest published version heard of
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;  // started with the first watch
};

// Decodes `watch` for `world` into `spec` (id, re-plan input, waypoints and their length, version,
// margin). Without waypoints it plans the path now at the calling thread's version and returns the
// answer in `planned`. INVALID_ARGUMENT naming the field (watch.path.start, watch.waypoints,
// watch.version, watch.shorter_margin, ...); FAILED_PRECONDITION when navigation is off or the
// planned path's status is not OK; FindPath's errors.
absl::Status DecodePathWatch(const World& world, const NavContext& context,
                             const v1::PathWatch& watch, PathWatchSpec* spec,
                             v1::FindPathResponse* planned);

// Process-wide path watching metrics (voxcol_path_watches, voxcol_path_watch_events_total{event},
// voxcol_path_watch_checks_total, voxcol_path_watch_sweeps_total); registered on first use.
void RegisterPathWatchMetrics();

}  // namespace voxcol::server
