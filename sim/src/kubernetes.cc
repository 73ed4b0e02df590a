// The kubectl output of a Kubernetes job (see kubernetes.h). Wording as the kubelet, the node
// lifecycle controller, node-problem-detector, the Kubeflow training-operator and JobSet print
// it (docs/log_formats.md §24 (Kubernetes)).
#include "kubernetes.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "rng.h"

namespace denpex::sim {

namespace fs = std::filesystem;
using PodEnd = Launcher::PodEnd;

namespace {

constexpr std::string_view kContainer = "pytorch";
constexpr std::string_view kImage = "nvcr.io/nvidia/pytorch:24.05-py3";

// kubectl's age: "45s", "3m12s" under ten minutes, "12m", "3h5m", "2d".
std::string Age(TimeNs since) {
  const std::int64_t s = std::max<std::int64_t>(0, since / kNsPerSec);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 600) return std::to_string(s / 60) + "m" + (s % 60 ? std::to_string(s % 60) + "s" : "");
  if (s < 3 * 3600) return std::to_string(s / 60) + "m";
  if (s < 8 * 3600) return std::to_string(s / 3600) + "h" + (s / 60 % 60 ? std::to_string(s / 60 % 60) + "m" : "");
  if (s < 48 * 3600) return std::to_string(s / 3600) + "h";
  return std::to_string(s / 86400) + "d";
}

// "Mon, 02 Mar 2026 09:31:02 +0000" (kubectl describe).
std::string Rfc1123(TimeNs t) {
  static constexpr std::string_view kDays[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};
  static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const CivilTime c = ToCivil(t);
  const std::int64_t days = t / (86400 * kNsPerSec);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d +0000", std::string(kDays[days % 7]).c_str(), c.day,
                std::string(kMonths[c.month - 1]).c_str(), c.year, c.hour, c.minute, c.second);
  return buf;
}

std::string NodeIp(int node) {
  return "10.128." + std::to_string(node / 250) + "." + std::to_string(node % 250 + 2);
}

std::string PodIp(int node) { return "10.244." + std::to_string(node / 250 + 1) + "." + std::to_string(node % 250 + 10); }

struct Row {
  TimeNs time;
  std::string type, reason, object, message;
  int cite = 0;  // 1: evicted, 2: oom event, 3: node NotReady
};

std::string ReplicaName(const Job& job, int node) {
  if (job.kube_controller == v1::KUBE_CONTROLLER_JOBSET) return "workers";
  return node == 0 ? "Master" : "Worker";
}

// The kubelet's eviction message (pkg/kubelet/eviction/helpers.go).
std::string EvictionMessage(const Job& job, const FaultPlan& fault) {
  Rng rng(job.seed, StreamId::kFaultBehaviour, 77);
  return "The node was low on resource: memory. Threshold quantity: 100Mi, available: " +
         std::to_string(rng.UniformInt(40'000, 99'000)) + "Ki. Container " + std::string(kContainer) + " was using " +
         std::to_string(rng.UniformInt(1'400'000'000, 1'600'000'000)) + "Ki, request is 1Ti, has larger consumption of memory.";
  (void)fault;
}

