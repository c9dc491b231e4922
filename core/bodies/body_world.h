// The bodies of one world (players, props: hitboxes made of convex parts) and their poses over
// the last N game ticks, for lag-compensated queries: "what did the ray meet at tick T?".
//
// Bodies are session state of the game server that sends them: they are not stored, not
// replicated and not part of world versions (docs/bodies.md). One BodyWorld is written by one
// thread (Apply); queries are const and may run concurrently with each other but not with Apply.
//
// Layout (docs/bodies.md): per body a ring of (tick, pose) samples, one per tick in which it
// moved, at most history_ticks of them, so a pose at tick T is a binary search in one ring; a
// dynamic AABB tree over the latest fat boxes; per tick the largest box shift of that tick, whose
// sum since T bounds how far any body has moved since T.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/bodies/body_types.h"
#include "core/bodies/dynamic_tree.h"
#include "core/geometry/posed_shape.h"

namespace voxcol {

class BodyWorld {
 public:
  // Limits are enforced by Apply. Precondition: CheckLimits(limits) is OK.
  explicit BodyWorld(const BodyLimits& limits = {});
  // INVALID_ARGUMENT naming the field when a limit is out of range (every count >= 1, the margin
  // finite and >= 0): for limits that come from flags or requests.
  static absl::Status CheckLimits(const BodyLimits& limits);

  // Applies one tick's batch, all or nothing. Errors name the field: INVALID_ARGUMENT for a tick
  // not after the latest one, duplicate or unknown ids ("move[2].id"), bad shapes, poses or
  // layers; RESOURCE_EXHAUSTED for max_bodies, max_parts_per_body and max_history_bytes;
  // NOT_FOUND for moving or removing an unknown body.
  absl::Status Apply(const BodyBatch& batch);

  // Closest hit of a ray with the parts of the bodies that pass `filter`, as they were at
  // input.tick (of parts hit at exactly the same distance, the one the walk reaches first).
  // OUT_OF_RANGE when the tick is older than the oldest tick kept or newer than the latest (the
  // message names that tick); INVALID_ARGUMENT for a non-unit direction or a max_distance that is
  // not finite and > 0. `stats` may be null.
  absl::StatusOr<BodyRayHit> Raycast(const BodyRaycastInput& input, const BodyFilter& filter,
                                     BodyQueryStats* stats = nullptr) const;

  // Every (body, part) of the bodies passing `filter` whose part overlaps `shape` (GJK on the full
  // shapes; touching counts) at `tick`, in body id then part order. Errors as Raycast.
  absl::StatusOr<std::vector<BodyPartRef>> Overlap(const PosedShape& shape, int64_t tick,
                                                   const BodyFilter& filter,
                                                   BodyQueryStats* stats = nullptr) const;

  // Appends to *out every part of the bodies passing `filter` whose body's tight box at `tick`
  // overlaps `box`, posed at that tick, in body id then part order: the candidates a caller tests
  // many shapes against (a character's sweeps, MoveCharacters). Errors as Raycast.
  absl::Status PartsInBox(const Aabb& box, int64_t tick, const BodyFilter& filter,
                          std::vector<PosedBodyPart>* out, BodyQueryStats* stats = nullptr) const;

  // OK when `tick` can be queried, else the OUT_OF_RANGE of Raycast.
  absl::Status CheckTick(int64_t tick) const;
  bool has_ticks() const { return latest_tick_ != kNoTick; }
  int64_t latest_tick() const { return latest_tick_; }
  // Oldest queryable tick: the latest minus history_ticks - 1, not before the first batch.
  int64_t oldest_tick() const;
  int32_t body_count() const { return int32_t(slot_of_.size()); }
  // Bytes held for the history and parts as Apply accounts them against max_history_bytes.
  int64_t history_bytes() const;
  const DynamicAabbTree& tree() const { return tree_; }
  const BodyLimits& limits() const { return limits_; }

