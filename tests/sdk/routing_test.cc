// Placement of worlds over primaries by rendezvous hashing (client/routing.h). The oracle is the
// definition itself, evaluated independently here (argmax of the weights over all ordinals), plus
// the properties placement relies on: balance, and minimal movement when the set is resized.
#include "client/routing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace voxcol::client {
namespace {

std::string WorldId(int i) { return "match-" + std::to_string(i); }

TEST(RendezvousTest, OwnerIsTheHighestWeight) {
  for (int i = 0; i < 2000; ++i) {
    const std::string id = WorldId(i);
    for (int n = 1; n <= 7; ++n) {
      int best = 0;
      for (int o = 1; o < n; ++o) {
        if (RendezvousWeight(id, o) > RendezvousWeight(id, best)) best = o;
      }
      ASSERT_EQ(RendezvousOwner(id, n), best) << id << " over " << n;
    }
  }
  EXPECT_EQ(RendezvousOwner("anything", 1), 0);
}

TEST(RendezvousTest, WeightsAreStableAndDependOnBothInputs) {
  // Golden values, computed independently from the documented definition (FNV-1a 64 over the id,
  // a zero byte and the ordinal's 4 little-endian bytes, then splitmix64's finalizer) with a
  // Python one-liner: every client and release must place a world on the same pod.
  EXPECT_EQ(RendezvousWeight("world-a", 0), 16680744917276560431ULL);
  EXPECT_EQ(RendezvousWeight("world-a", 2), 17579736903731674355ULL);
  EXPECT_EQ(RendezvousWeight("match-17", 1), 17454935651558434681ULL);
  EXPECT_EQ(RendezvousOwner("world-a", 3), 2);
  EXPECT_EQ(RendezvousOwner("match-17", 3), 1);
  EXPECT_NE(RendezvousWeight("world-a", 0), RendezvousWeight("world-a", 1));
  EXPECT_NE(RendezvousWeight("world-a", 0), RendezvousWeight("world-b", 0));
  EXPECT_NE(RendezvousWeight("a", 1), RendezvousWeight("a\x01", 0));  // id and ordinal separated
}

TEST(RendezvousTest, SpreadsWorldsEvenly) {
  constexpr int kWorlds = 20000, kPrimaries = 5;
  std::vector<int> counts(kPrimaries);
  for (int i = 0; i < kWorlds; ++i) ++counts[RendezvousOwner(WorldId(i), kPrimaries)];
  for (int c : counts) {  // 4000 expected, sd ~57
    EXPECT_GT(c, 3600);
    EXPECT_LT(c, 4400);
  }
}

TEST(RendezvousTest, ResizingMovesOnlyTheNecessaryWorlds) {
  constexpr int kWorlds = 20000;
  int moved = 0;
  for (int i = 0; i < kWorlds; ++i) {
    const int before = RendezvousOwner(WorldId(i), 4), after = RendezvousOwner(WorldId(i), 5);
    if (before != after) {
      ++moved;
      EXPECT_EQ(after, 4) << "scaling up moves worlds only to the new pod";
    }
    // Scaling 5 -> 4 moves back exactly the worlds of the removed ordinal.
    EXPECT_EQ(after == 4, before != after);
  }
  EXPECT_GT(moved, kWorlds / 5 - 400);  // about 1/5 of the worlds
  EXPECT_LT(moved, kWorlds / 5 + 400);
}

TEST(RoutingTest, StatefulPodAddress) {
  EXPECT_EQ(StatefulPodAddress("voxcol", 2, "voxcol-headless", 50051),
            "voxcol-2.voxcol-headless:50051");
}

// Read-your-writes floors are per world: versions of different worlds are unrelated, so an edit
// acknowledged in one world must not make batches for another wait for that version.
TEST(RoutingTest, ReadFloorIsPerWorld) {
  RoutingTargets targets;
  targets.primary = "127.0.0.1:1";  // never contacted: floors are client state
  targets.replicas = {"127.0.0.1:2"};
  RoutedClient routed(targets);
  EXPECT_EQ(routed.read_floor(), 0u);
  EXPECT_EQ(routed.read_floor("match-1"), 0u);
  routed.RaiseFloor(40, "match-1");
  routed.RaiseFloor(7);
  EXPECT_EQ(routed.read_floor("match-1"), 40u);
  EXPECT_EQ(routed.read_floor(), 7u);
  EXPECT_EQ(routed.read_floor("default"), 7u);  // "" and "default" are the same world
  EXPECT_EQ(routed.read_floor("match-2"), 0u);
  routed.RaiseFloor(12, "match-1");  // a floor never goes down
  EXPECT_EQ(routed.read_floor("match-1"), 40u);
  routed.RaiseFloor(9, "default");
  EXPECT_EQ(routed.read_floor(""), 9u);
  EXPECT_EQ(routed.replica_count(), 1u);
}

}  // namespace
}  // namespace voxcol::client
