// The tick: the edits a Query batch carries, applied before its queries (QueryBatchRequest.edits).
#pragma once

#include <memory>

#include "absl/status/status.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/world.h"
#include "voxcol/v1/edit_service.pb.h"

namespace voxcol::server {

// Applies `request` as one ApplyEdits batch through `batcher` and fills `ack`. On success,
// `*pinned` holds a snapshot of exactly the version the edits produced (null for a replayed
// batch, which changed nothing). Errors are those of ApplyEdits with "edits." before the field
// path (INVALID_ARGUMENT) or "edits: " before the message (other codes). Counted in the edit
// metrics like ApplyEdits.
absl::Status ApplyTickEdits(EditBatcher& batcher, const v1::ApplyEditsRequest& request,
                            v1::EditAck* ack, std::unique_ptr<World::ReadSnapshot>* pinned);

}  // namespace voxcol::server
