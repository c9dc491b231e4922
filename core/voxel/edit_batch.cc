#include "core/voxel/edit_batch.h"

#include "absl/strings/str_cat.h"

namespace voxcol {

namespace {

struct Validator {
  const World& world;
  const EditLimits& limits;
  absl::Status operator()(const FillBallParams& p) const {
    return ValidateFillBall(world, p, limits);
  }
  absl::Status operator()(const FillBlockParams& p) const {
    return ValidateFillBlock(world, p, limits);
  }
  absl::Status operator()(const FillCylinderParams& p) const {
    return ValidateFillCylinder(world, p, limits);
  }
  absl::Status operator()(const FillWedgeParams& p) const {
    return ValidateFillWedge(world, p, limits);
  }
  absl::Status operator()(const FillRegionParams& p) const {
    return ValidateFillRegion(world, p, limits);
  }
  absl::Status operator()(const ReplaceMaterialParams& p) const {
    return ValidateReplaceMaterial(world, p, limits);
  }
  absl::Status operator()(const ClearParams& p) const { return ValidateClear(world, p, limits); }
  absl::Status operator()(const VoxelArrays& p) const {
    return ValidateWriteVoxels(world, p, limits);
  }
};

struct Applier {
  ChunkEdit& edit;
  const EditLimits& limits;
  absl::Status operator()(const FillBallParams& p) const { return FillBall(edit, p, limits); }
  absl::Status operator()(const FillBlockParams& p) const { return FillBlock(edit, p, limits); }
  absl::Status operator()(const FillCylinderParams& p) const {
    return FillCylinder(edit, p, limits);
  }
  absl::Status operator()(const FillWedgeParams& p) const { return FillWedge(edit, p, limits); }
  absl::Status operator()(const FillRegionParams& p) const { return FillRegion(edit, p, limits); }
  absl::Status operator()(const ReplaceMaterialParams& p) const {
    return ReplaceMaterial(edit, p, limits);
  }
  absl::Status operator()(const ClearParams& p) const { return Clear(edit, p, limits); }
  absl::Status operator()(const VoxelArrays& p) const { return WriteVoxels(edit, p, limits); }
};

absl::Status WithPrefix(const absl::Status& status, size_t index, const EditPrimitive& primitive) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat("primitives[", index, "].",
                                                  PrimitiveName(primitive), ".", status.message()));
}

// Against the version the edit builds on, not the published one: concurrent batches with the
// same expected version are staged one after the other, and only the first may apply.
absl::Status CheckExpectedVersion(const ChunkEdit& edit, const std::optional<uint64_t>& expected) {
  if (!expected.has_value() || *expected == edit.base_version()) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat("expected_version ", *expected,
                                                    " does not match the current world version ",
                                                    edit.base_version(), "; nothing was applied"));
}

}  // namespace

const char* PrimitiveName(const EditPrimitive& primitive) {
  static const char* names[] = {"fill_ball",   "fill_block",       "fill_cylinder", "fill_wedge",
                                "fill_region", "replace_material", "clear",         "write_voxels"};
  static_assert(std::variant_size_v<EditPrimitive> == 8);
  return names[primitive.index()];
}

absl::Status ValidatePrimitive(const World& world, const EditPrimitive& primitive,
                               const EditLimits& limits) {
  return std::visit(Validator{world, limits}, primitive);
}

absl::Status ApplyPrimitive(ChunkEdit& edit, const EditPrimitive& primitive,
                            const EditLimits& limits) {
  return std::visit(Applier{edit, limits}, primitive);
}

absl::Status ValidateEditBatch(const World& world, const EditBatch& batch,
                               const EditLimits& limits) {
  if (batch.idempotency_key.size() > kMaxIdempotencyKeyBytes) {
    // Keys are kept in memory and stored with their edits: unbounded keys would let one client
    // grow the server by megabytes per batch.
    return absl::InvalidArgumentError(
        absl::StrCat("idempotency_key is ", batch.idempotency_key.size(),
                     " bytes, more than the maximum of ", kMaxIdempotencyKeyBytes));
  }
  if (batch.primitives.empty()) return absl::InvalidArgumentError("primitives must not be empty");
  if (batch.primitives.size() > size_t(limits.max_batch_primitives)) {
    return absl::InvalidArgumentError(absl::StrCat("primitives has ", batch.primitives.size(),
                                                   " entries, more than the configured maximum ",
                                                   limits.max_batch_primitives));
  }
  for (size_t i = 0; i < batch.primitives.size(); ++i) {
    absl::Status status = ValidatePrimitive(world, batch.primitives[i], limits);
    if (!status.ok()) return WithPrefix(status, i, batch.primitives[i]);
  }
  return absl::OkStatus();
}

EditBatcher::EditBatcher(World& world, const EditLimits& limits, size_t idempotency_keys)
    : world_(world), limits_(limits), table_(idempotency_keys) {}

absl::StatusOr<BatchAck> EditBatcher::Apply(const EditBatch& batch,
                                            std::unique_ptr<World::ReadSnapshot>* pinned,
                                            const std::function<void()>* on_ordered) {
  if (!refusal_.ok()) return refusal_;
  absl::Status status = ValidateEditBatch(world_, batch, limits_);
  if (!status.ok()) return status;
  const bool keyed = !batch.idempotency_key.empty();
  if (keyed) {
    absl::MutexLock lock(&mu_);
    // A retry racing the first attempt waits for its outcome instead of applying a second time.
    auto settled = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !in_flight_.contains(batch.idempotency_key);
    };
    mu_.Await(absl::Condition(&settled));
    if (std::optional<IdempotencyTable::Entry> seen = table_.Find(batch.idempotency_key)) {
      if (seen->fingerprint != batch.fingerprint) {
        return absl::InvalidArgumentError(absl::StrCat("idempotency_key '", batch.idempotency_key,
                                                       "' was already used for a different batch"));
      }
      BatchAck ack = seen->ack;
      ack.replayed = true;
      return ack;
    }
    in_flight_.insert(batch.idempotency_key);
  }
  EditTag tag;
  if (keyed) tag = {batch.idempotency_key, batch.fingerprint};
  absl::StatusOr<EditResult> result = world_.Edit(
      [&](ChunkEdit& edit) {
        // Checked under the edit lock, so no other edit can slip in between check and apply.
        absl::Status s = CheckExpectedVersion(edit, batch.expected_version);
        for (size_t i = 0; s.ok() && i < batch.primitives.size(); ++i) {
          s = WithPrefix(ApplyPrimitive(edit, batch.primitives[i], limits_), i,
                         batch.primitives[i]);
        }
        if (on_ordered != nullptr) (*on_ordered)();  // still under the edit lock
        return s;
      },
      tag, pinned);
  BatchAck ack;
  if (result.ok()) ack = {result->version, uint32_t(result->changes.size()), false};
  if (keyed) {
    absl::MutexLock lock(&mu_);
    in_flight_.erase(batch.idempotency_key);
    if (result.ok()) table_.Insert(batch.idempotency_key, {batch.fingerprint, ack});
  }
  if (!result.ok()) return result.status();
  return ack;
}

void EditBatcher::Restore(const std::string& key, const IdempotencyTable::Entry& entry) {
  absl::MutexLock lock(&mu_);
  if (!table_.Find(key)) table_.Insert(key, entry);
}

}  // namespace voxcol
