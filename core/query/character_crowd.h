// Internal to core/query: what one character's move collides with besides the terrain in
// MoveCharacters with bodies (character.h): the other characters of the call, found by a
// sort-and-sweep broadphase over the call's move boxes, and the body parts of a BodyWorld, found by
// its dynamic tree. Both are gathered once per character for the box its move can reach and
// tested by every sweep and recovery of that move.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/bodies/body_world.h"
#include "core/geometry/shapes.h"
#include "core/query/character.h"
#include "core/query/sweep.h"

namespace voxcol::character_internal {

// The box every query of a move stays in unless a recovery pushes the start far: the start capsule
// grown sideways by the walk and half a radius (WalkableAhead), up by the jump and the step, down
// by the fall, the step and the snap, plus the contact margins. One terrain gather and one obstacle
// gather serve the move's queries inside it.
Aabb MoveReach(const CharacterMove& move, float voxel_size);

// The characters of one call: sort-and-sweep along X over each character's region (its move
// reach, which holds its start and, unless a recovery pushed it out, its final capsule).
class CharacterCrowd {
 public:
  // Precondition: every move validated, ids unique.
  void Build(const std::vector<CharacterMove>& moves, float voxel_size);
  // Character i has moved to `position`: later queries see it there.
  void Moved(int i, const Vec3& position);
  // Appends the indices of the characters other than `self` whose capsule at their current
  // position overlaps `box`, in ascending id order.
  void Query(const Aabb& box, int self, std::vector<int>* out) const;
  const std::vector<CharacterMove>& moves() const { return *moves_; }
  const Vec3& position(int i) const { return position_[i]; }
  // Indices of the moves in ascending id order: the order MoveCharacters resolves them in.
  const std::vector<int>& order() const { return order_; }

 private:
  Aabb CapsuleBox(int i) const;

  const std::vector<CharacterMove>* moves_ = nullptr;
  std::vector<Vec3> position_;
  std::vector<Aabb> region_;
  std::vector<std::pair<float, int>> by_min_x_;  // (region min x, index), ascending
  float max_width_ = 0;                          // widest region along X
  std::vector<int> escaped_;                     // moved outside their region: tested one by one
  std::vector<uint8_t> is_escaped_;
  std::vector<int> order_;
};

// An obstacle near the capsule, for the recovery and the ground: depth > 0 penetrates, negative
// is a gap.
struct ObstacleContact {
  Vec3 normal;  // unit, from the obstacle toward the character
  float depth = 0;
  Vec3 position;  // the obstacle's closest (or deepest) point
};

// The obstacles of one character's move. Sweeps and contacts outside the gathered box gather
// again for the union of the two boxes.
class CharacterObstacles {
 public:
  CharacterObstacles(const CharacterCrowd& crowd, const CharacterBodies& bodies)
      : crowd_(crowd), bodies_(bodies) {}

  // Starts the move of character `self`: gathers for `box`.
  void Begin(int self, const Aabb& box);
  // Closest obstacle the upright capsule `shape` at `p` meets moving along unit `dir` within
  // `distance` (> 0): true with `hit` (distance, contact position, normal toward the character;
  // material 0). A capsule already touching or penetrating an obstacle is stopped at distance 0 by
  // it only when moving into it, so it can slide along or leave it.
  bool Cast(const ConvexShape& shape, const Vec3& p, const Vec3& dir, float distance,
            SweepHit* hit);
  // Obstacles within `margin` of the capsule at `p`.
  const std::vector<ObstacleContact>& Contacts(const ConvexShape& shape, const Vec3& p,
                                               float margin);
  // OK, or the BodyWorld's error from a gather.
  const absl::Status& status() const { return status_; }

 private:
  struct Capsule {
    Vec3 centre;
    float half_height, radius;
    Aabb box;
  };
  struct Part {
    PosedShape shape;
    Aabb box;
  };
  void Gather(const Aabb& box);
  void Cover(const Aabb& box);

  const CharacterCrowd& crowd_;
  const CharacterBodies& bodies_;
  int self_ = -1;
  Aabb gathered_;
  std::vector<int> near_;
  std::vector<PosedBodyPart> body_parts_;
  std::vector<Capsule> capsules_;
  std::vector<Part> parts_;
  std::vector<ObstacleContact> contacts_;
  absl::Status status_;
};

// MoveCharacter with obstacles (null: the terrain only, as MoveCharacter).
void MoveCharacterAmong(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                        const CharacterMove& move, CharacterObstacles* obstacles,
                        const QueryInterrupt* interrupt, CharacterResult* result,
                        QueryStats* stats);

}  // namespace voxcol::character_internal
