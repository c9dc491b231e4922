#include "server/exec/read_at.h"

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace voxcol::server {

absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> OpenReadAt(const World& world,
                                                                const v1::ReadAt& read_at,
                                                                const std::string& field) {
  absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> snapshot;
  std::string name;
  switch (read_at.point_case()) {
    case v1::ReadAt::POINT_NOT_SET:
      return std::unique_ptr<World::ReadSnapshot>();
    case v1::ReadAt::kAtVersion:
      name = field + ".at_version";
      snapshot = world.OpenSnapshotAt(read_at.at_version());
      break;
    case v1::ReadAt::kAtServerTimeMicros: {
      name = field + ".at_server_time_micros";
      absl::StatusOr<uint64_t> version =
          world.VersionAtTime(absl::FromUnixMicros(read_at.at_server_time_micros()));
      if (!version.ok()) {
        snapshot = version.status();
      } else {
        snapshot = world.OpenSnapshotAt(*version);
      }
      break;
    }
  }
  if (!snapshot.ok()) {
    return absl::Status(snapshot.status().code(),
                        absl::StrCat(name, ": ", snapshot.status().message()));
  }
  return snapshot;
}

}  // namespace voxcol::server
