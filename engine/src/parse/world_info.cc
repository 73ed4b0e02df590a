// DeepSpeed's --world_info (see world_info.h).
#include "parse/world_info.h"

#include <array>

#include "denpex/common/base64.h"

namespace denpex::engine {
namespace {

void SkipBlanks(std::string_view* s) {
  while (!s->empty() && (s->front() == ' ' || s->front() == '\n' || s->front() == '\t')) s->remove_prefix(1);
}

bool Take(std::string_view* s, char c) {
  SkipBlanks(s);
  if (s->empty() || s->front() != c) return false;
  s->remove_prefix(1);
  return true;
}

// `"<host>"` (host names hold no escapes).
bool HostName(std::string_view* s, std::string* host) {
  if (!Take(s, '"')) return false;
  const std::size_t end = s->find('"');
  if (end == std::string_view::npos || end == 0 || s->substr(0, end).find('\\') != std::string_view::npos) return false;
  host->assign(s->substr(0, end));
  s->remove_prefix(end + 1);
  return true;
}

// `[0, 1, 2]`: how many slots.
bool Slots(std::string_view* s, std::int32_t* count) {
  if (!Take(s, '[')) return false;
  *count = 0;
  if (Take(s, ']')) return true;
  while (true) {
    SkipBlanks(s);
    std::size_t digits = 0;
    while (digits < s->size() && (*s)[digits] >= '0' && (*s)[digits] <= '9') ++digits;
    if (digits == 0 || digits > 6) return false;
    s->remove_prefix(digits);
    ++*count;
    if (Take(s, ']')) return true;
    if (!Take(s, ',')) return false;
  }
}

}  // namespace

std::vector<WorldHost> DecodeWorldInfo(std::string_view b64) {
  std::string json;
  if (!Base64Decode(b64, &json)) return {};
  std::string_view s = json;
  std::vector<WorldHost> hosts;
  if (!Take(&s, '{')) return {};
  std::int32_t next = 0;
  if (Take(&s, '}')) return {};
  while (true) {
    WorldHost h;
    if (!HostName(&s, &h.host) || !Take(&s, ':') || !Slots(&s, &h.procs)) return {};
    h.first_rank = next;
    next += h.procs;
    hosts.push_back(std::move(h));
    if (Take(&s, '}')) break;
    if (!Take(&s, ',')) return {};
  }
  SkipBlanks(&s);
  return s.empty() ? hosts : std::vector<WorldHost>{};
}

std::string_view WorldInfoArgument(std::string_view line) {
  constexpr std::string_view kFlag = "--world_info=";
  const std::size_t at = line.find(kFlag);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + kFlag.size());
  if (!rest.empty() && (rest.front() == '"' || rest.front() == '\'')) rest.remove_prefix(1);
  std::size_t end = 0;
  while (end < rest.size() && Base64Value(rest[end]) >= 0) ++end;
  while (end < rest.size() && rest[end] == '=') ++end;
  return rest.substr(0, end);
}

}  // namespace denpex::engine
