#include "server/log.h"

#include <cstdio>
#include <mutex>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace voxcol::server {

void LogLine(std::string_view level, std::string_view line) {
  static std::mutex mu;
  std::string ts = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%s %s %.*s\n", ts.c_str(), std::string(level).c_str(), int(line.size()),
               line.data());
  std::fflush(stderr);
}

}  // namespace voxcol::server
