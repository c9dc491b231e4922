// The WatchPaths RPC (issue 41, path watching): a bidirectional stream on which a client registers
// and unregisters path watches; the worlds' PathWatchHubs (server/nav/path_watch.h) send their
// events back on it. No navigation here: decoding, limits, and the stream's writes.
#pragma once

#include <memory>

#include "server/stream/async_stream.h"

namespace voxcol::server {

class WorldResolver;

// The handler of one WatchPaths call; it deletes itself when the call is done. `resolver` finds
// each watch's world and must outlive the server; `max_path_distance` is --max_path_distance.
AsyncStream* OpenWatchPaths(const WorldResolver& resolver, float max_path_distance,
                            std::unique_ptr<StreamCall> call);

}  // namespace voxcol::server
