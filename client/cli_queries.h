// The query commands of the voxcol CLI: raycast, sweep, overlap, contacts and probe. Each builds
// its request from the flags, calls the server and prints a summary (or JSON with --json);
// returns the process exit code (cli_common.h).
#pragma once

#include "client/voxcol_client.h"

namespace voxcol::client {

int RunRaycast(Client& client);
int RunSweep(Client& client);
int RunOverlap(Client& client);
int RunContacts(Client& client);
int RunProbe(Client& client);

}  // namespace voxcol::client
