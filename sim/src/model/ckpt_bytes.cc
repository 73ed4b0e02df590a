#include "ckpt_bytes.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

namespace denpex::sim::ckpt {
namespace {

void Le(std::string& out, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k) out += static_cast<char>(k < 8 ? (v >> (8 * k)) & 0xFF : 0);
}

std::uint32_t Crc(const std::string& data) {
  std::uint32_t crc = 0xFFFFFFFF;
  for (unsigned char c : data) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc & 1) ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return ~crc;
}

// The smallest of BININT1, BININT2, BININT, LONG1 (8 bytes) that holds v.
void PickleInt(std::string& out, std::int64_t v) {
  if (v >= 0 && v < 256) {
    out += 'K';
    Le(out, static_cast<std::uint64_t>(v), 1);
  } else if (v >= 0 && v < 65536) {
    out += 'M';
    Le(out, static_cast<std::uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out += 'J';
    Le(out, static_cast<std::uint32_t>(v), 4);
  } else {
    out += "\x8a\x08";
    Le(out, static_cast<std::uint64_t>(v), 8);
  }
}

class Emitter {
 public:
  explicit Emitter(int protocol) : protocol_(protocol) {}
  std::string Finish(const Py& v) {
    out_ = std::string("\x80") + static_cast<char>(protocol_);
    Emit(v);
    out_ += '.';
    return out_;
  }

 private:
  void Memoize() {
    if (protocol_ >= 4) {
      out_ += '\x94';
    } else if (next_ < 256) {
      out_ += 'q';
      Le(out_, next_, 1);
    } else {
      out_ += 'r';
      Le(out_, next_, 4);
    }
    ++next_;
  }
  void String(const std::string& s) {
    if (auto it = memo_.find(s); it != memo_.end()) {
      if (it->second < 256) {
        out_ += 'h';
        Le(out_, it->second, 1);
      } else {
        out_ += 'j';
        Le(out_, it->second, 4);
      }
      return;
    }
    if (protocol_ >= 4 && s.size() < 256) {
      out_ += '\x8c';
      Le(out_, s.size(), 1);
    } else {
      out_ += 'X';
      Le(out_, s.size(), 4);
    }
    out_ += s;
    memo_[s] = next_;
    Memoize();
  }
  void Integer(std::int64_t v) { PickleInt(out_, v); }
  void Global(const std::string& name) {
    const auto dot = name.rfind('.');
    if (protocol_ >= 4) {
      String(name.substr(0, dot));
      String(name.substr(dot + 1));
      out_ += '\x93';
    } else {
      out_ += 'c' + name.substr(0, dot) + '\n' + name.substr(dot + 1) + '\n';
    }
    Memoize();
  }
  void Emit(const Py& v) {
    switch (v.kind) {
      case Py::kNone:
        out_ += 'N';
        break;
      case Py::kInt:
        Integer(v.i);
        break;
      case Py::kStr:
        String(v.s);
        break;
      case Py::kGlobal:
        Global(v.s);
        break;
      case Py::kTuple:
        if (v.items.empty()) {
          out_ += ')';
        } else if (v.items.size() <= 3) {
          for (const Py& x : v.items) Emit(x);
          out_ += static_cast<char>(0x84 + v.items.size());
        } else {
          out_ += '(';
          for (const Py& x : v.items) Emit(x);
          out_ += 't';
        }
        break;
      case Py::kList:
      case Py::kDict:
        out_ += v.kind == Py::kList ? ']' : '}';
        Memoize();
        if (!v.items.empty()) {
          out_ += '(';
          for (const Py& x : v.items) Emit(x);
          out_ += v.kind == Py::kList ? 'e' : 'u';
        }
        break;
      case Py::kObject:
        Emit(v.items[0]);
        out_ += ")\x81";
        Emit(v.items[1]);
        out_ += 'b';
        break;
      case Py::kReduce:
        Emit(v.items[0]);
        Emit(v.items[1]);
        out_ += 'R';
        break;
      case Py::kPid:
        Emit(v.items[0]);
        out_ += 'Q';
        break;
    }
  }

  int protocol_;
  std::string out_;
  std::map<std::string, std::uint32_t> memo_;
  std::uint32_t next_ = 0;
};

}  // namespace

