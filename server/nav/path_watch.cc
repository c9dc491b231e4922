#include "server/nav/path_watch.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/convert/convert.h"
#include "server/nav/find_path_op.h"
#include "server/telemetry/log.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

namespace {

uint64_t TileKey(const NavTileCoord& t) { return (uint64_t(uint32_t(t.x)) << 32) | uint32_t(t.z); }

// Process-wide, over every world's hub.
struct WatchMetrics {
  std::atomic<int64_t> watches{0};
  Counter* blocked;
  Counter* shorter;
  Counter* checks;  // watches walked or re-planned after an edit
  Counter* sweeps;  // published versions looked at while watches were open

  static WatchMetrics& Get() {
    static WatchMetrics* m = new WatchMetrics;
    return *m;
  }

 private:
  WatchMetrics() {
    Metrics& r = GetServerMetrics().registry;
    r.AddGauge("voxcol_path_watches", "Path watches open on WatchPaths streams, over all worlds",
               [this] { return double(watches.load(std::memory_order_relaxed)); });
    const char* events = "Path watch events sent (BLOCKED, SHORTER), by event";
    blocked = r.AddCounter("voxcol_path_watch_events_total", events, "event=\"blocked\"");
    shorter = r.AddCounter("voxcol_path_watch_events_total", events, "event=\"shorter\"");
    checks = r.AddCounter("voxcol_path_watch_checks_total",
                          "Path watches walked on the navmesh or re-planned after an edit touched "
                          "their tiles (edits elsewhere check none)");
    sweeps = r.AddCounter("voxcol_path_watch_sweeps_total",
                          "Published versions the path watchers looked at (one look at the dirty "
                          "version of each watched tile)");
  }
};

float PolylineLength(const std::vector<Vec3>& points) {
  float length = 0;
  for (size_t i = 1; i < points.size(); ++i) length += Length(points[i] - points[i - 1]);
  return length;
}

void FillPath(const FindPathResult& r, v1::FindPathResponse* out) {
  out->set_status(ToProto(r.status));
  for (const Waypoint& w : r.waypoints) {
    v1::Waypoint* p = out->add_waypoints();
    ToProto(w.position, p->mutable_position());
    p->set_action(ToProto(w.action));
  }
  out->set_length(r.length);
  out->set_version(r.version);
  out->set_tiles_built(uint32_t(r.tiles_built));
  out->set_corridor_polygons(uint32_t(r.corridor_polygons));
}

}  // namespace

struct PathWatchHub::Watch {
  std::shared_ptr<PathWatchSink> sink;
  PathWatchSpec spec;
  std::vector<NavTileCoord> path_tiles;    // the tiles whose edits can block the path
  std::vector<NavTileCoord> region_tiles;  // shorter_margin > 0: the box a shorter path lies in
  float offered = 0;                       // the shortest length offered (or watched) so far
};

// A watch to check in a sweep, and why.
struct PathWatchHub::Candidate {
  std::shared_ptr<Watch> watch;
  bool path_changed = false;  // else only its shorter-path box changed
  float offered = 0;
};

void RegisterPathWatchMetrics() { WatchMetrics::Get(); }

// Field errors of the embedded FindPathRequest name it from the watch: "watch.path.start".
absl::Status InWatchPath(const absl::Status& s) {
  if (s.ok() || !absl::IsInvalidArgument(s)) return s;
  return absl::InvalidArgumentError(absl::StrCat("watch.path.", s.message()));
}

absl::Status DecodeWaypoints(const World& world, const v1::PathWatch& watch, PathWatchSpec* spec) {
  if (watch.waypoints_size() > kMaxWatchWaypoints) {
    return absl::InvalidArgumentError(absl::StrCat("watch.waypoints: at most ", kMaxWatchWaypoints,
                                                   " waypoints, got ", watch.waypoints_size()));
  }
  for (int i = 0; i < watch.waypoints_size(); ++i) {
    const Vec3 p = ToCore(watch.waypoints(i).position());
    if (!watch.waypoints(i).has_position() || !IsFinite(p) || !world.ContainsPoint(p)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "watch.waypoints[", i, "].position must be set, finite and inside the world"));
    }
    spec->waypoints.push_back(p);
  }
  return absl::OkStatus();
}

