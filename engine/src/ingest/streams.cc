#include "ingest/streams.h"

#include <initializer_list>

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

// A tag as the key of its stream: a Loki label set without its `stream` label (Promtail's `cri` and
// `docker` stages label each line stdout or stderr; a container's two are its one console, as
// `kubectl logs` prints it), in `*buffer` where a label is dropped.
std::string_view StreamKey(std::string_view tag, std::string* buffer) {
  if (!tag.starts_with('{')) return tag;
  for (std::size_t at = tag.find("stream=\""); at != std::string_view::npos;
       at = tag.find("stream=\"", at + 1)) {
    if (tag[at - 1] != '{' && tag[at - 1] != ' ') continue;
    std::size_t end = at + 8;
    while (end < tag.size() && tag[end] != '"') end += tag[end] == '\\' ? 2 : 1;
    if (end >= tag.size()) return tag;
    ++end;  // past the value's closing quote
    std::size_t from = at;
    if (tag.substr(end).starts_with(", ")) {
      end += 2;  // the label and the separator after it
    } else if (tag[at - 1] == ' ') {
      from = at - 2;  // the separator before the last label
    }
    buffer->assign(tag.substr(0, from)).append(tag.substr(end));
    return *buffer;
  }
  return tag;
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
  std::string key;  // a label set without its `stream` label, its capacity reused line to line
  for (std::size_t at = 0, next = 0; at < text.size(); at = next) {
    const std::string_view line = LineAt(text, at, &next);
    ++number_;
    const std::string_view tag =
        line.empty() ? std::string_view() : StreamKey(CollectorStream(line, policy_), &key);
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

bool StreamSplitter::Splits() const {
  return (streams_.size() >= 2 || !TaggedNode(streams_.front().tag).empty()) &&
         tagged_ * 4 >= nonempty_ * 3;
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

namespace {

// The value of the first of `labels` a Loki label set names; empty when none.
std::string_view FirstLabel(std::string_view set, std::initializer_list<std::string_view> labels) {
  for (const std::string_view label : labels) {
    if (const std::string_view value = LabelValue(set, label); !value.empty()) return value;
  }
  return {};
}

}  // namespace

std::string_view TaggedPod(std::string_view tag) {
  if (!tag.starts_with('{')) return tag.substr(0, tag.find('/'));
  // a Loki label set: its pod's label, as Promtail's and the Grafana agent's Kubernetes discovery
  // name it (`pod`, `pod_name`, `kubernetes_pod_name`)
  const std::string_view pod = FirstLabel(tag, {"pod", "pod_name", "kubernetes_pod_name"});
  return pod.empty() ? tag : pod;
}

std::string_view TaggedNode(std::string_view tag) {
  if (!tag.starts_with('{')) return {};
  return FirstLabel(tag, {"node_name", "node", "kubernetes_node", "nodename", "host", "hostname"});
}

}  // namespace denpex::engine
