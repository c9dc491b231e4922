#include "core/voxel/world.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "absl/strings/str_cat.h"

namespace voxcol {

absl::Status ValidateWorldConfig(const WorldConfig& config) {
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    int32_t s = config.size_voxels[i];
    // 2^20 voxels per axis keeps every voxel index and product well inside int32/int64.
    if (s <= 0 || s % kChunkSize != 0 || s > (1 << 20)) {
      return absl::InvalidArgumentError(absl::StrCat("world size.", axes[i], " must be a positive multiple of ",
                                                     kChunkSize, " up to 1048576, got ", s));
    }
  }
  if (!std::isfinite(config.voxel_size) || config.voxel_size <= 0 || config.voxel_size > 1e4f) {
    return absl::InvalidArgumentError(
        absl::StrCat("voxel_size must be finite and in (0, 1e4], got ", config.voxel_size));
  }
  return absl::OkStatus();
}

IntBox WorldVoxelBounds(const WorldConfig& config) {
  Int3 half{config.size_voxels.x / 2, config.size_voxels.y / 2, config.size_voxels.z / 2};
  return {{-half.x, -half.y, -half.z}, half};
}

World::World(const WorldConfig& config, std::unique_ptr<ChunkGenerator> generator)
    : config_(config), generator_(std::move(generator)), air_(UniformChunk(Voxel{})) {
  voxel_bounds_ = WorldVoxelBounds(config);
  chunk_bounds_ = {ChunkOf(voxel_bounds_.min), ChunkOf(voxel_bounds_.max)};
}

Aabb World::world_bounds() const {
  float h = config_.voxel_size;
  return {Vec3(voxel_bounds_.min.x, voxel_bounds_.min.y, voxel_bounds_.min.z) * h,
          Vec3(voxel_bounds_.max.x, voxel_bounds_.max.y, voxel_bounds_.max.z) * h};
}

World::Shard& World::ShardFor(const ChunkKey& key) const {
  // Cheap spatial hash; neighbouring chunks land in different shards.
  uint32_t h = uint32_t(key.x) * 73856093u ^ uint32_t(key.y) * 19349663u ^ uint32_t(key.z) * 83492791u;
  return shards_[h % kShards];
}

absl::StatusOr<ChunkPtr> World::LoadChunk(const ChunkKey& key) const {
  if (!chunk_bounds_.Contains(key)) return air_;
  Shard& shard = ShardFor(key);
  {
    absl::ReaderMutexLock lock(&shard.mu);
    auto it = shard.chunks.find(key);
    if (it != shard.chunks.end()) return it->second;
  }
  // Load or generate outside the lock: both are deterministic, so a race only wastes work.
  ChunkPtr result;
  if (loader_ != nullptr) {
    absl::StatusOr<ChunkPtr> stored = loader_->Load(key);
    if (!stored.ok()) return stored.status();
    result = *std::move(stored);
  }
  if (result == nullptr) {
    auto chunk = std::make_shared<Chunk>();
    generator_->Generate(key, chunk.get());
    result = chunk->IsUniform() ? UniformChunk(chunk->voxels[0]) : ChunkPtr(std::move(chunk));
  }
  absl::MutexLock lock(&shard.mu);
  auto [it, inserted] = shard.chunks.emplace(key, std::move(result));
  return it->second;
}

ChunkPtr World::GetChunk(const ChunkKey& key) const {
  absl::StatusOr<ChunkPtr> chunk = LoadChunk(key);
  return chunk.ok() ? *std::move(chunk) : air_;
}

Voxel World::GetVoxel(const Int3& voxel) const {
  if (!voxel_bounds_.Contains(voxel)) return Voxel{};
  return GetChunk(ChunkOf(voxel))->At(LocalOf(voxel));
}

Int3 World::VoxelAt(const Vec3& p) const {
  float inv = 1.0f / config_.voxel_size;
  return {int32_t(std::floor(p.x * inv)), int32_t(std::floor(p.y * inv)), int32_t(std::floor(p.z * inv))};
}

Vec3 World::VoxelCenter(const Int3& v) const {
  return Vec3(v.x + 0.5f, v.y + 0.5f, v.z + 0.5f) * config_.voxel_size;
}

bool World::ContainsPoint(const Vec3& p) const {
  Aabb b = world_bounds();
  return IsFinite(p) && p.x >= b.min.x && p.y >= b.min.y && p.z >= b.min.z && p.x < b.max.x &&
         p.y < b.max.y && p.z < b.max.z;
}

void World::Publish(const ChunkKey& key, ChunkPtr chunk) {
  Shard& shard = ShardFor(key);
  absl::MutexLock lock(&shard.mu);
  shard.chunks[key] = std::move(chunk);
}

size_t World::resident_chunks() const {
  size_t n = 0;
  for (Shard& shard : shards_) {
    absl::ReaderMutexLock lock(&shard.mu);
    n += shard.chunks.size();
  }
  return n;
}

