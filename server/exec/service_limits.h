// Request limits shared by the gRPC services, configured by flags.
#pragma once

#include <cstdint>

#include "core/query/validate.h"
#include "core/voxel/edit.h"

namespace voxcol::server {

struct ServiceLimits {
  QueryLimits query;
  EditLimits edit;
  uint32_t max_characters_per_request = 1024;  // moves in one MoveCharacters (--max_characters_...)
  float max_path_distance = 3000;  // FindPath's largest max_distance, world units (--max_path_...)
};

}  // namespace voxcol::server
