// Flight-recorder dump files (see flight_recorder.h). The structure follows torch's
// FlightRecorder::dump (pickle) and dump_json: top level version, pg_config, [nccl_version],
// [pg_status], entries; each entry's keys in the order torch inserts them (the JSON's sorted, as
// nlohmann's objects are). pg_config is keyed by the group's name (its uid, sorted as strings, as
// torch's std::map of (name, desc) is); pg_status by the rank's local pg id (creation order:
// default_pg 0, then its TP, PP and DP groups).
#include "flight_recorder.h"

#include <array>
#include <charconv>
#include <string>

#include "model/ckpt_bytes.h"

namespace denpex::sim {
namespace {

constexpr FlightRecorderFormat kFlightRecorderFormats[] = {
    {"2.2", false, false, false},  // collective_seq_id, p2p_seq_id, op_id; no pg_status
    {"2.4", true, true, false},    // pg_status, is_p2p
    {"2.5", true, true, false},
    {"2.7", true, true, true},  // nccl_version
};

// Which version each torch release's dump-on-timeout writes.
constexpr VersionRow<std::string_view> kFlightRecorderByRelease[] = {
    {{"", "2.4"}, "2.2"},
    {{"2.5", "2.5"}, "2.4"},
    {{"2.6", "2.6"}, "2.5"},
    {{"2.7", ""}, "2.7"},
};
static_assert(CoversEach(kFlightRecorderByRelease, kTorchReleases));

// A stack frame of an entry's traceback (innermost first), in torch's or Megatron's tree.
struct Frame {
  bool torch;  // relative to the profile's python_lib; else to kMegatron
  std::string_view file, name;
  int line;
};
constexpr std::string_view kMegatron = "/workspace/megatron-lm";
constexpr std::string_view kC10d = "torch/distributed/distributed_c10d.py";
constexpr std::string_view kLogger = "torch/distributed/c10d_logger.py";
constexpr std::string_view kBuffer = "megatron/core/distributed/param_and_grad_buffer.py";
constexpr std::string_view kP2p = "megatron/core/pipeline_parallel/p2p_communication.py";
constexpr Frame kWrapper = {true, kLogger, "wrapper", 83};
constexpr Frame kTrainStep = {false, "megatron/training/training.py", "train_step", 754};
constexpr Frame kPretrain = {false, "megatron/training/training.py", "pretrain", 386};

// Frame sets by what the entry is: 0 barrier, 1 TP all-reduce, 2 DP all-reduce, 3 DP
// reduce-scatter, 4 DP all-gather, 5 send, 6 recv, 7 coalesced.
constexpr std::array<std::array<Frame, 5>, 8> kFrames = {{
    {{{true, kC10d, "barrier", 4159},
      kWrapper,
      {false, "megatron/training/initialize.py", "_initialize_distributed", 298},
      {false, "megatron/training/initialize.py", "initialize_megatron", 81},
      kPretrain}},
    {{{true, kC10d, "all_reduce", 2501},
      kWrapper,
      {false, "megatron/core/tensor_parallel/mappings.py", "_reduce", 38},
      {false, "megatron/core/tensor_parallel/mappings.py", "forward", 218},
      kTrainStep}},
    {{{true, kC10d, "all_reduce", 2501},
      kWrapper,
      {false, kBuffer, "start_grad_sync", 412},
      {false, kBuffer, "finish_grad_sync", 446},
      kTrainStep}},
    {{{true, kC10d, "reduce_scatter_tensor", 3984},
      kWrapper,
      {false, kBuffer, "start_grad_sync", 405},
      {false, kBuffer, "finish_grad_sync", 446},
      kTrainStep}},
    {{{true, kC10d, "all_gather_into_tensor", 3348},
      kWrapper,
      {false, kBuffer, "start_param_sync", 289},
      {false, kBuffer, "finish_param_sync", 327},
      kTrainStep}},
    {{{true, kC10d, "isend", 2062},
      {false, kP2p, "_p2p_ops", 211},
      {false, kP2p, "_communicate", 338},
      {false, kP2p, "send_forward", 452},
      kTrainStep}},
    {{{true, kC10d, "irecv", 2107},
      {false, kP2p, "_p2p_ops", 219},
      {false, kP2p, "_communicate", 338},
      {false, kP2p, "recv_forward", 397},
      kTrainStep}},
    {{{true, kC10d, "batch_isend_irecv", 2263},
      {false, kP2p, "_batched_p2p_ops", 127},
      {false, kP2p, "_communicate", 338},
      {false, kP2p, "send_forward_recv_backward", 498},
      kTrainStep}},
}};

int FrameSet(const FrEntry& e) {
  switch (e.op) {
    case FrOp::kSend:
      return 5;
    case FrOp::kRecv:
      return 6;
    case FrOp::kCoalesced:
      return 7;
    case FrOp::kReduceScatterBase:
      return 3;
    case FrOp::kAllgatherBase:
      return 4;
    case FrOp::kAllreduce:
      break;
  }
  return e.group == PgKind::kDefault ? 0 : e.group == PgKind::kTensor ? 1 : 2;
}

std::string ProfilingName(const FrEntry& e, int me) {
  switch (e.op) {
    case FrOp::kAllreduce:
      return "nccl:all_reduce";
    case FrOp::kReduceScatterBase:
      return "nccl:_reduce_scatter_base";
    case FrOp::kAllgatherBase:
      return "nccl:_allgather_base";
    case FrOp::kSend:
      return "nccl:send " + std::to_string(me) + "->" + std::to_string(e.peer);
    case FrOp::kRecv:
      return "nccl:recv " + std::to_string(me) + "<-" + std::to_string(e.peer);
    case FrOp::kCoalesced:
      return "nccl:coalesced";
  }
  return "";
}

// The tensor's shape: activations are [sequence, micro-batch, hidden = 4096], flat buffers 1-D.
std::array<std::int64_t, 3> ShapeOf(std::int64_t numel, PgKind group, int* dims) {
  if ((group == PgKind::kTensor || group == PgKind::kPipeline) && numel >= 4096 &&
      numel % 4096 == 0) {
    *dims = 3;
    return {numel / 4096, 1, 4096};
  }
  *dims = 1;
  return {numel, 0, 0};
}

std::string_view DtypeOf(PgKind group) {
  return group == PgKind::kTensor || group == PgKind::kPipeline ? "BFloat16" : "Float";
}

std::string_view StateOf(const FrEntry& e) {
  return e.completed >= 0 ? "completed" : e.started >= 0 ? "started" : "scheduled";
}

bool IsP2p(const FrEntry& e) { return e.group == PgKind::kPipeline; }
std::int64_t CollectiveSeq(const FrEntry& e) { return IsP2p(e) ? 0 : e.seq; }
std::int64_t P2pSeq(const FrEntry& e) { return IsP2p(e) ? e.seq : 0; }

// The groups in pg_config's order: by name (the uid as a string).
std::array<PgKind, kNumPgKinds> ConfigOrder(const Job& job, int rank) {
  std::array<PgKind, kNumPgKinds> kinds = {PgKind::kDefault, PgKind::kTensor, PgKind::kPipeline,
                                           PgKind::kData};
  std::sort(kinds.begin(), kinds.end(), [&](PgKind a, PgKind b) {
    return std::to_string(job.GroupUid(rank, a)) < std::to_string(job.GroupUid(rank, b));
  });
  return kinds;
}

// nlohmann's string escaping for what the dumps hold (no control bytes in practice).
void JsonStr(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

void JsonInt(std::string& out, std::int64_t v) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

}  // namespace

const FlightRecorderFormat* FindFlightRecorderFormat(std::string_view version) {
  for (const FlightRecorderFormat& f : kFlightRecorderFormats) {
    if (f.version == version) return &f;
  }
  return nullptr;
}

const FlightRecorderFormat& FlightRecorderFormatOf(std::string_view torch_release,
                                                   std::string_view version) {
  if (const FlightRecorderFormat* f = FindFlightRecorderFormat(version)) return *f;
  return *FindFlightRecorderFormat(RowFor(kFlightRecorderByRelease, torch_release));
}

std::string FlightRecorderVersionList() {
  std::string list;
  for (const FlightRecorderFormat& f : kFlightRecorderFormats) {
    list += (list.empty() ? "\"" : ", \"") + std::string(f.version) + "\"";
  }
  return list;
}

FlightRecorderSerializer::FlightRecorderSerializer(const Job& job, const TorchProfile& torch,
                                                   std::string_view nccl_release)
    : job_(job),
      torch_(torch),
      nccl_(nccl_release),
      format_(FlightRecorderFormatOf(torch.name, job.flight_recorder.version)) {}

std::string FlightRecorderSerializer::Bytes(const FlightRecorderDump& dump) {
  return job_.flight_recorder.json ? Json(dump) : Pickle(dump);
}

const std::string& FlightRecorderSerializer::RanksOf(int uid) {
  auto [it, fresh] = ranks_.try_emplace(uid);
  if (fresh) {
    const int size = job_.GroupSize(job_.KindOfGroup(uid));
    std::string& s = it->second;
    s.reserve(static_cast<std::size_t>(size) * 7 + 2);
    s += '[';
    for (int i = 0; i < size; ++i) {
      if (i > 0) s += ", ";
      JsonInt(s, job_.GroupMember(uid, i));
    }
    s += ']';
  }
  return it->second;
}

std::string FlightRecorderSerializer::Pickle(const FlightRecorderDump& dump) {
  ckpt::PickleStream p;
  const int rank = dump.rank;
  p.BeginDict();
  p.Str("version");
  p.Str(format_.version);
  p.Str("pg_config");
  p.BeginDict();
  for (const PgKind kind : ConfigOrder(job_, rank)) {
    const std::string name = std::to_string(job_.GroupUid(rank, kind));
    p.Str(name);
    p.BeginDict();
    p.Str("name");
    p.Str(name);
    p.Str("desc");
    p.Str(PgDescription(kind));
    p.Str("ranks");
    p.Str(RanksOf(job_.GroupUid(rank, kind)));
    p.EndDict();
  }
  p.EndDict();
  if (format_.nccl_version) {
    p.Str("nccl_version");
    p.Str(nccl_);
  }
  if (format_.pg_status) {
    p.Str("pg_status");
    p.BeginDict();
    for (const FrGroupStatus& g : dump.groups) {
      p.Str(std::to_string(static_cast<int>(g.group)));
      p.BeginDict();
      p.Str("last_enqueued_collective");
      p.Int(g.last_enqueued);
      p.Str("last_started_collective");
      p.Int(g.last_started);
      p.Str("last_completed_collective");
      p.Int(g.last_completed);
      p.EndDict();
    }
    p.EndDict();
  }
  p.Str("entries");
  p.BeginList();
  std::array<std::array<std::int64_t, 5>, kFrames.size()> memo{};  // frame dict -> memo id + 1
  for (const FrEntry& e : dump.entries) {
    const int me = job_.GroupRank(rank, e.group);
    p.BeginDict();
    p.Str("frames");
    p.BeginList();
    const int set = FrameSet(e);
    for (std::size_t f = 0; f < kFrames[set].size(); ++f) {
      if (memo[set][f] > 0) {
        p.Get(static_cast<std::uint32_t>(memo[set][f] - 1));
        continue;
      }
      const Frame& fr = kFrames[set][f];
      p.BeginDict();
      p.Str("name");
      p.Str(fr.name);
      p.Str("filename");
      p.Str((fr.torch ? std::string(torch_.python_lib) : std::string(kMegatron)) + "/" +
            std::string(fr.file));
      p.Str("line");
      p.Int(fr.line);
      p.EndDict();
      memo[set][f] = p.Put() + 1;
    }
    p.EndList();
    p.Str("record_id");
    p.Int(e.record_id);
    p.Str("pg_id");
    p.Int(static_cast<int>(e.group));
    p.Str("process_group");
    p.Str(std::to_string(job_.GroupUid(rank, e.group)));
    p.Str(PgDescription(e.group));
    p.Tuple2();
    p.Str("collective_seq_id");
    p.Int(CollectiveSeq(e));
    p.Str("p2p_seq_id");
    p.Int(P2pSeq(e));
    p.Str("op_id");
    p.Int(e.op_id);
    p.Str("profiling_name");
    p.Str(ProfilingName(e, me));
    p.Str("time_created_ns");
    p.Int(e.created);
    if (e.duration_ms >= 0) {
      p.Str("duration_ms");
      p.Float(static_cast<double>(e.duration_ms));
    }
    const bool tensors = e.op != FrOp::kCoalesced;
    for (const bool input : {true, false}) {
      p.Str(input ? "input_sizes" : "output_sizes");
      p.BeginList();
      if (tensors) {
        int dims = 0;
        const auto shape = ShapeOf(input ? e.numel_in : e.numel_out, e.group, &dims);
        p.BeginList();
        for (int d = 0; d < dims; ++d) p.Int(shape[d]);
        p.EndList();
      }
      p.EndList();
      p.Str(input ? "input_dtypes" : "output_dtypes");
      p.BeginList();
      if (tensors) p.Str(DtypeOf(e.group));
      p.EndList();
    }
    p.Str("state");
    p.Str(StateOf(e));
    p.Str("time_discovered_started_ns");
    e.started >= 0 ? p.Int(e.started) : p.None();
    p.Str("time_discovered_completed_ns");
    e.completed >= 0 ? p.Int(e.completed) : p.None();
    p.Str("retired");
    p.Bool(e.retired);
    p.Str("timeout_ms");
    p.Int(job_.nccl_timeout / kNsPerMs);
    if (format_.is_p2p) {
      p.Str("is_p2p");
      p.Bool(IsP2p(e));
    }
    p.EndDict();
  }
  p.EndList();
  p.EndDict();
  return p.Finish();
}

// nlohmann::json's dump(): compact, object keys sorted, no frames; a time not discovered is 0,
// pg_status's counters are strings, and "entries" is left out when there are none.
std::string FlightRecorderSerializer::Json(const FlightRecorderDump& dump) {
  std::string out;
  out.reserve(256 + dump.entries.size() * 480);
  const int rank = dump.rank;
  out += '{';
  if (!dump.entries.empty()) {
    out += "\"entries\":[";
    for (std::size_t i = 0; i < dump.entries.size(); ++i) {
      const FrEntry& e = dump.entries[i];
      const int me = job_.GroupRank(rank, e.group);
      const bool tensors = e.op != FrOp::kCoalesced;
      auto sizes = [&](std::int64_t numel) {
        out += '[';
        if (tensors) {
          int dims = 0;
          const auto shape = ShapeOf(numel, e.group, &dims);
          out += '[';
          for (int d = 0; d < dims; ++d) {
            if (d > 0) out += ',';
            JsonInt(out, shape[d]);
          }
          out += ']';
        }
        out += ']';
      };
      auto dtypes = [&] {
        out += '[';
        if (tensors) JsonStr(out, DtypeOf(e.group));
        out += ']';
      };
      out += i == 0 ? "{" : ",{";
      out += "\"collective_seq_id\":";
      JsonInt(out, CollectiveSeq(e));
      if (e.duration_ms >= 0) {
        char buf[32];
        out += ",\"duration_ms\":";
        out.append(buf,
                   std::to_chars(buf, buf + sizeof buf, static_cast<double>(e.duration_ms)).ptr);
      }
      out += ",\"input_dtypes\":";
      dtypes();
      out += ",\"input_sizes\":";
      sizes(e.numel_in);
      if (format_.is_p2p) out += IsP2p(e) ? ",\"is_p2p\":true" : ",\"is_p2p\":false";
      out += ",\"op_id\":";
      JsonInt(out, e.op_id);
      out += ",\"output_dtypes\":";
      dtypes();
      out += ",\"output_sizes\":";
      sizes(e.numel_out);
      out += ",\"p2p_seq_id\":";
      JsonInt(out, P2pSeq(e));
      out += ",\"pg_id\":";
      JsonInt(out, static_cast<int>(e.group));
      out += ",\"process_group\":[";
      JsonStr(out, std::to_string(job_.GroupUid(rank, e.group)));
      out += ',';
      JsonStr(out, PgDescription(e.group));
      out += "],\"profiling_name\":";
      JsonStr(out, ProfilingName(e, me));
      out += ",\"record_id\":";
      JsonInt(out, e.record_id);
      out += e.retired ? ",\"retired\":true" : ",\"retired\":false";
      out += ",\"state\":";
      JsonStr(out, StateOf(e));
      out += ",\"time_created_ns\":";
      JsonInt(out, e.created);
      out += ",\"time_discovered_completed_ns\":";
      JsonInt(out, e.completed >= 0 ? e.completed : 0);
      out += ",\"time_discovered_started_ns\":";
      JsonInt(out, e.started >= 0 ? e.started : 0);
      out += ",\"timeout_ms\":";
      JsonInt(out, job_.nccl_timeout / kNsPerMs);
      out += '}';
    }
    out += "],";
  }
  if (format_.nccl_version) {
    out += "\"nccl_version\":";
    JsonStr(out, nccl_);
    out += ',';
  }
  out += "\"pg_config\":{";
  bool first = true;
  for (const PgKind kind : ConfigOrder(job_, rank)) {
    const std::string name = std::to_string(job_.GroupUid(rank, kind));
    if (!first) out += ',';
    first = false;
    JsonStr(out, name);
    out += ":{\"desc\":";
    JsonStr(out, PgDescription(kind));
    out += ",\"name\":";
    JsonStr(out, name);
    out += ",\"ranks\":";
    JsonStr(out, RanksOf(job_.GroupUid(rank, kind)));
    out += '}';
  }
  out += '}';
  if (format_.pg_status) {
    out += ",\"pg_status\":{";
    first = true;
    for (const FrGroupStatus& g : dump.groups) {
      if (!first) out += ',';
      first = false;
      JsonStr(out, std::to_string(static_cast<int>(g.group)));
      out += ":{\"last_completed_collective\":";
      JsonStr(out, std::to_string(g.last_completed));
      out += ",\"last_enqueued_collective\":";
      JsonStr(out, std::to_string(g.last_enqueued));
      out += ",\"last_started_collective\":";
      JsonStr(out, std::to_string(g.last_started));
      out += '}';
    }
    out += '}';
  }
  out += ",\"version\":";
  JsonStr(out, format_.version);
  out += '}';
  return out;
}

}  // namespace denpex::sim
