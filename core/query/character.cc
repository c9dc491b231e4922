#include "core/query/character.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "core/query/character_crowd.h"
#include "core/query/contacts.h"
#include "core/query/sweep.h"
#include "core/query/terrain_triangles.h"
#include "core/query/water_contact.h"

namespace voxcol {
namespace character_internal {
namespace {

constexpr float kPi = 3.14159265358979f;
constexpr float kMinMove = 1e-5f;            // world units: shorter remainders end a pass
constexpr float kRecoveryTolerance = 1e-3f;  // deeper start penetrations are pushed out
constexpr int kRecoveryRounds = 4;
constexpr int kRecoverySolverIterations = 16;
const Vec3 kUp(0, 1, 0);

// What every pass of one move shares.
class Mover {
 public:
  Mover(const BroadphaseIndex& index, ChunkCollisionCache& cache, const CharacterMove& move,
        CharacterObstacles* obstacles, const QueryInterrupt* interrupt, QueryStats* stats)
      : index_(index),
        cache_(cache),
        obstacles_(obstacles),
        s_(move.settings),
        shape_(MakeCapsule(move.half_height, move.radius)),
        interrupt_(interrupt),
        budget_(move.budget),
        stats_(stats),
        cos_limit_(std::cos(move.settings.slope_limit_degrees * kPi / 180.0f)) {}

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  const CharacterSettings& settings() const { return s_; }
  bool Walkable(const Vec3& n) const { return n.y >= cos_limit_; }
  float radius() const { return shape_.convex_radius; }
  float half_height() const { return shape_.half_height; }
  PosedShape Posed(const Vec3& p) const { return PosedShape{&shape_, RigidTransform{Quat(), p}}; }

  // Sweeps the capsule from `p` along unit `dir` for `distance`; true with `hit` when it meets the
  // terrain (an initial overlap is a hit at distance 0 with the way out as its normal) or, nearer,
  // an obstacle.
  bool Cast(const Vec3& p, const Vec3& dir, float distance, SweepHit* hit) {
    if (!ok()) return false;
    SweepSettings settings;
    settings.interrupt = interrupt_;
    settings.budget = budget_;
    SweepResult r;
    Sweep(index_, cache_, SweepInput{Posed(p), dir, distance}, settings, &r, stats_);
    if (!r.load_status.ok()) {
      status_ = r.load_status;
      return false;
    }
    if (r.hit) {
      *hit = r.first;
      if (r.initial_overlap) {
        hit->distance = 0;
        hit->normal = r.penetration.normal;
      }
    }
    if (obstacles_ != nullptr && CastObstacles(p, dir, distance, r.hit, hit)) {
      return ok();
    }
    if (r.hit) Touch(hit->material);
    return r.hit;
  }

  // Obstacles within `margin` of the capsule at `p` (none without obstacles).
  const std::vector<ObstacleContact>& ObstacleContacts(const Vec3& p, float margin) {
    static const std::vector<ObstacleContact> kNone;
    if (obstacles_ == nullptr || !ok()) return kNone;
    const std::vector<ObstacleContact>& c = obstacles_->Contacts(shape_, p, margin);
    if (!obstacles_->status().ok()) status_ = obstacles_->status();
    return c;
  }

  // Contacts of the capsule at `p` within `margin`.
  bool Touching(const Vec3& p, float margin, ContactsResult* r) {
    if (!ok()) return false;
    ContactsSettings settings;
    settings.margin = margin;
    settings.water = false;
    settings.interrupt = interrupt_;
    settings.budget = budget_;
    Contacts(index_, cache_, Posed(p), settings, r, stats_);
    if (!r->load_status.ok()) status_ = r->load_status;
    return ok();
  }

  using MaterialSet = std::array<uint64_t, 4>;
  const MaterialSet& touched() const { return touched_; }
  void set_touched(const MaterialSet& t) { touched_ = t; }
  void Touch(uint8_t material) { touched_[material >> 6] |= uint64_t(1) << (material & 63); }
  void TouchedMaterials(std::vector<uint8_t>* out) const {
    out->clear();
    for (int word = 0; word < 4; ++word) {
      for (uint64_t bits = touched_[word]; bits != 0; bits &= bits - 1) {
        out->push_back(uint8_t(word * 64 + absl::countr_zero(bits)));
      }
    }
  }
  void Fail(absl::Status status) { status_ = std::move(status); }
  const BroadphaseIndex& index() const { return index_; }

