// A file that relays several containers' lines in one stream, each line behind its collector's
// tag (`kubectl logs -l <selector> --prefix`, stern, `docker compose logs`, Loki's `logcli query`
// label sets: parse/prefix.h CollectorStream), read as the files it merged: a stream per tag, each
// parsed as a file of its own (a pod's torchrun tags, its last line, its own node), its lines cited
// where the file has them. docs/log_formats.md §1h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parse/prefix.h"

namespace denpex::engine {

struct TaggedStream {
  // CollectorStream's: `<pod>/<container>`, `<pod>`, a compose container's name, `{<labels>}`
  std::string tag;
  std::string text;  // its lines as the file has them, each ending in a newline
  struct Line {
    std::uint64_t text_offset;  // where it starts in `text`
    std::uint64_t file_offset;  // where it starts in the file
    std::uint32_t number;       // its number in the file (1-based)
  };
  std::vector<Line> lines;  // per line of `text`, in order
};

// Whether `text` may relay tagged streams: one of its first lines opens with a collector's tag.
// A cheap look before SplitTaggedStreams' pass over the whole text.
bool MayRelayStreams(std::string_view text, const PrefixPolicy& policy);

// The streams of `text`, in the order their tags first appear; empty unless it is such a file:
// at least two tags, on three quarters of its non-empty lines or more. A line that opens with no
// tag (a paste's wrapped piece, an empty line) stays in the stream of the line before it; the
// lines before the first tag go to the first tag's stream.
std::vector<TaggedStream> SplitTaggedStreams(std::string_view text, const PrefixPolicy& policy);

// The pod a stream's tag names (`<pod>` of `<pod>/<container>`, a Loki label set's `pod` label, the
// tag itself otherwise): what a pod log's file name says of its node (a describe's `Name:`), for a
// stream of a relayed file.
std::string_view TaggedPod(std::string_view tag);

}  // namespace denpex::engine
