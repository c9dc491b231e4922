// The version of this build: the project version from CMake and the git revision of the tree it
// was built from (refreshed on every build, so a rebuild after a commit reports the new one).
#pragma once

namespace voxcol {

const char* VersionString();  // e.g. "0.1.0"
const char* GitRevision();    // e.g. "9b72dd8c1f2e", with "-dirty" for uncommitted changes;
                              // "unknown" when built outside a git checkout

}  // namespace voxcol
