// The resident memory of a server process, for tests that bound it.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <string>

namespace voxcol::testing {

// Under AddressSanitizer (the sanitizer build) a process's RSS holds shadow memory, redzones and a
// quarantine of freed blocks (held back on purpose, to catch use after free), so it says nothing
// about the server's own memory: tests print the figure there but check it only when this is true.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRssMeasuresTheServer = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kRssMeasuresTheServer = false;
#else
inline constexpr bool kRssMeasuresTheServer = true;
#endif
#else
inline constexpr bool kRssMeasuresTheServer = true;
#endif

// VmRSS of `pid` (/proc/<pid>/status) in bytes; -1 if unreadable.
inline double ResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) * 1024.0;
  }
  return -1;
}

}  // namespace voxcol::testing
