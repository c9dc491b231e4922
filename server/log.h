// Minimal structured logging to stderr: one line per event, `time level event key=value ...`.
#pragma once

#include <string_view>

#include "absl/strings/str_format.h"

namespace voxcol::server {

void LogLine(std::string_view level, std::string_view line);

template <typename... Args>
void LogInfo(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine("INFO", absl::StrFormat(format, args...));
}
template <typename... Args>
void LogError(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine("ERROR", absl::StrFormat(format, args...));
}

}  // namespace voxcol::server
