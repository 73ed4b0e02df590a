#include "parse/recognisers.h"

namespace denpex::engine {
namespace {

// A c10 error line no family recogniser took: kept as a note of its text.
bool RecogniseC10Note(std::string_view msg, StringTable* strings, Recognised* out) {
  *out = Recognised{.detail = Note{InternCapped(strings, msg)}};
  return true;
}

// Tried in this order; the first row that applies where the message stands and accepts it wins.
// A recogniser has a second row where it must be tried later on some lines than on others (Slurm's
// lines that start with `E` or `S` are tried after Python's exceptions).
constexpr RecogniserRow kRows[] = {
    // name            where                                                first bytes  function
    {"step timers",    kDeepSpeedLog | kText,                               "t",         RecogniseStepTimers},
    {"torchrun agent", kC10 | kAgentLog | kAgentQuote,                      "",          RecogniseAgent},
    {"what()",         kIndented,                                           "",          RecogniseWhat},
    {"kernel",         kKernelLog | kKernelText,                            "",          RecogniseKernel},
    {"slurm",          kText,                                               "se",        RecogniseSlurm},
    {"denpex-run",     kSquare,                                             "",          RecogniseWrapper},
    {"bare metal",     kSquare,                                             "",          RecogniseBareMetal},
    {"nccl",           kText | kSquare,                                     "",          RecogniseNccl},
    {"deepspeed",      kDeepSpeedLog | kSquare,                             "",          RecogniseDeepSpeed},
    {"fatal signal",   kText,                                               "F",         RecogniseFatalSignal},
    {"slurm",          kText,                                               "NKTp",      RecogniseSlurm},
    {"exception",      kText,                                               "",          RecogniseException},
    {"kubernetes",     kGoLog | kIndented | kText,                          "",          RecogniseKubernetes},
    {"agent ranks",    kAgentLog | kIndented,                               "",          RecogniseAgentRanks},
    {"bare metal",     kIndented,                                           "",          RecogniseBareMetal},
    {"ray",            kRayLog | kIndented | kDash | kText,                 "",          RecogniseRay},
    {"quoted error",   kC10Error | kErrorLog | kRayError,                   "",          RecogniseQuotedError},
    {"c10 error note", kC10Error,                                           "",          RecogniseC10Note},
    {"slurm",          kText | kSquare | kEmphasis,                         "ES[*_",     RecogniseSlurm},
    {"bare metal",     kText,                                               "mposCT",    RecogniseBareMetal},
    {"slurm",          kStampedText,                                        "",          RecogniseSlurm},
    {"device assert",  kText | kPath,                                       "",          RecogniseDeviceAssert},
    {"nvidia-smi",     kText | kPipe,                                       "U|",        RecogniseNvidiaSmi},
    {"checkpoint save", kAnywhere,                                          "",          RecogniseCheckpointSave},
};

}  // namespace

std::span<const RecogniserRow> RecogniserTable() { return kRows; }

bool Recognise(Places where, std::string_view msg, StringTable* strings, Recognised* out) {
  for (const RecogniserRow& row : kRows) {
    const Places at = row.where & where;
    if (at == 0) continue;
    if ((at & kHeaded) == 0 && !row.first.empty() && (msg.empty() || row.first.find(msg[0]) == std::string_view::npos)) {
      continue;
    }
    if (row.recognise(msg, strings, out)) return true;
  }
  return false;
}

}  // namespace denpex::engine
