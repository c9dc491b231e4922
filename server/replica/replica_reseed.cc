// Re-seeding a replica that fell out of its primary's change-feed window (Subscribe answered
// OUT_OF_RANGE): the simplest honest copy.
//
// 1. V0 = the primary's version (GetWorldInfo).
// 2. The whole world is copied with ExportRegion, box by box (2^20 voxels each). Each box is one
//    consistent snapshot at some version Vi >= V0, but the boxes may be of different versions.
// 3. Subscribe(from_version = V0) and overwrite the changed boxes of every batch up to the first
//    one at or above max(Vi). Every voxel then holds its value at that last version V: a voxel
//    changed in (V0, V] was overwritten by its last change, and one that did not change has the
//    same value at every Vi and at V.
// All of it is written into ONE local edit that gets version V (ChunkEdit::SetVersion), so queries
// on the replica see either the old state or the complete copy, never a mixture; edits that change
// nothing (unchanged chunks) are dropped by the world's diff, so only chunks that differ are
// stored. Cost: every voxel of the world crosses the network once (2 bytes each); the scratch
// edit holds a copy of every chunk of the world until it commits.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/store/region_file.h"
#include "core/voxel/voxel_io.h"
#include "server/convert/convert.h"
#include "server/convert/convert_edit.h"
#include "server/replica/replica.h"
#include "server/telemetry/log.h"

namespace voxcol::server {

namespace {

// Copies every voxel of the world from the primary into `edit`; the newest box version in *vmax.
absl::Status CopyWorld(client::Client& client, const World& world, ChunkEdit& edit,
                       uint64_t* vmax) {
  const IntBox bounds = world.voxel_bounds();
  constexpr int kStep = 64;  // 64 x 256 x 64 = 2^20 voxels
  for (int y = bounds.min.y; y < bounds.max.y; y += 256)
    for (int z = bounds.min.z; z < bounds.max.z; z += kStep)
      for (int x = bounds.min.x; x < bounds.max.x; x += kStep) {
        const IntBox box{{x, y, z},
                         {std::min(x + kStep, bounds.max.x), std::min(y + 256, bounds.max.y),
                          std::min(z + kStep, bounds.max.z)}};
        v1::ExportRegionRequest request;
        ToProto(box, request.mutable_box());
        v1::ExportRegionResponse response;
        if (grpc::Status s = client.ExportRegion(request, &response); !s.ok())
          return FromGrpcStatus(s);
        absl::StatusOr<store::Region> region = store::DecodeRegion(response.region());
        if (!region.ok()) return region.status();
        if (absl::Status s = store::WriteRegion(*region, edit); !s.ok()) return s;
        *vmax = std::max(*vmax, response.version());
      }
  return absl::OkStatus();
}

// Overwrites the changes of the feed after `v0` up to the first batch at or above `vmax`; returns
// the version the edit then represents.
absl::StatusOr<uint64_t> CatchUp(client::Client& client, uint64_t v0, uint64_t vmax,
                                 ChunkEdit& edit) {
  if (vmax <= v0) return v0;
  grpc::ClientContext context;
  v1::SubscribeRequest request;
  request.set_from_version(v0);
  request.set_include_voxels(true);
  request.set_include_empty(true);
  auto reader = client.Subscribe(&context, request);
  EditLimits limits;
  limits.max_region_voxels = std::numeric_limits<int64_t>::max();
  v1::SubscribeResponse response;
  uint64_t reached = v0;
  while (reached < vmax && reader->Read(&response)) {
    for (const v1::ChunkChange& change : response.changes()) {
      if (absl::Status s = WriteVoxels(edit, FromProto(change.voxels()), limits); !s.ok()) {
        return s;
      }
    }
    reached = response.version();
  }
  context.TryCancel();
  grpc::Status finished = reader->Finish();
  if (reached < vmax) {
    return finished.ok() ? absl::UnavailableError("feed ended during the re-seed")
                         : FromGrpcStatus(finished);
  }
  return reached;
}

}  // namespace

absl::Status ReplicaFollower::ReseedFromPrimary(client::Client& client) {
  v1::GetWorldInfoResponse info;
  if (grpc::Status s = client.GetWorldInfo(&info); !s.ok()) return FromGrpcStatus(s);
  const uint64_t v0 = info.version();
  if (v0 <= world_.version()) {
    // The primary lost versions this replica has (restored from an older backup): a replica
    // cannot go back; its data directory must be emptied by an operator.
    return absl::FailedPreconditionError(
        absl::StrCat("replica is at version ", world_.version(), ", not behind its primary at ", v0,
                     ": empty the replica's data directory to re-seed it"));
  }
  uint64_t version = 0;
  absl::StatusOr<EditResult> result = world_.Edit([&](ChunkEdit& edit) {
    uint64_t vmax = v0;
    if (absl::Status s = CopyWorld(client, world_, edit, &vmax); !s.ok()) return s;
    absl::StatusOr<uint64_t> reached = CatchUp(client, v0, vmax, edit);
    if (!reached.ok()) return reached.status();
    version = *reached;
    edit.SetVersion(version);
    return absl::OkStatus();
  });
  if (!result.ok()) return result.status();
  if (result->version != version) {
    return absl::InternalError(absl::StrCat("re-seed at primary version ", version,
                                            " became local version ", result->version));
  }
  NoteKnown(version);
  NoteApplied(version);
  LogInfo("event=replica_reseeded world=%s version=%d changed_chunks=%d", handle_->id, version,
          result->changes.size());
  return absl::OkStatus();
}

}  // namespace voxcol::server
