// LoadIncident: the ingest stage's entry, an incident directory in, the Incident every later
// stage reads (incident/incident.h) out.
#pragma once

#include <cstddef>
#include <filesystem>

#include "denpex/common/status.h"
#include "incident/incident.h"

namespace denpex::engine {

// Walks, reads and parses `dir` (parallel over files; `threads` 0 = all cores). kNotFound /
// kInvalidInput when the directory is missing, not a directory, or holds no readable log.
// `skip`: a checkpoint directory inside `dir` that is not to be read as logs. `every_line`
// turns the pre-filter off (FileContext::every_line): the same result, slower. `chunk_bytes`
// (0: ingest/chunks.h's kChunkBytes) is the size of the chunks large files are parsed in, for
// the tests: the result never depends on it.
Result<Incident> LoadIncident(const std::filesystem::path& dir, int threads,
                              const std::filesystem::path& skip = {}, bool every_line = false,
                              std::size_t chunk_bytes = 0);

}  // namespace denpex::engine
