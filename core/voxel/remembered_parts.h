// The parts of generator chunks a thread generated last (World::GeneratePart), so that a part
// asked for twice is generated once. Used by World::GeneratePart only.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "core/voxel/chunk.h"

namespace voxcol {

class World;

namespace world_internal {

// Bumped by every World's construction and destruction (world.cc): a remembered part is its
// world's only while this is unchanged, so no part of a destroyed world is ever taken for one of
// a world built later at the same address. Any world built anywhere thus forgets every thread's
// parts: worlds are built rarely.
extern std::atomic<uint64_t> world_epoch;

// The parts of generator chunks this thread generated last, of any world. A mesh built right
// after its chunk's broadphase record asks for the first layer of its upper neighbours, which the
// record generated (NeighbourPart); a mesh without a record (a ray's first meeting) finds little
// here. A generator's content never changes, and callers ask only for chunks that are the
// generator's, so a part stays valid as long as its world.
class RememberedParts {
 public:
  // Copies the voxels of `part` of chunk `key` of `world` to *out when a remembered part holds
  // them.
  bool Find(const World* world, const ChunkKey& key, const IntBox& part, Chunk* out) const {
    const uint64_t epoch = world_epoch.load(std::memory_order_acquire);
    for (const Part& p : parts_) {
      if (p.world != world || p.epoch != epoch || !(p.key == key) || !p.box.ContainsBox(part))
        continue;
      CopyVoxels(p.voxels, part, out);
      return true;
    }
    return false;
  }
  void Add(const World* world, const ChunkKey& key, const IntBox& part, const Chunk& voxels) {
    Part& p = parts_[next_];
    next_ = (next_ + 1) % kParts;
    p.world = world;
    p.epoch = world_epoch.load(std::memory_order_acquire);
    p.key = key;
    p.box = part;
    CopyVoxels(voxels, part, &p.voxels);
  }

 private:
  // More than the 26 parts a broadphase record generates, so that the mesh built right after it
  // finds the ones it reads. ~34.5 KiB, on the heap (World::GeneratePart).
  static constexpr int kParts = 32;
  struct Part {
    const World* world = nullptr;
    uint64_t epoch = 0;
    ChunkKey key;
    IntBox box;
    Chunk voxels;  // valid inside `box`
  };
  std::array<Part, kParts> parts_;
  int next_ = 0;
};

}  // namespace world_internal
}  // namespace voxcol
