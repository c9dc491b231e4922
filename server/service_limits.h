// Request limits shared by the gRPC services, configured by flags.
#pragma once

#include "core/broadphase/overlap.h"
#include "core/query/raycast.h"
#include "core/voxel/edit.h"

namespace voxcol::server {

struct ServiceLimits {
  QueryLimits query;
  OverlapLimits overlap;
  EditLimits edit;
};

}  // namespace voxcol::server
