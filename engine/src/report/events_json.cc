#include "report/events_json.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

#include "ingest/flight_recorder.h"
#include "ingest/nccl_ras.h"
#include "report/diagnosis.h"

namespace denpex::engine {
namespace {

void AppendString(std::string_view s, std::string* out) {
  const std::string valid = ValidUtf8(s);
  out->push_back('"');
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const char c = valid[i];
    // DEL and the C1 controls (U+0080-U+009F) need no escape in JSON, but a terminal acts on
    // them when `denpex events` is read there: escaped too.
    if (c == '\x7f' || (c == '\xc2' && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) <= 0x9f)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c == '\x7f' ? 0x7fu : static_cast<unsigned char>(valid[++i]) + 0u);
      *out += buf;
      continue;
    }
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\t': *out += "\\t"; break;
      case '\r': *out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          *out += buf;
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

// Writes `"key":value` pairs, with a comma before all but the first.
class Fields {
 public:
  Fields(const Incident& inc, std::string* out) : inc_(inc), out_(out) {}
  void Key(std::string_view key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    AppendString(key, out_);
    out_->push_back(':');
  }
  void Int(std::string_view key, std::int64_t v) {
    Key(key);
    *out_ += std::to_string(v);
  }
  // Omitted when negative (unknown).
  void Known(std::string_view key, std::int64_t v) {
    if (v >= 0) Int(key, v);
  }
  void Bool(std::string_view key, bool v) {
    Key(key);
    *out_ += v ? "true" : "false";
  }
  void Str(std::string_view key, std::string_view v) {
    Key(key);
    AppendString(v, out_);
  }
  // Omitted when empty.
  void Id(std::string_view key, StrId id) {
    if (id != kNoStr) Str(key, inc_.str(id));
  }

