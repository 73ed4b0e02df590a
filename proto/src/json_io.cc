#include "denpex/proto/json_io.h"

#include <google/protobuf/util/json_util.h>

#include "denpex/common/input_file.h"
#include "denpex/common/output_file.h"

namespace denpex::proto {

namespace pbu = google::protobuf::util;

std::string ToJson(const google::protobuf::Message& msg) {
  pbu::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  // Print zeros and empty strings too: rank 0 is an answer, not an absent field.
  opts.always_print_primitive_fields = true;
  std::string out;
  // Only fails for messages with Any fields of unknown types; we have none.
  (void)pbu::MessageToJsonString(msg, &out, opts);
  return out;
}

Result<std::string> ReadFile(const std::filesystem::path& path, std::uint64_t max_bytes,
                             std::string_view what) {
  return ReadInputFile(path, max_bytes, what);
}

Status WriteFile(const std::filesystem::path& path, std::string_view data) {
  return WriteOutputFile(path, data);
}

Status WriteJsonFile(const std::filesystem::path& path, const google::protobuf::Message& msg) {
  return WriteOutputFile(path, ToJson(msg) + "\n");
}

Status FromJson(std::string_view json, std::string_view source, google::protobuf::Message* msg) {
  pbu::JsonParseOptions opts;
  opts.ignore_unknown_fields = false;
  auto st = pbu::JsonStringToMessage(std::string(json), msg, opts);
  if (!st.ok()) {
    return Status::InvalidInput(std::string(source) + ": not a valid " +
                                std::string(msg->GetDescriptor()->full_name()) + " JSON: " +
                                std::string(st.message()));
  }
  return Status::Ok();
}

Status ReadJsonFile(const std::filesystem::path& path, google::protobuf::Message* msg) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  return FromJson(*text, path.string(), msg);
}

}  // namespace denpex::proto
