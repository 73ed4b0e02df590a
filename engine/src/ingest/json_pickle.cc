#include "ingest/json_pickle.h"

#include <charconv>
#include <string>
#include <utility>
#include <vector>

#include "denpex/common/json_reader.h"

namespace denpex::engine {
namespace {

using ckpt::Pickle;
using ckpt::PyValue;
using VKind = PyValue::Kind;

// One value of a JSON token: ints as ints, true/false as bools, null as None, anything else
// (a fraction, an exponent, an int past 64 bits) kOther.
PyValue TokenValue(std::string_view t) {
  if (t == "true" || t == "false") return {VKind::kBool, t == "true", 0};
  if (t == "null") return {};
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size()) return {VKind::kOther, 0, 0};
  return {VKind::kInt, v, 0};
}

}  // namespace

Pickle JsonAsPickle(std::string_view text, std::size_t per_byte) {
  Pickle out;
  JsonReader r(text);
  const std::size_t budget = ckpt::kPickleMemorySlack + per_byte * text.size();
  std::size_t used = 0;
  struct Open {
    std::uint32_t ref;
    bool object;
  };
  std::vector<Open> open;
  bool have_root = false;
  const auto add = [&](PyValue v) {
    used += sizeof(PyValue);
    if (open.empty()) {
      out.root = v;
      have_root = true;
    } else {
      out.containers[open.back().ref].items.push_back(v);
    }
  };
  const auto str = [&](std::string&& s) {
    used += s.size() + sizeof(std::string);
    out.strings.push_back(std::move(s));
    return PyValue{VKind::kStr, 0, static_cast<std::uint32_t>(out.strings.size() - 1)};
  };
  const auto fail = [&](std::string what, ckpt::PickleError e = ckpt::PickleError::kMalformed) {
    out.error = e;
    out.error_detail = std::move(what);
    return std::move(out);
  };
  while (!have_root || !open.empty()) {
    if (used > budget) {
      return fail("the JSON needs more memory than " + std::to_string(per_byte) +
                  " times its size");
    }
    if (!open.empty()) {
      if (open.back().object) {
        auto key = r.NextKey();
        if (!key) {
          if (!r.ok()) break;
          open.pop_back();
          continue;
        }
        add(str(std::move(*key)));
      } else if (!r.NextElement()) {
        if (!r.ok()) break;
        open.pop_back();
        continue;
      }
    }
    const char c = r.Peek();
    if (c == '{' || c == '[') {
      if (open.size() >= JsonReader::kMaxDepth) return fail("nested too deep");
      if (!(c == '{' ? r.BeginObject() : r.BeginArray())) break;
      out.containers.push_back({});
      used += sizeof(ckpt::PyContainer);
      const auto ref = static_cast<std::uint32_t>(out.containers.size() - 1);
      add({c == '{' ? VKind::kDict : VKind::kList, 0, ref});
      open.push_back({ref, c == '{'});
    } else if (c == '"') {
      auto s = r.String();
      if (!s) break;
      add(str(std::move(*s)));
    } else {
      const auto t = r.Token();
      if (!t) break;
      add(TokenValue(*t));
    }
  }
  if (!r.ok()) {  // an error at the end of the text, or a string never closed: cut short
    const bool cut = r.Peek() == '\0' || r.error().starts_with("unterminated");
    return cut ? fail("the JSON ends early: " + r.error(), ckpt::PickleError::kTruncated)
               : fail("malformed JSON: " + r.error());
  }
  if (!r.AtEnd()) return fail("more after the JSON object");
  return out;
}

}  // namespace denpex::engine
