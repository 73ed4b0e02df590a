// The Rewriter (names.h): known names replaced where they stand as names, forwards or back.
#include <cctype>

#include "denpex/common/base64.h"
#include "freeze/names.h"
#include "freeze/shapes.h"

namespace denpex::freeze {

Rewriter::Rewriter(const v1::NameMap& map, Direction direction)
    : jobs_need_context_(direction == Direction::kForward) {
  const auto add = [&](std::unordered_map<std::string, std::string>* to,
                       const google::protobuf::Map<std::string, std::string>& from) {
    for (const auto& [original, replacement] : from) {
      if (original == replacement) continue;
      if (direction == Direction::kForward) {
        (*to)[original] = replacement;
      } else {
        (*to)[replacement] = original;
      }
    }
  };
  add(&tokens_, map.hosts());
  add(&tokens_, map.ipv4());
  add(&tokens_, map.ipv6());
  add(&tokens_, map.users());
  add(&tokens_, map.emails());
  add(&tokens_, map.secrets());
  add(&tokens_, map.uuids());
  add(&prefixes_, map.hostlist_prefixes());
  add(&paths_, map.paths());
  add(&jobs_, map.jobs());
  add(&words_, map.words());
}

std::string Rewriter::ApplyWords(std::string_view text) const {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    if (!IsLetter(text[i])) {
      out.push_back(text[i++]);
      continue;
    }
    const std::size_t e = RunEnd(text, i, IsLetter);
    const std::string word(text.substr(i, e - i));
    const auto it = words_.find(Lower(word));
    if (it == words_.end()) {
      out += word;
    } else {
      for (std::size_t k = 0; k < word.size(); ++k) {
        const char c = it->second[k];
        out.push_back(std::isupper(static_cast<unsigned char>(word[k]))
                          ? static_cast<char>(std::toupper(c))
                          : c);
      }
    }
    i = e;
  }
  return out;
}

bool Rewriter::Match(std::string_view text, std::size_t at, std::size_t end,
                     std::string* out) const {
  const std::string key(text.substr(at, end - at));
  if (auto it = tokens_.find(key); it != tokens_.end()) {
    *out = it->second;
    return true;
  }
  if (key.size() == 36) {
    if (auto it = tokens_.find(Lower(key)); it != tokens_.end()) {
      *out = it->second;
      return true;
    }
  }
  if (at > 0 && text[at - 1] == '/') {
    if (auto it = paths_.find(key); it != paths_.end()) {
      *out = it->second;
      return true;
    }
  }
  if (AllDigits(key) && (!jobs_need_context_ || JobContext(text, at, end))) {
    if (auto it = jobs_.find(key); it != jobs_.end()) {
      *out = it->second;
      return true;
    }
  }
  return false;
}

std::string Rewriter::Apply(std::string_view text, std::size_t* replaced) const {
  std::string out;
  out.reserve(text.size());
  std::size_t count = 0;
  std::string r;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    const bool start = (IsAlnum(c) && (i == 0 || !IsAlnum(text[i - 1]))) ||
                       (c == ':' && i + 1 < text.size() && text[i + 1] == ':' &&
                        (i == 0 || !(IsHex(text[i - 1]) || text[i - 1] == ':')));
    if (!start) {
      out.push_back(c);
      ++i;
      continue;
    }
    // IPv6 runs (hex and colons).
    const std::size_t v6 = RunEnd(text, i, [](char x) { return IsHex(x) || x == ':'; });
    if (v6 > i + 2 && text.substr(i, v6 - i).find(':') != std::string_view::npos) {
      std::size_t end = v6;
      if (text[end - 1] == ':' && text[end - 2] != ':') --end;
      const bool mapped_v4 = v6 < text.size() && text[v6] == '.';
      if (auto it = tokens_.find(std::string(text.substr(i, end - i)));
          !mapped_v4 && it != tokens_.end()) {
        out += it->second, ++count, i = end;
        continue;
      }
    }
    if (c == ':') {
      out.push_back(c);
      ++i;
      continue;
    }
    if (i >= kWorldInfo.size() &&
        text.substr(i - kWorldInfo.size(), kWorldInfo.size()) == kWorldInfo) {
      const std::size_t e = RunEnd(text, i, IsBase64Char);
      const std::string_view b64 = text.substr(i, e - i);
      std::string json;
      if (Base64Decode(b64, &json) && json[0] == '{') {
        std::size_t n = 0;
        const std::string rewritten = Apply(json, &n);
        const bool urlsafe = b64.find_first_of("+/") == std::string_view::npos;
        out += n > 0 ? Base64Encode(rewritten, urlsafe, !b64.empty() && b64.back() == '=')
                     : std::string(b64);
        count += n, i = e;
        continue;
      }
    }
    // e-mail
    const std::size_t local = RunEnd(text, i, IsEmailLocal);
    if (local < text.size() && text[local] == '@') {
      const std::size_t dom =
          RunEnd(text, local + 1, [](char x) { return IsAlnum(x) || x == '.' || x == '-'; });
      for (std::size_t end = dom; end > local + 1; --end) {
        if (auto it = tokens_.find(std::string(text.substr(i, end - i))); it != tokens_.end()) {
          out += it->second, ++count, i = end;
          goto next;
        }
        if (!IsSeparator(text[end - 1])) break;
      }
    }
    {
      const std::size_t e = RunEnd(text, i, IsNameChar);
      // A hostlist's prefix: the run stops at `[`.
      if (e < text.size() && text[e] == '[') {
        // the longest tail of the run that is a known prefix
        for (std::size_t from = i; from < e; ++from) {
          if (from > i && !IsSeparator(text[from - 1])) continue;
          if (auto it = prefixes_.find(std::string(text.substr(from, e - from)));
              it != prefixes_.end()) {
            out.append(text.substr(i, from - i));
            out += it->second, ++count, i = e;
            goto next;
          }
        }
      }
      // The whole run, then each prefix of it that ends before a separator, longest first.
      std::size_t end = e;
      while (end > i) {
        while (end > i && IsSeparator(text[end - 1])) --end;
        if (end == i) break;
        if (Match(text, i, end, &r)) {
          out += r, ++count, i = end;
          goto next;
        }
        while (end > i && !IsSeparator(text[end - 1])) --end;
      }
      // No name here: copy the first segment; the next one is tried on its own.
      std::size_t seg = i;
      while (seg < e && !IsSeparator(text[seg])) ++seg;
      if (seg == i) seg = i + 1;
      out.append(text.substr(i, seg - i));
      i = seg;
    }
  next:;
  }
  if (replaced) *replaced += count;
  return out;
}

}  // namespace denpex::freeze
