// Fuzz target for the contracts read as protobuf JSON (denpex/proto/json_io.h, FromJson): any
// bytes as a truth or `expected.json`, a diagnosis, an eval report (`eval merge`'s shards) and a
// gate baseline. Each may be refused with a message; none may crash or hang, and what is read
// is written and read back the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "denpex/proto/json_io.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/score.pb.h"
#include "denpex/v1/truth.pb.h"

namespace {

template <typename Message>
void ReadAndRoundTrip(std::string_view json) {
  Message msg;
  if (!denpex::proto::FromJson(json, "fuzz.json", &msg).ok()) return;
  Message again;
  if (!denpex::proto::FromJson(denpex::proto::ToJson(msg), "again.json", &again).ok()) std::abort();
  if (again.SerializeAsString() != msg.SerializeAsString()) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  ReadAndRoundTrip<denpex::v1::Truth>(json);
  ReadAndRoundTrip<denpex::v1::Diagnosis>(json);
  ReadAndRoundTrip<denpex::v1::EvalReport>(json);
  ReadAndRoundTrip<denpex::v1::GateBaseline>(json);
  return 0;
}
