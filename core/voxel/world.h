// The sparse, editable voxel world: finite bounds, lazily generated chunks, a monotonic version.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
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

// An edit about to be (or just) published: its result and the new content of every changed chunk.
struct CommittedEdit {
  const EditResult& result;
  const std::vector<std::pair<ChunkKey, ChunkPtr>>& chunks;  // sorted by key, same order as changes
};

// Hooks on the commit path, called under the world's edit lock in registration order, so they see
// edits one at a time in version order.
class EditObserver {
 public:
  virtual ~EditObserver() = default;
  // Before anything is visible: e.g. make the edit durable. An error aborts the edit: nothing is
  // published and the version does not advance.
  virtual absl::Status BeforePublish(const CommittedEdit& edit) { return absl::OkStatus(); }
  // After the chunks and the version are visible: e.g. feed subscribers.
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
  World(const WorldConfig& config, std::unique_ptr<ChunkGenerator> generator);

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
  void SetLoader(const ChunkLoader* loader) { loader_ = loader; }
  // Sets the version of a world reopened from storage; call before serving.
  void RestoreVersion(uint64_t version) { version_.store(version, std::memory_order_release); }

  // The chunk at `key`: resident, else loaded, else generated on first touch. Chunks outside the
  // world are air. A chunk whose stored record cannot be loaded is an error here.
  absl::StatusOr<ChunkPtr> LoadChunk(const ChunkKey& key) const;
  // Same as LoadChunk, but a chunk that fails to load reads as air (callers that must report
  // DATA_LOSS use LoadChunk). Thread-safe.
  ChunkPtr GetChunk(const ChunkKey& key) const;
  // One voxel; air outside the world. Thread-safe.
  Voxel GetVoxel(const Int3& voxel) const;
  // Voxel containing a world-space point (floor of p / voxel_size).
  Int3 VoxelAt(const Vec3& p) const;
  // Centre of a voxel in world units.
  Vec3 VoxelCenter(const Int3& voxel) const;
  bool ContainsPoint(const Vec3& p) const;

  // Runs `edit` under the world's edit lock with a scratch ChunkEdit, then publishes all modified
  // chunks together and advances the version by one if any voxel changed (an edit that changes
  // nothing still gets a new version so that every acknowledged batch has its own). If `edit`
  // returns an error nothing is published and the version stays.
  absl::StatusOr<EditResult> Edit(const std::function<absl::Status(ChunkEdit&)>& edit);

  // Runs `read` (which loads chunks of this world) so that everything it sees belongs to one
  // published version, and returns that version. `read` may run more than once and must start
  // over each time; an error from it is returned as is. Lock-free unless edits keep publishing
  // during the read: after a few attempts it runs once under the edit lock.
  absl::StatusOr<uint64_t> ReadConsistent(const std::function<absl::Status()>& read) const;

  // Number of chunks currently resident (generated or edited).
  size_t resident_chunks() const;

 private:
  static constexpr int kShards = 64;
  struct Shard {
    mutable absl::Mutex mu;
    absl::flat_hash_map<ChunkKey, ChunkPtr> chunks ABSL_GUARDED_BY(mu);
  };
  Shard& ShardFor(const ChunkKey& key) const;
  void Publish(const ChunkKey& key, ChunkPtr chunk);

  WorldConfig config_;
  std::unique_ptr<ChunkGenerator> generator_;
  const ChunkLoader* loader_ = nullptr;
  std::vector<EditObserver*> observers_;
  IntBox voxel_bounds_;
  IntBox chunk_bounds_;
  ChunkPtr air_;
  mutable std::array<Shard, kShards> shards_;
  mutable absl::Mutex edit_mu_;  // serializes edits; readers only take it in ReadConsistent's fallback
  std::atomic<uint64_t> version_{0};
  // Seqlock counter: odd while an edit publishes its chunks and version, even otherwise.
  std::atomic<uint64_t> publish_seq_{0};
};

// Mutable view used inside World::Edit. Reads see the batch's own earlier writes. If a chunk fails
// to load, the whole edit fails with that error.
class ChunkEdit {
 public:
  explicit ChunkEdit(const World& world) : world_(world) {}

  const World& world() const { return world_; }
  Voxel Get(const Int3& voxel) const;
  // Writes a voxel (canonicalized). Precondition: voxel inside the world bounds.
  void Set(const Int3& voxel, Voxel v);
  // Writable copy of a chunk (copied from the published one on first write).
  Chunk* Mutable(const ChunkKey& key);

 private:
  friend class World;
  const World& world_;
  absl::flat_hash_map<ChunkKey, std::shared_ptr<Chunk>> touched_;
  mutable absl::Status load_status_;  // first chunk load error, if any
};

}  // namespace voxcol
