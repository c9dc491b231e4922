// Edit batches: several primitives applied all-or-nothing as one world version, with an optional
// idempotency key (a retried batch is answered with the original ack and applies once) and an
// optional precondition on the current world version.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/voxel/edit.h"
#include "core/voxel/edit_shapes.h"
#include "core/voxel/idempotency_table.h"
#include "core/voxel/voxel_io.h"
#include "core/voxel/world.h"

namespace voxcol {

// One primitive of a batch; VoxelArrays is a WriteVoxels.
using EditPrimitive =
    std::variant<FillBallParams, FillBlockParams, FillCylinderParams, FillWedgeParams,
                 FillRegionParams, ReplaceMaterialParams, ClearParams, VoxelArrays>;

// Wire name of a primitive's kind: "fill_ball", "fill_block", ..., "clear", "write_voxels".
const char* PrimitiveName(const EditPrimitive& primitive);
// Validates one primitive; the message starts with the primitive's field name (e.g. "radius").
absl::Status ValidatePrimitive(const World& world, const EditPrimitive& primitive,
                               const EditLimits& limits);
// Validates and applies one primitive inside an edit.
absl::Status ApplyPrimitive(ChunkEdit& edit, const EditPrimitive& primitive,
                            const EditLimits& limits);

struct EditBatch {
  std::vector<EditPrimitive> primitives;  // applied in order; 1..limits.max_batch_primitives
  std::string idempotency_key;            // empty: no idempotency
  // Identifies the batch content (e.g. a hash of the request). A key reused with another
  // fingerprint is rejected rather than silently answered with another batch's ack.
  uint64_t fingerprint = 0;
  std::optional<uint64_t>
      expected_version;  // the batch applies only if the world is at this version
};

// Longest idempotency key accepted, bytes (a UUID in text is 36).
constexpr size_t kMaxIdempotencyKeyBytes = 128;

// Checks the key's length and every primitive; messages are prefixed with the path, e.g.
// "primitives[2].fill_block.size.x".
absl::Status ValidateEditBatch(const World& world, const EditBatch& batch,
                               const EditLimits& limits);

// Applies batches to one world. Thread-safe.
class EditBatcher {
 public:
  // Remembers the acks of the last `idempotency_keys` batches that carried a key.
  EditBatcher(World& world, const EditLimits& limits, size_t idempotency_keys);

  // Applies the batch as one World::Edit: exactly one new version, or no change at all.
  // Errors: INVALID_ARGUMENT naming the field (nothing applied); INVALID_ARGUMENT for a key reused
  // with a different batch; FAILED_PRECONDITION when expected_version is not the current version;
  // errors of World::Edit (e.g. a chunk load or durability failure). A batch whose key was
  // already applied returns that batch's ack with `replayed` set and changes nothing.
  // The key travels with the edit (EditTag), so a store observer makes it durable together with
  // the edit's chunks.
  // With `pinned`, an applied (not replayed) batch also returns a snapshot of exactly its version
  // (World::Edit); a replayed one leaves it null.
  // With `on_ordered`, it is called under the world's edit lock once this batch's place in the
  // version order is fixed (it has run against every earlier staged edit): an edit started from
  // the callback is staged after this one, and may share its durable write (group commit). Not
  // called for batches refused before editing (validation) or replayed.
  absl::StatusOr<BatchAck> Apply(const EditBatch& batch,
                                 std::unique_ptr<World::ReadSnapshot>* pinned = nullptr,
                                 const std::function<void()>* on_ordered = nullptr);

  // Re-registers a key that an earlier process applied (from the store at startup), oldest first.
  void Restore(const std::string& key, const IdempotencyTable::Entry& entry);

  // Makes every later Apply fail with `refusal` (not OK) before validation: a read replica's
  // batcher refuses client edits (the replica applies its primary's feed with World::Edit).
  // Call before serving.
  void RefuseEdits(absl::Status refusal) { refusal_ = std::move(refusal); }
  const absl::Status& refusal() const { return refusal_; }

 private:
  World& world_;
  const EditLimits limits_;
  absl::Status refusal_;  // OK: edits are applied
  // Guards the table and the keys being applied. Held only around lookups and inserts: batches
  // without a key never take it, and batches with different keys commit concurrently (so the
  // world can group their durable writes); a retry of a key still in flight waits for its ack.
  absl::Mutex mu_;
  IdempotencyTable table_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
};

}  // namespace voxcol