 private:
  // An obstacle hit within `distance` and, when the terrain was hit (*hit), strictly nearer than
  // it replaces *hit; its material is not touched (only terrain has materials).
  bool CastObstacles(const Vec3& p, const Vec3& dir, float distance, bool terrain, SweepHit* hit) {
    SweepHit near;
    const float limit = terrain ? hit->distance : distance;
    const bool met = obstacles_->Cast(shape_, p, dir, limit > 0 ? limit : distance, &near);
    if (!obstacles_->status().ok()) status_ = obstacles_->status();
    if (!met || !ok() || (terrain && near.distance >= limit)) return false;
    *hit = near;
    return true;
  }

  const BroadphaseIndex& index_;
  ChunkCollisionCache& cache_;
  CharacterObstacles* obstacles_;
  const CharacterSettings& s_;
  ConvexShape shape_;
  const QueryInterrupt* interrupt_;
  QueryBudget budget_;
  QueryStats* stats_;
  float cos_limit_;
  absl::Status status_;
  MaterialSet touched_{};
};

// The minimum translation that separates the capsule from every contact (depth > 0 after the move
// for none, plus the skin): Jacobi iterations over the contact planes, so opposite walls cancel
// instead of pushing the capsule back and forth. The terrain's contacts, then the obstacles'.
Vec3 SolveSeparation(const ContactsResult& contacts, const std::vector<ObstacleContact>& obstacles,
                     float skin) {
  Vec3 delta;
  int count = int(obstacles.size());
  for (const ChunkContacts& c : contacts.chunks) count += c.count;
  if (count == 0) return delta;
  for (int it = 0; it < kRecoverySolverIterations; ++it) {
    Vec3 step;
    for (const ChunkContacts& c : contacts.chunks) {
      for (int i = 0; i < c.count; ++i) {
        const Contact& k = c.points[i];
        const float residual = k.depth + skin - Dot(delta, k.normal);
        if (residual > 0) step += k.normal * residual;
      }
    }
    for (const ObstacleContact& k : obstacles) {
      const float residual = k.depth + skin - Dot(delta, k.normal);
      if (residual > 0) step += k.normal * residual;
    }
    delta += step * (1.0f / float(count));
  }
  return delta;
}

// Step 1: pushes a penetrating start pose out. True when it moved.
bool Recover(Mover& m, Vec3* p) {
  bool moved = false;
  for (int round = 0; round < kRecoveryRounds; ++round) {
    ContactsResult contacts;
    if (!m.Touching(*p, m.settings().skin_width, &contacts)) return moved;
    if (contacts.buried) {
      *p += contacts.penetration.normal * (contacts.penetration.depth + m.settings().skin_width);
      moved = true;
      continue;
    }
    const std::vector<ObstacleContact>& near = m.ObstacleContacts(*p, m.settings().skin_width);
    if (!m.ok()) return moved;
    float deepest = 0;
    for (const ChunkContacts& c : contacts.chunks) {
      for (int i = 0; i < c.count; ++i) deepest = std::max(deepest, c.points[i].depth);
    }
    for (const ObstacleContact& k : near) deepest = std::max(deepest, k.depth);
    if (deepest <= kRecoveryTolerance) break;
    for (const ChunkContacts& c : contacts.chunks) {
      for (int i = 0; i < c.count; ++i) {
        if (c.points[i].depth > 0) m.Touch(c.points[i].material);
      }
    }
    *p += SolveSeparation(contacts, near, m.settings().skin_width);
    moved = true;
  }
  return moved;
}

// Removes the part of `v` that goes into the plane with normal n.
Vec3 ClipToPlane(const Vec3& v, const Vec3& n) {
  const float into = Dot(v, n);
  return into < 0 ? v - n * into : v;
}

// How a pass treats what it meets.
enum class Pass {
  kSide,  // non-walkable planes count as vertical: no climbing steep slopes, no ceiling push-down
  kDown,  // walkable ground ends the pass, steep slopes are slid down
  kLand,  // the first hit ends the pass (the stepped walk's descent onto a step's edge)
};

// Sweeps along `move` from *p, sliding along what it meets: the remainder loses its component into
// each plane, and along the crease when it meets a second one. Returns whether it met the terrain;
// `last` gets the last hit.
bool SlideMove(Mover& m, Vec3* p, Vec3 move, Pass pass, SweepHit* last) {
  const bool walls = pass == Pass::kSide;
  const float skin = m.settings().skin_width;
  const Vec3 wanted = move;
  std::array<Vec3, 2> planes;
  int num_planes = 0;
  bool met = false;
  for (int i = 0; i < m.settings().max_slide_iterations; ++i) {
    const float len = Length(move);
    if (len < kMinMove) break;
    const Vec3 dir = move * (1.0f / len);
    SweepHit hit;
    if (!m.Cast(*p, dir, len + skin, &hit)) {
      if (m.ok()) *p += move;
      break;
    }
    met = true;
    *last = hit;
    const float advance = std::clamp(hit.distance - skin, 0.0f, len);
    *p += dir * advance;
    Vec3 n = hit.normal;
    if (pass == Pass::kLand || (pass == Pass::kDown && m.Walkable(n))) break;
    if (walls && !m.Walkable(n)) {
      n.y = 0;
      n = LengthSq(n) > 1e-12f ? Normalize(n) : -Vec3(dir.x, 0, dir.z);
      if (LengthSq(n) < 0.5f) break;  // straight down a vertical move: nothing to slide along
    }
    move = ClipToPlane(dir * (len - advance), n);
    if (num_planes == 1 && Dot(n, planes[0]) < 0.999f && Dot(move, planes[0]) < 0) {
      const Vec3 crease = Cross(planes[0], n);
      if (LengthSq(crease) < 1e-12f) break;
      const Vec3 c = Normalize(crease);
      move = c * Dot(dir * (len - advance), c);
    } else if (num_planes == 2) {
      break;  // a third plane: a corner
    }
    if (num_planes < 2 && (num_planes == 0 || Dot(n, planes[0]) < 0.999f)) planes[num_planes++] = n;
    if (Dot(move, wanted) <= 0) break;  // never walk back against the wanted motion
  }
  return met;
}

// One walk of steps 2 and 3: up by `rise` (limited by the ceiling), side, down by what the up
// pass climbed beyond the jump plus the fall, then the snap.
struct Walk {
  Vec3 position;
  bool side_hit = false;
  bool ceiling = false;
  float climbed = 0;  // of the step offset
};

Walk DoWalk(Mover& m, const Vec3& start, const Vec3& side, float dy, float step) {
  const CharacterSettings& s = m.settings();
  Walk w;
  w.position = start;
  const float jump = std::max(dy, 0.0f);
  float up = 0;
  if (jump + step > 0) {
    SweepHit hit;
    up = jump + step;
    if (m.Cast(w.position, kUp, up + s.skin_width, &hit)) {
      up = std::clamp(hit.distance - s.skin_width, 0.0f, up);
      w.ceiling = up < jump;
    }
    w.position.y += up;
  }
  w.climbed = std::max(up - jump, 0.0f);
  SweepHit hit;
  if (LengthSq(side) > kMinMove * kMinMove)
    w.side_hit = SlideMove(m, &w.position, side, Pass::kSide, &hit);
  const float fall = w.climbed + std::max(-dy, 0.0f);
  SweepHit ground;
  bool landed = false;
  if (fall > 0) {
    const Pass pass = step > 0 ? Pass::kLand : Pass::kDown;
    landed = SlideMove(m, &w.position, Vec3(0, -fall, 0), pass, &ground) &&
             (pass == Pass::kLand || m.Walkable(ground.normal));
  }
  if (!landed && dy <= 0 && s.snap_distance > 0) {
    // Snap: walking down stairs or a slope keeps the character on walkable ground.
    if (m.Cast(w.position, -kUp, s.snap_distance + s.skin_width, &ground) &&
        m.Walkable(ground.normal)) {
      w.position.y -= std::max(ground.distance - s.skin_width, 0.0f);
    }
  }
  return w;
}

// Step 4: the ground under the final pose: of the contacts on the capsule's lower hemisphere within
// a few skin widths (a steep slope's skin gap is longer along the vertical), the one whose normal
// is the most upward, so a character in the crease of a steep slope and walkable ground stands.
void FindGround(Mover& m, CharacterResult* r) {
  r->ground = GroundState::kAirborne;
  r->ground_normal = Vec3();
  r->ground_material = 0;
  r->on_obstacle = false;
  ContactsResult contacts;
  const float margin = 4 * m.settings().skin_width + 1e-3f;
  if (!m.Touching(r->position, margin, &contacts)) return;
  const float hemisphere_top = r->position.y - m.half_height() + 1e-4f;
  const Contact* best = nullptr;
  for (const ChunkContacts& c : contacts.chunks) {
    for (int i = 0; i < c.count; ++i) {
      const Contact& k = c.points[i];
      if (k.position.y > hemisphere_top || k.normal.y <= 0) continue;
      if (best == nullptr || k.normal.y > best->normal.y) best = &k;
    }
  }
  // Other characters and bodies under the capsule count as ground too (terrain first on ties).
  const ObstacleContact* best_obstacle = nullptr;
  for (const ObstacleContact& k : m.ObstacleContacts(r->position, margin)) {
    if (k.position.y > hemisphere_top || k.normal.y <= 0) continue;
    if ((best == nullptr || k.normal.y > best->normal.y) &&
        (best_obstacle == nullptr || k.normal.y > best_obstacle->normal.y)) {
      best_obstacle = &k;
    }
  }
  if (best == nullptr && best_obstacle == nullptr) return;
  r->ground_normal = best_obstacle != nullptr ? best_obstacle->normal : best->normal;
  r->ground_material = best_obstacle != nullptr ? 0 : best->material;
  r->on_obstacle = best_obstacle != nullptr;
  r->ground = m.Walkable(r->ground_normal) ? GroundState::kOnGround : GroundState::kOnSteepSlope;
  r->collisions |= kCollisionDown;
}

void Water(Mover& m, CharacterResult* r) {
  WaterContact water;
  if (absl::Status st = IntegrateWater(m.index(), m.Posed(r->position), &water, nullptr);
      !st.ok()) {
    m.Fail(st);
    return;
  }
  r->submerged_fraction = water.in_water ? water.submerged_fraction : 0.0f;
  r->swimming = r->submerged_fraction > m.settings().swim_threshold;
}

// A stepped walk that ends on a step's rounded edge (its normal steep) still counts when walkable
// ground lies just ahead: the capsule cast down from the step height, half a radius further along
// `dir`, lands on walkable ground.
bool WalkableAhead(Mover& m, const Vec3& landed, const Vec3& dir, float top_y) {
  Vec3 q = landed + dir * (0.5f * m.radius());
  q.y = top_y;
  SweepHit hit;
  const float probe = top_y - landed.y + 4 * m.settings().skin_width + 1e-3f;
  return m.Cast(q, -kUp, probe, &hit) && hit.distance > 0 && m.Walkable(hit.normal);
}

// Horizontal progress of `to` from `from` along unit `dir`.
float Progress(const Vec3& from, const Vec3& to, const Vec3& dir) { return Dot(to - from, dir); }

absl::Status CheckRange(const std::string& name, float v, float lo, float hi, bool lo_open) {
  if (!std::isfinite(v) || v < lo || (lo_open && v == lo) || v > hi) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be in ", lo_open ? "(" : "[", lo, ", ", hi, "], got ", v));
  }
  return absl::OkStatus();
}

}  // namespace

Aabb MoveReach(const CharacterMove& move, float voxel_size) {
  const CharacterSettings& s = move.settings;
  const Vec3& d = move.displacement;
  const float margin = 5 * s.skin_width + 0.01f * voxel_size;
  const float sideways = std::sqrt(d.x * d.x + d.z * d.z) + 0.5f * move.radius + margin;
  const ConvexShape capsule = MakeCapsule(move.half_height, move.radius);
  Aabb box = terrain::PosedBounds(PosedShape{&capsule, RigidTransform{Quat(), move.position}});
  box.min -=
      Vec3(sideways, std::max(-d.y, 0.0f) + s.step_offset + s.snap_distance + margin, sideways);
  box.max += Vec3(sideways, std::max(d.y, 0.0f) + s.step_offset + margin, sideways);
  return box;
}

void MoveCharacterAmong(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                        const CharacterMove& move, CharacterObstacles* obstacles,
                        const QueryInterrupt* interrupt, CharacterResult* result,
                        QueryStats* stats) {
  CharacterResult& r = *result;
  r = CharacterResult{};
  Mover m(index, cache, move, obstacles, interrupt, stats);
  const CharacterSettings& s = move.settings;
  // Every query of the move stays in its reach: one gather serves them all (a query outside it,
  // e.g. after a deep recovery, gathers alone).
  const Aabb box = MoveReach(move, index.world().voxel_size());
  const terrain::MoveScope scope(index, cache, box, stats);
  // 1. Recovery.
  Vec3 start = move.position;
  r.recovered = Recover(m, &start);
  const Mover::MaterialSet recovery_touched = m.touched();
  // 2. The walk without the step offset.
  const Vec3 side(move.displacement.x, 0, move.displacement.z);
  const float dy = move.displacement.y;
  Walk walk = DoWalk(m, start, side, dy, 0);
  r.position = walk.position;
  FindGround(m, &r);
  // 3. The stepped walk, only when the plain one was blocked sideways.
  const float side_len = Length(side);
  if (m.ok() && walk.side_hit && dy <= 0 && s.step_offset > 0 && side_len > kMinMove) {
    const Vec3 dir = side * (1.0f / side_len);
    const Mover::MaterialSet plain_touched = m.touched();
    m.set_touched(recovery_touched);
    Walk stepped = DoWalk(m, start, side, dy, s.step_offset);
    CharacterResult probe;
    probe.position = stepped.position;
    FindGround(m, &probe);
    const bool better =
        Progress(start, stepped.position, dir) > Progress(start, walk.position, dir) + 1e-4f;
    const bool rise_ok = stepped.position.y - start.y <= s.step_offset + 1e-4f;
    const bool supported = probe.ground == GroundState::kOnGround ||
                           (probe.ground == GroundState::kOnSteepSlope &&
                            WalkableAhead(m, stepped.position, dir, start.y + s.step_offset));
    if (better && rise_ok && supported) {
      walk = stepped;
      r.position = probe.position;
      r.ground = probe.ground;
      r.ground_normal = probe.ground_normal;
      r.ground_material = probe.ground_material;
      r.on_obstacle = probe.on_obstacle;
      r.collisions = probe.collisions;
      r.stepped = true;
    } else {
      m.set_touched(plain_touched);  // materials of the walk that was kept
    }
  }
  // 4. Flags, water and materials.
  if (walk.side_hit) r.collisions |= kCollisionSides;
  if (walk.ceiling) r.collisions |= kCollisionUp;
  if (r.ground != GroundState::kAirborne && !r.on_obstacle) m.Touch(r.ground_material);
  Water(m, &r);
  m.TouchedMaterials(&r.touched_materials);
  r.status = m.status();
}

}  // namespace character_internal

absl::Status ValidateCharacterMove(const World& world, const CharacterMove& move,
                                   const QueryLimits& limits, const std::string& prefix) {
  // MakeCapsule requires a valid capsule: its sizes are checked before it is built (the rest of
  // the shape, its extent and pose, by ValidatePosedShape, under the same field names).
  if (!std::isfinite(move.radius) || !(move.radius > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "shape.capsule.radius must be finite and > 0, got ", move.radius));
  }
  if (!std::isfinite(move.half_height) || move.half_height < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "shape.capsule.half_height must be finite and >= 0, got ", move.half_height));
  }
  const ConvexShape capsule = MakeCapsule(move.half_height, move.radius);
  PosedShape posed{&capsule, RigidTransform{Quat(), move.position}};
  if (absl::Status st = ValidatePosedShape(world, &posed, limits, prefix); !st.ok()) return st;
  if (!IsFinite(move.displacement) || Length(move.displacement) > limits.max_sweep_distance) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "displacement must be finite and at most ", limits.max_sweep_distance, " long"));
  }
  using character_internal::CheckRange;
  const CharacterSettings& s = move.settings;
  const float max = limits.max_shape_extent;
  const std::string p = prefix + "settings.";
  for (absl::Status st :
       {CheckRange(p + "step_offset", s.step_offset, 0, max, false),
        CheckRange(p + "slope_limit_degrees", s.slope_limit_degrees, 0, 89.9f, false),
        CheckRange(p + "snap_distance", s.snap_distance, 0, max, false),
        CheckRange(p + "max_slide_iterations", float(s.max_slide_iterations), 1, 16, false),
        CheckRange(p + "skin_width", s.skin_width, 0, 1, true),
        CheckRange(p + "swim_threshold", s.swim_threshold, 0, 1, false)}) {
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

void MoveCharacter(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                   const CharacterMove& move, const QueryInterrupt* interrupt,
                   CharacterResult* result, QueryStats* stats) {
  character_internal::MoveCharacterAmong(index, cache, move, nullptr, interrupt, result, stats);
}

void MoveCharacters(const BroadphaseIndex& index, ChunkCollisionCache& cache,
                    const std::vector<CharacterMove>& moves, const QueryInterrupt* interrupt,
                    std::vector<CharacterResult>* results, QueryStats* stats) {
  results->resize(moves.size());
  for (size_t i = 0; i < moves.size(); ++i) {
    MoveCharacter(index, cache, moves[i], interrupt, &(*results)[i], stats);
  }
}

}  // namespace voxcol
