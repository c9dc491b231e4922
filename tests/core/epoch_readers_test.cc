// EpochReaders (core/epoch_readers.h): nothing retired is freed while a scope that could have
// loaded it lives, nested and interleaved scopes included. "Freeing" here marks an object dead
// and keeps its memory, so a premature free is a failed check in every build, not only under ASan.
#include "core/epoch_readers.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace voxcol {
namespace {

struct Object {
  std::atomic<bool> alive{true};
};

struct IndexTag {};
struct CacheTag {};

// The owner side: an object pool whose retired lists are freed by marking objects dead.
template <typename Tag>
struct Owner {
  EpochReaders<Tag> readers;
  std::vector<std::unique_ptr<Object>> pool;
  std::vector<Object*> retired[2];

  Object* Retire() {
    pool.push_back(std::make_unique<Object>());
    Object* object = pool.back().get();
    retired[readers.RetireList()].push_back(object);
    return object;
  }
  bool Reclaim() {
    return readers.Reclaim(retired, [](Object* o) { o->alive.store(false); });
  }
};

TEST(EpochReaders, RetiredObjectIsFreedOnTheSecondReclaimWithoutReaders) {
  Owner<IndexTag> owner;
  Object* object = owner.Retire();
  EXPECT_TRUE(owner.Reclaim());  // frees the other (empty) list, advances
  EXPECT_TRUE(object->alive);
  EXPECT_TRUE(owner.Reclaim());
  EXPECT_FALSE(object->alive);
}

TEST(EpochReaders, ScopeKeepsWhatWasRetiredWhileItLives) {
  Owner<IndexTag> owner;
  Object* object;
  {
    EpochReaders<IndexTag>::Scope scope(owner.readers);
    object = owner.Retire();
    for (int i = 0; i < 4; ++i) owner.Reclaim();
    EXPECT_TRUE(object->alive);
  }
  owner.Reclaim();
  owner.Reclaim();
  EXPECT_FALSE(object->alive);
}

TEST(EpochReaders, NestedScopeEndingLeavesTheOuterCount) {
  Owner<IndexTag> owner;
  EpochReaders<IndexTag>::Scope outer(owner.readers);
  Object* object;
  {
    EpochReaders<IndexTag>::Scope inner(owner.readers);
    object = owner.Retire();
  }
  for (int i = 0; i < 4; ++i) owner.Reclaim();
  EXPECT_TRUE(object->alive);
}

// After the outermost scope ends, the thread is no longer counted: a later scope must count itself
// again (a scope that failed to restore the thread's record would be taken for a nested one).
TEST(EpochReaders, ScopeAfterTheOutermostEndedCountsAgain) {
  Owner<IndexTag> owner;
  { EpochReaders<IndexTag>::Scope first(owner.readers); }
  EpochReaders<IndexTag>::Scope second(owner.readers);
  Object* object = owner.Retire();
  for (int i = 0; i < 4; ++i) owner.Reclaim();
  EXPECT_TRUE(object->alive);
}

// Scopes on two objects of one kind interleave: the inner one on the first object counts again
// (the thread's record names the second), and each end restores the record it found.
TEST(EpochReaders, InterleavedScopesOnTwoObjectsRestoreTheThreadsRecord) {
  Owner<IndexTag> a, b;
  {
    EpochReaders<IndexTag>::Scope outer_a(a.readers);
    {
      EpochReaders<IndexTag>::Scope on_b(b.readers);
      EpochReaders<IndexTag>::Scope inner_a(a.readers);
    }
    Object* object = a.Retire();
    for (int i = 0; i < 4; ++i) a.Reclaim();
    EXPECT_TRUE(object->alive);  // outer_a still counts
  }
  EpochReaders<IndexTag>::Scope later_a(a.readers);
  Object* object = a.Retire();
  for (int i = 0; i < 4; ++i) a.Reclaim();
  EXPECT_TRUE(object->alive);  // later_a counted itself
}

// A scope protects only what its own object retires, also across kinds.
TEST(EpochReaders, ScopeProtectsOnlyItsOwnObject) {
  Owner<IndexTag> index;
  Owner<CacheTag> cache;
  {
    EpochReaders<IndexTag>::Scope on_index(index.readers);
    Object* cached = cache.Retire();
    for (int i = 0; i < 2; ++i) cache.Reclaim();
    EXPECT_FALSE(cached->alive);
  }
  EpochReaders<CacheTag>::Scope on_cache(cache.readers);
  Object* indexed = index.Retire();
  for (int i = 0; i < 2; ++i) index.Reclaim();
  EXPECT_FALSE(indexed->alive);
}

// Readers load the current object through nested scopes and check it is alive after the nested
// scope ended (the outer one still protects it), while the writer swaps it and retires the old
// one as fast as it can.
TEST(EpochReaders, ConcurrentNestedReadersNeverSeeAFreedObject) {
  Owner<IndexTag> owner;
  std::vector<std::unique_ptr<Object>> objects;
  for (int i = 0; i < 20000; ++i) objects.push_back(std::make_unique<Object>());
  std::atomic<Object*> current{objects[0].get()};
  std::atomic<bool> done{false};
  std::atomic<int> dead_seen{0};
  std::atomic<int64_t> rounds{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      while (!done.load()) {
        rounds.fetch_add(1);
        EpochReaders<IndexTag>::Scope outer(owner.readers);
        for (int i = 0; i < 8; ++i) {
          Object* seen;
          {
            EpochReaders<IndexTag>::Scope nested(owner.readers);
            seen = current.load();
          }
          if (i % 2 == 1) std::this_thread::yield();
          if (!seen->alive.load()) dead_seen.fetch_add(1);
        }
      }
    });
  }
  while (rounds.load() < 3) std::this_thread::yield();  // the readers run
  for (size_t i = 1; i < objects.size(); ++i) {
    if (i % 16 == 0) std::this_thread::yield();  // let readers in between swaps
    Object* old = current.exchange(objects[i].get());
    owner.retired[owner.readers.RetireList()].push_back(old);
    owner.Reclaim();
  }
  done.store(true);
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(dead_seen.load(), 0);
  EXPECT_GT(rounds.load(), 100);
  int freed = 0;
  for (const auto& object : objects) freed += !object->alive.load();
  EXPECT_GT(freed, 0);  // the writer did reclaim while readers ran
}

}  // namespace
}  // namespace voxcol
