// Request limits shared by the gRPC services, configured by flags.
#pragma once

#include "core/broadphase/overlap.h"
#include "core/query/raycast.h"
#include "core/query/shape_query.h"
#include "core/voxel/edit.h"

namespace voxcol::server {

struct ServiceLimits {
  QueryLimits query;
  OverlapLimits overlap;
  // Sweep, Contacts and posed Overlap. max_extent follows --max_overlap_extent and also bounds
  // ContactsRequest.margin.
  ShapeQueryLimits shape;
  EditLimits edit;
};

}  // namespace voxcol::server
