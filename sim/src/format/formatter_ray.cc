// Ray's lines (docs/log_formats.md §25): the trainer's worker table and the trial's
// ActorDiedError in driver.log, the raylet's memory-monitor summary forwarded to the driver,
// the GCS's verdict on a silent node in gcs_server.out. Wording of Ray 2.x.
#include <vector>

#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";

// A Ray id (node id: 56 hex digits, actor id: 32), fixed by the seed and what it names.
void RayId(LineBuilder& out, std::uint64_t seed, std::uint64_t what, int digits) {
  Rng rng(seed, StreamId::kNodeProcesses, (3ULL << 32) + what);
  for (int i = 0; i < digits; ++i) out.Char(kHexDigits[rng.UniformInt(0, 16)]);
}

constexpr std::uint64_t kActorSalt = 1ULL << 24;

// `[2026-03-02 09:00:52,123 W 1480 1480] ` (Ray core's log header).
void RayHeader(LineBuilder& out, TimeNs local, char severity, int pid) {
  const CivilTime c = ToCivil(local);
  out.Char('[').Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2).Char(' ');
  out.Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char(',');
  out.Zero(c.nanos / kNsPerMs, 3).Char(' ').Char(severity).Char(' ').Int(pid).Char(' ').Int(pid).Str("] ");
}

}  // namespace

void LineFormatter::Format(const RayWorkerTable& r, LineBuilder& out) const {
  const int trainer = job_.agent_pid[0] - 17;
  out.Str("(TorchTrainer pid=").Int(trainer).Str(") Started distributed worker processes: ").EndLine();
  for (int rank = 0; rank < job_.world; ++rank) {
    const int node = job_.NodeOf(rank);
    out.Str("(TorchTrainer pid=").Int(trainer).Str(") - (node_id=");
    RayId(out, job_.seed, static_cast<std::uint64_t>(node), 56);
    out.Str(", ip=").Str(job_.hostnames[node]).Str(", pid=").Int(job_.worker_pid[rank]).Str(") world_rank=").Int(rank);
    out.Str(", local_rank=").Int(job_.LocalRank(rank)).Str(", node_rank=").Int(node).EndLine();
  }
  (void)r;
}

RayLineOffsets LineFormatter::Format(const RayActorDied& r, LineBuilder& out) const {
  RayLineOffsets at;
  const int node = job_.NodeOf(r.rank);
  const CivilTime c = ToCivil(Local(0, r.time));
  out.Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2).Char(' ').Zero(c.hour, 2).Char(':');
  out.Zero(c.minute, 2).Char(':').Zero(c.second, 2).Char(',').Zero(c.nanos / kNsPerMs, 3);
  out.Str("\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_");
  RayId(out, job_.seed, 99, 5);
  out.Str("_00000").EndLine();
  out.Str("Traceback (most recent call last):").EndLine();
  struct Frame {
    std::string_view file;
    int line;
    std::string_view function, code;
  };
  static constexpr Frame kFrames[] = {
      {"ray/air/execution/_internal/event_manager.py", 110, "resolve_future", "result = ray.get(future)"},
      {"ray/_private/auto_init_hook.py", 21, "auto_init_wrapper", "return fn(*args, **kwargs)"},
      {"ray/_private/client_mode_hook.py", 103, "wrapper", "return func(*args, **kwargs)"},
      {"ray/_private/worker.py", 2667, "get", "values, debugger_breakpoint = worker.get_objects(object_refs, timeout=timeout)"},
      {"ray/_private/worker.py", 866, "get_objects", "raise value"},
  };
  const bool task_error = r.cause == RayDeath::kTaskError;
  for (const Frame& f : kFrames) {
    out.Str("  File \"").Str(torch_.python_lib).Char('/').Str(f.file).Str("\", line ").Int(f.line);
    out.Str(", in ").Str(f.function).EndLine();
    out.Str("    ").Str(f.code).Str(task_error && &f == &kFrames[std::size(kFrames) - 1] ? ".as_instanceof_cause()" : "").EndLine();
  }
  at.error_line = 1 + 2 * static_cast<std::int64_t>(std::size(kFrames)) + 1;
  if (task_error) {
    at.cause_line = at.error_line + TaskError(r, out);
    return at;
  }
  out.Str("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.").EndLine();
  out.Str("\tclass_name: RayTrainWorker").EndLine();
  out.Str("\tactor_id: ");
  RayId(out, job_.seed, kActorSalt + static_cast<std::uint64_t>(r.rank), 32);
  out.EndLine();
  out.Str("\tpid: ").Int(job_.worker_pid[r.rank]).EndLine();
  out.Str("\tnamespace: ");
  RayId(out, job_.seed, 98, 8);
  out.Str("-ray-train").EndLine();
  out.Str("\tip: ").Str(job_.hostnames[node]).EndLine();
  at.cause_line = at.error_line + 6;
  switch (r.cause) {
    case RayDeath::kWorkerDied:
      out.Str("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
              "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root "
              "causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force "
              "is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.")
          .EndLine();
      break;
    case RayDeath::kNodeDied:
      out.Str("The actor died because its node has died. Node Id: ");
      RayId(out, job_.seed, static_cast<std::uint64_t>(node), 56);
      out.EndLine();
      out.Str("\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats").EndLine();
      break;
    case RayDeath::kMemoryMonitor: {
      Rng rng(job_.seed, StreamId::kFaultBehaviour, 91);
      const int used = static_cast<int>(rng.UniformInt(1'900, 1'990));
      out.Str("The actor is dead because its worker process has died. Worker exit type: USER_ERROR Worker exit detail: "
              "Task was killed due to the node running low on memory. Memory on the node (IP: ")
          .Str(job_.hostnames[node]).Str(", ID: ");
      RayId(out, job_.seed, static_cast<std::uint64_t>(node), 56);
      out.Str(") where the task (actor ID: ");
      RayId(out, job_.seed, kActorSalt + static_cast<std::uint64_t>(r.rank), 32);
      out.Str(", name=RayTrainWorker.__init__, pid=").Int(job_.worker_pid[r.rank]).Str(", memory used=");
      out.Int(rng.UniformInt(150, 230)).Char('.').Zero(rng.UniformInt(0, 100), 2).Str("GB) was running was ");
      out.Int(used).Str(".00GB / 2015.55GB (").Fixed(used / 2015.55, 6).Str("), which exceeds the memory usage threshold of "
                                                                             "0.95. Ray killed this worker (ID: ");
      RayId(out, job_.seed, kActorSalt * 2 + static_cast<std::uint64_t>(r.rank), 56);
      out.Str(") because it was the most recently scheduled task; to see more information about memory usage on this "
              "node, use `ray logs raylet.out -ip ")
          .Str(job_.hostnames[node]).Str("`.").EndLine();
      break;
    }
    case RayDeath::kTaskError:
      break;  // TaskError above
  }
  return at;
}

