#include "ingest/streams.h"

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

void StreamSplitter::Add(std::string_view text, std::uint64_t offset) {
  for (std::size_t at = 0, next = 0; at < text.size(); at = next) {
    const std::string_view line = LineAt(text, at, &next);
    ++number_;
    const std::string_view tag = line.empty() ? std::string_view() : CollectorStream(line, policy_);
    nonempty_ += line.empty() ? 0 : 1;
    if (!tag.empty()) {
      ++tagged_;
      if (tag != streams_[current_].tag) {
        const auto it = index_.find(tag);
        if (it != index_.end()) {
          current_ = it->second;
        } else {  // a new tag: the first takes the stream of the lines before it
          current_ = index_.empty() ? 0 : streams_.size();
          if (current_ > 0) streams_.emplace_back();
          streams_[current_].tag = tag;
          index_.emplace(tag, current_);
        }
      }
    }
    TaggedStream& into = streams_[current_];
    into.lines.push_back({into.dropped + into.text.size(), offset + at, number_});
    into.text.append(text.substr(at, next - at));
    if (into.text.back() != '\n') into.text.push_back('\n');
  }
}

std::vector<TaggedStream> SplitTaggedStreams(std::string_view text, const PrefixPolicy& policy) {
  StreamSplitter splitter(policy);
  splitter.Add(text, 0);
  return splitter.Splits() ? std::move(splitter.streams()) : std::vector<TaggedStream>();
}

void CiteAtFile(const TaggedStream& stream, ParsedLog* log) {
  const auto at_file = [&](std::uint32_t* line, std::uint64_t* offset) {
    const TaggedStream::Line& l = stream.lines[*line - 1];
    *offset = l.file_offset + (*offset - l.text_offset);
    *line = l.number;
  };
  for (Event& e : log->events) at_file(&e.line, &e.offset);
  if (log->last_line.line > 0) at_file(&log->last_line.line, &log->last_line.offset);
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