std::vector<Row> Events(const Job& job, const FaultPlan& fault, const Launcher& l, TimeNs end) {
  std::vector<Row> rows;
  for (int node = 0; node < job.nodes; ++node) {
    const std::string pod = "pod/" + job.pod_names[node];
    const TimeNs t0 = job.start - 40 * kNsPerSec + node % 97 * 7 * kNsPerMs;
    rows.push_back({t0, "Normal", "Scheduled", pod,
                    "Successfully assigned " + job.kube_namespace + "/" + job.pod_names[node] + " to " + job.NodeName(node)});
    rows.push_back({t0 + 2 * kNsPerSec, "Normal", "Pulled", pod,
                    "Container image \"" + std::string(kImage) + "\" already present on machine"});
    rows.push_back({t0 + 2 * kNsPerSec, "Normal", "Created", pod, "Created container " + std::string(kContainer)});
    rows.push_back({t0 + 3 * kNsPerSec, "Normal", "Started", pod, "Started container " + std::string(kContainer)});
  }
  const TimeNs fault_time = l.exit_time(fault.node >= 0 ? fault.node : 0);
  if (fault.node >= 0) {
    const std::string pod = "pod/" + job.pod_names[fault.node];
    const std::string node = "node/" + job.NodeName(fault.node);
    const TimeNs t = fault.kind() == v1::FAULT_KIND_POD_EVICTION ? l.pod_signal_time(fault.node) : fault_time;
    switch (l.pod_end(fault.node)) {
      case PodEnd::kEvicted:
        rows.push_back({t - 25 * kNsPerSec, "Warning", "EvictionThresholdMet", node, "Attempting to reclaim memory"});
        rows.push_back({t, "Warning", "Evicted", pod, EvictionMessage(job, fault), 1});
        rows.push_back({t, "Normal", "Killing", pod, "Stopping container " + std::string(kContainer)});
        break;
      case PodEnd::kOomKilled:
        rows.push_back({t + 30 * kNsPerMs, "Warning", "OOMKilling", node,
                        "Memory cgroup out of memory: Killed process " + std::to_string(job.worker_pid[fault.rank]) +
                            " (python3) total-vm:187563412kB, anon-rss:161204880kB, file-rss:1263344kB, shmem-rss:0kB, "
                            "UID:0 pgtables:318816kB oom_score_adj:-997",
                        2});
        break;
      case PodEnd::kNodeLost:
        rows.push_back({t + 40 * kNsPerSec, "Normal", "NodeNotReady", node,
                        "Node " + job.NodeName(fault.node) + " status is now: NodeNotReady", 3});
        rows.push_back({t + 40 * kNsPerSec + 120 * kNsPerMs, "Warning", "NodeNotReady", pod, "Node is not ready"});
        rows.push_back({t + 340 * kNsPerSec, "Normal", "TaintManagerEviction", pod,
                        "Marking for deletion Pod " + job.kube_namespace + "/" + job.pod_names[fault.node]});
        break;
      default:
        break;
    }
  }
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  const std::string owner = jobset ? "jobset/" + job.kube_job : "pytorchjob/" + job.kube_job;
  for (int node = 0; node < job.nodes; ++node) {
    if (l.pod_end(node) != PodEnd::kDeleted || l.pod_signal_time(node) < 0) continue;
    const TimeNs t = l.pod_signal_time(node);
    if (!jobset) rows.push_back({t - 40 * kNsPerMs, "Normal", "SuccessfulDeletePod", owner, "Deleted pod: " + job.pod_names[node]});
    rows.push_back({t, "Normal", "Killing", "pod/" + job.pod_names[node], "Stopping container " + std::string(kContainer)});
  }
  if (l.job_failed_time() >= 0) {
    const int first = l.first_failed_pod();
    const std::string message =
        jobset ? "jobset failed due to one or more job failures"
               : "PyTorchJob " + job.kube_job + " is failed because 1 " + ReplicaName(job, first) + " replica(s) failed.";
    rows.push_back({l.job_failed_time(), "Warning", jobset ? "FailedJobs" : "PyTorchJobFailed", owner, message});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.time < b.time; });
  (void)end;
  return rows;
}

std::string Pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

