// Fuzz target for `denpex watch`'s webhook reply reader (cli/src/watch/http_reply.h): any bytes
// as a server's reply, judged after each read of the size the first byte chooses, as PostJson
// reads them, up to the first verdict. Every reply ends in a verdict once the server closes or
// the reader stops, the verdict found reading on is the one the whole reply gives (Ok or not),
// and a verdict's message stays bounded whatever the bytes (the body line is cut at 200 bytes,
// its control bytes escaped).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "watch/http_reply.h"

namespace {

using denpex::Status;
using denpex::cli::webhook::JudgeReply;
using denpex::cli::webhook::kMaxBodyLineBytes;
using denpex::cli::webhook::kMaxReplyBytes;
using denpex::cli::webhook::ReplyEnd;

void CheckBounded(const Status& s) {
  if (s.message().size() > 4 * kMaxBodyLineBytes + 100) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t read_size = 1 + data[0] % 64;
  std::string_view reply(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (reply.size() > kMaxReplyBytes) reply = reply.substr(0, kMaxReplyBytes);

  std::optional<Status> early;
  for (std::size_t got = 0; got < reply.size() && !early;) {
    got = std::min(reply.size(), got + read_size);
    early = JudgeReply(reply.substr(0, got), ReplyEnd::kOpen);
  }
  const std::optional<Status> closed = JudgeReply(reply, ReplyEnd::kClosed);
  if (!closed) std::abort();
  CheckBounded(*closed);
  if (early) {
    CheckBounded(*early);
    if (early->ok() != closed->ok()) std::abort();
  }
  if (const auto gave_up = JudgeReply(reply, ReplyEnd::kGaveUp)) CheckBounded(*gave_up);
  return 0;
}
