#include "checkpoint/deep.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "checkpoint/json.h"
#include "checkpoint/pickle.h"
#include "checkpoint/torch_file.h"

namespace denpex::engine::ckpt {
namespace {

// Elements whose bits under `kMask` equal `kValue` are NaN or Inf. Blocks of 256 elements are
// OR-reduced without a branch (the compiler vectorises it); only a block with a hit is walked
// again for the index.
template <typename U, U kMask, U kValue>
std::optional<std::uint64_t> FirstMatch(const char* data, std::uint64_t count) {
  constexpr std::uint64_t kBlock = 256;
  for (std::uint64_t b = 0; b < count; b += kBlock) {
    const std::uint64_t e = std::min(count, b + kBlock);
    unsigned any = 0;
    for (std::uint64_t i = b; i < e; ++i) {
      U u;
      std::memcpy(&u, data + i * sizeof(U), sizeof(U));
      any |= static_cast<unsigned>((u & kMask) == kValue);
    }
    if (any == 0) continue;
    for (std::uint64_t i = b; i < e; ++i) {
      U u;
      std::memcpy(&u, data + i * sizeof(U), sizeof(U));
      if ((u & kMask) == kValue) return i;
    }
  }
  return std::nullopt;
}

// Whether the element at `data` (known non-finite) is NaN rather than Inf.
bool IsNan(const char* data, FloatKind kind) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, data, FloatKindSize(kind));
  switch (kind) {
    case FloatKind::kF16:
      return (bits & 0x3ffu) != 0;
    case FloatKind::kBF16:
      return (bits & 0x7fu) != 0;
    case FloatKind::kF32:
      return (bits & 0x7fffffu) != 0;
    case FloatKind::kF64:
      return (bits & 0xfffffffffffffull) != 0;
    case FloatKind::kF8E5M2:
      return (bits & 0x3u) != 0;
    default:
      return true;
  }
}

std::string Plural(std::uint64_t n, const char* one, const char* many) {
  return Thousands(n) + " " + (n == 1 ? one : many);
}

// A tensor of a safetensors header: its name, element type and absolute byte range.
struct HeaderTensor {
  std::string name;
  FloatKind kind = FloatKind::kNotFloat;
  std::uint64_t begin = 0, end = 0;
};

std::optional<std::vector<HeaderTensor>> ReadHeaderTensors(const ByteFile& f) {
  auto len = f.Read(0, 8);
  if (!len.ok()) return std::nullopt;
  const std::uint64_t n = Le64(*len, 0);
  auto header = f.Read(8, n);
  if (!header.ok()) return std::nullopt;
  JsonReader r(*header);
  if (!r.BeginObject()) return std::nullopt;
  std::vector<HeaderTensor> out;
  while (auto name = r.NextKey()) {
    if (*name == "__metadata__" || r.Peek() != '{') {
      if (!r.Skip()) return std::nullopt;
      continue;
    }
    r.BeginObject();
    HeaderTensor t{*name, FloatKind::kNotFloat, 0, 0};
    while (auto key = r.NextKey()) {
      if (*key == "dtype") {
        t.kind = FloatKindOfDtype(r.String().value_or(""));
      } else if (*key == "data_offsets" && r.BeginArray()) {
        std::vector<std::uint64_t> v;
        while (r.NextElement()) v.push_back(r.Count().value_or(0));
        if (v.size() == 2) t.begin = 8 + n + v[0], t.end = 8 + n + v[1];
      } else {
        r.Skip();
      }
      if (!r.ok()) return std::nullopt;
    }
    out.push_back(std::move(t));
  }
  if (!r.ok()) return std::nullopt;
  return out;
}

std::string NonFiniteText(const NonFinite& hit) { return hit.nan ? "NaN" : "Inf"; }

}  // namespace

std::uint64_t FloatKindSize(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16:
    case FloatKind::kBF16:
      return 2;
    case FloatKind::kF32:
      return 4;
    case FloatKind::kF64:
      return 8;
    case FloatKind::kF8E4M3FN:
    case FloatKind::kF8E5M2:
    case FloatKind::kF8Fnuz:
      return 1;
    case FloatKind::kNotFloat:
      break;
  }
  return 1;
}

