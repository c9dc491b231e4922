#include "tests/bench/tick_flags.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace voxcol::bench {
namespace {

double tick_seconds = 30.0;

}  // namespace

bool ParseTickFlags(int* argc, char** argv) {
  constexpr char kFlag[] = "--tick_seconds=";
  int kept = 1;
  bool ok = true;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], kFlag, sizeof kFlag - 1) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    char* end = nullptr;
    tick_seconds = std::strtod(argv[i] + sizeof kFlag - 1, &end);
    if (*end != '\0' || !(tick_seconds > 0)) {
      std::fprintf(stderr, "--tick_seconds must be a positive number of seconds, got '%s'\n",
                   argv[i] + sizeof kFlag - 1);
      ok = false;
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return ok;
}

double TickSeconds() { return tick_seconds; }

}  // namespace voxcol::bench
