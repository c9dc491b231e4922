// The query commands of the voxcol CLI: raycast, sweep, overlap, contacts, probe and
// move-character. Each builds
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
// move-character: the same move --ticks times through MoveCharacters, each tick starting where
// the last one ended; one line per tick (one JSON response per line with --json).
int RunMoveCharacter(Client& client);
// validate-hit: ValidateHit for --origin/--direction and --claimed_hit or --target, at
// --at_version (every query command takes --at_version).
int RunValidateHit(Client& client);
// voxcol path: FindPath from --start to --goal; prints the status, waypoints with their actions,
// the length and the version.
int RunPath(Client& client);

}  // namespace voxcol::client
