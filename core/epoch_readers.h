// Two-epoch reclamation for structures that readers traverse without a lock: the reader count
// and epoch behind BroadphaseIndex::ReadScope and ChunkCollisionCache::ReadScope.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace voxcol {

// EpochReaders' ShardData when the owner keeps nothing beside the readers' count.
struct NoShardData {};

// A writer that unlinks an object retires it to the list of the current epoch, RetireList(), and
// frees it with Reclaim once no reader counted in that epoch remains. A reader holds a Scope while
// it uses what it loaded. While a scope counted in epoch E lives, the epoch cannot pass E + 1, so
// nothing retired in E or later is freed under it.
//
// Scopes may nest. A thread's outermost scope on an EpochReaders counts the thread (two atomic
// read-modify-writes on a line of the thread's shard, full barriers on x86); a scope nested in it
// on the same object relies on that count and costs a thread-local compare, no atomic operation
// (plus the thread's shard lookup when the owner keeps shard data).
// `Owner` names the kind of structure, so that a thread's scopes on a broadphase index and on a
// cache nest each on its own. `ShardData` is per-shard data the owner writes from readers beside
// their count (the cache's hit counter), on a line no other thread's shard shares.
template <typename Owner, typename ShardData = NoShardData>
class EpochReaders {
 public:
  static constexpr int kShards = 16;
  static constexpr bool kHasData = !std::is_empty_v<ShardData>;
  struct alignas(64) Shard {
    std::atomic<int64_t> count[2] = {0, 0};
    ShardData data;
  };

  EpochReaders() = default;
  EpochReaders(const EpochReaders&) = delete;
  EpochReaders& operator=(const EpochReaders&) = delete;

  class Scope {
   public:
    explicit Scope(const EpochReaders& readers) {
      // An owner with shard data reaches the thread's shard from nested scopes too; otherwise a
      // nested scope needs no shard, and skips its lookup.
      if constexpr (kHasData) shard_ = &readers.shards_[ThreadShard()];
      // Nested in a scope that counts this thread on `readers`: what it retires stays until that
      // scope ends, which is after this one (scopes live on the stack).
      if (counted_ == &readers) return;
      if constexpr (!kHasData) shard_ = &readers.shards_[ThreadShard()];
      counts_ = true;
      enclosing_ = counted_;
      counted_ = &readers;
      // Count ourselves in the current epoch; if the epoch moved meanwhile, the writer may already
      // have checked that counter, so undo and retry with the new epoch.
      for (;;) {
        epoch_ = readers.epoch_.load();
        shard_->count[epoch_ & 1].fetch_add(1);
        if (readers.epoch_.load() == epoch_) return;
        shard_->count[epoch_ & 1].fetch_sub(1);
      }
    }
    ~Scope() {
      if (!counts_) return;  // nested
      shard_->count[epoch_ & 1].fetch_sub(1);
      counted_ = enclosing_;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   protected:
    // The calling thread's shard's data, nested or not (for the owner, through its scope type).
    ShardData& shard_data() const { return shard_->data; }

   private:
    Shard* shard_ = nullptr;  // the thread's shard; null in a nested scope without shard data
    uint64_t epoch_ = 0;
    bool counts_ = false;                      // false: nested in a scope that counts this thread
    const EpochReaders* enclosing_ = nullptr;  // the thread's counted object before this scope
  };

  // Writer side. The caller serializes RetireList, Reclaim and its two lists under one mutex.
  // Which of the caller's two lists an object unlinked now is retired to.
  int RetireList() const { return int(epoch_.load() & 1); }
  // Objects retired in epoch e-1 are unreachable for readers that entered in epoch e or later.
  // Once no reader of epoch e-1 remains, frees them with `free` and advances to e+1 (reusing that
  // list and counter). False: readers of e-1 remain, nothing is freed.
  template <typename T, typename Free>
  bool Reclaim(std::vector<T> (&retired)[2], Free free) const {
    const uint64_t e = epoch_.load();
    const int previous = int((e + 1) & 1);
    if (Active(previous) != 0) return false;
    for (T object : retired[previous]) free(object);
    retired[previous].clear();
    epoch_.store(e + 1);
    return true;
  }

  // Visits every shard (to sum ShardData).
  template <typename F>
  void ForEachShard(F f) const {
    for (const Shard& shard : shards_) f(shard);
  }

 private:
  int64_t Active(int parity) const {
    int64_t n = 0;
    for (const Shard& shard : shards_) n += shard.count[parity].load();
    return n;
  }

  // Threads take shards round robin on their first scope.
  static int ThreadShard() {
    static std::atomic<uint32_t> next{0};
    thread_local const int shard = int(next.fetch_add(1, std::memory_order_relaxed) % kShards);
    return shard;
  }

  // The object the calling thread's innermost counting scope counts it on (null: none).
  static inline thread_local const EpochReaders* counted_ = nullptr;

  mutable std::atomic<uint64_t> epoch_{0};
  mutable Shard shards_[kShards];
};

}  // namespace voxcol
