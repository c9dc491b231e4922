// MoveCharacter: a kinematic character controller for upright capsules on the terrain's smooth
// surface (move-and-slide), answered server-side once per character per tick.
//
// One move runs these steps, each built from Sweep, Contacts and Overlap:
//  1. Recovery: a start pose penetrating the terrain (an edit built around the character, or buried
//     it) is pushed out by the minimum translation of its contacts, a few times over.
//  2. A walk without stepping: up (a jump, limited by the ceiling), side (sweep and slide along the
//     contact planes, along the crease of two), down (the fall, sliding down steep slopes, then a
//     snap to walkable ground within the snap distance).
//  3. Only when the side pass was blocked: the same walk raised by the step offset (limited by the
//     ceiling), kept if it gets further and lands on walkable ground at most the step offset above
//     the start. So a low overhang the capsule clears never costs the walk (PhysX tries the step
//     first and can be stopped by the overhang), and the step test measures the capsule's real
//     rise, not the height of a contact point on its rounded bottom.
//  4. The ground (the most upward contact on the capsule's lower hemisphere within a few skin
//     widths), the water contact and the flags.
// Steep slopes (normal beyond the slope limit) act as vertical walls in the side pass, so neither
// the walk nor the step climbs them, and the down pass slides along them.
//
// Deterministic: the same inputs on the same world version give bit-identical outputs (no threads,
// no clocks, no hash-ordered iteration).
//
// Characters as bodies (issue 42; docs/bodies.md, "Characters as bodies"). The contract of
// MoveCharacters with a CharacterBodies argument, for the service:
//  - Every move carries the caller's id (a BodyId), unique within the call (ValidateCharacterMoves
//    names the field: "moves[3].id"). Results come back in the caller's order.
//  - Each character collides with the terrain, with the other characters of the call (upright
//    capsules) and, when bodies.world is set, with the parts of the bodies passing bodies.filter
//    as they were at bodies.tick. A body with the character's own id is never an obstacle, so a
//    game server may register its players both as bodies (hitboxes) and as characters.
//  - Order rule: characters are resolved in ascending id order; each sees the characters already
//    moved at their final positions and the others at their start positions. Outputs therefore
//    depend on the ids and inputs only: the same moves in any order give bit-identical results.
//  - Two final capsules never overlap when their start capsules did not (the later of each pair
//    sweeps against the earlier's final pose and stops a skin width short); characters walking
//    into each other stop with a gap of at most the skin width. Start poses that overlap another
//    character or a body are pushed out by the recovery, as from the terrain.
//  - A character may stand on another character or on a body (on_obstacle, ground_material 0);
//    water and materials come from the terrain only, and bodies carry no velocity to ride on.
//  - Threads: the BodyWorld is only read (its const queries); it must not be Applied during the
//    call. The old MoveCharacters (no CharacterBodies) moves characters through each other.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "core/bodies/body_world.h"
#include "core/broadphase/broadphase_index.h"
#include "core/cache/chunk_collision_cache.h"
#include "core/geometry/vec3.h"
#include "core/query/query_types.h"
#include "core/query/validate.h"
#include "core/voxel/world.h"

