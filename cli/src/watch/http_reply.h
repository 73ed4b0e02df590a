// How `denpex watch` reads a webhook's reply (PostJson, actions.cc): the bytes a server sent,
// judged without a socket so that the fuzz target (fuzz/http_reply_fuzz.cc) can drive it. A
// header of its own, needing only common, as run/line_splitter.h is.
#pragma once

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "denpex/common/status.h"
#include "denpex/common/text.h"

namespace denpex::cli::webhook {

// At most this much of a reply is read; at most this much of its body's first line is shown.
inline constexpr std::size_t kMaxReplyBytes = 16384;
inline constexpr std::size_t kMaxBodyLineBytes = 200;

inline bool IEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// One line of `s` from `pos`, without its line end; `next` is npos when no line end came yet.
struct Line {
  std::string_view text;
  std::size_t next = std::string_view::npos;
};
inline Line LineAt(std::string_view s, std::size_t pos) {
  const std::size_t nl = s.find('\n', pos);
  if (nl == std::string_view::npos) return {s.substr(pos), std::string_view::npos};
  std::string_view text = s.substr(pos, nl - pos);
  if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
  return {text, nl + 1};
}

// What a reply read so far says: its status code once the status line is in, and once the
// header block is in, where the body starts and whether it is chunked.
struct Reply {
  int code = 0;                               // 0: no status line yet
  std::size_t body = std::string_view::npos;  // npos: the headers are not all in yet
  bool chunked = false;
  bool malformed = false;
};

inline Reply ParseReply(std::string_view s) {
  Reply r;
  const Line status = LineAt(s, 0);
  if (status.next == std::string_view::npos) {
    r.malformed = s.size() >= 5 && s.substr(0, 5) != "HTTP/";
    return r;
  }
  // "HTTP/1.1 200 OK": the code is the three digits after the first space, then a space or
  // the line's end.
  const std::string_view t = status.text;
  const std::size_t sp = t.find(' ');
  if (t.substr(0, 5) != "HTTP/" || sp == std::string_view::npos || t.size() < sp + 4 ||
      (t.size() > sp + 4 && t[sp + 4] != ' ')) {
    r.malformed = true;
    return r;
  }
  const char* digits = t.data() + sp + 1;
  const auto [end, ec] = std::from_chars(digits, digits + 3, r.code);
  if (ec != std::errc() || end != digits + 3 || r.code < 100) {
    r.code = 0;
    r.malformed = true;
    return r;
  }
  for (std::size_t pos = status.next;;) {
    const Line h = LineAt(s, pos);
    if (h.next == std::string_view::npos) return r;
    if (h.text.empty()) {
      r.body = h.next;
      return r;
    }
    const std::size_t colon = h.text.find(':');
    if (colon != std::string_view::npos && IEquals(h.text.substr(0, colon), "transfer-encoding")) {
      std::string value(h.text.substr(colon + 1));
      for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.chunked = value.find("chunked") != std::string::npos;
    }
    pos = h.next;
  }
}

// Where the body's first line starts (a chunked body's first line is its chunk size, skipped),
// or npos while that is not in yet.
inline std::size_t BodyLineStart(std::string_view s, const Reply& r) {
  if (r.body == std::string_view::npos || !r.chunked) return r.body;
  return LineAt(s, r.body).next;
}

// The first line of the body, bounded and with control bytes escaped.
inline std::string FirstBodyLine(std::string_view s, const Reply& r) {
  const std::size_t pos = BodyLineStart(s, r);
  if (pos == std::string_view::npos) return "";
  const std::string_view line = LineAt(s, pos).text;
  if (line.size() <= kMaxBodyLineBytes) return EscapeControlBytes(line);
  return EscapeControlBytes(line.substr(0, kMaxBodyLineBytes)) + "...";
}

// "HTTP 500: the body's first line".
inline Status Refused(std::string_view s, const Reply& r) {
  std::string msg = "HTTP " + std::to_string(r.code);
  const std::string line = FirstBodyLine(s, r);
  if (!line.empty()) msg += ": " + line;
  return Status::IoError(msg);
}

// Whether more of the reply may come.
enum class ReplyEnd {
  kOpen,    // the connection is open: more bytes may come
  kClosed,  // the server closed it: these are all the bytes
  kGaveUp,  // the reading stopped (time ran out, recv failed): these are all we will read
};

// The reply's verdict from the bytes read so far (at most kMaxReplyBytes): Ok for a 2xx as soon
// as its status line is in; for any other code, an IoError naming it and its body's first line
// once that line is in (or no more will come); interim 1xx replies skipped; an IoError for bytes
// that are not HTTP. nullopt: read on (kOpen), or, at kGaveUp, no status line came.
inline std::optional<Status> JudgeReply(std::string_view s, ReplyEnd end) {
  const bool full = s.size() >= kMaxReplyBytes;
  Reply r = ParseReply(s);
  while (r.code >= 100 && r.code < 200 && r.body != std::string_view::npos) {
    s.remove_prefix(r.body);
    r = ParseReply(s);
  }
  if (r.malformed) {
    const std::string_view first = LineAt(s, 0).text.substr(0, kMaxBodyLineBytes);
    return Status::IoError("the reply is not HTTP: " + EscapeControlBytes(first));
  }
  if (r.code >= 200 && r.code < 300) return Status::Ok();
  if (r.code >= 200) {
    const std::size_t pos = BodyLineStart(s, r);
    const bool have_line =
        pos != std::string_view::npos &&
        (LineAt(s, pos).next != std::string_view::npos || s.size() - pos >= kMaxBodyLineBytes);
    if (have_line || full || end != ReplyEnd::kOpen) return Refused(s, r);
    return std::nullopt;
  }
  if (end == ReplyEnd::kClosed) {
    return Status::IoError("the server closed the connection without a reply");
  }
  if (full) return Status::IoError("no status line in the first 16 KiB of the reply");
  return std::nullopt;
}

}  // namespace denpex::cli::webhook