  // The world frame pose of body `id` at `tick`, or NOT_FOUND when it did not exist then
  // (errors of CheckTick first).
  absl::StatusOr<RigidTransform> PoseAt(BodyId id, int64_t tick) const;

 private:
  static constexpr int64_t kNoTick = INT64_MIN;
  struct PoseSample {
    int64_t tick;
    RigidTransform pose;
  };
  struct Part {
    uint32_t part_id;
    ConvexShape shape;
    RigidTransform local;
  };
  // A registered body, live or removed but still visible to queries of the window.
  struct Slot {
    BodyId id = 0;
    uint64_t owner = 0;
    uint32_t layer = 0;
    int32_t proxy = kNullNode;
    int64_t created_tick = 0;
    int64_t removed_tick = INT64_MAX;  // absent from this tick on
    std::vector<Part> parts;
    std::vector<Vec3> hull_points;  // the hulls' points; parts point into it
    Aabb local_bounds;              // of all parts, body frame
    Aabb world_box;                 // tight box at the latest pose
    // The newest sample, also kept here: queries at the latest tick (and bodies at rest since
    // the tick asked) read it without touching the ring.
    int64_t last_tick = 0;
    RigidTransform last_pose;
    uint32_t ring_head = 0, ring_count = 0;
    bool in_use = false;
  };
  struct TickShift {
    int64_t tick = kNoTick;
    float max_shift = 0;  // largest per-axis shift of a body's tight box in this tick
  };

  // Checks a batch and resolves the slots of its moves and removes into move_slots_ and
  // remove_slots_ (scratch, so one hash lookup per body and no allocation per tick).
  absl::Status Validate(const BodyBatch& batch);
  absl::Status ValidateCreates(const BodyBatch& batch) const;
  absl::Status ValidateCreate(const BodyDesc& body, int index) const;
  // Slot of a live body named once in the batch so far (false otherwise; ResolveError says why).
  bool Resolve(BodyId id, uint32_t* slot);
  absl::Status ResolveError(BodyId id, const std::string& field) const;
  void Create(const BodyDesc& body, int64_t tick);
  void Move(uint32_t slot, const RigidTransform& pose, int64_t tick, float* max_shift);
  void Remove(uint32_t slot, int64_t tick);
  void ExpireRemoved();
  void PushSample(uint32_t slot, int64_t tick, const RigidTransform& pose);
  // Pose of a slot at tick (within the window); false when the body did not exist then.
  bool SlotPoseAt(uint32_t slot, int64_t tick, RigidTransform* pose) const;
  // How far any body's tight box may have moved, per axis, between `tick` and the latest tick.
  float ShiftSince(int64_t tick) const;
  bool Passes(const Slot& s, const BodyFilter& filter) const;
  int64_t SlotBytes() const;

  BodyLimits limits_;
  int32_t ring_capacity_;  // history_ticks
  std::vector<Slot> slots_;
  std::vector<PoseSample> samples_;  // slot s owns [s * ring_capacity_, (s + 1) * ring_capacity_)
  std::vector<uint32_t> free_slots_;
  std::deque<uint32_t> removed_;  // removed slots in removal order, freed once out of the window
  absl::flat_hash_map<BodyId, uint32_t> slot_of_;  // live bodies only
  std::vector<TickShift> shifts_;                  // ring indexed by tick % history_ticks
  DynamicAabbTree tree_;
  int64_t first_tick_ = kNoTick, latest_tick_ = kNoTick;
  int64_t hull_point_count_ = 0;
  // Validate's scratch: the resolved slots, and per slot the number of the last Validate call
  // that named it (duplicates within a batch without a hash set).
  std::vector<uint32_t> move_slots_, remove_slots_;
  std::vector<uint64_t> named_in_;
  uint64_t validation_ = 0;
};

// World box of a body-frame box under `pose` (Arvo's method: the rotated box's half extents are
// |R| times the local ones).
Aabb TransformBox(const Aabb& local, const RigidTransform& pose);

}  // namespace voxcol