absl::Status DecodePathWatch(const World& world, const NavContext& context,
                             const v1::PathWatch& watch, PathWatchSpec* spec,
                             v1::FindPathResponse* planned) {
  if (context.nav == nullptr || context.watches == nullptr) {
    return absl::FailedPreconditionError("navigation is off on this server (--nav=false)");
  }
  spec->id = watch.watch_id();
  const float margin = watch.shorter_margin();
  if (!std::isfinite(margin) || margin < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch.shorter_margin must be finite and >= 0 (world units), got ", margin));
  }
  spec->shorter_margin = margin;
  if (watch.version() > world.version()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch.version ", watch.version(), " is ahead of the world's version ", world.version()));
  }
  if (absl::Status s = FindPathFromProto(world, context, watch.path(), &spec->plan); !s.ok()) {
    return InWatchPath(s);
  }
  if (absl::Status s = DecodeWaypoints(world, watch, spec); !s.ok()) return s;
  World::ReadSnapshot snapshot(world);
  spec->version = watch.version() == 0 ? snapshot.version() : watch.version();
  if (spec->waypoints.empty()) {
    const QueryInterrupt none;
    if (absl::Status s = RunFindPath(world, context, watch.path(), planned, none); !s.ok()) {
      return InWatchPath(s);
    }
    if (planned->status() != v1::PATH_STATUS_OK) {
      return absl::FailedPreconditionError(
          absl::StrCat("watch.path: no path to watch from start to goal (",
                       v1::PathStatus_Name(planned->status()), ")"));
    }
    for (const v1::Waypoint& w : planned->waypoints())
      spec->waypoints.push_back(ToCore(w.position()));
    spec->version = planned->version();
  }
  spec->length = PolylineLength(spec->waypoints);
  return absl::OkStatus();
}

PathWatchHub::PathWatchHub(World& world, NavWorld& nav) : world_(world), nav_(nav) {
  RegisterPathWatchMetrics();
}

PathWatchHub::~PathWatchHub() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    WatchMetrics::Get().watches.fetch_sub(int64_t(watches_.size()), std::memory_order_relaxed);
  }
  if (thread_.joinable()) thread_.join();
}

void PathWatchHub::StartThreadLocked() {
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
}

void PathWatchHub::IndexLocked(Watch* w, bool add) {
  auto update = [&](const NavTileCoord& t, bool path) {
    std::vector<Entry>& entries = index_[TileKey(t)];
    if (add) {
      entries.push_back({w, path});
    } else {
      entries.erase(std::remove_if(entries.begin(), entries.end(),
                                   [w](const Entry& e) { return e.watch == w; }),
                    entries.end());
      if (entries.empty()) index_.erase(TileKey(t));
    }
  };
  for (const NavTileCoord& t : w->path_tiles) update(t, true);
  for (const NavTileCoord& t : w->region_tiles) {
    if (!std::binary_search(w->path_tiles.begin(), w->path_tiles.end(), t,
                            [](const NavTileCoord& a, const NavTileCoord& b) {
                              return a.z != b.z ? a.z < b.z : a.x < b.x;
                            })) {
      update(t, false);
    }
  }
}

