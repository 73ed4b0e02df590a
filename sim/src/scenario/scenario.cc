// Scenario loading: textproto in, a complete validated v1::Scenario out. Parsing is strict
// (unknown fields and enum values are errors, with a suggestion); protobuf's own messages are
// rewritten into "<file>:<line>:<column>: <what>; hint: <what to do>". Overrides, defaults
// and semantic checks live in scenario_overrides.cc and scenario_validate.cc.
#include <google/protobuf/io/tokenizer.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "denpex/common/text.h"
#include "denpex/proto/json_io.h"
#include "denpex/sim/simulator.h"
#include "scenario_internal.h"
#include "suggest.h"

namespace denpex::sim {

namespace pb = google::protobuf;

namespace {

// Keeps the first error the text parser reports (it stops there anyway).
class FirstErrorCollector : public pb::io::ErrorCollector {
 public:
  struct Error {
    int line = 0;    // 0-based, as protobuf reports it
    int column = 0;  // 0-based, tabs expanded to 8
    std::string message;
  };
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!error_) error_ = Error{line, column, message};
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}
  const std::optional<Error>& error() const { return error_; }

 private:
  std::optional<Error> error_;
};

// The text between the first pair of double quotes after `after`, e.g. the field name in
// `... has no field named "node".`
std::string QuotedAfter(std::string_view msg, std::string_view after) {
  std::size_t pos = msg.find(after);
  if (pos == std::string_view::npos) return {};
  pos = msg.find('"', pos + after.size());
  if (pos == std::string_view::npos) return {};
  const std::size_t end = msg.find('"', pos + 1);
  if (end == std::string_view::npos) return {};
  return std::string(msg.substr(pos + 1, end - pos - 1));
}

std::string_view LineOf(std::string_view text, int line) {
  for (int i = 0; i < line; ++i) {
    const std::size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return {};
    text.remove_prefix(nl + 1);
  }
  return text.substr(0, text.find('\n'));
}

// Protobuf points just past the offending token; users want its first character. Finds the
// last occurrence of `token` that ends at or before `column` (tab-expanded) on that line.
int TokenStartColumn(std::string_view text, int line, int column, std::string_view token) {
  const std::string_view l = LineOf(text, line);
  std::vector<int> col_of(l.size() + 1);  // display column of each byte offset
  int c = 0;
  for (std::size_t i = 0; i < l.size(); ++i) {
    col_of[i] = c;
    c = l[i] == '\t' ? c + 8 - c % 8 : c + 1;
  }
  col_of[l.size()] = c;
  int best = column;
  for (std::size_t pos = l.find(token); !token.empty() && pos != std::string_view::npos;
       pos = l.find(token, pos + 1)) {
    if (col_of[pos + token.size()] <= column) best = col_of[pos];
  }
  return best;
}

struct Rewritten {
  std::string what;
  std::string hint;
  std::string token;  // the offending token, to move the column onto its start
};

Rewritten RewriteUnknownField(const pb::Descriptor* root, const std::string& msg) {
  const std::string type = QuotedAfter(msg, "Message type");
  const std::string name = QuotedAfter(msg, "has no field named");
  Rewritten r{"unknown field " + Quoted(name) + " in " + PathForMessageType(root, type), {}, name};
  std::vector<std::string> names;
  if (const pb::Descriptor* d = pb::DescriptorPool::generated_pool()->FindMessageTypeByName(type)) {
    for (int i = 0; i < d->field_count(); ++i) names.push_back(d->field(i)->name());
  }
  if (auto best = ClosestName(name, names)) {
    r.hint = "did you mean " + Quoted(*best) + "?";
  } else {
    r.hint = "valid fields here are: " + JoinNames(names);
  }
  return r;
}

Rewritten RewriteUnknownEnum(const pb::Descriptor* root, const std::string& msg) {
  const std::string value = QuotedAfter(msg, "enumeration value of");
  const std::string field = QuotedAfter(msg, "for field");
  const std::vector<std::string> values = EnumValueNamesForField(root, field);
  Rewritten r{"unknown value " + Quoted(value) + " for field " + Quoted(field), {}, value};
  if (auto best = ClosestName(value, values)) {
    r.hint = "did you mean " + Quoted(*best) + "? (valid: " + JoinNames(values) + ")";
  } else {
    r.hint = "valid values are: " + JoinNames(values);
  }
  return r;
}

