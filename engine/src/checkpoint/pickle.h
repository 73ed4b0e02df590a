// A minimal pickle machine: enough of protocols 2-5 to read what torch.save, DeepSpeed,
// Megatron and DCP pickle (dicts, tuples, strings, ints, class references, persistent ids)
// without Python and without constructing any object. Values live in arenas and refer to
// each other by index, so hostile input can neither recurse nor leak; every container is
// as large as the opcodes that built it, so memory stays linear in the input, and the depth of
// MARKs and the count of values are capped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine::ckpt {

struct PyValue {
  enum class Kind : std::uint8_t {
    kNone,
    kBool,
    kInt,
    kStr,
    kGlobal,
    kTuple,
    kList,
    kDict,
    kObject,
    kOther
  };
  Kind kind = Kind::kNone;
  std::int64_t i = 0;     // kInt, kBool
  std::uint32_t ref = 0;  // kStr, kGlobal: Pickle::strings; containers: Pickle::containers
};

struct PyContainer {
  std::vector<PyValue> items;  // tuple and list items; dict: key, value, key, value, ...
  PyValue type;                // kObject: the class or callable (kGlobal when known)
  PyValue state;               // kObject: what BUILD set (usually a dict)
};

enum class PickleError { kNone, kTruncated, kMalformed, kUnsupported };

struct Pickle {
  PickleError error = PickleError::kNone;
  std::string error_detail;  // "opcode 0x49 at byte 17 is not supported", ...
  std::size_t end = 0;       // one past STOP, in the input's coordinates
  PyValue root;
  std::vector<std::string> strings;
  std::vector<PyContainer> containers;
  std::vector<PyValue> persistent_ids;  // BINPERSID arguments, in order
  std::vector<std::uint32_t> dicts;     // every dict built, in order (container indices)

  bool ok() const { return error == PickleError::kNone; }
  // The string of a kStr or kGlobal ("module.name"); empty otherwise.
  std::string_view Str(const PyValue& v) const;
  // Items of a tuple or list; empty otherwise.
  std::span<const PyValue> Items(const PyValue& v) const;
  // dict[key] for a dict, or for an object whose BUILD state is a dict (dataclasses,
  // argparse.Namespace); nullptr when absent.
  const PyValue* Get(const PyValue& dict, std::string_view key) const;
  std::optional<std::int64_t> GetInt(const PyValue& dict, std::string_view key) const;
};

// Limits that keep a hostile pickle's cost bounded: past them it stops with kUnsupported. A
// real checkpoint's pickle nests a few levels and spends about ten bytes per value, so its
// machine holds about its own size; a hostile one (a byte per empty list, a memoized string
// joined again and again by STACK_GLOBAL) may hold twice its size and kPickleMemorySlack.
inline constexpr std::size_t kMaxPickleDepth = 10'000;  // open MARKs
inline constexpr std::size_t kPickleMemorySlack = std::size_t{16} << 20;

// Runs one pickle starting at `start`, up to and including its STOP opcode.
Pickle RunPickle(std::string_view bytes, std::size_t start = 0);

}  // namespace denpex::engine::ckpt