absl::Status PathWatchHub::Add(const std::shared_ptr<PathWatchSink>& sink, PathWatchSpec spec) {
  auto w = std::make_shared<Watch>();
  w->sink = sink;
  w->path_tiles = nav_.TilesAlong(spec.waypoints, spec.plan.profile.radius);
  if (spec.shorter_margin > 0) {
    // Every path no longer than the watched one lies in the ellipse with foci start and goal
    // whose axis is that length: inside their box grown by half the length minus the distance.
    const float grow =
        0.5f * (spec.length - Length(spec.plan.goal - spec.plan.start)) + spec.plan.profile.radius;
    const Vec3 g(std::max(grow, 0.f), 0, std::max(grow, 0.f));
    w->region_tiles = nav_.TilesOverlapping(Min(spec.plan.start, spec.plan.goal) - g,
                                            Max(spec.plan.start, spec.plan.goal) + g);
    if (w->region_tiles.size() > kMaxShorterTiles) {
      return absl::ResourceExhaustedError(
          absl::StrCat("watch.shorter_margin: the box a shorter path could lie in covers ",
                       w->region_tiles.size(), " navmesh tiles, more than ", kMaxShorterTiles,
                       " (watch a shorter path, or set shorter_margin 0)"));
    }
  }
  w->offered = spec.length;
  w->spec = std::move(spec);
  absl::MutexLock lock(&mu_);
  const Key key{sink.get(), w->spec.id};
  if (watches_.contains(key)) {
    return absl::InvalidArgumentError(
        absl::StrCat("watch.watch_id ", w->spec.id, " is already watched on this stream"));
  }
  // With no watch open nothing was checked: start at the visible version (its edits' tiles are
  // marked, so the check below sees them).
  if (watches_.empty()) checked_ = std::max(checked_, world_.version());
  // Edits up to checked_ are marked already: one the path has not been checked against yet
  // is caught here, a later one by the sweep of its version (the tiles are indexed now).
  const bool stale =
      nav_.ChangedSince(w->path_tiles, w->spec.version) ||
      (!w->region_tiles.empty() && nav_.ChangedSince(w->region_tiles, w->spec.version));
  IndexLocked(w.get(), true);
  if (stale) recheck_.push_back(w);
  watches_.emplace(key, std::move(w));
  count_.fetch_add(1, std::memory_order_relaxed);
  WatchMetrics::Get().watches.fetch_add(1, std::memory_order_relaxed);
  StartThreadLocked();
  return absl::OkStatus();
}

void PathWatchHub::EraseLocked(const Key& key) {
  auto it = watches_.find(key);
  if (it == watches_.end()) return;
  IndexLocked(it->second.get(), false);
  watches_.erase(it);
  count_.fetch_sub(1, std::memory_order_relaxed);
  WatchMetrics::Get().watches.fetch_sub(1, std::memory_order_relaxed);
}

bool PathWatchHub::Remove(const PathWatchSink* sink, uint64_t id) {
  absl::MutexLock lock(&mu_);
  if (!watches_.contains(Key{sink, id})) return false;
  EraseLocked(Key{sink, id});
  return true;
}

bool PathWatchHub::Contains(const PathWatchSink* sink, uint64_t id) const {
  absl::MutexLock lock(&mu_);
  return watches_.contains(Key{sink, id});
}

void PathWatchHub::RemoveAll(const PathWatchSink* sink) {
  absl::MutexLock lock(&mu_);
  std::vector<Key> keys;
  for (const auto& [key, w] : watches_) {
    if (key.first == sink) keys.push_back(key);
  }
  for (const Key& key : keys) EraseLocked(key);
}

size_t PathWatchHub::size() const { return count_.load(std::memory_order_relaxed); }

void PathWatchHub::AfterPublish(const CommittedEdit& edit) {
  // Under the world's edit lock: note the version and wake the thread, nothing more.
  if (count_.load(std::memory_order_relaxed) == 0 || edit.result.changes.empty()) return;
  absl::MutexLock lock(&mu_);
  target_ = std::max(target_, edit.result.version);
}

void PathWatchHub::Run() {
  for (;;) {
    uint64_t target = 0;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](PathWatchHub* h) ABSL_EXCLUSIVE_LOCKS_REQUIRED(h->mu_) {
            return h->stop_ || h->target_ > h->checked_ || !h->recheck_.empty();
          },
          this));
      if (stop_) return;
      target = std::max(target_, checked_);
    }
    Sweep(target);
  }
}

