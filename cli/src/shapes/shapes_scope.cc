// Shapes that change which lines are there: one-node, victims-only (partial incidents) and
// shared-daemons (daemon and kernel logs that hold other jobs' lines too).
#include <cctype>
#include <regex>
#include <set>

#include "shapes_internal.h"

namespace denpex::cli::shapes {
namespace fs = std::filesystem;

namespace {

// Copies the logs `keep` says yes to (and, with `kept_files`, the files that are not logs).
template <typename Keep>
Status CopyIf(const Source& src, const fs::path& out, bool kept_files, Keep keep) {
  for (const auto& f : src.files) {
    if (!f.log || !keep(f.rel)) continue;
    std::error_code ec;
    fs::create_directories((out / f.rel).parent_path(), ec);
    fs::copy_file(src.dir / f.rel, out / f.rel, fs::copy_options::overwrite_existing, ec);
    if (ec) return Status::IoError((out / f.rel).string() + ": " + ec.message());
  }
  return kept_files ? CopyKept(src, out) : Status::Ok();
}

}  // namespace

Status RelayOneNode(const Source& src, const fs::path& out, Relaid* r) {
  const std::string node = InitiatorNode(src);
  if (node.empty()) {
    r->applies = false;
    return Status::Ok();
  }
  const auto mine = FilesOfNode(src, node);
  if (mine.empty()) {  // no file is the node's alone (one console at the top level): nothing to cut
    r->applies = false;
    return Status::Ok();
  }
  return CopyIf(src, out, false, [&mine](const std::string& rel) { return mine.contains(rel); });
}

Status RelayVictimsOnly(const Source& src, const fs::path& out, Relaid* r) {
  const std::string node = InitiatorNode(src);
  if (node.empty()) {
    r->applies = false;
    return Status::Ok();
  }
  const auto mine = FilesOfNode(src, node);
  return CopyIf(src, out, true, [&mine](const std::string& rel) { return !mine.contains(rel); });
}

namespace {

enum class Daemon { kNone, kSlurmctld, kSlurmd, kKernel, kEvents };

Daemon DaemonOf(std::string_view rel) {
  std::string name = fs::path(rel).filename().string();
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (name.find("slurmctld") != std::string::npos) return Daemon::kSlurmctld;
  if (name.find("slurmd") != std::string::npos) return Daemon::kSlurmd;
  if (name.find("kern") != std::string::npos || name.find("dmesg") != std::string::npos) {
    return Daemon::kKernel;
  }
  if (name.find("events") != std::string::npos) return Daemon::kEvents;
  return Daemon::kNone;
}

// The stamp head a daemon's line starts with, to be repeated on lines inserted after it:
// `[<time>] ` (slurmctld, slurmd), `<Mon DD hh:mm:ss> <host> kernel: [<uptime>] ` (syslog),
// `[<uptime>] ` (dmesg); empty when the line has none.
std::string_view StampHead(std::string_view line) {
  size_t from = 0;
  if (const size_t k = line.find(" kernel: "); k != std::string_view::npos && k < 64) {
    from = k + 9;
    if (from >= line.size() || line[from] != '[') return line.substr(0, from);
  } else if (line.empty() || line[0] != '[') {
    return {};
  }
  const size_t close = line.find("] ", from);
  return close == std::string_view::npos ? std::string_view{} : line.substr(0, close + 2);
}

// This job's id, from the controller's or slurmd's lines or slurm-<id>.out; 0 when none.
long long JobIdOf(const Source& src) {
  static const std::regex kId(R"((?:JobId=|batch job |slurm-)(\d+))");
  for (const auto& f : src.files) {
    if (!f.log) continue;
    std::smatch m;
    if (std::regex_search(f.rel, m, kId)) return std::stoll(m[1]);
    if (DaemonOf(f.rel) != Daemon::kSlurmctld && DaemonOf(f.rel) != Daemon::kSlurmd) continue;
    auto text = ReadText(src.dir / f.rel);
    if (text.ok() && std::regex_search(*text, m, kId)) return std::stoll(m[1]);
  }
  return 0;
}

// GPU bus numbers (two lower-case hex digits) the node's files name, in the forms the driver
// (`PCI:0000:5d:00`), nvidia-smi (`00000000:5D:00.0`) and NCCL (`busId 5d000`) print.
std::set<std::string> BusesOf(const Source& src, const std::string& node) {
  auto lower2 = [](std::string_view h) {
    std::string b(h);
    for (char& c : b) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return b;
  };
  std::set<std::string> buses;
  for (const auto& f : src.files) {
    if (!f.log || NodeOf(f.rel) != node) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) continue;
    const std::string_view t = *text;
    for (size_t p = t.find("PCI:"); p != std::string_view::npos; p = t.find("PCI:", p + 1)) {
      if (p + 11 <= t.size()) buses.insert(lower2(t.substr(p + 9, 2)));
    }
    for (size_t p = t.find(":00.0"); p != std::string_view::npos; p = t.find(":00.0", p + 1)) {
      if (p >= 2) buses.insert(lower2(t.substr(p - 2, 2)));
    }
    for (size_t p = t.find("busId "); p != std::string_view::npos; p = t.find("busId ", p + 1)) {
      size_t e = p + 6;
      while (e < t.size() && std::isxdigit(static_cast<unsigned char>(t[e]))) ++e;
      if (e - (p + 6) > 3) {
        std::string b = lower2(t.substr(p + 6, e - p - 9));
        buses.insert(b.size() < 2 ? "0" + b : b.substr(b.size() - 2));
      }
    }
  }
  return buses;
}

struct Others {
  long long jobs[4];    // other jobs' ids
  int pids[3];          // other jobs' processes
  std::string buses[2]; // GPUs this job does not use
  std::string host;     // the node of the file ("" at the top level)
};

std::string Iso(std::string_view head, const Source& src) {
  const auto t = LineTime(head, src.year);
  return FormatRfc3339(t ? *t : src.start_ns).substr(0, 19);
}

// Other jobs' lines (message parts, after the stamp head), block `b` of a daemon's file.
std::vector<std::string> Block(Daemon d, int b, const Others& o, std::string_view head,
                               const Source& src) {
  const std::string j0 = std::to_string(o.jobs[0]), j1 = std::to_string(o.jobs[1]),
                    j2 = std::to_string(o.jobs[2]), j3 = std::to_string(o.jobs[3]);
  const std::string host = o.host.empty() ? "cn-0412" : o.host;
  switch (d) {
    case Daemon::kSlurmctld:
      switch (b) {
        case 0: return {"sched: Allocate JobId=" + j1 + " NodeList=cn-[0410-0413] #CPUs=256 Partition=batch",
                        "Time limit exhausted for JobId=" + j0,
                        "_job_complete: JobId=" + j0 + " WTERMSIG 15",
                        "_job_complete: JobId=" + j0 + " done"};
        case 1: return {"_slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=" + j1 + " uid 1003",
                        "_job_complete: JobId=" + j1 + " WTERMSIG 15",
                        "_job_complete: JobId=" + j1 + " done"};
        case 2: return {"preempted JobId=" + j2 + " has been killed to reclaim resources for JobId=" + j3,
                        "_job_complete: JobId=" + j2 + " WTERMSIG 9"};
        default: return {"error: Nodes cn-0417 not responding",
                         "Killing JobId=" + j3 + " on failed node cn-0417",
                         "_job_complete: JobId=" + j3 + " WEXITSTATUS 1",
                         "_job_complete: JobId=" + j3 + " done"};
      }
    case Daemon::kSlurmd:
      switch (b) {
        case 0: return {"Launching batch job " + j0 + " for UID 1003",
                        "[" + j0 + ".batch] error: *** JOB " + j0 + " ON " + host + " CANCELLED AT " +
                            Iso(head, src) + " DUE TO TIME LIMIT ***",
                        "[" + j0 + ".batch] done with job"};
        case 1: return {"[" + j1 + ".0] error: *** STEP " + j1 + ".0 ON " + host + " CANCELLED AT " +
                            Iso(head, src) + " ***",
                        "[" + j1 + ".0] done with job"};
        case 2: return {"[" + j2 + ".0] error: Detected 1 oom_kill event in StepId=" + j2 +
                        ".0. Some of the step tasks have been OOM Killed."};
        default: return {"[" + j3 + ".batch] error: *** JOB " + j3 + " ON " + host +
                         " CANCELLED AT " + Iso(head, src) + " DUE TO PREEMPTION ***"};
      }
    case Daemon::kKernel: {
      const std::string p0 = std::to_string(o.pids[0]), p1 = std::to_string(o.pids[1]);
      switch (b) {
        case 0: return {"python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0",
                        "oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,"
                        "oom_memcg=/slurm/uid_1003/job_" + j2 + ",task_memcg=/slurm/uid_1003/job_" + j2 +
                            "/step_0/task_1,task=python3,pid=" + p0 + ",uid=1003",
                        "Memory cgroup out of memory: Killed process " + p0 +
                            " (python3) total-vm:48211344kB, anon-rss:31457280kB, file-rss:10240kB, "
                            "shmem-rss:0kB, UID:1003 pgtables:62140kB oom_score_adj:0",
                        "oom_reaper: reaped process " + p0 +
                            " (python3), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB"};
        case 1: return {"NVRM: GPU at PCI:0000:" + o.buses[0] + ":00: GPU-3f1c2a77-5d0e-4b9a-8e61-" +
                            o.buses[0] + "c0ffee0042",
                        "NVRM: GPU Board Serial Number: 1652823058" + std::to_string(o.pids[2] % 1000),
                        "NVRM: Xid (PCI:0000:" + o.buses[0] + ":00): 31, pid=" + p1 +
                            ", name=python3, Ch 00000010, intr 10000000. MMU Fault: ENGINE GRAPHICS "
                            "GPCCLIENT_T1_13 faulted @ 0x7f4c_a0000000. Fault is of type FAULT_PDE "
                            "ACCESS_TYPE_VIRT_READ"};
        case 2: return {"NVRM: Xid (PCI:0000:" + o.buses[0] + ":00): 13, pid=" + p1 +
                        ", name=python3, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 0): "
                        "Out Of Range Address"};
        default: return {"NVRM: GPU at PCI:0000:" + o.buses[1] + ":00: GPU-9a0b7c55-1e2f-4d3c-a4b5-" +
                             o.buses[1] + "d15ea5e0077",
                         "NVRM: Xid (PCI:0000:" + o.buses[1] + ":00): 79, pid='<unknown>', "
                         "name=<unknown>, GPU has fallen off the bus."};
      }
    }
    case Daemon::kNone:
    case Daemon::kEvents: break;
  }
  return {};
}

// Inserts four blocks of other jobs' lines, spread over the span of this job's own lines
// (from the first line naming its job id or the file's start, to the last or the end), each
// with the stamp head of the line before it; the file's own lines are untouched.
std::string Pad(std::string_view text, Daemon d, const Others& o, long long job,
                const Source& src) {
  const auto lines = Lines(text);
  size_t first = 0, last = lines.size();
  if (d == Daemon::kKernel) {  // from the first line of the job's time on (boot lines before)
    for (size_t i = 0; i < lines.size(); ++i) {
      const auto t = LineTime(lines[i], src.year);
      if (t && *t >= src.start_ns - 60 * kNsPerSec) {
        first = i;
        break;
      }
    }
  } else if (job > 0) {
    const std::string id = std::to_string(job);
    size_t f = lines.size(), l = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].find(id) == std::string_view::npos) continue;
      f = std::min(f, i);
      l = i + 1;
    }
    if (f < l) first = f, last = l;
  }
  constexpr int kBlocks = 4;
  std::vector<size_t> at(kBlocks);  // insert block b after line at[b] - 1
  for (int b = 0; b < kBlocks; ++b) {
    at[static_cast<size_t>(b)] = first + 1 + (last - first) * static_cast<size_t>(b + 1) / (kBlocks + 1);
  }
  std::string out;
  out.reserve(text.size() + 4096);
  std::string_view head;
  int b = 0;
  for (size_t i = 0; i <= lines.size(); ++i) {
    while (b < kBlocks && at[static_cast<size_t>(b)] == i && i > 0) {
      for (const auto& m : Block(d, b, o, head, src)) out.append(head).append(m).push_back('\n');
      ++b;
    }
    if (i == lines.size()) break;
    if (auto h = StampHead(lines[i]); !h.empty()) head = h;
    out.append(lines[i]);
    if (i + 1 < lines.size() || text.ends_with('\n')) out.push_back('\n');
  }
  return out;
}