 private:
  const Incident& inc_;
  std::string* out_;
  bool first_ = true;
};

void DetailFields(const EventDetail& detail, Fields* f) {
  std::visit(
      [&](const auto& d) {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, Note>) {
          f->Id("text", d.text);
        } else if constexpr (std::is_same_v<T, WatchdogTimeout>) {
          f->Id("pg", d.pg), f->Id("pg_desc", d.pg_desc), f->Known("group_rank", d.group_rank);
          f->Known("seq", d.seq), f->Id("op", d.op), f->Known("numel_in", d.numel_in), f->Known("numel_out", d.numel_out);
          f->Known("timeout_ms", d.timeout_ms), f->Known("ran_for_ms", d.ran_for_ms);
          f->Known("last_enqueued", d.last_enqueued), f->Known("last_completed", d.last_completed);
        } else if constexpr (std::is_same_v<T, WatchdogNote>) {
          f->Id("pg", d.pg), f->Known("group_rank", d.group_rank), f->Known("from_rank", d.from_rank), f->Id("text", d.text);
        } else if constexpr (std::is_same_v<T, WorkerFailed>) {
          f->Known("local_rank", d.local_rank), f->Int("exit_code", d.exit_code);
          if (d.pid > 0) f->Int("pid", d.pid);
        } else if constexpr (std::is_same_v<T, WorkerSignalled>) {
          f->Int("pid", d.pid), f->Id("signal", d.signal);
        } else if constexpr (std::is_same_v<T, FailureEntry>) {
          f->Bool("root_cause", d.root_cause), f->Known("local_rank", d.local_rank), f->Int("exit_code", d.exit_code);
          f->Int("pid", d.pid), f->Id("host", d.host);
        } else if constexpr (std::is_same_v<T, Iteration>) {
          f->Int("iteration", d.iteration), f->Int("total", d.total);
          f->Known("data_us", d.data_us), f->Known("step_us", d.step_us), f->Known("slow_since", d.slow_since);
        } else if constexpr (std::is_same_v<T, CommInit>) {
          f->Id("comm_id", d.comm_id), f->Known("comm_rank", d.comm_rank), f->Int("nranks", d.nranks);
          f->Known("cuda_dev", d.cuda_dev), f->Id("pci", d.pci);
        } else if constexpr (std::is_same_v<T, HostMemory>) {
          f->Int("host_used_mb", std::lround(d.used_gb * 1024)), f->Int("host_permille", std::lround(d.percent * 10));
        } else if constexpr (std::is_same_v<T, NodeLayout>) {
          if (d.first_rank >= 0) {  // torchrun's rendezvous result
            f->Int("first_rank", d.first_rank), f->Int("num_local_procs", d.local_procs);
          } else {
            f->Int("nnodes", d.nnodes), f->Int("num_local_procs", d.local_procs), f->Int("node_rank", d.node_rank);
          }
        } else if constexpr (std::is_same_v<T, GpuSlot>) {
          f->Known("index", d.index), f->Id("pci", d.pci);
        } else if constexpr (std::is_same_v<T, NcclWarn>) {
          f->Int("pid", d.pid), f->Known("cuda_dev", d.cuda_dev), f->Id("peer", d.peer), f->Known("status", d.status);
          f->Id("text", d.text);
        } else if constexpr (std::is_same_v<T, PythonError>) {
          f->Id("type", d.type), f->Id("message", d.message), f->Known("gpu", d.gpu);
          if (d.chained) f->Bool("chained", true);
        } else if constexpr (std::is_same_v<T, OomKill>) {
          if (d.pid > 0) f->Int("pid", d.pid);
          f->Id("comm", d.comm);
        } else if constexpr (std::is_same_v<T, Xid>) {
          f->Known("code", d.code), f->Id("pci", d.pci), f->Known("pid", d.pid), f->Id("process", d.process);
          f->Id("text", d.text);
        } else if constexpr (std::is_same_v<T, SlurmNote>) {
          f->Id("reason", d.reason), f->Id("node", d.node), f->Id("tasks", d.tasks);
          if (d.exit_code != 0) f->Int("exit_code", d.exit_code);
          f->Known("job", d.job);
        } else if constexpr (std::is_same_v<T, StepTimers>) {
          f->Int("compute_ms", static_cast<std::int64_t>(d.compute_ms + 0.5f));
          f->Int("wait_ms", static_cast<std::int64_t>(d.wait_ms + 0.5f));
        } else if constexpr (std::is_same_v<T, CheckpointSave>) {
          f->Known("step", d.step), f->Id("path", d.path);
        } else if constexpr (std::is_same_v<T, FrDump>) {
          f->Id("version", d.version), f->Id("nccl_version", d.nccl_version);
          f->Int("groups", d.groups), f->Int("entries", d.entries), f->Bool("json", d.json);
        } else if constexpr (std::is_same_v<T, FrGroup>) {
          f->Id("pg", d.pg), f->Id("pg_desc", d.pg_desc), f->Id("ranks", d.ranks),
              f->Known("size", d.size);
          f->Int("last_enqueued", d.last_enqueued), f->Int("last_started", d.last_started);
          f->Int("last_completed", d.last_completed);
        } else if constexpr (std::is_same_v<T, FrCollective>) {
          f->Id("pg", d.pg), f->Id("pg_desc", d.pg_desc), f->Id("op", d.op),
              f->Id("sizes", d.sizes);
          f->Id("dtypes", d.dtypes), f->Str("state", FrStateName(d.state)), f->Bool("p2p", d.p2p);
          f->Known("seq", d.seq), f->Known("p2p_seq", d.p2p_seq),
              f->Known("record_id", d.record_id);
          if (d.started > 0) f->Str("started", FormatRfc3339(d.started));
          if (d.completed > 0) f->Str("completed", FormatRfc3339(d.completed));
          f->Known("timeout_ms", d.timeout_ms);
        } else if constexpr (std::is_same_v<T, RasReport>) {
          f->Id("nccl_version", d.nccl_version), f->Int("report", d.report);
          f->Int("comms", d.comms), f->Known("processes", d.processes), f->Known("gpus", d.gpus);
          f->Int("dead", d.dead), f->Int("incomplete", d.incomplete), f->Bool("json", d.json);
        } else if constexpr (std::is_same_v<T, RasComm>) {
          f->Id("hash", d.hash), f->Id("status", d.status), f->Id("errors", d.errors);
          f->Int("report", d.report), f->Known("size", d.size), f->Known("nodes", d.nodes);
        } else if constexpr (std::is_same_v<T, RasRank>) {
          f->Str("why", RasWhyName(d.why));
          f->Id("hash", d.hash), f->Id("op", d.op), f->Id("node", d.node);
          f->Int("report", d.report), f->Known("comm_size", d.comm_size);
          f->Known("comm_rank", d.comm_rank), f->Known("pid", d.pid), f->Known("gpu", d.gpu);
          f->Known("count", d.count), f->Known("common", d.common), f->Int("with", d.with);
        }
      },
      detail);
}

// A stamp whose year no line of the incident tells, as the log gives it: ISO 8601's year-less
// `--MM-DDThh:mm:ss.fffffffff` (no zone: the node's clock).
std::string YearlessTime(TimeNs t) {
  const std::string full = FormatRfc3339(t);  // the placeholder year, then `-MM-DDT...Z`
  const std::size_t dash = full.find('-');
  std::string out = "-";
  out.append(full, dash, full.size() - dash - 1);
  return out;
}

}  // namespace

void AppendEventJson(const Incident& inc, const Event& e, std::string* out) {
  out->push_back('{');
  Fields f(inc, out);
  if (e.clock == Clock::kFull) {
    f.Str("time", FormatRfc3339(e.time));
  } else {
    f.Key("time");
    *out += "null";
  }
  if (e.clock == Clock::kNoYear) f.Str("yearless_time", YearlessTime(e.time));
  if (e.time_borrowed) f.Bool("time_borrowed", true);
  if (e.node >= 0) f.Str("node", inc.nodes[e.node]);
  f.Known("rank", e.rank);
  f.Known("local_rank", e.local_rank);
  f.Known("task", e.task);
  f.Str("file", inc.files[e.file].path);
  f.Int("line", e.line);
  f.Str("family", FamilyName(e.family));
  f.Str("kind", KindName(e.kind));
  f.Key("fields");
  out->push_back('{');
  Fields inner(inc, out);
  DetailFields(e.detail, &inner);
  out->push_back('}');
  out->push_back('}');
}

}  // namespace denpex::engine
