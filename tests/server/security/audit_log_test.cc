// JsonString, the audit log's string encoding: well-formed UTF-8 is kept, everything else a JSON
// parser could trip on is escaped. Expected strings are written out by hand from RFC 8259 and
// RFC 3629 (the byte ranges of well-formed UTF-8).
#include "server/security/audit_log.h"

#include <gtest/gtest.h>

#include <string>

namespace voxcol::server {
namespace {

TEST(AuditJsonStringTest, WellFormedUtf8IsKeptAsItIs) {
  EXPECT_EQ(JsonString("cl\xc3\xa9"), "\"cl\xc3\xa9\"");              // é, 2 bytes
  EXPECT_EQ(JsonString("\xe2\x82\xac 5"), "\"\xe2\x82\xac 5\"");      // €, 3 bytes
  EXPECT_EQ(JsonString("\xf0\x9f\x8e\xae"), "\"\xf0\x9f\x8e\xae\"");  // 🎮, 4 bytes
  EXPECT_EQ(JsonString("\xef\xbf\xbf\xf4\x8f\xbf\xbf"),
            "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\"");  // U+FFFF, U+10FFFF
}

TEST(AuditJsonStringTest, QuotesBackslashControlBytesAndDelAreEscaped) {
  EXPECT_EQ(JsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonString(std::string("\n\t\x01\x7f", 4)), "\"\\u000a\\u0009\\u0001\\u007f\"");
  EXPECT_EQ(JsonString(std::string("\0", 1)), "\"\\u0000\"");
}

TEST(AuditJsonStringTest, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(JsonString("\xff"), "\"\\u00ff\"");
  EXPECT_EQ(JsonString("x\xc3"), "\"x\\u00c3\"");                      // truncated at the end
  EXPECT_EQ(JsonString("\xc3("), "\"\\u00c3(\"");                      // bad continuation
  EXPECT_EQ(JsonString("\xc0\xaf"), "\"\\u00c0\\u00af\"");             // overlong '/'
  EXPECT_EQ(JsonString("\xe0\x80\xaf"), "\"\\u00e0\\u0080\\u00af\"");  // overlong, 3 bytes
  EXPECT_EQ(JsonString("\xed\xa0\x80"), "\"\\u00ed\\u00a0\\u0080\"");  // surrogate U+D800
  EXPECT_EQ(JsonString("\xf4\x90\x80\x80"), "\"\\u00f4\\u0090\\u0080\\u0080\"");  // > U+10FFFF
  EXPECT_EQ(JsonString("\x80\xc3\xa9"), "\"\\u0080\xc3\xa9\"");  // a stray continuation, then é
}

}  // namespace
}  // namespace voxcol::server