// `kubectl get events`: other pods' rows (an eviction, a kill, a back-off, and an OOM kill of
// another pod's process on this job's first node), four blocks spread over the table, each
// row as old as the row before it, in the table's columns.
std::string PadEvents(std::string_view text, const Others& o, const std::string& node) {
  const auto lines = Lines(text);
  if (lines.size() < 2 || !lines[0].starts_with("LAST SEEN")) return std::string(text);
  const std::string_view h = lines[0];
  const size_t cols[] = {h.find("TYPE"), h.find("REASON"), h.find("OBJECT"), h.find("MESSAGE")};
  for (size_t c : cols) {
    if (c == std::string_view::npos) return std::string(text);
  }
  auto row = [&cols](std::string_view age, std::string_view type, std::string_view reason,
                     std::string_view object, const std::string& message) {
    std::string r(age);
    const std::string_view fields[] = {type, reason, object};
    for (int i = 0; i < 3; ++i) {
      r.resize(std::max(r.size() + 1, cols[i]), ' ');
      r += fields[i];
    }
    r.resize(std::max(r.size() + 1, cols[3]), ' ');
    return r + message;
  };
  const std::string pod = "bert-ft-worker-" + std::to_string(o.pids[2] % 8);
  const std::string pid = std::to_string(o.pids[0]);
  auto rows = [&](int b, std::string_view age) -> std::string {
    switch (b) {
      case 0: return row(age, "Warning", "Evicted", "pod/" + pod,
                         "The node was low on resource: memory. Container pytorch was using "
                         "9402820Ki, which exceeds its request of 7G.");
      case 1: return row(age, "Normal", "Killing", "pod/" + pod, "Stopping container pytorch");
      case 2: return row(age, "Warning", "BackOff", "pod/" + pod,
                         "Back-off restarting failed container pytorch in pod " + pod +
                             "_research(7c1e2b90-4a55-4d0b-9f1e-" + pid + ")");
      default: return row(age, "Warning", "OOMKilling", "node/" + node,
                          "Memory cgroup out of memory: Killed process " + pid +
                              " (python3) total-vm:48211344kB, anon-rss:31457280kB, "
                              "file-rss:10240kB, shmem-rss:0kB, UID:1003 pgtables:62140kB "
                              "oom_score_adj:999");
    }
  };
  std::string out;
  const size_t n = lines.size();
  int b = 0;
  std::string_view age;
  for (size_t i = 0; i < n; ++i) {
    out.append(lines[i]);
    if (i + 1 < n || text.ends_with('\n')) out.push_back('\n');
    if (i == 0) continue;
    age = lines[i].substr(0, lines[i].find(' '));
    if (b < 4 && i + 1 >= 1 + (n - 1) * static_cast<size_t>(b + 1) / 5) (out += rows(b++, age)) += '\n';
  }
  if (!out.ends_with('\n')) out.push_back('\n');
  while (b < 4) (out += rows(b++, age)) += '\n';
  return out;
}

}  // namespace