FloatKind FloatKindOfStorage(std::string_view cls) {
  static const std::map<std::string_view, FloatKind, std::less<>> kKinds = {
      {"HalfStorage", FloatKind::kF16},          {"ComplexHalfStorage", FloatKind::kF16},
      {"BFloat16Storage", FloatKind::kBF16},     {"FloatStorage", FloatKind::kF32},
      {"ComplexFloatStorage", FloatKind::kF32},  {"DoubleStorage", FloatKind::kF64},
      {"ComplexDoubleStorage", FloatKind::kF64}, {"Float8_e4m3fnStorage", FloatKind::kF8E4M3FN},
      {"Float8_e5m2Storage", FloatKind::kF8E5M2}, {"Float8_e4m3fnuzStorage", FloatKind::kF8Fnuz},
      {"Float8_e5m2fnuzStorage", FloatKind::kF8Fnuz}};
  const auto dot = cls.rfind('.');
  auto it = kKinds.find(dot == std::string_view::npos ? cls : cls.substr(dot + 1));
  return it == kKinds.end() ? FloatKind::kNotFloat : it->second;
}

FloatKind FloatKindOfDtype(std::string_view dtype) {
  if (dtype == "F16") return FloatKind::kF16;
  if (dtype == "BF16") return FloatKind::kBF16;
  if (dtype == "F32") return FloatKind::kF32;
  if (dtype == "F64") return FloatKind::kF64;
  if (dtype == "F8_E4M3") return FloatKind::kF8E4M3FN;
  if (dtype == "F8_E5M2") return FloatKind::kF8E5M2;
  return FloatKind::kNotFloat;
}

std::optional<NonFinite> FindNonFinite(const char* data, std::uint64_t count, FloatKind kind) {
  std::optional<std::uint64_t> at;
  switch (kind) {
    case FloatKind::kF16:
      at = FirstMatch<std::uint16_t, 0x7c00, 0x7c00>(data, count);
      break;
    case FloatKind::kBF16:
      at = FirstMatch<std::uint16_t, 0x7f80, 0x7f80>(data, count);
      break;
    case FloatKind::kF32:
      at = FirstMatch<std::uint32_t, 0x7f800000u, 0x7f800000u>(data, count);
      break;
    case FloatKind::kF64:
      at = FirstMatch<std::uint64_t, 0x7ff0000000000000ull, 0x7ff0000000000000ull>(data, count);
      break;
    case FloatKind::kF8E4M3FN:
      at = FirstMatch<std::uint8_t, 0x7f, 0x7f>(data, count);
      break;
    case FloatKind::kF8E5M2:
      at = FirstMatch<std::uint8_t, 0x7c, 0x7c>(data, count);
      break;
    case FloatKind::kF8Fnuz:
      at = FirstMatch<std::uint8_t, 0xff, 0x80>(data, count);
      break;
    case FloatKind::kNotFloat:
      break;
  }
  if (!at) return std::nullopt;
  return NonFinite{*at, IsNan(data + *at * FloatKindSize(kind), kind)};
}

DeepReader::DeepReader(const Progress* progress, std::uint64_t max_bytes)
    : progress_(progress), max_bytes_(max_bytes), buffer_(kDeepChunk / sizeof(std::uint64_t)) {}

bool DeepReader::Fits(std::uint64_t length) {
  if (max_bytes_ == 0 || bytes_read_ + length <= max_bytes_) return true;
  skipped_bytes_ += length;
  return false;
}

std::string DeepReader::Skipped(std::uint64_t before) const {
  if (skipped_bytes_ == before) return "";
  return "; " + Thousands(skipped_bytes_ - before) + " bytes not read (past the " +
         Thousands(max_bytes_) + "-byte budget of this run)";
}

DeepReader::StreamResult DeepReader::Stream(const ByteFile& f, std::uint64_t offset,
                                      std::uint64_t length, FloatKind kind, bool crc) {
  StreamResult out;
  const std::uint64_t es = FloatKindSize(kind);
  char* buf = reinterpret_cast<char*>(buffer_.data());
  for (std::uint64_t done = 0; done < length;) {
    const std::uint64_t n = std::min(kDeepChunk, length - done);
    if (Status st = f.ReadInto(offset + done, n, buf); !st.ok()) {
      out.read_error = Unreadable("bytes at offset " + Thousands(offset + done), st);
      return out;
    }
    if (crc) out.crc = Crc32(std::string_view(buf, n), out.crc);
    if (kind != FloatKind::kNotFloat && !out.hit) {
      if (auto hit = FindNonFinite(buf, n / es, kind)) {
        hit->element += done / es;
        out.hit = hit;
        if (!crc) return out;  // nothing else to learn from the rest
      }
    }
    done += n;
    bytes_read_ += n;
    if (progress_ != nullptr && *progress_) (*progress_)(n);
  }
  return out;
}

