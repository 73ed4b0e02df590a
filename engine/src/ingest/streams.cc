#include "ingest/streams.h"

#include <unordered_map>

namespace denpex::engine {
namespace {

// A line of `text` from `begin`: its end (at the newline or the text's end) without a `\r`.
std::string_view LineAt(std::string_view text, std::size_t begin, std::size_t* next) {
  std::size_t end = text.find('\n', begin);
  *next = end == std::string_view::npos ? text.size() : end + 1;
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(begin, end - begin);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

}  // namespace

bool MayRelayStreams(std::string_view text, const PrefixPolicy& policy) {
  constexpr int kLooks = 16;  // non-empty lines looked at
  int looked = 0;
  for (std::size_t at = 0, next = 0; at < text.size() && looked < kLooks; at = next) {
    const std::string_view line = LineAt(text, at, &next);
    if (line.empty()) continue;
    ++looked;
    if (!CollectorStream(line, policy).empty()) return true;
  }
  return false;
}

std::vector<TaggedStream> SplitTaggedStreams(std::string_view text, const PrefixPolicy& policy) {
  std::vector<TaggedStream> streams(1);  // the first holds the lines before any tag until one comes
  std::unordered_map<std::string_view, std::size_t> index;
  std::size_t tagged = 0, nonempty = 0, current = 0;
  std::uint32_t number = 0;
  for (std::size_t at = 0, next = 0; at < text.size(); at = next) {
    const std::string_view line = LineAt(text, at, &next);
    ++number;
    const std::string_view tag = line.empty() ? std::string_view() : CollectorStream(line, policy);
    nonempty += line.empty() ? 0 : 1;
    if (!tag.empty()) {
      ++tagged;
      const auto [it, fresh] = index.try_emplace(tag, index.empty() ? 0 : streams.size());
      if (fresh && it->second > 0) streams.emplace_back();
      if (fresh) streams[it->second].tag = std::string(tag);
      current = it->second;
    }
    TaggedStream& into = streams[current];
    into.lines.push_back({into.text.size(), at, number});
    into.text.append(text.substr(at, next - at));
    if (into.text.back() != '\n') into.text.push_back('\n');
  }
  if (streams.size() < 2 || tagged * 4 < nonempty * 3) return {};
  return streams;
}

std::string_view TaggedPod(std::string_view tag) {
  if (!tag.starts_with('{')) return tag.substr(0, tag.find('/'));
  // a Loki label set: its pod's label, as Promtail's and the Grafana agent's Kubernetes discovery
  // name it (`pod`, `pod_name`, `kubernetes_pod_name`)
  for (const std::string_view label : {"pod", "pod_name", "kubernetes_pod_name"}) {
    for (std::size_t at = tag.find(label); at != std::string_view::npos;
         at = tag.find(label, at + 1)) {
      const std::string_view rest = tag.substr(at + label.size());
      if ((tag[at - 1] != '{' && tag[at - 1] != ' ') || !rest.starts_with("=\"")) continue;
      return rest.substr(2, rest.find('"', 2) - 2);
    }
  }
  return tag;
}

}  // namespace denpex::engine
