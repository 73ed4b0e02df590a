// Field paths ("faults[0].rank") and the Locator that maps them to file:line:column for
// error messages, using the parse-info tree protobuf's text parser recorded.
#include <charconv>

#include "scenario_internal.h"
#include "suggest.h"

namespace denpex::sim {

namespace pb = google::protobuf;

namespace {
bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Parses "name" or "name[12]"; false when malformed.
bool ParseSegment(std::string_view s, PathSegment* out) {
  const std::size_t bracket = s.find('[');
  std::string_view name = s.substr(0, bracket);
  if (name.empty()) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  out->name = std::string(name);
  out->index = -1;
  if (bracket == std::string_view::npos) return true;
  if (s.back() != ']') return false;
  std::string_view digits = s.substr(bracket + 1, s.size() - bracket - 2);
  int index = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) return false;
  out->index = index;
  return true;
}
}  // namespace

std::vector<PathSegment> ParseFieldPath(std::string_view path) {
  std::vector<PathSegment> out;
  while (true) {
    const std::size_t dot = path.find('.');
    PathSegment seg;
    if (!ParseSegment(path.substr(0, dot), &seg)) return {};
    out.push_back(std::move(seg));
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return out;
}

std::string FormatFieldPath(const std::vector<PathSegment>& path) {
  std::string out;
  for (const PathSegment& seg : path) {
    if (!out.empty()) out += '.';
    out += seg.name;
    if (seg.index >= 0) {
      out += '[';
      out += std::to_string(seg.index);
      out += ']';
    }
  }
  return out;
}

const std::string* Locator::OverrideFor(std::string_view path) const {
  auto it = overrides_.find(path);
  return it == overrides_.end() ? nullptr : &it->second;
}

std::string Locator::Where(std::string_view path) const {
  if (const std::string* arg = OverrideFor(path)) return "--set " + *arg;
  // Walk down the tree as far as the text wrote the path; report the deepest location.
  int line = 0, column = 0;
  const ParseInfoTree* tree = tree_;
  const pb::Descriptor* desc = v1::Scenario::descriptor();
  for (const PathSegment& seg : ParseFieldPath(path)) {
    if (tree == nullptr || desc == nullptr) break;
    const pb::FieldDescriptor* field = desc->FindFieldByName(seg.name);
    if (field == nullptr) break;
    const int index = field->is_repeated() ? std::max(seg.index, 0) : -1;
    const auto loc = tree->GetLocation(field, index);
    if (loc.line < 0) break;
    line = loc.line;
    column = loc.column;
    if (field->message_type() == nullptr) break;
    tree = tree->GetTreeForNested(field, index);
    desc = field->message_type();
  }
  return source_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1);
}

Status Locator::Error(std::initializer_list<std::string_view> paths, std::string_view what,
                      std::string_view hint) const {
  std::string_view at = *paths.begin();
  bool from_flag = false;
  for (std::string_view p : paths) {
    if (OverrideFor(p) != nullptr) {
      at = p;
      from_flag = true;
      break;
    }
  }
  std::string msg = Where(at) + ": " + std::string(what) + "; hint: " + std::string(hint);
  // A value that came from a flag is a usage error; one from the file is bad input.
  return from_flag ? Status::InvalidArgument(std::move(msg)) : Status::InvalidInput(std::move(msg));
}

namespace {
void CollectEnumValues(const pb::Descriptor* desc, std::string_view field_name, int depth,
                       std::vector<std::string>* out) {
  if (depth > 4) return;
  for (int i = 0; i < desc->field_count(); ++i) {
    const pb::FieldDescriptor* f = desc->field(i);
    if (f->enum_type() != nullptr && f->name() == field_name) {
      for (int v = 0; v < f->enum_type()->value_count(); ++v) {
        const std::string& name = f->enum_type()->value(v)->name();
        if (!name.ends_with("_UNSPECIFIED")) out->push_back(name);
      }
    }
    if (f->message_type() != nullptr)
      CollectEnumValues(f->message_type(), field_name, depth + 1, out);
  }
}
}  // namespace

std::vector<std::string> EnumValueNamesForField(const pb::Descriptor* root,
                                                std::string_view field_name) {
  std::vector<std::string> out;
  CollectEnumValues(root, field_name, 0, &out);
  return out;
}

std::string PathForMessageType(const pb::Descriptor* root, std::string_view full_name) {
  if (full_name == root->full_name()) return "the file's top level";
  for (int i = 0; i < root->field_count(); ++i) {
    const pb::FieldDescriptor* f = root->field(i);
    if (f->message_type() != nullptr && f->message_type()->full_name() == full_name) {
      return Quoted(f->name());
    }
  }
  return std::string(full_name);
}

}  // namespace denpex::sim