// `ray.exceptions.RayTaskError(<Exc>): ray::_RayTrainWorker__execute.get_next() (pid=, ip=, ...)`,
// Ray Train's two frames, then the worker's own traceback as its process printed it (without
// its `Traceback` header and torch's `[rank<N>]:` prefixes). Returns the line of the worker's
// exception, counted from the RayTaskError line.
std::int64_t LineFormatter::TaskError(const RayActorDied& r, LineBuilder& out) const {
  std::string body;
  LineBuilder tb(&body);
  const std::int64_t cited = Format(PythonException{r.rank, r.time, r.variant, r.source}, tb);
  std::vector<std::string_view> lines;
  for (std::string_view rest = body; !rest.empty();) {
    const std::size_t nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    if (line.starts_with("[rank")) line.remove_prefix(line.find("]: ") + 3);
    lines.push_back(line);
  }
  std::string_view type = lines[static_cast<std::size_t>(cited)];
  type = type.substr(0, type.find(':'));
  type = type.substr(type.rfind('.') + 1);
  const int node = job_.NodeOf(r.rank);
  out.Str("ray.exceptions.RayTaskError(").Str(type).Str("): ray::_RayTrainWorker__execute.get_next() (pid=");
  out.Int(job_.worker_pid[r.rank]).Str(", ip=").Str(job_.hostnames[node]).Str(", actor_id=");
  RayId(out, job_.seed, kActorSalt + static_cast<std::uint64_t>(r.rank), 32);
  Rng rng(job_.seed, StreamId::kRankAddresses, static_cast<std::uint64_t>(r.rank) * 4 + 3);
  out.Str(", repr=<ray.train._internal.worker_group.RayTrainWorker object at 0x7f").Hex(0x1000000000ULL | (rng.Next() & 0xffffffff0ULL));
  out.Str(">)").EndLine();
  out.Str("  File \"").Str(torch_.python_lib).Str("/ray/train/_internal/worker_group.py\", line 33, in __execute").EndLine();
  out.Str("    raise skipped from exception_cause(skipped)").EndLine();
  out.Str("  File \"").Str(torch_.python_lib).Str("/ray/train/_internal/utils.py\", line 169, in discard_return_wrapper").EndLine();
  out.Str("    train_func(*args, **kwargs)").EndLine();
  std::int64_t n = 5, exception_at = -1;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i] == "Traceback (most recent call last):" && i == 0) continue;
    if (static_cast<std::int64_t>(i) == cited) exception_at = n;
    out.Str(lines[i]).EndLine();
    ++n;
  }
  return exception_at;
}

void LineFormatter::Format(const RayNodeDead& r, LineBuilder& out) const {
  RayHeader(out, Local(0, r.time), 'W', job_.agent_pid[0] - 40);
  out.Str("gcs_node_manager.cc:144: The node with node id: ");
  RayId(out, job_.seed, static_cast<std::uint64_t>(r.node), 56);
  out.Str(" and address: ").Str(job_.hostnames[r.node]).Str(" and node name: ").Str(job_.hostnames[r.node]);
  out.Str(" has been marked dead because the detector has missed too many heartbeats from it. This can happen when a "
          "\t(1) raylet crashes unexpectedly (OOM, etc.) ")
      .EndLine();
  out.Str("\t(2) raylet has lagging heartbeats due to slow network or busy workload.").EndLine();
}

void LineFormatter::Format(const RayletOomKill& r, LineBuilder& out) const {
  out.Str("(raylet) ");
  RayHeader(out, Local(r.node, r.time), 'E', job_.agent_pid[r.node] - 23);
  out.Str("(raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers "
          "crashed due to other reasons at node (ID: ");
  RayId(out, job_.seed, static_cast<std::uint64_t>(r.node), 56);
  out.Str(", IP: ").Str(job_.hostnames[r.node]).Str(") over the last time period. To see more information about the "
                                                     "Workers killed on this node, use `ray logs raylet.out -ip ");
  out.Str(job_.hostnames[r.node]).Str("`").EndLine();
}

}  // namespace denpex::sim
