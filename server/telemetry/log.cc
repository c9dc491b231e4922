#include "server/telemetry/log.h"

#include <cstdio>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace voxcol::server {

namespace {

bool SafeByte(unsigned char c) {
  return absl::ascii_isalnum(c) ||
         std::string_view("._-/:@,+[]").find(char(c)) != std::string_view::npos;
}

}  // namespace

std::string LogValue(std::string_view text) {
  bool bare = !text.empty();
  for (unsigned char c : text) bare = bare && SafeByte(c);
  if (bare) return std::string(text);
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          out += absl::StrFormat("\\x%02x", c);
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

void LogLine(std::string_view level, std::string_view line) {
  static std::mutex mu;
  std::string ts = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%s %s %.*s\n", ts.c_str(), std::string(level).c_str(), int(line.size()),
               line.data());
  std::fflush(stderr);
}

}  // namespace voxcol::server
