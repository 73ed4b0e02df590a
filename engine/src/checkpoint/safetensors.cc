#include "checkpoint/safetensors.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/json.h"

namespace denpex::engine::ckpt {
namespace {

constexpr std::uint64_t kMaxHeader = 100'000'000;  // safetensors' MAX_HEADER_SIZE

// Bytes per element; 0 when the dtype is unknown (newer releases add sub-byte types).
std::uint64_t DtypeSize(const std::string& dtype) {
  static const std::map<std::string, std::uint64_t> kSizes = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1},
      {"I16", 2},  {"U16", 2}, {"F16", 2}, {"BF16", 2},    {"I32", 4},
      {"U32", 4},  {"F32", 4}, {"I64", 8}, {"U64", 8},     {"F64", 8}};
  auto it = kSizes.find(dtype);
  return it == kSizes.end() ? 0 : it->second;
}

struct Tensor {
  std::string name;
  std::uint64_t begin = 0, end = 0;
};

// One header entry: its offsets, and whether its byte count matches shape x dtype.
Finding ReadTensor(const std::string& name, const google::protobuf::Value& v, Tensor& t,
                   bool& unknown_dtype) {
  const std::string bad = "tensor '" + name + "': ";
  if (v.kind_case() != google::protobuf::Value::kStructValue) return Corrupt(bad + "not an object");
  const auto& s = v.struct_value();
  const auto* dtype = JsonField(s, "dtype");
  const auto* shape = JsonField(s, "shape");
  const auto* offsets = JsonField(s, "data_offsets");
  if (dtype == nullptr || shape == nullptr || offsets == nullptr || !dtype->has_string_value() ||
      !shape->has_list_value() || !offsets->has_list_value() ||
      offsets->list_value().values_size() != 2) {
    return Corrupt(bad + "needs dtype, shape and data_offsets [begin, end]");
  }
  auto b = JsonCount(offsets->list_value().values(0));
  auto e = JsonCount(offsets->list_value().values(1));
  if (!b || !e || *e < *b)
    return Corrupt(bad + "invalid data_offsets (safetensors: InvalidOffset)");
  t = {name, static_cast<std::uint64_t>(*b), static_cast<std::uint64_t>(*e)};
  std::uint64_t bytes = DtypeSize(dtype->string_value());
  if (bytes == 0) {
    unknown_dtype = true;
    return Valid("");
  }
  for (const auto& dim : shape->list_value().values()) {
    auto d = JsonCount(dim);
    if (!d) return Corrupt(bad + "shape holds a non-count");
    if (*d != 0 && bytes > UINT64_MAX / static_cast<std::uint64_t>(*d))
      return Corrupt(bad + "size overflows");
    bytes *= static_cast<std::uint64_t>(*d);
  }
  if (bytes != t.end - t.begin) {
    return Corrupt(bad + "shape x dtype is " + Thousands(bytes) + " bytes, data_offsets span " +
                   Thousands(t.end - t.begin) + " (safetensors: TensorInvalidInfo)");
  }
  return Valid("");
}

}  // namespace

Finding CheckSafetensorsFile(const ByteFile& f) {
  if (f.size() < 8) {
    return Incomplete(std::to_string(f.size()) +
                      " bytes: shorter than the 8-byte header length "
                      "(safetensors: HeaderTooSmall): truncated");
  }
  auto len_bytes = f.Read(0, 8);
  if (!len_bytes.ok()) return Unreadable("header length", len_bytes.status());
  const std::uint64_t n = Le64(*len_bytes, 0);
  if (n > kMaxHeader) {
    return Corrupt("declares a " + Thousands(n) +
                   "-byte header, over the 100,000,000 limit "
                   "(safetensors: HeaderTooLarge; a git-LFS pointer or not safetensors at all)");
  }
  if (n > f.size() - 8) {
    return Incomplete("the " + Thousands(n) + "-byte header does not fit in " +
                      Thousands(f.size()) + " bytes (safetensors: InvalidHeaderLength): truncated");
  }
  auto header = f.Read(8, n);
  if (!header.ok()) return Unreadable("header", header.status());
  if (header->empty() || (*header)[0] != '{')
    return Corrupt("the header does not start with '{' (InvalidHeaderStart)");
  auto json = ParseJsonObject(*header);
  if (!json.ok()) {
    return Corrupt("the header is not JSON (InvalidHeaderDeserialization): " +
                   json.status().message().substr(0, 200));
  }
  std::vector<Tensor> tensors;
  bool unknown_dtype = false;
  for (const auto& [name, v] : json->fields()) {
    if (name == "__metadata__") continue;
    Tensor t;
    if (Finding fd = ReadTensor(name, v, t, unknown_dtype); !fd.ok()) return fd;
    tensors.push_back(std::move(t));
  }
  std::sort(tensors.begin(), tensors.end(), [](const Tensor& a, const Tensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expect = 0;
  for (const Tensor& t : tensors) {
    if (t.begin != expect) {
      return Corrupt("tensor '" + t.name + "' starts at " + Thousands(t.begin) + ", expected " +
                     Thousands(expect) + " (safetensors: InvalidOffset)");
    }
    expect = t.end;
  }
  if (8 + n + expect != f.size()) {
    const std::string sizes = "header and data need " + Thousands(8 + n + expect) +
                              " bytes, the file has " + Thousands(f.size()) +
                              " (safetensors: MetadataIncompleteBuffer)";
    return 8 + n + expect > f.size() ? Incomplete(sizes + ": truncated") : Corrupt(sizes);
  }
  if (unknown_dtype)
    return Inconclusive("a tensor has a dtype this verifier does not know; sizes add up");
  return Valid(std::to_string(tensors.size()) + " tensors, sizes add up");
}

}  // namespace denpex::engine::ckpt