Py None() { return {}; }
Py Int(std::int64_t v) { return {Py::kInt, v, {}, {}}; }
Py Str(std::string s) { return {Py::kStr, 0, std::move(s), {}}; }
Py Global(std::string name) { return {Py::kGlobal, 0, std::move(name), {}}; }
Py Tuple(std::vector<Py> items) { return {Py::kTuple, 0, {}, std::move(items)}; }
Py List(std::vector<Py> items) { return {Py::kList, 0, {}, std::move(items)}; }
Py Dict(std::vector<std::pair<Py, Py>> items) {
  Py d{Py::kDict, 0, {}, {}};
  for (auto& [k, v] : items) {
    d.items.push_back(std::move(k));
    d.items.push_back(std::move(v));
  }
  return d;
}
Py Object(std::string cls, Py state) {
  return {Py::kObject, 0, {}, {Global(std::move(cls)), std::move(state)}};
}
Py Reduce(Py callable, Py args) {
  return {Py::kReduce, 0, {}, {std::move(callable), std::move(args)}};
}
Py Persistent(Py id) { return {Py::kPid, 0, {}, {std::move(id)}}; }

std::string PickleBytes(const Py& v, int protocol) { return Emitter(protocol).Finish(v); }

PickleStream::PickleStream() { out_ = "\x80\x02"; }

void PickleStream::Str(std::string_view s) {
  if (auto it = memo_.find(s); it != memo_.end()) return Get(it->second);
  out_ += 'X';
  Le(out_, s.size(), 4);
  out_ += s;
  memo_.emplace(std::string(s), Put());
}

void PickleStream::Int(std::int64_t v) { PickleInt(out_, v); }

void PickleStream::Float(double v) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  out_ += 'G';
  for (int k = 7; k >= 0; --k) out_ += static_cast<char>((bits >> (8 * k)) & 0xFF);  // big-endian
}

std::uint32_t PickleStream::Put() {
  if (next_ < 256) {
    out_ += 'q';
    Le(out_, next_, 1);
  } else {
    out_ += 'r';
    Le(out_, next_, 4);
  }
  return next_++;
}

void PickleStream::Get(std::uint32_t id) {
  if (id < 256) {
    out_ += 'h';
    Le(out_, id, 1);
  } else {
    out_ += 'j';
    Le(out_, id, 4);
  }
}

std::string PickleStream::Finish() {
  out_ += '.';
  return std::move(out_);
}

std::string Zip(const std::vector<std::pair<std::string, std::string>>& records,
                const ZipOptions& o) {
  std::string out, cd;
  for (const auto& [name, data] : records) {
    const std::uint64_t off = out.size();
    const std::uint64_t pad =
        o.align == 0 ? 0 : (o.align - (off + 30 + name.size() + 4) % o.align) % o.align;
    std::string extra = "FB";
    Le(extra, pad, 2);
    extra += std::string(pad, 'Z');
    const std::uint32_t crc = o.crc ? Crc(data) : 0;
    Le(out, 0x04034b50, 4);
    Le(out, 45, 2);
    Le(out, 0x0808, 2);  // data descriptor follows; UTF-8 names
    Le(out, 0, 2);       // stored
    Le(out, 0, 4);       // time, date
    Le(out, 0, 12);      // crc and sizes in the descriptor
    Le(out, name.size(), 2);
    Le(out, extra.size(), 2);
    out += name + extra + data;
    Le(out, 0x08074b50, 4);
    Le(out, crc, 4);
    Le(out, data.size(), o.zip64 ? 8 : 4);
    Le(out, data.size(), o.zip64 ? 8 : 4);
    std::string z64;
    if (o.saturate) {
      Le(z64, 1, 2);
      Le(z64, 24, 2);
      Le(z64, data.size(), 8);
      Le(z64, data.size(), 8);
      Le(z64, off, 8);
    }
    Le(cd, 0x02014b50, 4);
    Le(cd, 0x031e, 2);
    Le(cd, 45, 2);
    Le(cd, 0x0808, 2);
    Le(cd, 0, 2);
    Le(cd, 0, 4);
    Le(cd, crc, 4);
    Le(cd, o.saturate ? 0xFFFFFFFF : data.size(), 4);
    Le(cd, o.saturate ? 0xFFFFFFFF : data.size(), 4);
    Le(cd, name.size(), 2);
    Le(cd, z64.size(), 2);
    Le(cd, 0, 6);  // comment length, disk, internal attributes
    Le(cd, 0, 4);  // external attributes
    Le(cd, o.saturate ? 0xFFFFFFFF : off, 4);
    cd += name + z64;
  }
  const std::uint64_t cd_off = out.size();
  out += cd;
  const std::uint64_t z64_pos = out.size();
  if (o.zip64) {
    Le(out, 0x06064b50, 4);
    Le(out, 44, 8);
    Le(out, 0x031e, 2);
    Le(out, 45, 2);
    Le(out, 0, 8);  // disks
    Le(out, records.size(), 8);
    Le(out, records.size(), 8);
    Le(out, cd.size(), 8);
    Le(out, cd_off, 8);
    Le(out, 0x07064b50, 4);
    Le(out, 0, 4);
    Le(out, z64_pos, 8);
    Le(out, 1, 4);
  }
  Le(out, 0x06054b50, 4);
  Le(out, 0, 4);
  Le(out, o.saturate ? 0xFFFF : records.size(), 2);
  Le(out, o.saturate ? 0xFFFF : records.size(), 2);
  Le(out, o.saturate ? 0xFFFFFFFF : cd.size(), 4);
  Le(out, o.saturate ? 0xFFFFFFFF : cd_off, 4);
  Le(out, 0, 2);
  return out;
}

