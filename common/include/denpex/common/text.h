// Bytes from logs and input files shown to a person: what a terminal must not interpret, and
// whether text is UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace denpex {

// `s` with every byte a terminal would act on written visibly: C0 control bytes other than tab
// and newline as `\x1b`-style escapes, DEL as `\x7f`, and the C1 controls U+0080-U+009F (valid
// UTF-8 `C2 80`-`C2 9F`) as `\u009b`-style escapes. A log line cannot clear, move or fake the
// operator's screen through the text report. Everything else is kept byte for byte; a string
// with nothing to escape is returned unchanged.
std::string EscapeControlBytes(std::string_view s);

// The offset of the first byte of `s` that is not part of valid UTF-8 (overlong forms,
// surrogates and code points past U+10FFFF are invalid), or std::string_view::npos.
std::size_t FirstInvalidUtf8(std::string_view s);

}  // namespace denpex