Rewritten Rewrite(const pb::Descriptor* root, const std::string& msg, std::string_view doc) {
  const std::string see(doc);
  if (msg.find("has no field named") != std::string::npos) return RewriteUnknownField(root, msg);
  if (msg.find("Unknown enumeration value") != std::string::npos)
    return RewriteUnknownEnum(root, msg);
  if (msg.find("is specified multiple times") != std::string::npos) {
    return {msg, "a field that is not repeated may appear once; remove the duplicate", {}};
  }
  if (msg == "Expected identifier, got: ") {
    return {"unexpected end of the file", "a '{' block is probably missing its closing '}'", {}};
  }
  if (msg.find("out of range") != std::string::npos) {
    return {msg, "see " + see + " for the field's range", {}};
  }
  return {msg, "write `field: value` or `field { ... }`; see " + see, {}};
}

Status SyntaxError(const pb::Descriptor* root, std::string_view text, std::string_view source,
                   const FirstErrorCollector::Error& e, std::string_view doc) {
  Rewritten r = Rewrite(root, e.message, doc);
  const int column = r.token.empty() ? e.column : TokenStartColumn(text, e.line, e.column, r.token);
  return Status::InvalidInput(std::string(source) + ":" + std::to_string(e.line + 1) + ":" +
                              std::to_string(column + 1) + ": " + r.what + "; hint: " + r.hint);
}

}  // namespace

Status ParseTextProtoStrict(std::string_view text, std::string_view source, pb::Message* msg,
                            pb::TextFormat::ParseInfoTree* tree, std::string_view doc) {
  // protobuf drops a string field that is not UTF-8 with a note on stderr: say where instead.
  if (const std::size_t bad = FirstInvalidUtf8(text); bad != std::string_view::npos) {
    const std::string_view before = text.substr(0, bad);
    const auto line = std::count(before.begin(), before.end(), '\n') + 1;
    const std::size_t nl = before.rfind('\n');
    const std::size_t column = bad - (nl == std::string_view::npos ? 0 : nl + 1) + 1;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
    return Status::InvalidInput(std::string(source) + ":" + std::to_string(line) + ":" +
                                std::to_string(column) + ": byte " + byte +
                                " is not valid UTF-8; hint: the file is UTF-8 text; "
                                "re-save it as UTF-8 or write the character as an escape");
  }
  FirstErrorCollector errors;
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree);
  parser.AllowUnknownField(false);
  parser.AllowUnknownExtension(false);
  if (!parser.ParseFromString(std::string(text), msg)) {
    if (errors.error())
      return SyntaxError(msg->GetDescriptor(), text, source, *errors.error(), doc);
    return Status::InvalidInput(std::string(source) + ":1:1: not a valid " +
                                msg->GetDescriptor()->name() + "; hint: see " + std::string(doc));
  }
  return Status::Ok();
}

Result<v1::Scenario> ParseScenario(std::string_view text, std::string_view source,
                                   std::span<const std::string> overrides) {
  v1::Scenario scenario;
  pb::TextFormat::ParseInfoTree tree;
  DENPEX_RETURN_IF_ERROR(
      ParseTextProtoStrict(text, source, &scenario, &tree, "docs/scenario_format.md"));
  Locator locator(std::string(source), &tree);
  for (const std::string& arg : overrides) {
    std::string path;
    DENPEX_RETURN_IF_ERROR(ApplyOverride(arg, &scenario, &path));
    locator.RecordOverride(path, arg);
  }
  DENPEX_RETURN_IF_ERROR(FillDefaultsAndValidate(&scenario, locator));
  return scenario;
}

Result<v1::Scenario> LoadScenario(const std::filesystem::path& path,
                                  std::span<const std::string> overrides) {
  auto text = proto::ReadFile(path, proto::kMaxTextprotoBytes, "a scenario");
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path.string(), overrides);
}

}  // namespace denpex::sim