std::string TorchZip(const std::string& prefix, const Py& obj,
                     const std::vector<std::string>& storages, const ZipOptions& o) {
  std::vector<std::pair<std::string, std::string>> records = {
      {prefix + "/data.pkl", PickleBytes(obj)},
      {prefix + "/.format_version", "1"},
      {prefix + "/.storage_alignment", "64"},
      {prefix + "/byteorder", "little"}};
  for (std::size_t k = 0; k < storages.size(); ++k)
    records.push_back({prefix + "/data/" + std::to_string(k), storages[k]});
  records.push_back({prefix + "/version", "3\n"});
  records.push_back({prefix + "/.data/serialization_id", std::string(40, '7')});
  return Zip(records, o);
}

Py Tensor(const std::string& key, std::int64_t numel) {
  const Py pid =
      Tuple({Str("storage"), Global("torch.FloatStorage"), Str(key), Str("cpu"), Int(numel)});
  return Reduce(
      Global("torch._utils._rebuild_tensor_v2"),
      Tuple({Persistent(pid), Int(0), Tuple({Int(numel)}), Tuple({Int(1)}), None(), None()}));
}

std::string FloatBytes(std::size_t bytes, bool nan) {
  // Byte k is k * 7: the top byte of each float is 28i + 21 (mod 256), never 0x7f or 0xff,
  // so no exponent is all ones and every value is finite.
  std::string storage(bytes, '\0');
  for (std::size_t k = 0; k < storage.size(); ++k) storage[k] = static_cast<char>(k * 7);
  if (nan && storage.size() >= 16) storage.replace(12, 4, std::string("\x00\x00\xc0\x7f", 4));
  return storage;
}

std::string TorchState(const std::string& prefix,
                       const std::vector<std::pair<std::string, std::int64_t>>& ints,
                       std::size_t tensor_bytes, bool nan) {
  std::vector<std::pair<Py, Py>> items;
  for (const auto& [k, v] : ints) items.push_back({Str(k), Int(v)});
  items.push_back(
      {Str("model"), Dict({{Str("w"), Tensor("0", static_cast<std::int64_t>(tensor_bytes / 4))}})});
  return TorchZip(prefix, Dict(std::move(items)), {FloatBytes(tensor_bytes, nan)});
}

std::string LegacyTorch(std::size_t n) {
  std::string out("\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e", 15);
  out += PickleBytes(Int(1001));
  out +=
      PickleBytes(Dict({{Str("protocol_version"), Int(1001)},
                        {Str("type_sizes"), Dict({{Str("int"), Int(4)}, {Str("long"), Int(4)}})}}));
  out += PickleBytes(Dict({{Str("step"), Int(3)},
                           {Str("w"), Tensor("94000", static_cast<std::int64_t>(n))},
                           {Str("b"), Tensor("94001", 2)}}));
  out += PickleBytes(List({Str("94000"), Str("94001")}));
  Le(out, n, 8);
  out += std::string(n * 4, '\x11');
  Le(out, 2, 8);
  out += std::string(8, '\x22');
  return out;
}

