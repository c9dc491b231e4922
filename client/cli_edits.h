// The edit, region I/O and change-feed commands of the voxcol CLI. Each builds its request from
// the flags, calls the server and prints a summary (or JSON with --json); returns the process exit
// code (cli_common.h). Edits go through ApplyEdits and accept --idempotency_key and
// --expected_version (fill-ball uses the FillBall RPC unless one of them is given).
#pragma once

#include <string>

#include "client/voxcol_client.h"

namespace voxcol::client {

int RunFillBall(Client& client);
// The one-primitive edits: fill-block, fill-wedge, fill-cylinder, fill-region, replace-material
// and clear (`command` is one of these).
int RunPrimitive(Client& client, const std::string& command);
int RunEditBatch(Client& client);  // edit --batch=FILE
int RunReadVoxels(Client& client);
int RunWriteVoxels(Client& client);
int RunExportRegion(Client& client);
int RunImportRegion(Client& client);
int RunCheckpoint(Client& client);
// Prints one line per committed batch until --max_events or the stream ends.
int RunSubscribe(Client& client);

}  // namespace voxcol::client
