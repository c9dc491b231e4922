#include "server/exec/apply_edits.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/convert/convert_edit.h"
#include "server/telemetry/server_metrics.h"

namespace voxcol::server {

absl::Status ApplyEditsMessage(EditBatcher& batcher, const v1::ApplyEditsRequest& request,
                               v1::EditAck* ack, std::unique_ptr<World::ReadSnapshot>* pinned,
                               const std::function<void()>* on_ordered) {
  const absl::Time start = absl::Now();
  EditBatch batch;
  absl::Status status = FromProto(request, &batch);
  if (status.ok()) {
    absl::StatusOr<BatchAck> applied = batcher.Apply(batch, pinned, on_ordered);
    if (applied.ok()) ToProto(*applied, ack);
    status = applied.status();
  }
  ServerMetrics& metrics = GetServerMetrics();
  metrics.edit_latency->Observe(absl::ToDoubleSeconds(absl::Now() - start));
  (status.ok() ? metrics.edits : metrics.edit_failures)->Add();
  return status;
}

absl::Status PrefixEditsField(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument &&
      status.code() != absl::StatusCode::kFailedPrecondition) {
    return status;
  }
  return absl::Status(status.code(), absl::StrCat("edits.", status.message()));
}

}  // namespace voxcol::server
