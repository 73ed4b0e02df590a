// libFuzzer target: every checkpoint reader over the same arbitrary bytes (torch.save zip and
// legacy files, the zip end records, safetensors headers, the pickle machine, NeMo's tar). None may crash,
// hang, read out of bounds or allocate more than the input justifies.
//
//   build-fuzz/fuzz/checkpoint_fuzzer -max_total_time=300 fuzz/checkpoint/seeds (fuzz/CMakeLists.txt)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/byte_file.h"
#include "checkpoint/deep.h"
#include "checkpoint/nemo_archive.h"
#include "checkpoint/pickle.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/torch_file.h"
#include "checkpoint/zip.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace denpex::engine::ckpt;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const ByteFile f = ByteFile::FromBytes(bytes);
  static DeepReader deep;  // one 4 MiB buffer for the whole run
  (void)CheckTorchFile(f, &deep);
  if (CheckSafetensorsFile(f).ok()) (void)deep.Safetensors(f);
  if (auto obj = ReadTorchObject(f)) (void)PickledTensors(*obj);
  (void)ReadZip(f, f.size(), std::nullopt);
  (void)RunPickle(bytes);
  (void)CheckNemoArchive(f);
  return 0;
}
