// Protobuf JSON with snake_case field names, to and from files. The one place that decides
// how Denpex's contracts look on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <google/protobuf/message.h>

#include "denpex/common/status.h"

namespace denpex::proto {

// Pretty-printed JSON, snake_case names, enum names as strings. Scalar fields are printed
// even when they hold their default (rank 0 is an answer), unset sub-messages are omitted.
std::string ToJson(const google::protobuf::Message& msg);

// Writes ToJson(msg) + "\n" to `path` through WriteOutputFile (denpex/common/output_file.h):
// a regular file only, replaced atomically.
Status WriteJsonFile(const std::filesystem::path& path, const google::protobuf::Message& msg);

// Parses JSON into `msg`; unknown fields are an error. The message names `source`.
Status FromJson(std::string_view json, std::string_view source, google::protobuf::Message* msg);
Status ReadJsonFile(const std::filesystem::path& path, google::protobuf::Message* msg);

// Reads a whole regular file of at most `max_bytes` through ReadInputFile
// (denpex/common/input_file.h); `what` names it in errors ("a scenario"). kNotFound, kIoError and
// kInvalidInput (a device, a FIFO, too large) name the path.
inline constexpr std::uint64_t kMaxJsonBytes = std::uint64_t{1} << 30;    // eval reports
inline constexpr std::uint64_t kMaxTextprotoBytes = std::uint64_t{1} << 20;  // scenarios, suites
Result<std::string> ReadFile(const std::filesystem::path& path,
                             std::uint64_t max_bytes = kMaxJsonBytes,
                             std::string_view what = "a JSON document");
// WriteOutputFile (denpex/common/output_file.h).
Status WriteFile(const std::filesystem::path& path, std::string_view data);

}  // namespace denpex::proto
