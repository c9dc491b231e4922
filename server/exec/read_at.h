// Lag compensation on the server: the snapshot a request's ReadAt names (query_service.proto).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/voxel/world.h"
#include "voxcol/v1/query_service.pb.h"

namespace voxcol::server {

// A snapshot of the version `read_at` names, already the calling thread's (destroy it on this
// thread), or null when it names none (then read the newest version as usual). OUT_OF_RANGE
// prefixed with `field` ("read_at.at_version: ...") when the version is no longer kept (the message
// names the oldest readable version) or in the future.
absl::StatusOr<std::unique_ptr<World::ReadSnapshot>> OpenReadAt(const World& world,
                                                                const v1::ReadAt& read_at,
                                                                const std::string& field);

}  // namespace voxcol::server
