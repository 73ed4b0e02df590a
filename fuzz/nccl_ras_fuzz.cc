// Fuzz target for the NCCL RAS report reader (ingest/nccl_ras.h): any bytes sniffed, read as the
// text report and as the JSON form (a missing comma repaired when the bytes look like 2.28.9's).
// None may crash, hang or read out of bounds; every event's cited span lies inside the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ingest/nccl_ras.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)SniffNcclRas(text);
  for (const RasForm form : {RasForm::kText, RasForm::kJson}) {
    const RasRead r = ReadNcclRas(text, form, 0);
    for (const Event& e : r.log.events) {
      if (e.offset + e.length > size) std::abort();
    }
  }
  return 0;
}
