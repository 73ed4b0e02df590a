// Fuzz target for the Flight Recorder dump reader (ingest/flight_recorder.h): any bytes sniffed,
// walked for a ring's tail (ingest/flight_recorder_tail.h, the tail's pickle run), read as a
// dump's pickle (from its tail and whole) and as its JSON form, every event rendered as a report
// quotes it, and the first bytes taken as a file name for its rank. None may crash, hang, recurse
// or read out of bounds; memory stays bounded by the pickle machine's and the JSON reader's limits.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "checkpoint/pickle.h"
#include "ingest/flight_recorder.h"
#include "ingest/flight_recorder_tail.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)FlightRecorderRank(bytes.substr(0, 64));
  (void)SniffFlightRecorder(bytes, /*whole=*/false);
  if (const auto tail = FrPickleTail(bytes)) (void)ckpt::RunPickle(tail->pickle);
  const FrForm sniffed = SniffFlightRecorder(bytes);
  for (const FrForm form : {FrForm::kPickle, FrForm::kJson}) {
    if (sniffed != FrForm::kNone && form != sniffed) continue;
    for (const FrRing ring : {FrRing::kTail, FrRing::kWhole}) {
      const FrRead r = ReadFlightRecorder(bytes, form, 0, 3, ring);
      std::size_t total = 0;
      for (const Event& e : r.log.events)
        total += FrEventText(e, "nccl_trace_rank_3", r.log.strings).size();
      (void)total;
    }
  }
  return 0;
}
