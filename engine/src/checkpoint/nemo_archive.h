// NeMo's `.nemo` archive (SaveRestoreConnector.save_to): an uncompressed tar (NeMo 1.7 and
// later; gzip before) of `model_config.yaml` and `model_weights.ckpt`, one per model-parallel
// rank under `mp_rank_XX/`, or a `model_weights/` distributed checkpoint.
#pragma once

#include "checkpoint/byte_file.h"
#include "checkpoint/reader_finding.h"

namespace denpex::engine::ckpt {

// Every member header (checksum, size inside the file) up to the end-of-archive blocks, then
// each `model_weights.ckpt` member as a torch.save archive in place. Reads only headers and
// the weights' zip end records and central directories.
Finding CheckNemoArchive(const ByteFile& f);

}  // namespace denpex::engine::ckpt