namespace voxcol {

// Distances in world units, the up axis is world +Y.
struct CharacterSettings {
  float step_offset = 0.5f;        // highest riser walked up without a jump, >= 0
  float slope_limit_degrees = 45;  // steepest walkable ground, in [0, 90)
  float snap_distance = 0.25f;     // walking down: stay on ground this far below, >= 0
  int max_slide_iterations = 4;    // sweeps per pass, 1..16
  float skin_width = 0.02f;        // gap kept to the terrain, > 0
  float swim_threshold = 0.5f;     // swimming above this submerged fraction, in [0, 1]
};

// One character's move for one tick.
struct CharacterMove {
  // The caller's id for the character, unique within a MoveCharacters call with bodies (which
  // resolves characters in ascending id order); ignored by MoveCharacter and the terrain-only
  // MoveCharacters.
  BodyId id = 0;
  float radius = 0.4f;       // capsule radius, > 0
  float half_height = 0.5f;  // half length of the capsule's vertical core segment, >= 0
  Vec3 position;             // capsule centre at the start of the tick
  Vec3 displacement;         // wanted motion this tick (walk + jump + gravity), world units
  CharacterSettings settings;
  // The server's work budget (--max_query_triangles), applied to every sweep and contacts query
  // of the move; past it the move fails with RESOURCE_EXHAUSTED.
  QueryBudget budget;
};

enum class GroundState : uint8_t {
  kAirborne,
  kOnGround,      // on walkable ground
  kOnSteepSlope,  // touching ground steeper than the slope limit: slides down it
};

enum CharacterCollision : uint8_t {
  kCollisionSides = 1,  // the side pass met the terrain
  kCollisionUp = 2,     // a ceiling stopped the upward motion
  kCollisionDown = 4,   // ground under the final pose (on ground or on a steep slope)
};

struct CharacterResult {
  Vec3 position;  // capsule centre after the move
  GroundState ground = GroundState::kAirborne;
  Vec3 ground_normal;           // unit, toward the character; zero when airborne
  uint8_t ground_material = 0;  // when not airborne
  // The ground is another character or a body (MoveCharacters with bodies); ground_material is
  // then 0 and not among the touched materials.
  bool on_obstacle = false;
  uint8_t collisions = 0;  // CharacterCollision bits
  bool recovered = false;  // the start pose penetrated and was pushed out
  bool stepped = false;    // the move used the step offset
  // Every material the kept walk met (sweeps, ground), ascending. The terrain never moves, so the
  // ground velocity is always zero.
  std::vector<uint8_t> touched_materials;
  bool swimming = false;         // submerged_fraction > settings.swim_threshold
  float submerged_fraction = 0;  // 0..1 of the capsule's volume under water
  // OK, or a chunk load error, DEADLINE_EXCEEDED / CANCELLED or RESOURCE_EXHAUSTED from a shape
  // query; the other fields then mean nothing.
  absl::Status status;
};

// Checks a move: the capsule as ValidatePosedShape (fields shape.capsule.radius,
// shape.capsule.half_height, position), a finite
// displacement no longer than limits.max_sweep_distance, and settings in their ranges. The message
// starts with `prefix` + the field's name.
absl::Status ValidateCharacterMove(const World& world, const CharacterMove& move,
                                   const QueryLimits& limits, const std::string& prefix = "");

// Moves one character. Precondition: ValidateCharacterMove is OK. `interrupt` may be null.
void MoveCharacter(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                   const CharacterMove& move, const QueryInterrupt* interrupt,
                   CharacterResult* result, QueryStats* stats = nullptr);

// Moves every character of a tick against the same terrain, in order (characters do not collide
// with each other). results is resized to moves.size(). Precondition: every move validated.
void MoveCharacters(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                    const std::vector<CharacterMove>& moves, const QueryInterrupt* interrupt,
                    std::vector<CharacterResult>* results, QueryStats* stats = nullptr);

// What the characters of a MoveCharacters call collide with besides the terrain and each other.
struct CharacterBodies {
  const BodyWorld* world = nullptr;  // null: no bodies
  int64_t tick = 0;   // the bodies' poses at this game tick (world->latest_tick() for the current)
  BodyFilter filter;  // which bodies are obstacles; a character's own id is ignored as well
};

// Checks the moves of a MoveCharacters call with bodies: each move as ValidateCharacterMove under
// "moves[i].", unique ids ("moves[i].id: character 7 is also moves[2]; ..."; `id_field` names the
// id where the caller's field is called otherwise, e.g. a wire format's "client_id"), and the tick
// of the bodies (the BodyWorld's OUT_OF_RANGE under "bodies.tick").
absl::Status ValidateCharacterMoves(const World& world, const std::vector<CharacterMove>& moves,
                                    const QueryLimits& limits, const CharacterBodies& bodies,
                                    const char* id_field = "id");

// Moves every character of a tick against the terrain, each other and the bodies (the contract
// above): in ascending id order, results in the caller's order (resized to moves.size()). Cost
// beside the terrain's: a sort-and-sweep over the moves' reach boxes (O(n log n)), then per
// character one broadphase query and one BodyWorld tree query; obstacles are only tested when
// their boxes meet the character's. Precondition: ValidateCharacterMoves is OK. `interrupt` may
// be null.
void MoveCharacters(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                    const std::vector<CharacterMove>& moves, const CharacterBodies& bodies,
                    const QueryInterrupt* interrupt, std::vector<CharacterResult>* results,
                    QueryStats* stats = nullptr);

}  // namespace voxcol
