// Real checkpoint bytes, written from checkpoints.md §2 directly (they share no code with the
// verifier): a pickle emitter, torch.save zip files (stored records, "FB" alignment padding,
// data descriptors, ZIP64 end records), legacy torch.save files, safetensors files and DCP
// `.metadata`. The simulator's checkpoint writer and the verifier's tests both use them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace denpex::sim::ckpt {

// A Python value to pickle.
struct Py {
  enum Kind {
    kNone,
    kInt,
    kStr,
    kGlobal,
    kTuple,
    kList,
    kDict,
    kObject,
    kReduce,
    kPid
  } kind = kNone;
  std::int64_t i = 0;
  std::string s;          // kStr; kGlobal "module.name"
  std::vector<Py> items;  // tuple/list items; dict key, value, ...; object: {class, state}
};
Py None();
Py Int(std::int64_t v);
Py Str(std::string s);
Py Global(std::string module_dot_name);
Py Tuple(std::vector<Py> items);
Py List(std::vector<Py> items);
Py Dict(std::vector<std::pair<Py, Py>> items);
Py Object(std::string cls, Py state);  // NEWOBJ + BUILD, as dataclasses pickle
Py Reduce(Py callable, Py args);       // callable(*args)
Py Persistent(Py id);                  // BINPERSID

// Protocol 2 (torch.save) or 4 (pickle.dump); repeated strings are memoized and recalled.
std::string PickleBytes(const Py& v, int protocol = 2);

// A pickle written value by value, as torch's C++ pickler (torch::jit::Pickler, protocol 2,
// aggregates untagged) writes an IValue: strings memoized by value (BINUNICODE + BINPUT, then
// BINGET), dicts and lists never memoized (EMPTY_DICT MARK ... SETITEMS, EMPTY_LIST MARK ...
// APPENDS), ints in the smallest of BININT1/BININT2/BININT/LONG1, doubles as BINFLOAT. A value
// the caller shares between places (torch memoizes an IValue held more than once by identity)
// is emitted once, followed by Put(), and recalled with Get(). The flight recorder's dumps.
class PickleStream {
 public:
  PickleStream();  // PROTO 2
  void BeginDict() { out_ += "}("; }
  void EndDict() { out_ += 'u'; }
  void BeginList() { out_ += "]("; }
  void EndList() { out_ += 'e'; }
  void Str(std::string_view s);
  void Int(std::int64_t v);
  void Float(double v);
  void Bool(bool v) { out_ += v ? '\x88' : '\x89'; }
  void None() { out_ += 'N'; }
  void Tuple2() { out_ += '\x86'; }  // the two values before it
  std::uint32_t Put();               // memoizes the value before it
  void Get(std::uint32_t id);
  std::string Finish();  // STOP; the stream is spent

 private:
  std::string out_;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> memo_;
  std::uint32_t next_ = 0;
};

struct ZipOptions {
  bool zip64 = true;         // ZIP64 end record + locator, as torch always writes
  bool saturate = false;     // 0xFFFFFFFF in the central directory + ZIP64 extra fields
  bool crc = true;           // false: CRC 0, as set_crc32_options(False)
  std::uint64_t align = 64;  // "FB" padding so record data is aligned
};
// An uncompressed zip with data descriptors, records in the given order.
std::string Zip(const std::vector<std::pair<std::string, std::string>>& records,
                const ZipOptions& o = {});

// A torch.save zip of `obj` (data.pkl) with `storages` raw records under `prefix/`.
std::string TorchZip(const std::string& prefix, const Py& obj,
                     const std::vector<std::string>& storages = {}, const ZipOptions& o = {});
// A typical state dict: {int fields..., "model": {"w": a float tensor in storage 0}}; its
// values are finite, except element 3, which is NaN with `nan` (a save after a divergence).
std::string TorchState(const std::string& prefix,
                       const std::vector<std::pair<std::string, std::int64_t>>& ints,
                       std::size_t tensor_bytes = 256, bool nan = false);
// `bytes` of finite float32 values (the pattern TorchState stores); element 3 NaN with `nan`.
std::string FloatBytes(std::size_t bytes, bool nan = false);
// The tensor entry TorchState uses: _rebuild_tensor_v2 over persistent id ('storage', ...).
Py Tensor(const std::string& key, std::int64_t numel);
// The legacy format: magic, protocol, sys_info, the object, the keys, the storage blocks.
std::string LegacyTorch(std::size_t float_elements = 16);

struct TensorSpec {
  std::string name;
  std::string dtype = "F32";
  std::vector<std::uint64_t> shape;
};
// With `data` false, only the length and the header (the file is then sized by the caller).
std::string Safetensors(const std::vector<TensorSpec>& tensors, bool data = true);
// The same header, its data the finite float32 pattern of FloatBytes (element 3 NaN with
// `nan`): F32 tensors only, as a model's weights.
std::string SafetensorsValues(const std::vector<TensorSpec>& tensors, bool nan = false);

// An uncompressed tar as Python's tarfile writes it ("w:", as NeMo's save_to does): a ustar
// header per member (a "." directory first, then "./<name>" files), data padded to 512
// bytes, two zero blocks, the whole padded to a 10,240-byte record.
std::string Tar(const std::vector<std::pair<std::string, std::string>>& files);

// DCP `.metadata` (protocol 4): one _StorageInfo per (file, offset, length).
struct DcpItem {
  std::string file;
  std::uint64_t offset = 0, length = 0;
};
std::string DcpMetadata(const std::vector<DcpItem>& items);

}  // namespace denpex::sim::ckpt
