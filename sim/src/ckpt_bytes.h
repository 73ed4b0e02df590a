// Real checkpoint bytes for the simulator's checkpoint writer (checkpoints.md §2): a pickle
// emitter, torch.save zip archives (stored records, "FB" alignment padding, data descriptors,
// ZIP64 end records) and DCP `.metadata`. Small on purpose: a few hundred bytes per file, but
// every structure the verifier reads is the real one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace denpex::sim::ckpt {

// A Python value to pickle.
struct Py {
  enum Kind { kNone, kInt, kStr, kGlobal, kTuple, kDict, kObject, kReduce, kPid } kind = kNone;
  std::int64_t i = 0;
  std::string s;          // kStr; kGlobal "module.name"
  std::vector<Py> items;  // tuple items; dict key, value, ...; object: {class, state}
};
Py None();
Py Int(std::int64_t v);
Py Str(std::string s);
Py Dict(std::vector<std::pair<Py, Py>> items);
Py Object(std::string cls, Py state);  // NEWOBJ + BUILD, as dataclasses and Namespace pickle

// Protocol 2 (torch.save) or 4 (pickle.dump); repeated strings are memoized.
std::string PickleBytes(const Py& v, int protocol = 2);

// A torch.save zip of `obj` (data.pkl) and one float storage under `prefix/`, in the record
// order PyTorch 2.4 writes.
std::string TorchZip(const std::string& prefix, const Py& obj, const std::string& storage);

// A state dict {ints..., "model": {"w": a float tensor of tensor_bytes / 4 elements}}.
std::string TorchState(const std::string& prefix,
                       const std::vector<std::pair<std::string, std::int64_t>>& ints,
                       std::size_t tensor_bytes = 64);

struct DcpItem {
  std::string file;
  std::uint64_t offset = 0, length = 0;
};
// DCP `.metadata` (pickle protocol 4): Metadata with one _StorageInfo per item.
std::string DcpMetadata(const std::vector<DcpItem>& items);

}  // namespace denpex::sim::ckpt