// A table as kubectl prints it: each column as wide as its widest cell, three spaces apart.
Status WriteEvents(const fs::path& path, const std::vector<Row>& rows, TimeNs now, KubeCitations* cite) {
  std::size_t w_age = 9, w_type = 4, w_reason = 6, w_object = 6;
  std::vector<std::string> ages;
  ages.reserve(rows.size());
  for (const Row& r : rows) {
    ages.push_back(Age(now - r.time));
    w_age = std::max(w_age, ages.back().size());
    w_type = std::max(w_type, r.type.size());
    w_reason = std::max(w_reason, r.reason.size());
    w_object = std::max(w_object, r.object.size());
  }
  std::string text = Pad("LAST SEEN", w_age + 3) + Pad("TYPE", w_type + 3) + Pad("REASON", w_reason + 3) +
                     Pad("OBJECT", w_object + 3) + "MESSAGE\n";
  std::int64_t line = 1;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::string row = Pad(ages[i], w_age + 3) + Pad(r.type, w_type + 3) + Pad(r.reason, w_reason + 3) +
                      Pad(r.object, w_object + 3) + r.message;
    ++line;
    CitedLine c{"events.txt", line, row};
    if (r.cite == 1) cite->evicted = c;
    if (r.cite == 2) cite->oom_event = c;
    if (r.cite == 3 && cite->not_ready.line == 0) cite->not_ready = c;
    text += row;
    text += '\n';
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out ? Status::Ok() : Status::IoError(path.string() + ": cannot write");
}

std::string Describe(const Job& job, const Launcher& l, int node, const FaultPlan& fault, TimeNs now,
                     std::int64_t* reason_line) {
  const PodEnd end = l.pod_end(node);
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  std::vector<std::string> lines;
  auto add = [&](std::string s) { lines.push_back(std::move(s)); };
  add("Name:             " + job.pod_names[node]);
  add("Namespace:        " + job.kube_namespace);
  add("Priority:         0");
  add("Service Account:  default");
  add("Node:             " + job.NodeName(node) + "/" + NodeIp(node));
  add("Start Time:       " + Rfc1123(job.start - 40 * kNsPerSec));
  if (jobset) {
    add("Labels:           batch.kubernetes.io/job-completion-index=" + std::to_string(node));
    add("                  jobset.sigs.k8s.io/jobset-name=" + job.kube_job);
    add("                  jobset.sigs.k8s.io/replicatedjob-name=workers");
  } else {
    add("Labels:           training.kubeflow.org/job-name=" + job.kube_job);
    add("                  training.kubeflow.org/replica-index=" + std::to_string(node == 0 ? 0 : node - 1));
    add("                  training.kubeflow.org/replica-type=" + std::string(node == 0 ? "master" : "worker"));
  }
  switch (end) {
    case PodEnd::kEvicted:
      add("Status:           Failed");
      *reason_line = static_cast<std::int64_t>(lines.size()) + 1;
      add("Reason:           Evicted");
      add("Message:          " + EvictionMessage(job, fault));
      break;
    case PodEnd::kNodeLost:
      add("Status:           Terminating (lasts " + Age(now - l.exit_time(node) - 340 * kNsPerSec) + ")");
      add("Termination Grace Period:  30s");
      break;
    default:
      add("Status:           Failed");
  }
  add("IP:               " + PodIp(node));
  add("Controlled By:    " + (jobset ? "Job/" + job.kube_job + "-workers-0" : "PyTorchJob/" + job.kube_job));
  add("Containers:");
  add("  " + std::string(kContainer) + ":");
  add("    Image:         " + std::string(kImage));
  add("    Command:");
  add("      torchrun");
  if (end == PodEnd::kNodeLost) {
    add("    State:          Running");
    add("      Started:      " + Rfc1123(job.start));
  } else {
    add("    State:          Terminated");
    if (end == PodEnd::kOomKilled) *reason_line = static_cast<std::int64_t>(lines.size()) + 1;
    add(std::string("      Reason:       ") + (end == PodEnd::kOomKilled ? "OOMKilled" : "Error"));
    add(std::string("      Exit Code:    ") + (end == PodEnd::kOomKilled ? "137" : "1"));
    add("      Started:      " + Rfc1123(job.start));
    add("      Finished:     " + Rfc1123(std::max(l.exit_time(node), job.start)));
  }
  add("    Ready:          False");
  add("    Restart Count:  0");
  add("    Limits:");
  add("      memory:          1536Gi");
  add("      nvidia.com/gpu:  " + std::to_string(job.gpus_per_node));
  add("    Requests:");
  add("      memory:          1Ti");
  add("      nvidia.com/gpu:  " + std::to_string(job.gpus_per_node));
  add("Conditions:");
  add("  Type              Status");
  add(std::string("  DisruptionTarget  ") + (end == PodEnd::kEvicted || end == PodEnd::kNodeLost ? "True" : "False"));
  add("  Ready             False");
  add("Events:            <none>");
  std::string text;
  for (const std::string& s : lines) text += s + "\n";
  return text;
}