std::string Safetensors(const std::vector<TensorSpec>& tensors, bool data) {
  static const std::map<std::string, std::uint64_t> kSize = {
      {"F32", 4}, {"BF16", 2}, {"I64", 8}, {"U8", 1}};
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  std::uint64_t at = 0;
  for (const TensorSpec& t : tensors) {
    std::uint64_t bytes = kSize.count(t.dtype) ? kSize.at(t.dtype) : 1;
    std::string shape;
    for (std::uint64_t d : t.shape) {
      if (!shape.empty()) shape += ',';
      shape += std::to_string(d);
      bytes *= d;
    }
    header += ",\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(at + bytes) + "]}";
    at += bytes;
  }
  header += "}";
  header += std::string((8 - header.size() % 8) % 8, ' ');
  std::string out;
  Le(out, header.size(), 8);
  return out + header + (data ? std::string(at, '\x5a') : std::string());
}

std::string SafetensorsValues(const std::vector<TensorSpec>& tensors, bool nan) {
  std::uint64_t bytes = 0;
  for (const TensorSpec& t : tensors) {
    std::uint64_t n = 4;
    for (std::uint64_t d : t.shape) n *= d;
    bytes += n;
  }
  return Safetensors(tensors, false) + FloatBytes(bytes, nan);
}

namespace {

// One ustar header block; `type` '0' a file, '5' a directory.
std::string TarHeader(const std::string& name, std::uint64_t size, char type) {
  std::string h(512, '\0');
  const auto octal = [&](std::size_t at, std::size_t width, std::uint64_t v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*llo", static_cast<int>(width - 1), static_cast<unsigned long long>(v));
    h.replace(at, width - 1, buf, width - 1);
  };
  h.replace(0, std::min<std::size_t>(name.size(), 100), name.substr(0, 100));
  octal(100, 8, type == '5' ? 0755 : 0644);
  octal(108, 8, 0);
  octal(116, 8, 0);
  octal(124, 12, size);
  octal(136, 12, 1733130000);  // mtime
  h[156] = type;
  h.replace(257, 6, std::string("ustar\0", 6));
  h.replace(263, 2, "00");
  h.replace(148, 8, "        ");
  std::uint64_t sum = 0;
  for (unsigned char c : h) sum += c;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%06llo", static_cast<unsigned long long>(sum));
  h.replace(148, 7, std::string(buf, 6) + '\0');
  return h;
}

}  // namespace

std::string Tar(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out = TarHeader("./", 0, '5');
  for (const auto& [name, data] : files) {
    out += TarHeader("./" + name, data.size(), '0');
    out += data;
    out += std::string((512 - data.size() % 512) % 512, '\0');
  }
  out += std::string(1024, '\0');
  out += std::string((10240 - out.size() % 10240) % 10240, '\0');
  return out;
}

std::string DcpMetadata(const std::vector<DcpItem>& items) {
  std::vector<std::pair<Py, Py>> storage;
  for (std::size_t k = 0; k < items.size(); ++k) {
    storage.push_back(
        {Object("torch.distributed.checkpoint.metadata.MetadataIndex",
                Dict({{Str("fqn"), Str(std::to_string(k))},
                      {Str("offset"), None()},
                      {Str("index"), None()}})),
         Object("torch.distributed.checkpoint.filesystem._StorageInfo",
                Dict({{Str("relative_path"), Str(items[k].file)},
                      {Str("offset"), Int(static_cast<std::int64_t>(items[k].offset))},
                      {Str("length"), Int(static_cast<std::int64_t>(items[k].length))}}))});
  }
  return PickleBytes(Object("torch.distributed.checkpoint.metadata.Metadata",
                            Dict({{Str("state_dict_metadata"), Dict({})},
                                  {Str("planner_data"), None()},
                                  {Str("storage_data"), Dict(std::move(storage))},
                                  {Str("storage_meta"), None()}})),
                     4);
}

}  // namespace denpex::sim::ckpt