absl::StatusOr<EditResult> World::Edit(const std::function<absl::Status(ChunkEdit&)>& edit) {
  absl::MutexLock lock(&edit_mu_);
  ChunkEdit scratch(*this);
  absl::Status status = edit(scratch);
  if (status.ok()) status = scratch.load_status_;  // never edit on top of a chunk that failed to load
  if (!status.ok()) return status;

  // Diff each touched chunk against the published one to find what really changed.
  EditResult result;
  std::vector<std::pair<ChunkKey, ChunkPtr>> to_publish;
  for (auto& [key, chunk] : scratch.touched_) {
    ChunkPtr before = GetChunk(key);  // resident: ChunkEdit::Mutable loaded it
    Int3 lo{kChunkSize, kChunkSize, kChunkSize}, hi{-1, -1, -1};
    for (int y = 0; y < kChunkSize; ++y)
      for (int z = 0; z < kChunkSize; ++z)
        for (int x = 0; x < kChunkSize; ++x) {
          if (chunk->At(x, y, z) == before->At(x, y, z)) continue;
          lo = {std::min(lo.x, x), std::min(lo.y, y), std::min(lo.z, z)};
          hi = {std::max(hi.x, x), std::max(hi.y, y), std::max(hi.z, z)};
        }
    if (hi.x < 0) continue;
    Int3 origin = ChunkOrigin(key);
    result.changes.push_back({key, {origin + lo, origin + hi + Int3{1, 1, 1}}});
    to_publish.emplace_back(key, chunk->IsUniform() ? UniformChunk(chunk->voxels[0]) : ChunkPtr(chunk));
  }
  std::sort(result.changes.begin(), result.changes.end(),
            [](const ChunkChange& a, const ChunkChange& b) { return a.key < b.key; });

  // Derived data of a chunk depends on voxels up to one voxel outside it.
  for (const ChunkChange& c : result.changes) {
    ChunkKey lo = ChunkOf(c.changed_voxels.min - Int3{1, 1, 1});
    ChunkKey hi = ChunkOf(c.changed_voxels.max);  // max is exclusive, so max itself is one voxel out
    for (int y = lo.y; y <= hi.y; ++y)
      for (int z = lo.z; z <= hi.z; ++z)
        for (int x = lo.x; x <= hi.x; ++x) {
          ChunkKey k{x, y, z};
          if (chunk_bounds_.Contains(k)) result.dirty_chunks.push_back(k);
        }
  }
  std::sort(result.dirty_chunks.begin(), result.dirty_chunks.end());
  result.dirty_chunks.erase(std::unique(result.dirty_chunks.begin(), result.dirty_chunks.end()),
                            result.dirty_chunks.end());

  std::sort(to_publish.begin(), to_publish.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  result.version = version_.load(std::memory_order_acquire) + 1;
  CommittedEdit committed{result, to_publish};
  for (EditObserver* observer : observers_) {
    absl::Status s = observer->BeforePublish(committed);
    if (!s.ok()) return s;
  }
  publish_seq_.fetch_add(1, std::memory_order_acq_rel);  // odd: publishing
  for (const auto& [key, chunk] : to_publish) Publish(key, chunk);
  version_.store(result.version, std::memory_order_release);
  publish_seq_.fetch_add(1, std::memory_order_acq_rel);  // even: stable
  for (EditObserver* observer : observers_) observer->AfterPublish(committed);
  return result;
}

absl::StatusOr<uint64_t> World::ReadConsistent(const std::function<absl::Status()>& read) const {
  // Chunks are published under shard mutexes after the counter turns odd, so a reader that saw
  // any chunk of an edit also sees the counter changed when it checks again afterwards.
  constexpr int kAttempts = 4;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    uint64_t before = publish_seq_.load(std::memory_order_acquire);
    if (before & 1) {
      std::this_thread::yield();
      continue;
    }
    uint64_t version = version_.load(std::memory_order_acquire);
    absl::Status status = read();
    if (!status.ok()) return status;
    if (publish_seq_.load(std::memory_order_acquire) == before) return version;
  }
  absl::MutexLock lock(&edit_mu_);
  absl::Status status = read();
  if (!status.ok()) return status;
  return version_.load(std::memory_order_acquire);
}

Voxel ChunkEdit::Get(const Int3& voxel) const {
  if (!world_.voxel_bounds().Contains(voxel)) return Voxel{};
  ChunkKey key = ChunkOf(voxel);
  auto it = touched_.find(key);
  if (it != touched_.end()) return it->second->At(LocalOf(voxel));
  absl::StatusOr<ChunkPtr> chunk = world_.LoadChunk(key);
  if (!chunk.ok()) {
    load_status_.Update(chunk.status());
    return Voxel{};
  }
  return (*chunk)->At(LocalOf(voxel));
}

Chunk* ChunkEdit::Mutable(const ChunkKey& key) {
  auto it = touched_.find(key);
  if (it != touched_.end()) return it->second.get();
  absl::StatusOr<ChunkPtr> published = world_.LoadChunk(key);
  if (!published.ok()) load_status_.Update(published.status());
  auto copy = std::make_shared<Chunk>(published.ok() ? **published : Chunk{});
  Chunk* raw = copy.get();
  touched_.emplace(key, std::move(copy));
  return raw;
}

void ChunkEdit::Set(const Int3& voxel, Voxel v) {
  Mutable(ChunkOf(voxel))->At(LocalOf(voxel)) = Canonical(v);
}

}  // namespace voxcol
