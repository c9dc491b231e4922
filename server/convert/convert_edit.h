// Conversions between the EditService wire types (batches, region I/O, change feed) and core types.
// Errors are INVALID_ARGUMENT naming the proto field with its path; geometric validation stays in
// core.
#pragma once

#include "absl/status/status.h"
#include "core/voxel/change_log.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/voxel_io.h"
#include "voxcol/v1/edit_service.pb.h"

namespace voxcol::server {

IntBox FromProto(const v1::VoxelBox& box);
void ToProto(const IntBox& box, v1::VoxelBox* out);

// Wire-level checks only (materials <= 255, known enums, a primitive set); messages start with the
// field name inside the primitive, e.g. "material must be in [0, 255], got 300".
absl::Status FromProto(const v1::EditPrimitive& primitive, EditPrimitive* out);
// Messages carry the path, e.g. "primitives[2].fill_block.material ...". Sets a fingerprint of
// the batch content for idempotency-key reuse detection.
absl::Status FromProto(const v1::ApplyEditsRequest& request, EditBatch* out);

VoxelArrays FromProto(const v1::VoxelData& data);
void ToProto(const VoxelArrays& voxels, v1::VoxelData* out);
void ToProto(const BatchAck& ack, v1::EditAck* out);

// The part of `entry` inside `region`: chunk changes clipped to it, with their voxels if
// `include_voxels`. Returns false (and leaves `out` unusable) when nothing changed in the region.
bool ToProto(const ChangeEntry& entry, const IntBox& region, bool include_voxels,
             v1::SubscribeResponse* out);

}  // namespace voxcol::server
