// Text shown to a person: control bytes escaped (denpex/common/text.h), UTF-8 checked.
#include "denpex/common/text.h"

#include <gtest/gtest.h>

#include <string>

namespace denpex {
namespace {

TEST(Text, EscapesC0ControlsDelAndC1ButKeepsTabNewlineAndUtf8) {
  // A log line that clears the screen, moves the cursor home and rings the bell.
  EXPECT_EQ(EscapeControlBytes("a\x1b[2J\x1b[H\x07z"), "a\\x1b[2J\\x1b[H\\x07z");
  EXPECT_EQ(EscapeControlBytes("col\tcol\nnext\r\n"), "col\tcol\nnext\\x0d\n");
  EXPECT_EQ(EscapeControlBytes(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7f");
  EXPECT_EQ(EscapeControlBytes("csi \xc2\x9b" "2J and \xc2\x85"), "csi \\u009b2J and \\u0085");
  const std::string utf8 = "caf\xc3\xa9 \xc2\xa0 \xe2\x80\x94 \xf0\x9f\x94\xa5";  // é, NBSP, —, emoji
  EXPECT_EQ(EscapeControlBytes(utf8), utf8);
  EXPECT_EQ(EscapeControlBytes("lone \x9b byte"), "lone \x9b byte");  // not UTF-8 C1: a terminal prints it as �
}

TEST(Text, FirstInvalidUtf8FindsTheByte) {
  EXPECT_EQ(FirstInvalidUtf8("plain ascii text, long enough for the 8-byte steps"), std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x94\xa5"), std::string_view::npos);
  EXPECT_EQ(FirstInvalidUtf8("caf\xe9!"), 3u);                // Latin-1
  EXPECT_EQ(FirstInvalidUtf8("ab\xc0\xaf"), 2u);              // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("ab\xed\xa0\x80"), 2u);          // a surrogate
  EXPECT_EQ(FirstInvalidUtf8("abcdefghij\xf4\x90\x80\x80"), 10u);  // past U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("ab\xe2\x80"), 2u);              // cut short
}

// NextUtf8 reads a character a call (FirstInvalidUtf8's rules); AppendUtf8 writes it back.
TEST(Text, NextUtf8AndAppendUtf8RoundTrip) {
  const std::string_view text = "a\u00e9\u2014\U0001F525";
  std::u32string cps;
  for (std::size_t i = 0; i < text.size();) cps.push_back(NextUtf8(text, &i));
  EXPECT_EQ(cps, U"a\u00e9\u2014\U0001F525");
  std::string back;
  for (const char32_t cp : cps) AppendUtf8(cp, &back);
  EXPECT_EQ(back, text);
  std::size_t i = 0;  // a lone continuation byte, an overlong `/`, a sequence cut short
  const std::string_view bad = "\x80\xc0\xaf\xe2\x80";
  std::u32string got;
  while (i < bad.size()) got.push_back(NextUtf8(bad, &i));
  EXPECT_EQ(got, std::u32string(5, U'\uFFFD'));
}

}  // namespace
}  // namespace denpex
