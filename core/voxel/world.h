// The sparse, editable voxel world: finite bounds, lazily generated chunks, a monotonic version.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/geometry/vec3.h"
#include "core/voxel/chunk.h"

namespace voxcol {

struct WorldConfig {
  // World extent in voxels along X, Y, Z; each a positive multiple of 8. The world spans voxels
  // [-size/2, size/2) on every axis, so the origin is at its centre.
  Int3 size_voxels{512, 192, 512};
  float voxel_size = 1.0f;  // world units per voxel edge
  uint64_t seed = 1;        // generator seed
};

// Validates a configuration; the message names the offending field.
absl::Status ValidateWorldConfig(const WorldConfig& config);
// Voxels inside a world of this configuration, max exclusive.
IntBox WorldVoxelBounds(const WorldConfig& config);

// Fills chunks that were never edited. Implementations must be deterministic and thread-safe.
class ChunkGenerator {
 public:
  virtual ~ChunkGenerator() = default;
  // Writes the voxels of chunk `key` into `out` (every voxel must be written).
  virtual void Generate(const ChunkKey& key, Chunk* out) const = 0;
  // Version of the generation algorithm; a stored world refuses to open under another one.
  virtual uint32_t Version() const = 0;
  // True, with *fill, only when Generate writes `fill` to every voxel of `voxels` (a box in world
  // voxel coordinates, max exclusive, over any chunks). A cheap proof (e.g. bounds of a noise
  // field) lets the world skip generating open sky and deep rock, and the broadphase classify a
  // never-edited chunk's neighbourhood without generating it (World::ProvenUniform). False is
  // always allowed.
  virtual bool ProvenUniform(const IntBox& voxels, Voxel* fill) const { return false; }
  // True, with *solid, only when every voxel Generate writes in `voxels` lies on one side of the
  // surface: IsSolid for all of them (*solid true) or for none. A weaker claim than ProvenUniform
  // that a mesh needs (a cell whose corners lie on one side holds no triangle) and that holds
  // much closer to the surface (air and water, or rock of several occupancies). The default asks
  // ProvenUniform.
  virtual bool ProvenSide(const IntBox& voxels, bool* solid) const {
    Voxel fill;
    if (!ProvenUniform(voxels, &fill)) return false;
    *solid = IsSolid(fill);
    return true;
  }
  // Writes the voxels Generate writes inside `voxels` (world voxel coordinates, max exclusive, a
  // box inside chunk `key`) to the same places of `out`, and leaves the other voxels of `out` as
  // they were, so that several parts of one chunk may share one scratch chunk. For callers
  // that read only a part of a chunk (a layer of a neighbour). The default generates the whole
  // chunk aside and copies the part.
  virtual void GeneratePart(const ChunkKey& key, const IntBox& voxels, Chunk* out) const {
    Chunk whole;
    Generate(key, &whole);
    CopyVoxels(whole, voxels, out);
  }
  // True when GeneratePart costs about its part's size (it evaluates only the part's voxels), so
  // that a caller may ask for single voxels; false for the default above, where any part costs
  // the whole chunk (World::GeneratedVoxel then generates the chunk once and remembers it).
  virtual bool GeneratesPartsAlone() const { return false; }
};

// What one committed edit changed: the new version and, per chunk, the box of changed voxels.
struct ChunkChange {
  ChunkKey key;
  IntBox changed_voxels;  // world voxel coordinates, max exclusive; tight around the changes
};
struct EditResult {
  uint64_t version = 0;              // world version after the edit
  std::vector<ChunkChange> changes;  // chunks with at least one changed voxel, sorted by key
  // Chunks whose derived data (masks, meshes) depends on a changed voxel: the changed chunks plus
  // neighbours that lie within one voxel of a change. Sorted, unique.
  std::vector<ChunkKey> dirty_chunks;
};

// A set of copy-on-write chunk modifications prepared under the edit lock and published at once.
class ChunkEdit;

// What the caller of World::Edit attaches for observers: the store makes an idempotency key
// durable in the same write as the edit, so a retry after a restart is still recognised.
struct EditTag {
  std::string idempotency_key;  // empty: none
  uint64_t fingerprint = 0;     // identifies the batch content behind the key
};

// An edit about to be (or just) published: its result and the new content of every changed chunk.
struct CommittedEdit {
  const EditResult& result;
  const std::vector<std::pair<ChunkKey, ChunkPtr>>& chunks;  // sorted by key, same order as changes
  const EditTag* tag = nullptr;  // never null for edits from World::Edit
};

// Hooks on the commit path. Edits are committed in groups by one thread at a time (the commit
// leader, see World::Edit), so hooks see edits one at a time in version order, never concurrently.
class EditObserver {
 public:
  virtual ~EditObserver() = default;
  // Before anything is visible: e.g. make the edit durable. An error aborts the edit: nothing is
  // published and the version does not advance.
  virtual absl::Status BeforePublish(const CommittedEdit& edit) { return absl::OkStatus(); }
  // Several consecutive edits (ascending versions) that are about to be published together; lets
  // a store make them durable with one write and one sync (group commit). The default calls
  // BeforePublish for each in order. An error aborts every edit of the group and every edit staged
  // after it (they were built on top of the group's chunks).
  virtual absl::Status BeforePublishGroup(const std::vector<const CommittedEdit*>& edits) {
    for (const CommittedEdit* edit : edits) {
      if (absl::Status s = BeforePublish(*edit); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  // After the edit's chunks are swapped in and before its version becomes visible: update derived
  // data (broadphase, caches) and feed subscribers. Snapshots that began earlier keep running and
  // must not use what this rebuilds (World::NewerThanSnapshot). Called per edit in version order;
  // keep it short and never block on readers.
  virtual void AfterPublish(const CommittedEdit& edit) {}
};

// Source of chunks that were edited in an earlier run (the store). Consulted before the generator.
class ChunkLoader {
 public:
  virtual ~ChunkLoader() = default;
  // The stored chunk at `key`, or nullptr when it was never edited (then the generator runs).
  // An error (e.g. DATA_LOSS for a corrupt record) is returned to the caller of World::LoadChunk.
  virtual absl::StatusOr<ChunkPtr> Load(const ChunkKey& key) const = 0;
};

class World {
 public:
  class ReadSnapshot;  // see below
  struct PastView;     // see world_retention.cc
  World(const WorldConfig& config, std::unique_ptr<ChunkGenerator> generator);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const WorldConfig& config() const { return config_; }
  const ChunkGenerator& generator() const { return *generator_; }
  // Voxels inside the world, max exclusive.
  IntBox voxel_bounds() const { return voxel_bounds_; }
  // Chunks inside the world, max exclusive.
  IntBox chunk_bounds() const { return chunk_bounds_; }
  // The world box in world units.
  Aabb world_bounds() const;
  float voxel_size() const { return config_.voxel_size; }
  // Number of committed edits so far; 0 for a freshly generated world.
  uint64_t version() const { return version_.load(std::memory_order_acquire); }

  // Registers hooks and the loader; call before serving (not thread-safe against edits).
  void AddObserver(EditObserver* observer) { observers_.push_back(observer); }
  // Unregisters `observer` (nothing if it is not registered); call when no edit is in flight, e.g.
  // from the observer's destructor once the world stops serving edits.
  void RemoveObserver(EditObserver* observer);
  void SetLoader(const ChunkLoader* loader) { loader_ = loader; }
  // Sets the version of a world reopened from storage; call before serving.
  void RestoreVersion(uint64_t version);
  // Keeps at most about `bytes` of resident chunks, evicting arbitrary ones beyond it (they are
  // loaded or generated again on the next touch). 0 means unlimited (the default). Precondition:
  // a loader is set that returns every published chunk (a store observer), otherwise eviction
  // would forget edits. Call before serving.
  void SetResidentBudget(size_t bytes);

  // The chunk at `key` as of the calling thread's ReadSnapshot (the newest version without one):
  // resident, else loaded, else generated on first touch. Chunks outside the world are air. A
  // chunk whose stored record cannot be loaded is an error here.
  absl::StatusOr<ChunkPtr> LoadChunk(const ChunkKey& key) const;
  // As LoadChunk, but null instead of generating: for a chunk whose content, as of the calling
  // thread's snapshot, is the generator's (never edited, not resident, not stored). Such a chunk
  // is not made resident. Thread-safe.
  absl::StatusOr<ChunkPtr> PeekChunk(const ChunkKey& key) const { return Load(key, kPeek); }
  // Reading a part of a chunk that PeekChunk returned null for (the generator's content) without
  // generating the chunk: `part` is a box of world voxels inside chunk `key`. GeneratePart writes
  // the part's voxels as LoadChunk would read them (cleared outside the world) to *scratch and
  // leaves its other voxels as they were (see ChunkGenerator::GeneratePart); nothing is made
  // resident. Thread-safe (distinct scratch chunks).
  void GeneratePart(const ChunkKey& key, const IntBox& part, Chunk* scratch) const;
  // One voxel of such a chunk, as LoadChunk would read it (air outside the world). Not
  // remembered as a part: callers ask for scattered single voxels, which would only push the
  // parts a mesh wants next out of the thread's memo (unless the generator makes any part whole:
  // ChunkGenerator::GeneratesPartsAlone).
  Voxel GeneratedVoxel(const ChunkKey& key, const Int3& voxel) const;
  // True, with *fill, where the generator proves that every voxel of `box` (world voxels, over any
  // chunks) that is the generator's reads as `fill` in this world: outside the world box only air
  // does. Worth asking of big boxes only: a proof costs about as much as generating a part of a
  // hundred voxels, and near the surface, where the parts are read, few of them are uniform.
  bool ProvenUniform(const IntBox& box, Voxel* fill) const;
  // True, with *fill, when every voxel of `box` reads as `fill` as of the calling thread's
  // snapshot, shown without generating or loading one: voxels outside the world are air, the
  // others lie in chunks that are the generator's (PeekChunk null) and the generator proves them
  // (ProvenUniform). For queries that would otherwise generate a region to find it empty.
  bool ProvenUntouched(const IntBox& box, Voxel* fill) const;
  // As ProvenUntouched, for the side of the surface only (ChunkGenerator::ProvenSide): true, with
  // *solid, when every voxel of `box` is IsSolid (*solid true) or none is.
  bool ProvenUntouchedSide(const IntBox& box, bool* solid) const;
  // Same as LoadChunk, but a chunk that fails to load reads as air (callers that must report
  // DATA_LOSS use LoadChunk). Thread-safe.
  ChunkPtr GetChunk(const ChunkKey& key) const;
  // One voxel; air outside the world. Thread-safe.
  Voxel GetVoxel(const Int3& voxel) const;
  // The voxel filling chunk `key` when the chunk is resident and uniform as of the calling thread's
  // snapshot; false when that is not known (outside the world, not resident, not uniform, or
  // possibly changed since the snapshot). Lock-free: for fast paths that may fall back.
  bool UniformVoxel(const ChunkKey& key, Voxel* voxel) const {
    if (!chunk_bounds_.Contains(key)) return false;
    const uint32_t code = UniformCode(key);
    if (code == 0 || NewerThanSnapshot(key)) return false;
    *voxel = VoxelOfCode(code);
    return true;
  }
  // Voxel containing a world-space point (floor of p / voxel_size).
  Int3 VoxelAt(const Vec3& p) const;
  // Centre of a voxel in world units.
  Vec3 VoxelCenter(const Int3& voxel) const;
  bool ContainsPoint(const Vec3& p) const;

  // Runs `edit` under the world's edit lock with a scratch ChunkEdit that sees every earlier
  // edit (also those not yet durable), assigns the next version and queues the result. Then the
  // edit is committed in a group with other queued edits (observers' BeforePublishGroup, e.g. one
  // synced store write), published with its version, and only then returned. Readers never see an
  // edit before BeforePublish succeeded; versions become visible in order. An edit that changes
  // nothing returns at once with the newest version and no changes, publishing nothing, when
  // every earlier edit is published; with an idempotency key, an explicit version (SetVersion), a
  // pin, or earlier edits still being committed it gets a new version as any other. If `edit`
  // returns an error nothing is published and the version stays. A ReadSnapshot the calling thread
  // holds does not apply inside: the edit reads the newest content.
  // With `pinned`, also returns a snapshot of exactly the edit's version, registered as the
  // version is published (before any later edit), for reads that must see this edit and nothing
  // after it; call Enter() on it before reading.
  absl::StatusOr<EditResult> Edit(const std::function<absl::Status(ChunkEdit&)>& edit,
                                  const EditTag& tag = {},
                                  std::unique_ptr<ReadSnapshot>* pinned = nullptr);

  // Runs `read` (which loads chunks of this world) under a ReadSnapshot so that everything it sees
  // belongs to one published version, and returns that version. An error from `read` is returned
  // as is; ABORTED if the snapshot expired meanwhile (SetHistoryBudget).
  absl::StatusOr<uint64_t> ReadConsistent(const std::function<absl::Status()>& read) const;

  // Number of chunks currently resident (generated or edited).
  size_t resident_chunks() const;
  // Keys of the chunks resident now, in no order (a copy of this world shares them). Thread-safe.
  std::vector<ChunkKey> ResidentKeys() const;

  // Snapshot isolation. While alive, every read this thread makes of the world (LoadChunk,
  // GetChunk, GetVoxel) sees the world at version(), whatever edits are published meanwhile: a
  // chunk replaced since then is read from the world's history of replaced chunks. Edits never
  // wait for snapshots; a snapshot only keeps the chunks it may still read alive (see
  // history_stats). Derived data (broadphase masks, meshes) must ask NewerThanSnapshot before
  // using what an edit may have rebuilt. Create and destroy it on one thread; snapshots of one
  // world nest (an inner one keeps the outer one's version).
  class ReadSnapshot {
   public:
    explicit ReadSnapshot(const World& world);
    ~ReadSnapshot();
    ReadSnapshot(const ReadSnapshot&) = delete;
    ReadSnapshot& operator=(const ReadSnapshot&) = delete;
    uint64_t version() const { return version_; }
    // For a snapshot pinned by World::Edit (its `pinned` argument): makes it the calling thread's
    // snapshot until it is destroyed, on this thread. Precondition: called once, and the thread
    // holds no other snapshot of this world.
    void Enter();
    // True once the world dropped history this snapshot may need because the history outgrew its
    // budget (SetHistoryBudget): reads may then mix versions, so discard what was read and fail
    // the request (ABORTED). Checked by the caller after its reads.
    bool expired() const { return expired_.load(std::memory_order_acquire); }

   private:
    friend class World;
    struct Pinned {};
    // Registered at `version` by the commit leader (which holds history_mu_), not yet entered.
    ReadSnapshot(const World& world, uint64_t version, Pinned);
    // Registered at a past `version` by OpenSnapshotAt (caller holds history_mu_) and entered.
    struct AtVersion {};
    ReadSnapshot(const World& world, uint64_t version, std::shared_ptr<const PastView> view,
                 AtVersion);
    const World& world_;
    uint64_t version_;
    // Past snapshots only: the chunks and dirty marks of edits (version_, view_->through], so
    // reads of them take no lock; later edits are looked up as for a snapshot at `through`.
    std::shared_ptr<const PastView> view_;
    uint64_t live_version_;  // view_ ? view_->through : version_
    std::atomic<bool> expired_{false};
    bool entered_ = true;            // is (or was) the thread's snapshot; restored on destruction
    const ReadSnapshot* enclosing_;  // the thread's previous innermost snapshot (any world)
    bool registered_;                // false when nested in a snapshot of the same world
  };

  // The version the calling thread reads this world at: its snapshot's, else the current one.
  uint64_t ReadVersion() const;
  // True when data derived from chunk `key` and its borders (masks, meshes: anything computed
  // from voxels within two voxels of the chunk) may already describe a version newer than the
  // calling thread's snapshot. Such data must not be used: rebuild it from LoadChunk instead. Call
  // it after reading the derived data, never before. Costs one thread-local and one atomic load
  // unless an edit was published since the snapshot began.
  bool NewerThanSnapshot(const ChunkKey& key) const;

  // Bounds the history kept for snapshots: when replaced chunks exceed `bytes`, the oldest
  // snapshots expire (ReadSnapshot::expired) and their history is dropped. 0 means unlimited (the
  // default). Call before serving.
  void SetHistoryBudget(size_t bytes) { history_budget_ = bytes; }

  // Chunks kept for snapshots that began before they were replaced, and the snapshots alive.
  struct HistoryStats {
    size_t chunks = 0;             // replaced chunk versions kept
    size_t bytes = 0;              // their voxel payload
    size_t snapshots = 0;          // registered ReadSnapshots alive
    uint64_t oldest = 0;           // version of the oldest alive snapshot (0 when none)
    uint64_t expired = 0;          // snapshots expired by the budget so far
    uint64_t oldest_readable = 0;  // OldestReadableVersion()
    size_t versions = 0;           // edits whose replaced chunks are kept
  };
  HistoryStats history_stats() const;

  // Lag compensation: keeps recent versions readable without a snapshot alive, so a query can
  // name a version (OpenSnapshotAt) or a server time (VersionAtTime) up to `window` back. Only
  // replaced chunks are kept (unchanged chunks are shared with the current world). A version stays
  // readable while it was current within `window` or is among the last `versions` versions,
  // unless the history exceeds `max_bytes` (0: no bound; the oldest retained versions go first;
  // SetHistoryBudget still bounds what live snapshots hold). Call before serving.
  struct HistoryRetention {
    absl::Duration window = absl::ZeroDuration();
    uint64_t versions = 0;
    size_t max_bytes = 0;
  };
  void SetHistoryRetention(const HistoryRetention& retention) { retention_ = retention; }
  // The oldest version OpenSnapshotAt accepts now (the current version when nothing is kept).
  uint64_t OldestReadableVersion() const;
  // The version that was current at server time `t`: OUT_OF_RANGE when t is older than the oldest
  // readable version's publication (the message names that version) or in the future.
  absl::StatusOr<uint64_t> VersionAtTime(absl::Time t) const;
  // A snapshot of `version` (as ReadSnapshot, already the calling thread's; destroy it on this
  // thread). It may nest inside another snapshot of this world; it then reads `version`, not the
  // outer one's. OUT_OF_RANGE, naming the oldest readable version, when `version` is no longer
  // kept, or naming the current one when it is in the future. Opening snapshots of the same past
  // version repeatedly is cheap (the lookup tables of a version are shared and cached).
  absl::StatusOr<std::unique_ptr<ReadSnapshot>> OpenSnapshotAt(uint64_t version) const;
  // For caches of derived data built for a snapshot (where NewerThanSnapshot(key) is true): the
  // first version after the snapshot whose edit dirtied `key`. Data derived from `key` is the same
  // for every snapshot with the same (key, SnapshotDataUntil(key)), so it may be cached under that
  // pair. 0 when NewerThanSnapshot(key) is false.
  uint64_t SnapshotDataUntil(const ChunkKey& key) const;
  // The version whose shared derived data the calling thread may use where NewerThanSnapshot is
  // false: ReadVersion(), or for a past snapshot the version its lookup tables were built at.
  uint64_t LiveReadVersion() const;

 private:
  friend class ChunkEdit;
  static constexpr int kShards = 64;
  struct Shard {
    mutable absl::Mutex mu;
    absl::flat_hash_map<ChunkKey, ChunkPtr> chunks ABSL_GUARDED_BY(mu);
    uint64_t evictions ABSL_GUARDED_BY(mu) = 0;  // lets a slow load notice it may be stale
  };
  // An edit between staging and publication. `done` and `status` are written by the commit
  // leader under commit_mu_ and read by the edit's own thread under commit_mu_ (the rest is
  // immutable once queued).
  struct PendingEdit {
    EditTag tag;
    EditResult result;
    std::vector<std::pair<ChunkKey, ChunkPtr>> chunks;
    std::vector<ChunkPtr> before;          // per entry of `chunks`: the content this edit replaces
    bool want_pin = false;                 // the caller asked for a snapshot at its version
    bool no_op = false;                    // changed nothing: acknowledged at the newest version
    std::unique_ptr<ReadSnapshot> pinned;  // set by the leader as the version is published
    bool done = false;
    absl::Status status;
  };
  Shard& ShardFor(const ChunkKey& key) const;
  // Uniform table: per chunk of the world, 0 (look in the shard: not resident, not uniform, or
  // failed to load) or kUniformBit | material << 8 | occupancy while the resident chunk is uniform.
  // Lets LoadChunk/GetVoxel answer deep rock and open sky without the shard lock and hash lookup.
  // Written only under the key's shard lock (cleared before the map changes, set after), read
  // without locks. Sparse: pages of 4096 entries allocated on first uniform chunk.
  static constexpr uint32_t kUniformBit = 1u << 16;
  static constexpr int kUniformPageBits = 12;
  uint32_t UniformCode(const ChunkKey& key) const {
    const size_t i = ChunkIndex(key);
    const std::atomic<uint32_t>* page =
        uniform_pages_[i >> kUniformPageBits].load(std::memory_order_acquire);
    if (page == nullptr) return 0;
    return page[i & ((1u << kUniformPageBits) - 1)].load(std::memory_order_acquire);
  }
  static Voxel VoxelOfCode(uint32_t code) { return Voxel{uint8_t(code >> 8), uint8_t(code)}; }
  size_t ChunkIndex(const ChunkKey& key) const {
    const Int3 k = key - chunk_bounds_.min, n = chunk_bounds_.max - chunk_bounds_.min;
    return (size_t(k.y) * size_t(n.z) + size_t(k.z)) * size_t(n.x) + size_t(k.x);
  }
  // Caller holds ShardFor(key).mu; `chunk` is what the shard now holds for key (null: nothing).
  void SetUniformCode(const ChunkKey& key, const Chunk* chunk) const;
  void Publish(const ChunkKey& key, ChunkPtr chunk);
  Voxel LatestVoxel(const ChunkKey& key, const Int3& voxel) const;
  // The generator's content of chunk `key` (never edited), cleared outside the world box.
  ChunkPtr Generated(const ChunkKey& key) const;
  // True when every chunk `box` overlaps is the generator's as of the calling thread's snapshot
  // (PeekChunk null): not edited, stored or resident. `box` lies inside the world.
  bool GeneratorsOnly(const IntBox& box) const;
  // What Load does where the generator's content is asked for.
  enum LoadMode { kPeek, kGenerate };
  // LoadChunk (kGenerate) or PeekChunk (kPeek).
  absl::StatusOr<ChunkPtr> Load(const ChunkKey& key, LoadMode mode) const;
  // LoadChunk as of the newest published version, ignoring the thread's snapshot; with
  // kPeek, null where the generator would run.
  absl::StatusOr<ChunkPtr> LoadLatest(const ChunkKey& key, LoadMode mode = kGenerate) const;
  // The content of `key` at `version` if an edit published after it replaced the chunk: the
  // history entry with the smallest replacing version above `version`; else null.
  ChunkPtr HistoryAt(const ChunkKey& key, uint64_t version) const;
  bool DirtiedAfter(const ChunkKey& key, uint64_t version) const;
  // The calling thread's snapshot of this world, or null.
  const ReadSnapshot* ThreadSnapshot() const;
  bool NewerThanSnapshotSlow(const ChunkKey& key) const;
  // Keeps what edit `p` replaces for older snapshots; before its chunks are swapped in.
  void RecordHistory(const PendingEdit& p);
  // Drops history no alive, unexpired snapshot can read. Caller holds history_mu_.
  void PruneHistoryLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  // Expires the oldest snapshots until the history fits its budget. Caller holds history_mu_.
  void EnforceHistoryBudgetLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  // Version of the oldest unexpired snapshot, else the current version.
  uint64_t OldestReaderLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  // Drops the front entry of history_ (its replaced chunks and dirty marks).
  void PopHistoryLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  uint64_t OldestReadableLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  std::shared_ptr<const PastView> PastViewLocked(uint64_t version) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  void EvictOver(Shard& shard, const ChunkKey& keep) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(shard.mu);
  // The chunk as the next edit must see it: staged by an unpublished edit, else LoadChunk.
  // Caller holds edit_mu_.
  absl::StatusOr<ChunkPtr> StagedOrLoaded(const ChunkKey& key) const;
  absl::Status Stage(const std::function<absl::Status(ChunkEdit&)>& edit, PendingEdit* pending);
  absl::Status Diff(const ChunkEdit& scratch, PendingEdit* pending) const;
  // Leader only (committing_ set by this thread): commits every queued edit as one group.
  void CommitQueued();
  std::vector<PendingEdit*> TakeQueue();
  void PublishGroup(const std::vector<PendingEdit*>& group);
  void AbortQueued(const std::vector<PendingEdit*>& group, const absl::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(commit_mu_);

  WorldConfig config_;
  std::unique_ptr<ChunkGenerator> generator_;
  const ChunkLoader* loader_ = nullptr;
  std::vector<EditObserver*> observers_;
  IntBox voxel_bounds_;
  IntBox chunk_bounds_;
  ChunkPtr air_;
  size_t shard_budget_ = 0;  // resident chunks per shard; 0 = unlimited
  mutable std::array<Shard, kShards> shards_;
  size_t uniform_page_count_ = 0;
  std::unique_ptr<std::atomic<std::atomic<uint32_t>*>[]> uniform_pages_;
  // Lock order: commit_mu_ before edit_mu_ before shard locks.
  mutable absl::Mutex edit_mu_;  // serializes staging; readers never take it
  absl::flat_hash_map<ChunkKey, ChunkPtr> staged_ ABSL_GUARDED_BY(edit_mu_);
  std::vector<PendingEdit*> queue_ ABSL_GUARDED_BY(edit_mu_);  // staged, in version order
  uint64_t staged_version_ ABSL_GUARDED_BY(edit_mu_) = 0;      // version of the last staged edit
  std::atomic<int> staging_{0};  // threads in Edit that have not queued (or failed) yet
  absl::Mutex commit_mu_;  // guards the leader role and PendingEdit::done/status; never held long
  bool committing_ ABSL_GUARDED_BY(commit_mu_) = false;  // a leader is committing a group
  // History for snapshots (see ReadSnapshot). Lock order: shard locks are never held with it.
  mutable absl::Mutex history_mu_;
  struct Replaced {
    uint64_t until;  // the version that replaced `chunk`
    ChunkPtr chunk;  // content at versions [.., until)
  };
  // Per key, ascending `until`.
  mutable absl::flat_hash_map<ChunkKey, std::vector<Replaced>> replaced_
      ABSL_GUARDED_BY(history_mu_);
  // Per key, ascending, the versions whose edit changed a voxel within two voxels of the chunk.
  mutable absl::flat_hash_map<ChunkKey, std::vector<uint64_t>> dirtied_
      ABSL_GUARDED_BY(history_mu_);
  struct HistoryEntry {
    uint64_t version;
    absl::Time published;  // when the version became current (recorded just before)
    std::vector<ChunkKey> replaced, dirtied;
  };
  HistoryRetention retention_;
  // Whether retention keeps `entry` (world_retention.cc).
  bool RetainedLocked(const HistoryEntry& entry) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(history_mu_);
  // Publication time of the oldest readable version (InfinitePast while nothing was dropped).
  mutable absl::Time oldest_published_ ABSL_GUARDED_BY(history_mu_) = absl::InfinitePast();
  // Recently built past views (see OpenSnapshotAt), reused while no edit intervened.
  static constexpr int kViewCache = 4;
  mutable std::shared_ptr<const PastView> views_[kViewCache] ABSL_GUARDED_BY(history_mu_);
  mutable int next_view_ ABSL_GUARDED_BY(history_mu_) = 0;
  mutable std::deque<HistoryEntry> history_ ABSL_GUARDED_BY(history_mu_);  // ascending version
  mutable size_t history_chunks_ ABSL_GUARDED_BY(history_mu_) = 0;
  // Alive registered snapshots by version.
  mutable std::multimap<uint64_t, ReadSnapshot*> snapshots_ ABSL_GUARDED_BY(history_mu_);
  mutable uint64_t expired_snapshots_ ABSL_GUARDED_BY(history_mu_) = 0;
  size_t history_budget_ = 0;  // bytes; 0 = unlimited
  // The version of the edit being (or last) published: set before its chunks and derived data
  // change and before version_, so a reader that saw any of them sees it too.
  std::atomic<uint64_t> publishing_version_{0};
  std::atomic<uint64_t> version_{0};
};

// What a snapshot of a past version reads without locks: for the edits (version, through], the
// content at `version` of every chunk they replaced and, per chunk they dirtied, the first of them
// that did (World::SnapshotDataUntil). Immutable; shared by snapshots of the same version.
struct World::PastView {
  uint64_t version = 0;
  uint64_t through = 0;
  absl::flat_hash_map<ChunkKey, ChunkPtr> chunks;
  absl::flat_hash_map<ChunkKey, uint64_t> dirty_until;
  size_t bytes = 0;  // tables only (the chunks are the history's)
  // One bit per hash of the keys in `chunks` / `dirty_until`: most reads touch neither, and a
  // clear bit answers that without a hash-table lookup.
  static constexpr int kFilterWords = 64;
  uint64_t chunk_filter[kFilterWords] = {};
  uint64_t dirty_filter[kFilterWords] = {};
  static uint32_t FilterBit(const ChunkKey& k) {
    return (uint32_t(k.x) * 73856093u ^ uint32_t(k.y) * 19349663u ^ uint32_t(k.z) * 83492791u) %
           (kFilterWords * 64);
  }
  static bool Test(const uint64_t* filter, const ChunkKey& k) {
    const uint32_t b = FilterBit(k);
    return (filter[b >> 6] >> (b & 63)) & 1;
  }
  static void Set(uint64_t* filter, const ChunkKey& k) {
    const uint32_t b = FilterBit(k);
    filter[b >> 6] |= uint64_t(1) << (b & 63);
  }
  const ChunkPtr* FindChunk(const ChunkKey& k) const {
    if (!Test(chunk_filter, k)) return nullptr;
    auto it = chunks.find(k);
    return it == chunks.end() ? nullptr : &it->second;
  }
  bool MayBeDirty(const ChunkKey& k) const { return Test(dirty_filter, k); }
};

namespace world_internal {
// The calling thread's innermost ReadSnapshot (of any world), or null.
inline thread_local const World::ReadSnapshot* current_snapshot = nullptr;
}  // namespace world_internal

inline bool World::NewerThanSnapshot(const ChunkKey& key) const {
  // No snapshot: the thread reads the newest data, derived data included.
  const ReadSnapshot* snapshot = world_internal::current_snapshot;
  if (snapshot == nullptr) return false;
  // Nothing newer than the snapshot (for a past snapshot: than its view) has begun publishing,
  // and a past snapshot's view did not dirty the key: all data is of its version.
  if (&snapshot->world_ == this &&
      publishing_version_.load(std::memory_order_acquire) <= snapshot->live_version_ &&
      (snapshot->view_ == nullptr || !snapshot->view_->MayBeDirty(key))) {
    return false;
  }
  return NewerThanSnapshotSlow(key);
}

// Mutable view used inside World::Edit. Reads see the batch's own earlier writes. If a chunk fails
// to load, the whole edit fails with that error.
class ChunkEdit {
 public:
  explicit ChunkEdit(const World& world) : world_(world) {}

  const World& world() const { return world_; }
  // The version this edit builds on: the last edit staged before it, published or not yet (so an
  // expected-version check here sees edits that are still being made durable).
  uint64_t base_version() const { return base_version_; }
  Voxel Get(const Int3& voxel) const;
  // Writes a voxel (canonicalized). Precondition: voxel inside the world bounds.
  void Set(const Int3& voxel, Voxel v);
  // Writable copy of a chunk (copied from the published one on first write).
  Chunk* Mutable(const ChunkKey& key);
  // A read replica's re-seed: this edit gets version `version` instead of base_version() + 1,
  // skipping the versions between (they were never local; read_at them reads the edit's base).
  // Ignored unless above base_version().
  void SetVersion(uint64_t version) { set_version_ = version; }

 private:
  friend class World;
  const World& world_;
  uint64_t base_version_ = 0;
  uint64_t set_version_ = 0;
  absl::flat_hash_map<ChunkKey, std::shared_ptr<Chunk>> touched_;
  mutable absl::Status load_status_;  // first chunk load error, if any
};

}  // namespace voxcol