std::string DescribeJob(const Job& job, const Launcher& l) {
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  std::string s = "Name:         " + job.kube_job + "\nNamespace:    " + job.kube_namespace + "\n";
  if (jobset) {
    s += "API Version:  jobset.x-k8s.io/v1alpha2\nKind:         JobSet\nSpec:\n  Failure Policy:\n    Max Restarts:  0\n"
         "  Replicated Jobs:\n    Name:      workers\n    Replicas:  1\n    Template:\n      Spec:\n        Backoff Limit:  0\n"
         "        Completion Mode:  Indexed\n        Completions:  " + std::to_string(job.nodes) + "\n        Parallelism:  " +
         std::to_string(job.nodes) + "\nStatus:\n";
    if (l.job_failed_time() >= 0) {
      s += "  Conditions:\n    Last Transition Time:  " + FormatRfc3339(l.job_failed_time()) +
           "\n    Message:               jobset failed due to one or more job failures\n    Reason:                FailedJobs\n"
           "    Status:                True\n    Type:                  Failed\n  Restarts:  0\n  Terminal State:  Failed\n";
    }
    return s;
  }
  s += "API Version:  kubeflow.org/v1\nKind:         PyTorchJob\nSpec:\n  Pytorch Replica Specs:\n    Master:\n      Replicas:        1\n"
       "      Restart Policy:  Never\n    Worker:\n      Replicas:        " + std::to_string(job.nodes - 1) +
       "\n      Restart Policy:  Never\n  Run Policy:\n    Backoff Limit:    0\n    Clean Pod Policy:  Running\nStatus:\n";
  if (l.job_failed_time() >= 0) {
    const int first = l.first_failed_pod();
    s += "  Conditions:\n    Last Transition Time:  " + FormatRfc3339(l.job_failed_time()) +
         "\n    Message:               PyTorchJob " + job.kube_job + " is failed because 1 " + ReplicaName(job, first) +
         " replica(s) failed.\n    Reason:                PyTorchJobFailed\n    Status:                True\n    Type:                  Failed\n";
  }
  return s;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out ? Status::Ok() : Status::IoError(path.string() + ": cannot write");
}

}  // namespace

Result<KubeCitations> WriteKubernetesFiles(const Job& job, const FaultPlan& fault, const Model& model, TimeNs end_time,
                                           const fs::path& dir) {
  KubeCitations cite;
  const Launcher& l = model.launcher();
  const TimeNs now = end_time + 95 * kNsPerSec;  // the operator collects a minute and a half later
  DENPEX_RETURN_IF_ERROR(WriteEvents(dir / "events.txt", Events(job, fault, l, end_time), now, &cite));
  std::error_code ec;
  fs::create_directories(dir / "describe", ec);
  if (ec) return Status::IoError((dir / "describe").string() + ": cannot create: " + ec.message());
  for (int node = 0; node < job.nodes; ++node) {
    std::int64_t reason_line = 0;
    const std::string text = Describe(job, l, node, fault, now, &reason_line);
    const std::string rel = "describe/" + job.pod_names[node] + ".txt";
    DENPEX_RETURN_IF_ERROR(WriteText(dir / rel, text));
    if (node == fault.node && reason_line > 0) {
      std::size_t at = 0;
      for (std::int64_t i = 1; i < reason_line; ++i) at = text.find('\n', at) + 1;
      cite.pod_reason = {rel, reason_line, text.substr(at, text.find('\n', at) - at)};
    }
  }
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  DENPEX_RETURN_IF_ERROR(WriteText(dir / (jobset ? "jobset.txt" : "pytorchjob.txt"), DescribeJob(job, l)));
  return cite;
}

}  // namespace denpex::sim
