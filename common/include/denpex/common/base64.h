// Base64 (RFC 4648) as logs carry it: DeepSpeed's `--world_info=<urlsafe base64 of JSON>`, read
// by the engine and rewritten by `denpex freeze`. Decoding takes either alphabet (a hand-made
// value may hold the standard one's `+` and `/`) and ignores trailing `=` padding.
#pragma once

#include <string>
#include <string_view>

namespace denpex {

// A character's value in either alphabet (0-63), or -1.
int Base64Value(char c);
// Whether `c` can stand in an encoded value (either alphabet, or `=`).
bool IsBase64Char(char c);
// `in` decoded into `*out` (replaced); false when a character is outside both alphabets or
// nothing decodes.
bool Base64Decode(std::string_view in, std::string* out);
// `in` encoded: the urlsafe (`-_`) or the standard (`+/`) alphabet, `=` padding or none.
std::string Base64Encode(std::string_view in, bool urlsafe, bool pad);

}  // namespace denpex
