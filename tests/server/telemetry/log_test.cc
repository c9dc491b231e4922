// The JSON form of server log lines (issue 40): LogfmtToJsonMembers must turn any line that
// LogValue-escaped values make into a JSON object that a standard parser (protobuf's) reads back
// to the original text, whatever bytes the values hold.
#include "server/telemetry/log.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace voxcol::server {
namespace {

bool ParseObject(const std::string& members, google::protobuf::Struct* out) {
  return google::protobuf::util::JsonStringToMessage("{" + members + "}", out).ok();
}

std::string Field(const google::protobuf::Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  return it == s.fields().end() ? "<missing>" : it->second.string_value();
}

// UTF-8 of code point cp (no surrogates, <= U+10FFFF): the test's own encoder, the oracle.
std::string Utf8(uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s += char(cp);
  } else if (cp < 0x800) {
    s += char(0xc0 | cp >> 6), s += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    s += char(0xe0 | cp >> 12), s += char(0x80 | ((cp >> 6) & 0x3f)), s += char(0x80 | (cp & 0x3f));
  } else {
    s += char(0xf0 | cp >> 18), s += char(0x80 | ((cp >> 12) & 0x3f));
    s += char(0x80 | ((cp >> 6) & 0x3f)), s += char(0x80 | (cp & 0x3f));
  }
  return s;
}

TEST(LogJsonTest, ValidUtf8ValuesRoundTripExactly) {
  std::mt19937 rng(7);
  for (int i = 0; i < 3000; ++i) {
    std::string value;
    const int n = int(rng() % 24);
    for (int k = 0; k < n; ++k) {
      uint32_t cp;
      switch (rng() % 4) {
        case 0:
          cp = rng() % 0x20;  // control bytes, NUL included
          break;
        case 1:
          cp = std::string(" \"\\=}{:,'")[rng() % 9];
          break;
        case 2:
          cp = 0x20 + rng() % 0x60;
          break;
        default:
          do cp = 0x80 + rng() % 0x10ff80;
          while (cp >= 0xd800 && cp <= 0xdfff);
      }
      value += Utf8(cp);
    }
    const std::string line = "event=t a=" + LogValue(value) + " b=7 c=" + LogValue("");
    google::protobuf::Struct parsed;
    ASSERT_TRUE(ParseObject(LogfmtToJsonMembers(line), &parsed)) << LogfmtToJsonMembers(line);
    EXPECT_EQ(Field(parsed, "event"), "t");
    EXPECT_EQ(Field(parsed, "a"), value) << line;
    EXPECT_EQ(Field(parsed, "b"), "7");
    EXPECT_EQ(Field(parsed, "c"), "");
    EXPECT_EQ(parsed.fields_size(), 4);
  }
}

TEST(LogJsonTest, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  const struct {
    std::string in, out;
  } cases[] = {
      {"\xff", r},
      {"a\xc3", "a" + r},                        // truncated 2-byte sequence
      {"\xc0\xaf", r + r},                       // overlong '/'
      {"\xed\xa0\x80", r + r + r},               // a surrogate
      {"\xf4\x90\x80\x80", r + r + r + r},       // past U+10FFFF
      {"ok \xc3\xa9 \xfe", "ok \xc3\xa9 " + r},  // valid and invalid mixed
  };
  for (const auto& c : cases) {
    google::protobuf::Struct parsed;
    ASSERT_TRUE(ParseObject(LogfmtToJsonMembers("event=t a=" + LogValue(c.in)), &parsed));
    EXPECT_EQ(Field(parsed, "a"), c.out);
  }
}

TEST(LogJsonTest, TextOutsideKeyValuePairsIsKeptUnderMsg) {
  google::protobuf::Struct parsed;
  ASSERT_TRUE(ParseObject(LogfmtToJsonMembers("event=x stray words k=v"), &parsed));
  EXPECT_EQ(Field(parsed, "event"), "x");
  EXPECT_EQ(Field(parsed, "k"), "v");
  EXPECT_EQ(Field(parsed, "msg"), "stray words");
}

}  // namespace
}  // namespace voxcol::server
