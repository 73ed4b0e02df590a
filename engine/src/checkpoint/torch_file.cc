#include "checkpoint/torch_file.h"

#include <algorithm>
#include <map>
#include <span>
#include <string_view>
#include <utility>

namespace denpex::engine::ckpt {
namespace {

constexpr std::uint64_t kMaxPickle = 256ull << 20;
// pickle(0x1950a86a20f9469cfc6c), protocol 2: the first bytes of every legacy torch.save file.
constexpr std::string_view kLegacyMagic =
    "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19\x2e";
constexpr std::string_view kZipMagic = "PK\x03\x04";

std::string Hex(std::string_view b) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : b) {
    if (!out.empty()) out += ' ';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

}  // namespace

std::uint64_t StorageElementSize(std::string_view cls) {
  static const std::map<std::string_view, std::uint64_t, std::less<>> kSizes = {
      {"DoubleStorage", 8},   {"FloatStorage", 4},        {"HalfStorage", 2},
      {"BFloat16Storage", 2}, {"LongStorage", 8},         {"IntStorage", 4},
      {"ShortStorage", 2},    {"CharStorage", 1},         {"ByteStorage", 1},
      {"BoolStorage", 1},     {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16},
      {"QInt8Storage", 1},    {"QUInt8Storage", 1},       {"QInt32Storage", 4},
      {"QUInt4x2Storage", 1}, {"QUInt2x4Storage", 1},     {"UntypedStorage", 1},
      {"ComplexHalfStorage", 4}, {"UInt16Storage", 2},    {"UInt32Storage", 4},
      {"UInt64Storage", 8},   {"Float8_e5m2Storage", 1},  {"Float8_e4m3fnStorage", 1},
      {"Float8_e5m2fnuzStorage", 1}, {"Float8_e4m3fnuzStorage", 1}};
  const auto dot = cls.rfind('.');
  auto it = kSizes.find(dot == std::string_view::npos ? cls : cls.substr(dot + 1));
  return it == kSizes.end() ? 0 : it->second;
}

namespace {

// The five legacy pickles (magic, protocol, sys_info, object, storage keys), read from a
// head of the file that grows until they fit.
struct LegacyPickles {
  Finding finding;
  std::vector<Pickle> pickles;
};

LegacyPickles ReadLegacyPickles(const ByteFile& f) {
  LegacyPickles out;
  for (std::uint64_t head = std::min<std::uint64_t>(f.size(), 64 << 10);;
       head = std::min(f.size(), head * 4)) {
    auto bytes = f.Read(0, head);
    if (!bytes.ok()) return {Unreadable("legacy pickles", bytes.status()), {}};
    out.pickles.clear();
    std::size_t pos = 0;
    for (int k = 0; k < 5; ++k) {
      Pickle p = RunPickle(*bytes, pos);
      if (p.error == PickleError::kTruncated && head < f.size()) break;  // read more
      if (p.error == PickleError::kTruncated) {
        out.finding =
            Incomplete("legacy format: the file ends inside pickle " + std::to_string(k + 1) +
                       " of 5 (" + Thousands(f.size()) + " bytes): truncated");
        return out;
      }
      if (p.error == PickleError::kMalformed) {
        out.finding = Corrupt("legacy format: pickle " + std::to_string(k + 1) +
                              " is malformed: " + p.error_detail);
        return out;
      }
      if (p.error == PickleError::kUnsupported) {
        out.finding =
            Inconclusive("legacy format: pickle " + std::to_string(k + 1) + ": " + p.error_detail);
        return out;
      }
      pos = p.end;
      out.pickles.push_back(std::move(p));
    }
    if (out.pickles.size() == 5) return out;
    if (head >= kMaxPickle) {
      out.finding =
          Inconclusive("legacy format: the pickles exceed " + Thousands(kMaxPickle) + " bytes");
      return out;
    }
  }
}

// Storage key -> (element size, numel) from the object pickle's persistent ids
// ('storage', <class>, key, location, numel[, view]).
struct StorageInfo {
  std::uint64_t element_size = 0;
  std::uint64_t numel = 0;
};

Finding CheckLegacy(const ByteFile& f) {
  LegacyPickles lp = ReadLegacyPickles(f);
  if (!lp.finding.ok()) return lp.finding;
  const Pickle& obj = lp.pickles[3];
  const Pickle& keys = lp.pickles[4];
  const PyValue& protocol = lp.pickles[1].root;
  if (protocol.kind != PyValue::Kind::kInt || protocol.i != 1001) {
    return Corrupt(
        "legacy format: the protocol version is not 1001 (torch.load: 'Invalid protocol version')");
  }
  if (keys.root.kind != PyValue::Kind::kList) {
    return Corrupt("legacy format: the fifth pickle is not the list of storage keys");
  }
  std::map<std::string, StorageInfo, std::less<>> storages;
  for (const PyValue& pid : obj.persistent_ids) {
    auto t = obj.Items(pid);
    if (t.size() < 5 || obj.Str(t[0]) != "storage" || t[4].kind != PyValue::Kind::kInt ||
        t[4].i < 0) {
      return Inconclusive(
          "legacy format: a persistent id is not ('storage', class, key, location, numel)");
    }
    const std::uint64_t es = StorageElementSize(obj.Str(t[1]));
    if (es == 0)
      return Inconclusive("legacy format: unknown storage class '" + std::string(obj.Str(t[1])) +
                          "'");
    storages[std::string(obj.Str(t[2]))] = {es, static_cast<std::uint64_t>(t[4].i)};
  }
  std::uint64_t pos = keys.end;
  const auto key_list = keys.Items(keys.root);
  for (const PyValue& k : key_list) {
    auto it = storages.find(keys.Str(k));
    if (it == storages.end())
      return Inconclusive("legacy format: storage key '" + std::string(keys.Str(k)) +
                          "' has no type");
    if (f.size() - pos < 8) {
      return Incomplete("legacy format: the file ends before storage '" + it->first + "' (" +
                        Thousands(f.size()) + " bytes): truncated");
    }
    auto head = f.Read(pos, 8);
    if (!head.ok()) return Unreadable("legacy storage header", head.status());
    const std::uint64_t numel = Le64(*head, 0);
    if (numel != it->second.numel) {
      return Corrupt("legacy format: storage '" + it->first + "' at offset " + Thousands(pos) +
                     " says " + Thousands(numel) + " elements, the pickle says " +
                     Thousands(it->second.numel));
    }
    const std::uint64_t need = numel * it->second.element_size;
    if (numel != 0 && need / numel != it->second.element_size)
      return Corrupt("legacy format: storage size overflows");
    if (need > f.size() - pos - 8) {
      return Incomplete(
          "legacy format: storage '" + it->first + "' needs " +
          Thousands(need - (f.size() - pos - 8)) +
          " more bytes than the file holds (torch.load: 'unexpected EOF'): truncated");
    }
    pos += 8 + need;
  }
  return Valid("legacy format, " + std::to_string(key_list.size()) + " storages, sizes add up");
}

const ZipEntry* FindEntry(const ZipArchive& a, std::string_view name) {
  for (const ZipEntry& e : a.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// `.storage_alignment` (a decimal number) when present, else torch's default 64.
std::uint64_t StorageAlignment(const ByteFile& f, const ZipEntry* record) {
  if (record == nullptr || record->size == 0 || record->size > 20 || record->method != 0) return 64;
  auto text = f.Read(record->data_offset, record->size);
  if (!text.ok()) return 64;
  std::uint64_t v = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return 64;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v == 0 || v > (1u << 20) ? 64 : v;
}

// Every storage data.pkl references ('storage', <class>, key, location, numel) must have its
// record <prefix>data/<key> holding numel x element size bytes: torch.load reads exactly
// that many ('PytorchStreamReader failed reading file data/3'), so a missing or resized
// record is damage the end records cannot show.
Finding CheckStorages(const ByteFile& f, const ZipArchive& archive, const std::string& prefix) {
  const ZipEntry* pkl = FindEntry(archive, prefix + "data.pkl");
  if (pkl->method != 0)
    return Inconclusive(prefix + "data.pkl is compressed: tensor storages not checked");
  if (pkl->size > kMaxPickle) {
    return Inconclusive(prefix + "data.pkl is larger than " + Thousands(kMaxPickle) +
                        " bytes: tensor storages not checked");
  }
  auto bytes = f.Read(pkl->data_offset, pkl->size);
  if (!bytes.ok()) return Unreadable(prefix + "data.pkl", bytes.status());
  const Pickle p = RunPickle(*bytes);
  if (p.error == PickleError::kUnsupported)
    return Inconclusive(prefix + "data.pkl: " + p.error_detail + "; tensor storages not checked");
  if (!p.ok()) {
    return Corrupt(prefix + "data.pkl does not parse (" + p.error_detail +
                   "): torch.load fails on it");
  }
  std::map<std::string, std::uint64_t, std::less<>> checked;  // key -> bytes
  std::uint64_t total = 0;
  for (const PyValue& pid : p.persistent_ids) {
    auto t = p.Items(pid);
    if (t.size() < 5 || p.Str(t[0]) != "storage" || t[4].kind != PyValue::Kind::kInt ||
        t[4].i < 0) {
      return Inconclusive(
          "data.pkl: a persistent id is not ('storage', class, key, location, numel); tensor "
          "storages not checked");
    }
    const std::string key(p.Str(t[2]));
    if (checked.count(key) != 0) continue;  // views share one storage
    const std::uint64_t es = StorageElementSize(p.Str(t[1]));
    if (es == 0) {
      return Inconclusive("data.pkl: unknown storage class '" + std::string(p.Str(t[1])) +
                          "'; tensor storages not checked");
    }
    const auto numel = static_cast<std::uint64_t>(t[4].i);
    if (numel != 0 && es > UINT64_MAX / numel) return Corrupt("storage " + key + " overflows");
    const std::string name = prefix + "data/" + key;
    const ZipEntry* rec = FindEntry(archive, name);
    if (rec == nullptr) {
      if (p.Str(t[3]) == "meta") continue;  // meta tensors carry no bytes
      return Corrupt("data.pkl references storage " + key + " (" + Thousands(numel) + " x " +
                     std::string(p.Str(t[1])) + ") but the archive has no " + name +
                     " record (torch.load: 'PytorchStreamReader failed locating file')");
    }
    if (rec->size != numel * es) {
      return Corrupt(name + " holds " + Thousands(rec->size) + " bytes; data.pkl says " +
                     Thousands(numel) + " x " + std::string(p.Str(t[1])) + " = " +
                     Thousands(numel * es) + " bytes");
    }
    checked[key] = rec->size;
    total += rec->size;
  }
  return Valid(std::to_string(checked.size()) + (checked.size() == 1 ? " storage" : " storages") +
               " of " + Thousands(total) + " bytes as data.pkl sizes them");
}

}  // namespace

Finding CheckTorchArchive(const ByteFile& f, const ZipArchive& archive) {
  if (archive.entries.empty()) return Corrupt("the archive has no records: not a torch.save file");
  const std::string& first = archive.entries.front().name;
  const auto slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    return Corrupt("file in archive is not in a subdirectory: " + first +
                   " (not written by torch.save)");
  }
  const std::string prefix = first.substr(0, slash + 1);
  for (const ZipEntry& e : archive.entries) {
    if (e.name.compare(0, prefix.size(), prefix) != 0) {
      return Corrupt("records under two folders ('" + prefix + "', '" + e.name +
                     "'): not written by torch.save");
    }
  }
  if (FindEntry(archive, prefix + "data.pkl") == nullptr) {
    return Corrupt("no " + prefix + "data.pkl record: not a torch.save archive");
  }
  const std::uint64_t align =
      StorageAlignment(f, FindEntry(archive, prefix + ".storage_alignment"));
  for (const ZipEntry& e : archive.entries) {
    if (e.padded && (e.data_offset - archive.start) % align != 0) {
      return Corrupt("record '" + e.name + "' starts at offset " +
                     Thousands(e.data_offset - archive.start) +
                     ", not a multiple of the storage alignment " + std::to_string(align));
    }
  }
  const Finding storages = CheckStorages(f, archive, prefix);
  if (!storages.ok()) return storages;
  return Valid(std::string(archive.zip64 ? "zip64" : "zip") + ", " +
               std::to_string(archive.entries.size()) + " records under " + prefix + ", " +
               storages.detail);
}

Finding CheckTorchFile(const ByteFile& f, DeepReader* deep) {
  if (f.size() == 0) {
    return Incomplete(
        "empty (0 bytes): the save was killed right after it opened the file "
        "(torch.load: 'EOFError: Ran out of input')");
  }
  auto head = f.Read(0, std::min<std::uint64_t>(f.size(), kLegacyMagic.size()));
  if (!head.ok()) return Unreadable("file header", head.status());
  const std::string_view h = *head;
  if (h.size() < kZipMagic.size() && kZipMagic.substr(0, h.size()) == h) {
    return Incomplete("only " + std::to_string(h.size()) + " bytes: truncated");
  }
  if (h.substr(0, kZipMagic.size()) == kZipMagic) {
    ZipRead z = ReadZip(f, f.size(), 0);
    if (!z.finding.ok()) return z.finding;
    Finding torch = CheckTorchArchive(f, z.archive);
    if (!torch.ok() || deep == nullptr) return torch;
    Finding read = deep->TorchArchive(f, z.archive);
    return read.ok() ? Valid(torch.detail + "; " + read.detail) : read;
  }
  if (kLegacyMagic.substr(0, h.size()) == h) {
    if (h.size() < kLegacyMagic.size())
      return Incomplete("legacy format: truncated inside the magic number");
    return CheckLegacy(f);
  }
  if (h.substr(0, 8) == "PYTORCH1")
    return Inconclusive("the PYTORCH1 preview format is not supported");
  return Corrupt("not a torch.save file: it starts with " + Hex(h.substr(0, 4)) +
                 " (torch.load: 'Invalid magic number; corrupt file?')");
}

std::optional<Pickle> ReadArchivePickle(const ByteFile& f, const ZipArchive& archive,
                                        std::string* prefix) {
  if (archive.entries.empty()) return std::nullopt;
  const std::string& first = archive.entries.front().name;
  const std::string folder = first.substr(0, first.find('/') + 1);
  if (prefix != nullptr) *prefix = folder;
  const ZipEntry* pkl = FindEntry(archive, folder + "data.pkl");
  if (pkl == nullptr || pkl->method != 0 || pkl->size > kMaxPickle) return std::nullopt;
  auto bytes = f.Read(pkl->data_offset, pkl->size);
  if (!bytes.ok()) return std::nullopt;
  Pickle p = RunPickle(*bytes);
  if (!p.ok()) return std::nullopt;
  return p;
}

namespace {

// Tensor names are kept as a tree of parts (a dict key or a list index below a parent), so the
// walk costs one entry per container however deep or wide the pickle; a name is spelled out
// only for a tensor, and only its last kMaxNameParts parts (a hostile pickle nests far deeper
// than any state dict).
constexpr std::size_t kMaxNameParts = 64;
constexpr std::uint32_t kRootPart = 0;

struct NamePart {
  std::uint32_t parent = kRootPart;
  const std::string* key = nullptr;  // a string key, or else `index`
  std::int64_t index = 0;
};

std::string SpellName(const std::vector<NamePart>& parts, std::uint32_t at) {
  std::vector<std::string> pieces;
  for (; at != kRootPart && pieces.size() < kMaxNameParts; at = parts[at].parent) {
    const NamePart& n = parts[at];
    pieces.push_back(n.key != nullptr ? *n.key : std::to_string(n.index));
  }
  std::string out = at != kRootPart ? "..." : "";  // "...a.b": parts left out before a
  for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
    if (it != pieces.rbegin()) out += '.';
    out += *it;
  }
  return out;
}

// A tensor rebuilt from `args` (_rebuild_tensor_v2(storage, offset, size, stride, ...)).
std::optional<PickledTensor> RebuiltTensor(const Pickle& p, std::span<const PyValue> args) {
  if (args.size() < 3 || args[0].kind != PyValue::Kind::kObject) return std::nullopt;
  const PyContainer& pid_obj = p.containers[args[0].ref];
  if (p.Str(pid_obj.type) != "persistent_load" || pid_obj.items.empty()) return std::nullopt;
  auto pid = p.Items(pid_obj.items[0]);
  if (pid.size() < 5 || p.Str(pid[0]) != "storage" || pid[4].kind != PyValue::Kind::kInt)
    return std::nullopt;
  PickledTensor t{"", std::string(p.Str(pid[2])), std::string(p.Str(pid[1])),
                  static_cast<std::uint64_t>(std::max<std::int64_t>(pid[4].i, 0)), std::nullopt};
  if (args[2].kind == PyValue::Kind::kTuple) {
    std::vector<std::int64_t> shape;
    for (const PyValue& d : p.Items(args[2])) {
      if (d.kind != PyValue::Kind::kInt) return t;
      shape.push_back(d.i);
    }
    t.shape = std::move(shape);
  }
  return t;
}

// A storage referenced outside _rebuild_tensor_v2 (a bare storage, a custom rebuild).
std::optional<PickledTensor> BareStorage(const Pickle& p, const PyContainer& c) {
  if (c.items.empty()) return std::nullopt;
  auto pid = p.Items(c.items[0]);
  if (pid.size() < 5 || p.Str(pid[0]) != "storage" || pid[4].kind != PyValue::Kind::kInt)
    return std::nullopt;
  return PickledTensor{"", std::string(p.Str(pid[2])), std::string(p.Str(pid[1])),
                       static_cast<std::uint64_t>(std::max<std::int64_t>(pid[4].i, 0)),
                       std::nullopt};
}

}  // namespace

std::vector<PickledTensor> PickledTensors(const Pickle& p) {
  std::vector<PickledTensor> out;
  std::vector<bool> seen(p.containers.size(), false);
  std::vector<NamePart> parts(1);  // parts[kRootPart]: the root
  struct Visit {
    PyValue value;
    std::uint32_t name;  // index into parts
  };
  std::vector<Visit> todo{{p.root, kRootPart}};
  std::vector<Visit> next;
  auto first_visit = [&](const PyValue& x) {
    const bool container = x.kind == PyValue::Kind::kTuple || x.kind == PyValue::Kind::kList ||
                           x.kind == PyValue::Kind::kDict || x.kind == PyValue::Kind::kObject;
    if (!container || x.ref >= p.containers.size() || seen[x.ref]) return false;
    seen[x.ref] = true;
    return true;
  };
  auto below = [&](std::uint32_t parent, const std::string* key, std::int64_t index) {
    parts.push_back({parent, key, index});
    return static_cast<std::uint32_t>(parts.size() - 1);
  };
  while (!todo.empty()) {
    const Visit v = todo.back();
    todo.pop_back();
    if (!first_visit(v.value)) continue;
    const PyContainer& c = p.containers[v.value.ref];
    next.clear();  // pushed in reverse below, so the walk keeps the pickle's order
    if (v.value.kind == PyValue::Kind::kDict) {
      for (std::size_t k = 0; k + 1 < c.items.size(); k += 2) {
        const PyValue& key = c.items[k];
        const bool str = key.kind == PyValue::Kind::kStr && key.ref < p.strings.size();
        next.push_back({c.items[k + 1], below(v.name, str ? &p.strings[key.ref] : nullptr,
                                              key.kind == PyValue::Kind::kInt ? key.i : 0)});
      }
    } else if (v.value.kind != PyValue::Kind::kObject) {
      for (std::size_t k = 0; k < c.items.size(); ++k)
        next.push_back({c.items[k], below(v.name, nullptr, static_cast<std::int64_t>(k))});
    } else {
      const std::string_view type = p.Str(c.type);
      std::optional<PickledTensor> t;
      if (type == "persistent_load") {
        t = BareStorage(p, c);
      } else if (type == "torch._utils._rebuild_tensor_v2" && !c.items.empty()) {
        t = RebuiltTensor(p, p.Items(c.items[0]));
      }
      if (t) {
        t->name = SpellName(parts, v.name);
        out.push_back(std::move(*t));
        continue;
      }
      if (type == "persistent_load") continue;
      // Any other call (_rebuild_parameter, OrderedDict, a dataclass): its arguments under
      // the same name, its state's keys below it.
      for (const PyValue& args : c.items) {
        if (args.kind != PyValue::Kind::kTuple) {
          next.push_back({args, v.name});
        } else if (first_visit(args)) {
          for (const PyValue& arg : p.Items(args)) next.push_back({arg, v.name});
        }
      }
      next.push_back({c.state, v.name});
    }
    todo.insert(todo.end(), next.rbegin(), next.rend());
  }
  return out;
}

std::optional<Pickle> ReadTorchObject(const ByteFile& f) {
  auto head = f.Read(0, std::min<std::uint64_t>(f.size(), 4));
  if (!head.ok() || head->size() < 4) return std::nullopt;
  if (*head != kZipMagic) {
    LegacyPickles lp = ReadLegacyPickles(f);
    if (!lp.finding.ok() || lp.pickles.size() != 5) return std::nullopt;
    return std::move(lp.pickles[3]);
  }
  ZipRead z = ReadZip(f, f.size(), 0);
  if (!z.finding.ok()) return std::nullopt;
  return ReadArchivePickle(f, z.archive);
}

std::optional<Pickle> ReadTorchObject(const std::filesystem::path& path) {
  auto f = ByteFile::Open(path);
  if (!f.ok()) return std::nullopt;
  return ReadTorchObject(*f);
}

std::optional<std::int64_t> RecordedStep(const std::filesystem::path& path) {
  auto obj = ReadTorchObject(path);
  if (!obj) return std::nullopt;
  for (const char* key : {"global_step", "iteration", "global_steps", "step"}) {
    if (auto v = obj->GetInt(obj->root, key)) return v;
  }
  return std::nullopt;
}

}  // namespace denpex::engine::ckpt
