// `--set field.path=value`: sets one singular field of the parsed scenario through
// reflection, parsing the value per the field's type (integers, floats, bools, strings,
// enum names or numbers). Repeated messages are addressed by index: faults[0].rank.
#include <charconv>
#include <cmath>
#include <limits>

#include "scenario_internal.h"
#include "suggest.h"

namespace denpex::sim {

namespace pb = google::protobuf;

namespace {

Status OverrideError(std::string_view arg, std::string_view what, std::string_view hint) {
  return Status::InvalidArgument("--set " + std::string(arg) + ": " + std::string(what) +
                                 "; hint: " + std::string(hint));
}

std::vector<std::string> FieldNames(const pb::Descriptor* d) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(d->field_count()));
  for (int i = 0; i < d->field_count(); ++i) names.push_back(d->field(i)->name());
  return names;
}

Status UnknownFieldError(std::string_view arg, const std::string& name, const pb::Descriptor* d,
                         std::string_view where) {
  const std::vector<std::string> names = FieldNames(d);
  auto best = ClosestName(name, names);
  return OverrideError(
      arg, "no field " + Quoted(name) + " in " + std::string(where),
      best ? "did you mean " + Quoted(*best) + "?" : "valid fields there are: " + JoinNames(names));
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  if (s.starts_with('+')) s.remove_prefix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// Sets `field` of `msg` from text; an error string (empty on success) says what was wrong.
std::string SetScalar(pb::Message* msg, const pb::FieldDescriptor* field, std::string_view value) {
  const pb::Reflection* r = msg->GetReflection();
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      std::int32_t v = 0;
      if (!ParseNumber(value, &v)) return "expected a 32-bit integer";
      r->SetInt32(msg, field, v);
      return {};
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      std::int64_t v = 0;
      if (!ParseNumber(value, &v)) return "expected a 64-bit integer";
      r->SetInt64(msg, field, v);
      return {};
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      std::uint32_t v = 0;
      if (!ParseNumber(value, &v)) return "expected a non-negative 32-bit integer";
      r->SetUInt32(msg, field, v);
      return {};
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      std::uint64_t v = 0;
      if (!ParseNumber(value, &v)) return "expected a non-negative 64-bit integer";
      r->SetUInt64(msg, field, v);
      return {};
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      double v = 0;
      if (!ParseNumber(value, &v) || !std::isfinite(v)) return "expected a finite number";
      if (field->cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT) {
        r->SetFloat(msg, field, static_cast<float>(v));
      } else {
        r->SetDouble(msg, field, v);
      }
      return {};
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      if (value == "true" || value == "1") {
        r->SetBool(msg, field, true);
        return {};
      }
      if (value == "false" || value == "0") {
        r->SetBool(msg, field, false);
        return {};
      }
      return "expected true or false";
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      // Quotes are optional: --set name=x and --set 'name="x"' mean the same.
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      r->SetString(msg, field, std::string(value));
      return {};
    }
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumDescriptor* e = field->enum_type();
      if (const pb::EnumValueDescriptor* v = e->FindValueByName(std::string(value))) {
        r->SetEnum(msg, field, v);
        return {};
      }
      std::int32_t n = 0;
      if (ParseNumber(value, &n) && e->FindValueByNumber(n) != nullptr) {
        r->SetEnumValue(msg, field, n);
        return {};
      }
      return "expected one of the " + e->name() + " values";
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return "this field cannot be set from the command line";
}

std::string ValueHint(const pb::FieldDescriptor* field) {
  if (field->enum_type() == nullptr) return "write the value as in the scenario file";
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(field->enum_type()->value_count()));
  for (int i = 0; i < field->enum_type()->value_count(); ++i) {
    names.push_back(field->enum_type()->value(i)->name());
  }
  return "valid values: " + JoinNames(names);
}

}  // namespace

Status ApplyOverride(std::string_view arg, v1::Scenario* scenario, std::string* canonical_path) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string_view::npos) {
    return OverrideError(arg, "expected field.path=value", "e.g. --set job.nodes=64");
  }
  const std::string_view value = arg.substr(eq + 1);
  const std::vector<PathSegment> path = ParseFieldPath(arg.substr(0, eq));
  if (path.empty()) {
    return OverrideError(arg, Quoted(arg.substr(0, eq)) + " is not a field path",
                         "names joined by dots, with [i] for repeated blocks: faults[0].rank");
  }
  pb::Message* msg = scenario;
  std::string where = "the scenario";
  for (std::size_t i = 0; i < path.size(); ++i) {
    const PathSegment& seg = path[i];
    const pb::Descriptor* d = msg->GetDescriptor();
    const pb::FieldDescriptor* field = d->FindFieldByName(seg.name);
    if (field == nullptr) return UnknownFieldError(arg, seg.name, d, where);
    const bool last = i + 1 == path.size();
    if (field->is_repeated() && seg.index < 0) {
      return OverrideError(arg, Quoted(seg.name) + " is repeated",
                           "pick an entry by index: " + seg.name + "[0]");
    }
    if (!field->is_repeated() && seg.index >= 0) {
      return OverrideError(arg, Quoted(seg.name) + " is not repeated", "drop the [index]");
    }
    if (field->message_type() == nullptr) {
      if (!last) {
        return OverrideError(arg, Quoted(seg.name) + " is a value, not a block",
                             "end the path at " + Quoted(seg.name));
      }
      if (field->is_repeated()) {
        return OverrideError(arg, "repeated values cannot be set", "edit the scenario file");
      }
      std::string err = SetScalar(msg, field, value);
      if (!err.empty()) return OverrideError(arg, Quoted(value) + ": " + err, ValueHint(field));
      *canonical_path = FormatFieldPath(path);
      return Status::Ok();
    }
    if (last) {
      return OverrideError(arg, Quoted(seg.name) + " is a block",
                           "set one of its fields, e.g. " + seg.name + "." +
                               field->message_type()->field(0)->name() + "=...");
    }
    const pb::Reflection* r = msg->GetReflection();
    if (field->is_repeated()) {
      const int size = r->FieldSize(*msg, field);
      if (seg.index >= size) {
        return OverrideError(arg, Quoted(seg.name) + " has " + std::to_string(size) + " entries",
                             "indexes start at 0; add the entry in the scenario file");
      }
      msg = r->MutableRepeatedMessage(msg, field, seg.index);
    } else {
      msg = r->MutableMessage(msg, field);
    }
    where = Quoted(FormatFieldPath({path.begin(), path.begin() + static_cast<long>(i) + 1}));
  }
  return Status::Ok();  // unreachable: the loop returns at the last segment
}

}  // namespace denpex::sim