Finding DeepReader::TorchArchive(const ByteFile& f, const ZipArchive& archive,
                                 const std::string& name) {
  // Record -> the storage class and the tensors that view it.
  struct Storage {
    std::string storage_class;
    std::vector<std::string> tensors;
  };
  std::map<std::string, Storage, std::less<>> storages;
  std::string prefix;
  if (auto p = ReadArchivePickle(f, archive, &prefix)) {
    for (PickledTensor& t : PickledTensors(*p)) {
      Storage& s = storages[prefix + "data/" + t.storage_key];
      s.storage_class = t.storage_class;
      std::string tensor = t.name.empty() ? name : name.empty() ? t.name : name + "." + t.name;
      s.tensors.push_back(tensor.empty() ? "(the saved tensor)" : std::move(tensor));
    }
    // A storage the walk did not reach (beneath an unusual object) is still scanned.
    for (const PyValue& pid : p->persistent_ids) {
      auto t = p->Items(pid);
      if (t.size() < 5 || p->Str(t[0]) != "storage") continue;
      Storage& s = storages[prefix + "data/" + std::string(p->Str(t[2]))];
      if (!s.tensors.empty()) continue;
      s.storage_class = std::string(p->Str(t[1]));
      s.tensors.push_back("storage " + std::string(p->Str(t[2])));
    }
  }
  int crcs = 0, unrecorded = 0;
  std::uint64_t float_bytes = 0;
  const std::uint64_t skipped_before = skipped_bytes_;
  for (const ZipEntry& e : archive.entries) {
    if (e.method != 0)
      return Inconclusive("record '" + e.name + "' is compressed; its CRC was not checked");
    auto s = storages.find(e.name);
    const FloatKind kind =
        s == storages.end() ? FloatKind::kNotFloat : FloatKindOfStorage(s->second.storage_class);
    const bool crc = e.crc != 0 || e.size == 0;
    if (!crc) ++unrecorded;  // torch.save with CRC disabled (set_crc32_options(False))
    if (!crc && kind == FloatKind::kNotFloat) continue;
    if (!Fits(e.size)) continue;
    StreamResult r = Stream(f, e.data_offset, e.size, kind, crc);
    if (!r.read_error.ok()) return r.read_error;
    if (crc && r.crc != e.crc) {
      return Corrupt("record '" + e.name + "': CRC-32 is " + std::to_string(r.crc) +
                     ", the central directory says " + std::to_string(e.crc) +
                     " (bit rot or a bad copy; torch.load does not check it)");
    }
    if (crc) ++crcs;
    if (kind == FloatKind::kNotFloat) continue;
    float_bytes += e.size;
    if (r.hit) {
      const std::vector<std::string>& views = s->second.tensors;
      std::string who = "tensor '" + views.front() + "'";
      if (views.size() > 1) who += " (and " + Plural(views.size() - 1, "more view", "more views") + ")";
      return Corrupt(who + " holds " + NonFiniteText(*r.hit) + " at element " +
                     Thousands(r.hit->element) + " of its storage (" + e.name + ", " +
                     s->second.storage_class +
                     "): the job saved after its values diverged; resuming would carry them on");
    }
  }
  std::string detail = "CRC-32 of " + Plural(crcs, "record", "records") + " matches";
  if (unrecorded > 0)
    detail += " (" + Plural(unrecorded, "record carries", "records carry") +
              " no CRC: written with CRC disabled)";
  detail += "; " + Thousands(float_bytes) + " bytes of floating-point tensors hold no NaN/Inf";
  return Valid(detail + Skipped(skipped_before));
}

Finding DeepReader::Safetensors(const ByteFile& f) {
  auto tensors = ReadHeaderTensors(f);
  if (!tensors) return Inconclusive("the header could not be read again for --deep");
  std::uint64_t float_bytes = 0;
  int scanned = 0;
  const std::uint64_t skipped_before = skipped_bytes_;
  for (const HeaderTensor& t : *tensors) {
    if (t.kind == FloatKind::kNotFloat || t.end > f.size() || t.end < t.begin) continue;
    if (!Fits(t.end - t.begin)) continue;
    StreamResult r = Stream(f, t.begin, t.end - t.begin, t.kind, /*crc=*/false);
    if (!r.read_error.ok()) return r.read_error;
    if (r.hit) {
      return Corrupt("tensor '" + t.name + "' holds " + NonFiniteText(*r.hit) + " at element " +
                     Thousands(r.hit->element) +
                     ": the job saved after its values diverged; resuming would carry them on");
    }
    float_bytes += t.end - t.begin;
    ++scanned;
  }
  return Valid(Plural(scanned, "floating-point tensor", "floating-point tensors") + " (" +
               Thousands(float_bytes) + " bytes) hold no NaN/Inf" + Skipped(skipped_before));
}

}  // namespace denpex::engine::ckpt
