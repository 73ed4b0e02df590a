// A JSON document read into the pickle machine's arenas (checkpoint/pickle.h's Pickle): objects
// as dicts, arrays as lists, strings, whole numbers as ints, true/false, null as None, anything
// else (fractions) as kOther. So one reader serves a format written both ways (Flight Recorder
// dumps: ingest/flight_recorder.h).
#pragma once

#include <string_view>

#include "checkpoint/pickle.h"

namespace denpex::engine {

// Iterative; nesting bounded by JsonReader::kMaxDepth; the arenas bounded as the pickle machine
// bounds its own (`per_byte` times the input and kPickleMemorySlack: a document of short values,
// as NCCL RAS's, needs more than the default twice). On an error, `error` is kTruncated when the
// text ends inside the document, else kMalformed, and `error_detail` says where.
ckpt::Pickle JsonAsPickle(std::string_view text, std::size_t per_byte = 2);

}  // namespace denpex::engine
