// Request limits shared by the gRPC services, configured by flags.
#pragma once

#include "core/query/validate.h"
#include "core/voxel/edit.h"

namespace voxcol::server {

struct ServiceLimits {
  QueryLimits query;
  EditLimits edit;
};

}  // namespace voxcol::server
