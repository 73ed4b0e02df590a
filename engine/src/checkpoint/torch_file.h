// torch.save files: the zip format (default since PyTorch 1.6) and the legacy pickle format
// (still written by DeepSpeed engines built without a config). checkpoints.md §2.1, §2.2.
#pragma once

#include <filesystem>
#include <optional>

#include "checkpoint/byte_file.h"
#include "checkpoint/finding.h"
#include "checkpoint/pickle.h"
#include "checkpoint/zip.h"

namespace denpex::engine::ckpt {

// The whole-file check: magic, then the zip end records and central directory (or the legacy
// pickles and storage blocks); with `deep_crc`, the CRC-32 of every record.
Finding CheckTorchFile(const ByteFile& f, bool deep_crc);

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

}  // namespace denpex::engine::ckpt
