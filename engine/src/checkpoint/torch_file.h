// torch.save files: the zip format (default since PyTorch 1.6) and the legacy pickle format
// (still written by DeepSpeed engines built without a config). checkpoints.md §2.1, §2.2.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/byte_file.h"
#include "checkpoint/deep.h"
#include "checkpoint/pickle.h"
#include "checkpoint/reader_finding.h"
#include "checkpoint/zip.h"

namespace denpex::engine::ckpt {

// The whole-file check: magic, then the zip end records and central directory (or the legacy
// pickles and storage blocks); with `deep`, the CRC-32 of every record and NaN/Inf in every
// floating-point storage (zip format only).
Finding CheckTorchFile(const ByteFile& f, DeepReader* deep = nullptr);

// What torch.save puts inside a valid zip: one top-level folder, data.pkl, and records
// aligned as `.storage_alignment` says (64 by default). Also used for DCP slices.
Finding CheckTorchArchive(const ByteFile& f, const ZipArchive& archive);

// The pickled object (zip: <folder>/data.pkl; legacy: the fourth pickle), for shallow reads
// of fields such as `dp_world_size` or `iteration`. nullopt when the file is not a readable
// torch.save file or the pickle is too large to read.
std::optional<Pickle> ReadTorchObject(const ByteFile& f);
// The same for a file by path; nullopt also when it cannot be opened.
std::optional<Pickle> ReadTorchObject(const std::filesystem::path& path);

// The step a torch.save file records about itself at its top level (global_step,
// iteration, global_steps or step), if any.
std::optional<std::int64_t> RecordedStep(const std::filesystem::path& path);

// A tensor a torch.save pickle rebuilds: its name (the dict keys and list indices leading to
// it from the root, joined by '.': "state.3.exp_avg"), its storage's persistent id and, when
// it is built by _rebuild_tensor_v2, its shape.
struct PickledTensor {
  std::string name;
  std::string storage_key;
  std::string storage_class;  // "torch.FloatStorage"
  std::uint64_t storage_numel = 0;
  std::optional<std::vector<std::int64_t>> shape;
};
// Every storage reference in the pickle, in the order a walk from the root meets them (each
// container visited once, so shared or cyclic values cost nothing twice).
std::vector<PickledTensor> PickledTensors(const Pickle& p);

// Element size of a storage class ("torch.FloatStorage" -> 4); 0 when unknown.
std::uint64_t StorageElementSize(std::string_view storage_class);

// The archive's folder ("archive/") and its data.pkl run through the pickle machine; nullopt
// when data.pkl is missing, compressed, too large or unreadable.
std::optional<Pickle> ReadArchivePickle(const ByteFile& f, const ZipArchive& archive,
                                        std::string* prefix = nullptr);

}  // namespace denpex::engine::ckpt
