// The recogniser table: every family recogniser (families.h), where in a log it applies, and
// the order in which they are tried. LogParser (file_parser.cc) says where a message stands, as a
// set of Places; Recognise tries the table's rows in order and the first row that applies there and
// accepts the message wins. What is recognised where is read from the table (recognisers.cc),
// each row with the trigger literals the pre-filter looks for on its behalf (triggers.h).
//
// Adding a recogniser: write its function (a file of families.h), add its row, with its trigger
// literals, where its precedence lies, and its tests.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "parse/families.h"
#include "parse/strings.h"
#include "parse/triggers.h"

namespace denpex::engine {

// Where a message stands; a message is in one or more places (a c10 `[E...]` line is in kC10
// and kC10Error).
using Places = std::uint32_t;
enum Place : Places {
  // After a logging header (headers.h).
  kC10 = 1u << 0,           // c10's `[E0302 10:00:00.123 file.cpp:12]` (ProcessGroupNCCL's go to watchdog.cc),
                            //   and glog's lines of c10d (`[c10d] ...`)
  kC10Error = 1u << 1,      //   ... of severity E or F
  kLog = 1u << 2,           // glog's `E0302 10:00:00.123 123 file.cc:12]` or Python logging's
  kAgentLog = 1u << 3,      //   ... of torchrun's agent (a `torch/distributed` or `run` source)
  kGoLog = 1u << 4,         //   ... of a Go program (a `.go` source: the kubelet)
  kErrorLog = 1u << 5,      //   ... of any other source, severity E or F
  kDeepSpeedLog = 1u << 6,  // DeepSpeed's `[2023-04-14 13:11:27,879] [INFO] [engine.py:12:fn] `
  kRayLog = 1u << 7,        // Ray's `[2023-04-14 13:11:27,879 E 123 456] file.cc:12: `
  kRayError = 1u << 8,      //   ... of severity E
  kKernelLog = 1u << 9,     // the kernel's `[12345.678901] ` or syslog's `Mar  2 10:00:00 host kernel: `
  // No logging header (or only a bracketed time), by the message's first byte.
  kIndented = 1u << 10,     // ' ', '\t': a message indented by its producer (`  what():  `), a wrapped piece
  kDash = 1u << 11,         // '-'
  kText = 1u << 12,         // a letter or a digit
  kKernelText = 1u << 13,   //   ... in a kernel log, or opening with the kernel's words (`NVRM: `, `Out of memory: `)
  kStampedText = 1u << 14,  //   ... after a bracketed time (`[2024-03-02T10:00:00.123] `: slurmctld, slurmd)
  kSquare = 1u << 15,       // '['
  kEmphasis = 1u << 16,     // '*', '_'
  kPath = 1u << 17,         // '/', '.'
  kPipe = 1u << 18,         // '|'
  kOtherStart = 1u << 19,   // any other byte
  // Found by LogParser::Anchor behind a prefix it does not know.
  kAgentQuote = 1u << 20,   // torchrun's agent message (`failed (exitcode: `, `Sending process `)
};
// The places after a logging header, where a row's first-byte test does not apply.
inline constexpr Places kHeaded = kC10 | kC10Error | kLog | kAgentLog | kGoLog | kErrorLog | kDeepSpeedLog | kRayLog |
                                  kRayError | kKernelLog;
// Every place a line of the log can be in (not kAgentQuote).
inline constexpr Places kAnywhere = kHeaded | kIndented | kDash | kText | kKernelText | kStampedText | kSquare | kEmphasis |
                                    kPath | kPipe | kOtherStart;

using Recogniser = bool (*)(std::string_view msg, StringTable* strings, Recognised* out);

struct RecogniserRow {
  std::string_view name;
  Places where = 0;
  // The bytes a message with no logging header may start with for this row (empty: any). A
  // cheap test, not a contract: the function still checks its whole shape.
  std::string_view first = {};
  Recogniser recognise = nullptr;
  // The literals a line must hold for `recognise` to accept it (AllTriggers gathers them).
  std::span<const Trigger> triggers = {};
};

// The rows, in the order they are tried.
std::span<const RecogniserRow> RecogniserTable();

// The first row, in table order, that applies at `where` (and, where no header stands before the
// message, whose `first` bytes admit it) and accepts `msg`. `out` is handed from row to row.
bool Recognise(Places where, std::string_view msg, StringTable* strings, Recognised* out);

}  // namespace denpex::engine
