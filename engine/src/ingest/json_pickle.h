// A JSON document read into the pickle machine's arenas (checkpoint/pickle.h's Pickle): objects
// as dicts, arrays as lists, strings, whole numbers as ints, true/false, null as None, anything
// else (fractions) as kOther. So one reader serves a format written both ways (Flight Recorder
// dumps: ingest/flight_recorder.h).
#pragma once

#include <string_view>

#include "checkpoint/pickle.h"

namespace denpex::engine {

// Iterative; nesting bounded by JsonReader::kMaxDepth; the arenas bounded as the pickle machine
// bounds its own (twice the input and kPickleMemorySlack). On an error, `error` is kTruncated
// when the text ends inside the document, else kMalformed, and `error_detail` says where.
ckpt::Pickle JsonAsPickle(std::string_view text);

}  // namespace denpex::engine
