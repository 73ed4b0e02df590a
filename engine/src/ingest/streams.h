// A file that relays several containers' lines in one stream, each line behind its collector's
// tag (`kubectl logs -l <selector> --prefix`, stern, `docker compose logs`, Loki's `logcli query`
// label sets, which a log shipper's decoded records carry too: ingest/json_logs.h; parse/prefix.h
// CollectorStream), read as the files it merged: a stream per tag (a label set's `stream` label
// aside), each parsed as a file of its own (a pod's torchrun tags, its last line, its own node),
// its lines cited where the file has them. docs/log_formats.md §1h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parse/parse_log.h"
#include "parse/prefix.h"

namespace denpex::engine {

struct TaggedStream {
  // CollectorStream's: `<pod>/<container>`, `<pod>`, a compose container's name, `{<labels>}`
  std::string tag;
  std::string text;  // its lines as the file has them, each ending in a newline (from `dropped` on)
  std::uint64_t dropped = 0;  // the bytes of `text` a reader took and dropped (StreamSplitter)
  struct Line {
    std::uint64_t text_offset;  // where it starts in the stream's text (counting what was dropped)
    std::uint64_t file_offset;  // where it starts in the file
    std::uint32_t number;       // its number in the file (1-based)
  };
  std::vector<Line> lines;  // per line of the stream's text, in order
};

// Whether `text` may relay tagged streams: one of its first lines opens with a collector's tag.
// A cheap look before the split's pass over the whole text.
bool MayRelayStreams(std::string_view text, const PrefixPolicy& policy);

// A file's lines dealt to the streams of their tags, in the order the tags first appear. A line
// that opens with no tag (a paste's wrapped piece, an empty line) stays in the stream of the line
// before it; the lines before the first tag go to the first tag's stream. Fed whole lines, all at
// once (SplitTaggedStreams) or as a file grows (`denpex watch`: ingest/live.h).
class StreamSplitter {
 public:
  explicit StreamSplitter(const PrefixPolicy& policy) : policy_(policy) {}
  // The file's next whole lines, which start at byte `offset` of its text.
  void Add(std::string_view lines, std::uint64_t offset);
  // Whether the file is one to read as its streams: two tags or more, or one label set that names
  // its node (one pod's export: the node its records say, not the file's), on three quarters of
  // its non-empty lines or more.
  bool Splits() const;
  std::vector<TaggedStream>& streams() { return streams_; }
  const std::vector<TaggedStream>& streams() const { return streams_; }

 private:
  PrefixPolicy policy_;
  std::vector<TaggedStream> streams_ = std::vector<TaggedStream>(1);
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> index_;  // tag -> its stream
  std::size_t current_ = 0;
  std::uint64_t tagged_ = 0, nonempty_ = 0;
  std::uint32_t number_ = 0;  // the last line's
};

// The streams of `text`, when it is a file to read as its streams (StreamSplitter); else none.
std::vector<TaggedStream> SplitTaggedStreams(std::string_view text, const PrefixPolicy& policy);

// A parse of a stream's text made the file's: each event and the last line at the file's line
// number and byte offset.
void CiteAtFile(const TaggedStream& stream, ParsedLog* log);

// The pod a stream's tag names (`<pod>` of `<pod>/<container>`, a Loki label set's `pod` label, the
// tag itself otherwise): what a pod log's file name says of its node (a describe's `Name:`), for a
// stream of a relayed file.
std::string_view TaggedPod(std::string_view tag);

// The node a stream's tag names: a Loki label set's node label (`node_name`, as Promtail's
// Kubernetes discovery and a shipper's decoded records name it, ingest/json_logs.h; `node`,
// `kubernetes_node`, `nodename`, `host`, `hostname`); empty for other tags, which name no node.
std::string_view TaggedNode(std::string_view tag);

}  // namespace denpex::engine
