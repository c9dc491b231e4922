#include "server/telemetry/log.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
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

namespace {

LogFormat g_format = LogFormat::kText;
std::atomic<int> g_min_level{int(LogLevel::kInfo)};

LogLevel LevelOf(std::string_view level) {
  if (level == "ERROR") return LogLevel::kError;
  if (level == "WARN") return LogLevel::kWarning;
  return LogLevel::kInfo;
}

// Length of the valid UTF-8 sequence at text[i], or 0 if it is not one (overlong forms,
// surrogates and code points past U+10FFFF are invalid).
size_t Utf8Length(std::string_view text, size_t i) {
  const unsigned char c = text[i];
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  uint32_t cp = n == 1 ? c : c & (0x7f >> n);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char d = text[i + k];
    if ((d & 0xc0) != 0x80) return 0;
    cp = cp << 6 | (d & 0x3f);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

void AppendJsonString(std::string_view text, std::string* out) {
  *out += '"';
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = text[i];
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      *out += "\\ufffd";
      ++i;
    } else if (c == '"' || c == '\\') {
      *out += '\\';
      *out += char(c);
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      *out += absl::StrFormat("\\u%04x", c);
      ++i;
    } else {
      out->append(text.substr(i, n));
      i += n;
    }
  }
  *out += '"';
}

int HexDigit(char h) {
  if (h >= '0' && h <= '9') return h - '0';
  if (h >= 'a' && h <= 'f') return h - 'a' + 10;
  if (h >= 'A' && h <= 'F') return h - 'A' + 10;
  return -1;
}

// Reads one value at line[*i] as LogValue wrote it (bare up to a space, or quoted with escapes)
// and returns its text.
std::string ReadValue(std::string_view line, size_t* i) {
  std::string value;
  if (*i >= line.size() || line[*i] != '"') {
    const size_t end = std::min(line.find(' ', *i), line.size());
    value = std::string(line.substr(*i, end - *i));
    *i = end;
    return value;
  }
  for (++*i; *i < line.size() && line[*i] != '"'; ++*i) {
    if (line[*i] != '\\' || *i + 1 >= line.size()) {
      value += line[*i];
      continue;
    }
    const char e = line[++*i];
    if (e == 'n') {
      value += '\n';
    } else if (e == 'r') {
      value += '\r';
    } else if (e == 't') {
      value += '\t';
    } else if (e == 'x' && *i + 2 < line.size() && HexDigit(line[*i + 1]) >= 0 &&
               HexDigit(line[*i + 2]) >= 0) {
      value += char(HexDigit(line[*i + 1]) << 4 | HexDigit(line[*i + 2]));
      *i += 2;
    } else {
      value += e;  // \" and \\ (and anything else) stand for the character itself
    }
  }
  ++*i;  // the closing quote
  return value;
}

}  // namespace

void SetLogOptions(LogFormat format, LogLevel min_level) {
  g_format = format;
  g_min_level.store(int(min_level), std::memory_order_relaxed);
}

bool LogEnabled(LogLevel level) {
  return int(level) >= g_min_level.load(std::memory_order_relaxed);
}

std::string LogfmtToJsonMembers(std::string_view line) {
  std::string out, loose;
  for (size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
      continue;
    }
    const size_t eq = line.find('=', i), space = std::min(line.find(' ', i), line.size());
    if (eq == std::string_view::npos || eq > space || eq == i) {  // not key=value: keep the text
      if (!loose.empty()) loose += ' ';
      loose += ReadValue(line, &i);
      continue;
    }
    const std::string_view key = line.substr(i, eq - i);
    i = eq + 1;
    if (!out.empty()) out += ',';
    AppendJsonString(key, &out);
    out += ':';
    AppendJsonString(ReadValue(line, &i), &out);
  }
  if (!loose.empty()) {
    if (!out.empty()) out += ',';
    out += "\"msg\":";
    AppendJsonString(loose, &out);
  }
  return out;
}

void LogLine(std::string_view level, std::string_view line) {
  if (!LogEnabled(LevelOf(level))) return;
  static std::mutex mu;
  std::string ts = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone());
  const std::string lv(level);
  std::string text;
  if (g_format == LogFormat::kJson) {
    const std::string members = LogfmtToJsonMembers(line);
    text = absl::StrCat("{\"time\":\"", ts, "\",\"level\":\"", lv, "\"", members.empty() ? "" : ",",
                        members, "}\n");
  } else {
    text = absl::StrCat(ts, " ", lv, " ", std::string(line), "\n");
  }
  std::lock_guard<std::mutex> lock(mu);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

}  // namespace voxcol::server
