#include "server/tick.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/convert_edit.h"
#include "server/server_metrics.h"

namespace voxcol::server {

absl::Status ApplyTickEdits(EditBatcher& batcher, const v1::ApplyEditsRequest& request,
                            v1::EditAck* ack, std::unique_ptr<World::ReadSnapshot>* pinned) {
  const absl::Time start = absl::Now();
  EditBatch batch;
  absl::Status status = FromProto(request, &batch);
  if (status.ok()) {
    absl::StatusOr<BatchAck> applied = batcher.Apply(batch, pinned);
    if (applied.ok()) ToProto(*applied, ack);
    status = applied.status();
  }
  ServerMetrics& metrics = GetServerMetrics();
  metrics.edit_latency->Observe(absl::ToDoubleSeconds(absl::Now() - start));
  (status.ok() ? metrics.edits : metrics.edit_failures)->Add();
  if (status.ok()) return status;
  const char* prefix = status.code() == absl::StatusCode::kInvalidArgument ? "edits." : "edits: ";
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace voxcol::server