Status RelaySharedDaemons(const Source& src, const fs::path& out, Relaid* r) {
  const long long job = JobIdOf(src);
  Rng rng(src.seed);
  Others o;
  const long long base = job > 0 ? job : 900000;
  for (int i = 0; i < 4; ++i) o.jobs[i] = base + 1 + i * 7 + static_cast<long long>(rng.Below(5));
  for (int& p : o.pids) p = 3900000 + static_cast<int>(rng.Below(90000));
  int padded = 0;  // without a daemon or kernel log the shape does not apply
  for (const auto& f : src.files) {
    if (!f.log) continue;
    auto text = ReadText(src.dir / f.rel);
    if (!text.ok()) return text.status();
    const Daemon d = DaemonOf(f.rel);
    if (d == Daemon::kNone) {
      DENPEX_RETURN_IF_ERROR(WriteText(out / f.rel, *text));
      continue;
    }
    ++padded;
    o.host = NodeOf(f.rel);
    if (d == Daemon::kEvents) {
      const auto nodes = NodeNames(src);
      const std::string node = nodes.empty() ? "cn-0412" : *nodes.begin();
      DENPEX_RETURN_IF_ERROR(WriteText(out / f.rel, PadEvents(*text, o, node)));
      continue;
    }
    if (d == Daemon::kKernel) {
      static constexpr const char* kFree[] = {"0f", "4c", "6e", "87", "c3", "e1", "f3", "7a"};
      const auto used = BusesOf(src, o.host);
      int n = 0;
      for (const char* bus : kFree) {
        if (n < 2 && !used.contains(bus)) o.buses[n++] = bus;
      }
    }
    DENPEX_RETURN_IF_ERROR(WriteText(out / f.rel, Pad(*text, d, o, job, src)));
  }
  r->applies = padded > 0;
  return CopyKept(src, out);
}

}  // namespace denpex::cli::shapes
