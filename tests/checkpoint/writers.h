// Writers of real checkpoint bytes for the verifier's tests: a pickle emitter, torch.save
// zip files (stored records, "FB" alignment padding, data descriptors, ZIP64 end records),
// legacy torch.save files, safetensors files, DCP .metadata, and whole directory trees in
// the layouts of DeepSpeed, Megatron, HF Trainer, Orbax and NeMo. They share no code with
// the verifier: the byte layouts follow checkpoints.md §2 directly.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace denpex::ckpt_test {

namespace fs = std::filesystem;

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
// A typical state dict: {int fields..., "model": {"w": a float tensor in storage 0}}.
std::string TorchState(const std::string& prefix,
                       const std::vector<std::pair<std::string, std::int64_t>>& ints,
                       std::size_t tensor_bytes = 256);
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

// DCP `.metadata` (protocol 4): one _StorageInfo per (file, offset, length).
struct DcpItem {
  std::string file;
  std::uint64_t offset = 0, length = 0;
};
std::string DcpMetadata(const std::vector<DcpItem>& items);

// Writes `bytes` to `path`, creating parent directories.
void Put(const fs::path& path, const std::string& bytes);
std::string Slurp(const fs::path& path);

// A fresh directory under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Layout trees. Each writes one complete, valid checkpoint; tests then break it.
// DCP: __r_0.distcp per rank holding `items_per_rank` torch.save archives back to back,
// ranks in `empty_ranks` write a zero-byte file (deduplication); then .metadata.
void WriteDcp(const fs::path& dir, int ranks, int items_per_rank = 2,
              std::vector<int> empty_ranks = {});
// DeepSpeed tag dir: mp_rank_MM_model_states.pt (records dp_world_size, mp_world_size,
// global_steps) + zero_pp_rank_D_mp_rank_MM_optim_states.pt for D < dp, M < mp.
void WriteDeepSpeed(const fs::path& tag_dir, int dp, int mp, std::int64_t step,
                    bool record_dp = true);
// Megatron legacy iter dir: mp_rank_TT[_PPP]/model_optim_rng.pt with args and iteration.
void WriteMegatron(const fs::path& iter_dir, int tp, int pp, std::int64_t iteration,
                   bool record_args = true);
// Megatron torch_dist iter dir: DCP + metadata.json.
void WriteMegatronDist(const fs::path& iter_dir, int ranks);
// HF Trainer checkpoint-N: model.safetensors, optimizer.pt, scheduler.pt, rng states,
// training_args.bin, trainer_state.json (global_step N).
void WriteHf(const fs::path& dir, std::int64_t step, int world = 2);
// Orbax step dir: _CHECKPOINT_METADATA, commit_success.txt, default/_METADATA + ocdbt dirs.
void WriteOrbax(const fs::path& dir, int processes = 2);

}  // namespace denpex::ckpt_test