void PathWatchHub::Sweep(uint64_t target) {
  // AfterPublish runs just before its version becomes visible: wait for it (microseconds).
  while (world_.version() < target) absl::SleepFor(absl::Microseconds(20));
  World::ReadSnapshot snapshot(world_);
  const uint64_t version = snapshot.version();
  std::vector<Candidate> candidates;
  {
    absl::MutexLock lock(&mu_);
    WatchMetrics::Get().sweeps->Add();
    std::vector<NavTileCoord> watched;
    watched.reserve(index_.size());
    for (const auto& [key, entries] : index_)
      watched.push_back({int(key >> 32), int(uint32_t(key))});
    absl::flat_hash_map<Watch*, size_t> seen;
    auto consider = [&](Watch* w, const std::shared_ptr<Watch>& owner, bool path) {
      if (w->spec.version >= version) return;
      auto [it, fresh] = seen.emplace(w, candidates.size());
      if (fresh) candidates.push_back({owner, path, w->offered});
      candidates[it->second].path_changed |= path;
    };
    for (const NavTileCoord& t : nav_.ChangedTiles(watched, checked_)) {
      for (const Entry& e : index_[TileKey(t)]) {
        consider(e.watch, watches_.at(Key{e.watch->sink.get(), e.watch->spec.id}), e.path);
      }
    }
    for (const std::shared_ptr<Watch>& w : recheck_) consider(w.get(), w, true);
    recheck_.clear();
    checked_ = std::max(checked_, version);
  }
  for (const Candidate& c : candidates) {
    v1::WatchPathsResponse event;
    const bool send = Check(c, &event);
    absl::MutexLock lock(&mu_);
    const Key key{c.watch->sink.get(), c.watch->spec.id};
    auto it = watches_.find(key);
    if (it == watches_.end() || it->second != c.watch) continue;  // unwatched meanwhile
    c.watch->spec.version = version;
    if (!send) continue;
    const v1::PathWatchEvent kind = event.event();
    if (kind == v1::PATH_WATCH_EVENT_SHORTER) c.watch->offered = event.path().length();
    c.watch->sink->Deliver(std::move(event));
    if (kind == v1::PATH_WATCH_EVENT_BLOCKED) EraseLocked(key);
  }
}

bool PathWatchHub::Check(const Candidate& c, v1::WatchPathsResponse* event) {
  WatchMetrics::Get().checks->Add();
  const PathWatchSpec& spec = c.watch->spec;
  event->set_watch_id(spec.id);
  event->set_watched_length(spec.length);
  bool blocked = false;
  if (c.path_changed) {
    absl::StatusOr<PathCheck> check = nav_.CheckPath(spec.plan, spec.waypoints);
    if (!check.ok()) {
      LogError("event=path_watch_check_failed code=%s message=%s",
               absl::StatusCodeToString(check.status().code()), check.status().message());
      return false;
    }
    event->set_version(check->version);
    blocked = check->blocked;
    if (blocked) {
      event->set_event(v1::PATH_WATCH_EVENT_BLOCKED);
      event->set_blocked_waypoint(uint32_t(check->waypoint));
      ToProto(check->stopped_at, event->mutable_stopped_at());
    }
  }
  if (!blocked && spec.shorter_margin <= 0) return false;
  absl::StatusOr<FindPathResult> plan = nav_.FindPath(spec.plan);
  if (!plan.ok()) {
    if (!blocked) return false;
    LogError("event=path_watch_replan_failed code=%s message=%s",
             absl::StatusCodeToString(plan.status().code()), plan.status().message());
    return true;  // BLOCKED without a re-plan
  }
  event->set_version(plan->version);
  if (!blocked) {
    if (plan->status != PathStatus::kOk || !(plan->length < c.offered - spec.shorter_margin)) {
      return false;
    }
    event->set_event(v1::PATH_WATCH_EVENT_SHORTER);
    WatchMetrics::Get().shorter->Add();
  } else {
    WatchMetrics::Get().blocked->Add();
  }
  FillPath(*plan, event->mutable_path());
  return true;
}

}  // namespace voxcol::server
