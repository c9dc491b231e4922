// `voxcol render`: draws the world into a PNG (render.h) from the command line's flags.
#pragma once

#include "client/voxcol_client.h"

namespace voxcol::client {

// Renders with the flags of cli_render.cc plus --mode, --out, --size and --json; prints a
// summary (rays, rays/s) and, when stderr is a terminal, a progress bar while it runs.
int RunRender(Client& client);

}  // namespace voxcol::client
