// One event as a JSON object on one line (`denpex events`, docs/events_format.md).
#pragma once

#include <string>

#include "incident/incident.h"

namespace denpex::engine {

// Appends the event's JSON object (no newline) to `out`.
void AppendEventJson(const Incident& inc, const Event& e, std::string* out);

}  // namespace denpex::engine
