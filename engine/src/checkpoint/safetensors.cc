#include "checkpoint/safetensors.h"

#include <algorithm>
#include <map>
#include <optional>
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

// 24 bytes a tensor, so a 100 MB header of a million tensors stays far below its own size.
struct Tensor {
  std::uint64_t begin = 0, end = 0;
  std::size_t name_at = 0;  // the name's opening quote in the header
};

// One header entry, `{"dtype": …, "shape": […], "data_offsets": [begin, end]}` (other fields
// skipped): its offsets, and whether its byte count matches shape × dtype.
Finding ReadTensor(JsonReader& r, const std::string& name, std::size_t name_at, Tensor& t,
                   bool& unknown_dtype) {
  const std::string bad = "tensor '" + name + "': ";
  if (r.Peek() != '{') {
    if (!r.Skip()) return Corrupt(bad + r.error());
    return Corrupt(bad + "not an object");
  }
  r.BeginObject();
  std::optional<std::string> dtype;
  std::optional<std::vector<std::uint64_t>> shape, offsets;
  auto counts = [&r]() -> std::optional<std::vector<std::uint64_t>> {
    if (!r.BeginArray()) return std::nullopt;
    std::vector<std::uint64_t> v;
    while (r.NextElement()) {
      auto c = r.Count();
      if (!c) return std::nullopt;
      v.push_back(*c);
    }
    if (!r.ok()) return std::nullopt;
    return v;
  };
  while (auto key = r.NextKey()) {
    if (*key == "dtype") {
      dtype = r.String();
    } else if (*key == "shape") {
      shape = counts();
    } else if (*key == "data_offsets") {
      offsets = counts();
    } else {
      r.Skip();
    }
    if (!r.ok()) break;
  }
  if (!r.ok()) return Corrupt(bad + r.error());
  if (!dtype || !shape || !offsets || offsets->size() != 2) {
    return Corrupt(bad + "needs dtype, shape and data_offsets [begin, end]");
  }
  const std::uint64_t b = (*offsets)[0], e = (*offsets)[1];
  if (e < b) return Corrupt(bad + "invalid data_offsets (safetensors: InvalidOffset)");
  t = {b, e, name_at};
  std::uint64_t bytes = DtypeSize(*dtype);
  if (bytes == 0) {
    unknown_dtype = true;
    return Valid("");
  }
  for (const std::uint64_t d : *shape) {
    if (d != 0 && bytes > UINT64_MAX / d) return Corrupt(bad + "size overflows");
    bytes *= d;
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
  // Read as it streams: a header may have 100 MB, too much to hold as a JSON tree.
  auto not_json = [](const JsonReader& r) {
    return Corrupt("the header is not JSON (InvalidHeaderDeserialization): " +
                   r.error().substr(0, 200));
  };
  JsonReader r(*header);
  if (!r.BeginObject()) return not_json(r);
  std::vector<Tensor> tensors;
  bool unknown_dtype = false;
  while (auto name = r.NextKey()) {
    if (*name == "__metadata__") {
      if (!r.Skip()) return not_json(r);
      continue;
    }
    Tensor t;
    const std::size_t name_at = r.last_string_at();
    if (Finding fd = ReadTensor(r, *name, name_at, t, unknown_dtype); !fd.ok()) {
      return r.ok() ? fd : Corrupt("the header is not JSON (InvalidHeaderDeserialization): " +
                                   fd.detail.substr(0, 200));
    }
    tensors.push_back(t);
  }
  if (!r.AtEnd()) {
    if (r.ok()) return Corrupt("the header is not JSON (InvalidHeaderDeserialization): "
                               "bytes follow its closing '}'");
    return not_json(r);
  }
  std::sort(tensors.begin(), tensors.end(), [](const Tensor& a, const Tensor& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::uint64_t expect = 0;
  for (const Tensor& t : tensors) {
    if (t.begin != expect) {
      const std::string name =
          JsonReader(std::string_view(*header).substr(t.name_at)).String().value_or("?");
      return Corrupt("tensor '" + name + "' starts at " + Thousands(t.begin) + ", expected " +
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
