// Large JSON documents of checkpoints, streamed by the JSON pull reader
// (denpex/common/json_reader.h): a safetensors header and a trainer_state.json in time linear in
// their size, a damaged header named by its tensor.
#include <gtest/gtest.h>

#include <string>

#include "checkpoint/byte_file.h"
#include "checkpoint/json.h"
#include "checkpoint/safetensors.h"
#include "support/cpu_time.h"

namespace denpex::engine::ckpt {
namespace {

std::string SafetensorsOf(int tensors) {
  std::string header = "{\"__metadata__\":{\"format\":\"pt\"}";
  for (int k = 0; k < tensors; ++k) {
    header += ",\"model.layers." + std::to_string(k) +
              ".self_attn.q_proj.weight\":{\"dtype\":\"BF16\",\"shape\":[2,1],\"data_offsets\":[" +
              std::to_string(4 * k) + "," + std::to_string(4 * k + 4) + "]}";
  }
  header += "}";
  std::string len(8, '\0');
  for (int k = 0; k < 8; ++k) len[k] = static_cast<char>((header.size() >> (8 * k)) & 0xFF);
  return len + header + std::string(4 * static_cast<std::size_t>(tensors), '\0');
}

// A 14 MB header of 150,000 tensors. (Parsed into a JSON tree, a 40 MB header of 400,000 took
// 21.6 s and 547 MB; streamed, 0.3 s of CPU and 67 MB.)
TEST(SafetensorsStream, ALargeSafetensorsHeaderIsReadInLinearTime) {
  const std::string file = SafetensorsOf(150'000);
  const double t0 = testing::CpuSeconds();
  const Finding f = CheckSafetensorsFile(ByteFile::FromBytes(file));
  const double secs = testing::CpuSeconds() - t0;
  EXPECT_EQ(f.verdict, CheckpointVerdict::kValid) << f.detail;
  EXPECT_NE(f.detail.find("150000 tensors"), std::string::npos) << f.detail;
  EXPECT_LT(secs, testing::CpuBound(2.0));
}

TEST(SafetensorsStream, AGapInTheSafetensorsDataNamesItsTensor) {
  std::string file = SafetensorsOf(3);
  const std::string from = "\"data_offsets\":[4,8]", to = "\"data_offsets\":[5,9]";
  file.replace(file.find(from), from.size(), to);
  const Finding f = CheckSafetensorsFile(ByteFile::FromBytes(file));
  EXPECT_EQ(f.verdict, CheckpointVerdict::kCorrupt);
  EXPECT_NE(f.detail.find("tensor 'model.layers.1.self_attn.q_proj.weight' starts at 5"),
            std::string::npos)
      << f.detail;
}

// trainer_state.json keeps every logged step: a long run's is tens of MB. (As a protobuf Struct
// tree, 27 MB took 7.7 s of CPU and 328 MB.)
TEST(SafetensorsStream, ALongTrainerStateIsReadForItsStepInLinearTime) {
  std::string state = "{\"best_metric\": null, \"log_history\": [";
  for (int k = 0; k < 200'000; ++k) {
    state += std::string(k ? "," : "") + "{\"loss\": 1.2345, \"learning_rate\": 1e-05, \"step\": " +
             std::to_string(k) + "}";
  }
  state += "], \"global_step\": 200000, \"is_world_process_zero\": true}";
  std::int64_t step = -1;
  const double t0 = testing::CpuSeconds();
  const Status st = ReadJsonObject(state, [&](const std::string& key, JsonReader& r) {
    if (key == "global_step") {
      step = static_cast<std::int64_t>(r.Count().value_or(0));
    } else {
      r.Skip();
    }
  });
  const double secs = testing::CpuSeconds() - t0;
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(step, 200000);
  EXPECT_LT(secs, testing::CpuBound(1.0)) << state.size() << " bytes";
  EXPECT_FALSE(CheckJsonObject(state.substr(0, state.size() - 1)).ok());  // cut
  EXPECT_FALSE(CheckJsonObject(state + "}").ok());                         // trailing text
}

}  // namespace
}  // namespace denpex::engine::ckpt
