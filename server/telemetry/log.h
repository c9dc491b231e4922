// Minimal structured logging to stderr: one line per event, `time level event key=value ...`, or
// with SetLogOptions one JSON object per line ({"time":...,"level":...,"event":...,...}).
//
// Every string argument is written as a logfmt value (LogValue): bare when it holds only safe
// characters, else double-quoted with `"`, `\`, control and non-ASCII bytes escaped. So no
// client-supplied text (request ids, paths, idempotency keys, messages) can start a new line or
// forge a `key=value` field. Format strings therefore write `key=%s`, never `key="%s"`.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace voxcol::server {

// Levels in increasing severity; lines below the minimum level are dropped.
enum class LogLevel { kInfo, kWarning, kError };
enum class LogFormat { kText, kJson };
// Call once at start, before other threads log (defaults: text, info).
void SetLogOptions(LogFormat format, LogLevel min_level);
bool LogEnabled(LogLevel level);

// `level` is "INFO", "WARN" or "ERROR"; `line` is `key=value ...` with values as LogValue writes
// them (text that is not a key=value pair is kept under "msg" in JSON).
void LogLine(std::string_view level, std::string_view line);

// One `key=value ...` line as the members of a JSON object, without the braces: keys in order,
// values as JSON strings (numbers stay strings: the text format does not type them). Invalid UTF-8
// bytes become U+FFFD. Exposed for tests.
std::string LogfmtToJsonMembers(std::string_view line);

// `text` as one logfmt value: bare if non-empty and every byte is an ASCII letter, digit or one
// of `._-/:@,+[]`, else quoted and escaped (\" \\ \n \r \t \xNN for other bytes < 0x20 or >= 0x7f).
std::string LogValue(std::string_view text);

namespace log_internal {

// What a LogInfo/LogError argument is formatted as: strings as their escaped LogValue.
template <typename T, bool kIsString = std::is_convertible_v<const T&, absl::string_view> ||
                                       std::is_convertible_v<const T&, std::string_view>>
struct Escaped {
  using type = T;
  static const T& Apply(const T& arg) { return arg; }
};
template <typename T>
struct Escaped<T, true> {
  using type = std::string;
  static std::string Apply(const T& arg) {
    if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      return LogValue(std::string_view(arg));
    } else {
      const absl::string_view text(arg);
      return LogValue(std::string_view(text.data(), text.size()));
    }
  }
};

}  // namespace log_internal

template <typename... Args>
void LogInfo(const absl::FormatSpec<typename log_internal::Escaped<Args>::type...>& format,
             const Args&... args) {
  if (!LogEnabled(LogLevel::kInfo)) return;
  LogLine("INFO", absl::StrFormat(format, log_internal::Escaped<Args>::Apply(args)...));
}
template <typename... Args>
void LogWarning(const absl::FormatSpec<typename log_internal::Escaped<Args>::type...>& format,
                const Args&... args) {
  if (!LogEnabled(LogLevel::kWarning)) return;
  LogLine("WARN", absl::StrFormat(format, log_internal::Escaped<Args>::Apply(args)...));
}
template <typename... Args>
void LogError(const absl::FormatSpec<typename log_internal::Escaped<Args>::type...>& format,
              const Args&... args) {
  LogLine("ERROR", absl::StrFormat(format, log_internal::Escaped<Args>::Apply(args)...));
}

}  // namespace voxcol::server
