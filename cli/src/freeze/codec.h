// Compressing a rewritten log again with the codec it came in (gzip, xz, zstd; a UTF-16 log
// encoded again as UTF-16 with its byte order mark), so a frozen entry keeps the shapes of the
// files the team collected; engine's DecompressLog reads them.
#pragma once

#include <string>
#include <string_view>

#include "denpex/common/status.h"

namespace denpex::freeze {

// `text` compressed with `codec` ("gzip", "xz" or "zstd"), or encoded ("UTF-16LE", "UTF-16BE").
Result<std::string> Compress(std::string_view text, std::string_view codec);

}  // namespace denpex::freeze
