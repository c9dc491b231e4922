// One ApplyEditsRequest through the ApplyEdits path (conversion, validation, idempotency,
// expected_version, group commit), shared by the ApplyEdits RPC, the EditStream and the edits of
// a tick batch (QueryBatchRequest.edits).
#pragma once

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "core/voxel/edit_batch.h"
#include "core/voxel/world.h"
#include "voxcol/v1/edit_service.pb.h"

namespace voxcol::server {

// Applies `request` as one batch through `batcher` and fills `ack` on success; records the edit
// metrics (latency, committed or failed). `pinned` and `on_ordered` are passed to
// EditBatcher::Apply (a snapshot of exactly the batch's version; the batch has its place in the
// version order). Errors are EditBatcher::Apply's, naming the field from the request's root.
absl::Status ApplyEditsMessage(EditBatcher& batcher, const v1::ApplyEditsRequest& request,
                               v1::EditAck* ack,
                               std::unique_ptr<World::ReadSnapshot>* pinned = nullptr,
                               const std::function<void()>* on_ordered = nullptr);

// For batches nested in a field named `edits` (EditStream, tick batches): INVALID_ARGUMENT and
// FAILED_PRECONDITION messages, which start with the field's path, get "edits." before it.
absl::Status PrefixEditsField(const absl::Status& status);

}  // namespace voxcol::server
