// Dump: an incident as text, for tests that compare two parses of the same files (chunked
// against whole, prefiltered against every line).
#pragma once

#include <cstdint>
#include <string>

#include "incident/incident.h"
#include "report/events_json.h"

namespace denpex::engine::testing {

// Everything an incident holds, as text: events as `denpex events` prints them (with their
// exact times), each file's facts, the input counts.
inline std::string Dump(const Incident& inc) {
  std::string out;
  for (const Event& e : inc.events) {
    AppendEventJson(inc, e, &out);
    out += " time=" + std::to_string(e.time) + " borrowed=" + std::to_string(e.time_borrowed) +
           " signature=" + std::string(inc.str(e.signature)) + "\n";
  }
  for (const LogFile& f : inc.files) {
    out += f.path + (f.tag.empty() ? "" : " [" + f.tag + "]") +
           " node=" + (f.node >= 0 ? inc.nodes[static_cast<std::size_t>(f.node)] : "-") +
           " agent=" + std::to_string(f.agent) + " labels=" + std::to_string(f.task_labels) +
           " tags=" + std::to_string(f.local_tags) + " last=" + std::to_string(f.last_line.line) +
           "@" + std::to_string(f.last_line.offset) + "+" + std::to_string(f.last_line.length) +
           " ranks=";
    for (std::int32_t r : f.prefix_ranks) out += std::to_string(r) + ",";
    out += "\n";
  }
  const InputCounts& in = inc.input;
  out += "lines=" + std::to_string(in.lines) + " malformed=" + std::to_string(in.malformed_lines) +
         " joined=" + std::to_string(in.joined_lines) + " interleaved=" + std::to_string(in.interleaved_lines) +
         " broken=" + std::to_string(in.broken_records) + " untimed=" + std::to_string(in.untimed_events) +
         " first_dated=" + std::to_string(inc.first_dated) + " year=" + std::to_string(inc.year.value_or(0)) + "\n";
  for (const std::string& p : in.problems) out += "problem: " + p + "\n";
  return out;
}

}  // namespace denpex::engine::testing
