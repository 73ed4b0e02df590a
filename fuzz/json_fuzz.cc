// Fuzz target for the JSON pull reader (denpex/common/json_reader.h) and the history store that
// reads its lines with it (denpex/engine/history_store.h): any bytes walked as JSON, and read as a
// store through a memory file. None may crash, hang, recurse or read out of bounds.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "denpex/common/json_reader.h"
#include "denpex/engine/history_store.h"

namespace {

// Walks every value, as a caller that reads keys, strings and counts would.
void Walk(denpex::JsonReader& r) {
  const char c = r.Peek();
  if (c == '{' && r.BeginObject()) {
    for (int n = 0; r.NextKey() && n < 64; ++n) r.Skip();
  } else if (c == '[' && r.BeginArray()) {
    for (int n = 0; r.NextElement() && n < 64; ++n) (void)r.Count();
  } else if (c == '"') {
    (void)r.String();
  } else {
    r.Skip();
  }
  (void)r.AtEnd();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  denpex::JsonReader walk(text);
  Walk(walk);
  denpex::JsonReader skip(text);
  (void)skip.Skip();

  const int fd = memfd_create("history", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, data, size) == static_cast<ssize_t>(size)) {
    (void)denpex::engine::ReadHistory("/proc/self/fd/" + std::to_string(fd));
  }
  ::close(fd);
  return 0;
}
