// safetensors files (checkpoints.md §2.3): u64 header length, a JSON header, then the
// tensor bytes. The exact completeness test is 8 + header + last data offset == file size.
#pragma once

#include "checkpoint/byte_file.h"
#include "checkpoint/reader_finding.h"

namespace denpex::engine::ckpt {

// The reference reader's validation, in its order: header length, JSON, contiguous offsets,
// sizes against shape x dtype, then the file size. Reads the header only.
Finding CheckSafetensorsFile(const ByteFile& f);

}  // namespace denpex::engine::ckpt
