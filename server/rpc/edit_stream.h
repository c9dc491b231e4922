// The EditStream RPC: edit batches on one bidirectional stream, applied and acknowledged in order
// through the same EditBatcher path as ApplyEdits. No geometry here.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>

#include "core/voxel/edit_batch.h"
#include "server/exec/worker_pool.h"
#include "server/security/audit_log.h"
#include "server/stream/async_stream.h"

namespace voxcol::server {

class WorldResolver;

// State shared by every open edit stream: the batcher, the pool that applies batches and the
// per-stream bound. Thread-safe.
class EditStreams {
 public:
  // `batcher` is the one ApplyEdits uses (shared idempotency keys, shared group commits); `pool`
  // applies the batches: each stream with pending batches holds at most one of its threads, so the
  // pool's size bounds how many streams commit concurrently. At most `max_in_flight_batches`
  // (>= 1) batches per stream are read and not yet answered. Both must outlive the server.
  EditStreams(EditBatcher& batcher, WorkerPool* pool, int max_in_flight_batches);
  // Each batch is applied to the world its request names, found by `resolver` (must outlive the
  // server); without one, every batch goes to `batcher` (which then must be its world's).
  void SetResolver(const WorldResolver* resolver) { resolver_ = resolver; }
  // Records every committed batch (must outlive the server; unset: none are recorded).
  void SetEditAudit(const EditAudit* audit) { audit_ = audit; }

  // The handler of one EditStream call; it deletes itself when the call is done.
  AsyncStream* Open(std::unique_ptr<StreamCall> call);

  int max_in_flight_batches() const { return max_in_flight_batches_; }

 private:
  friend class EditStreamReactor;

  EditBatcher& batcher_;
  const WorldResolver* resolver_ = nullptr;
  const EditAudit* audit_ = nullptr;
  WorkerPool* pool_;
  const int max_in_flight_batches_;
};

}  // namespace voxcol::server
