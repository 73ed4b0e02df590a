// The kubectl output of a Kubernetes job (see kubernetes.h). Wording as the kubelet, the node
// lifecycle controller, node-problem-detector, the Kubeflow training-operator and JobSet print
// it (docs/log_formats.md §24 (Kubernetes)).
#include "kubernetes.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "model/rng.h"

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
  int cite = 0;  // 1: evicted, 2: oom event, 3: node NotReady, 4: FailedScheduling, 5: the job's end
};

constexpr TimeNs kBackOff = 10 * kNsPerSec;  // the kubelet's first back-off before a restart

// The pod's UID, as the kubelet's BackOff message prints it.
std::string PodUid(const Job& job, int node) {
  Rng rng(job.seed, StreamId::kNodeProcesses, static_cast<std::uint64_t>(node) + (9ULL << 32));
  static constexpr std::string_view kHex = "0123456789abcdef";
  std::string uid;
  for (int i = 0; i < 32; ++i) {
    if (i == 8 || i == 12 || i == 16 || i == 20) uid += '-';
    uid += kHex[rng.UniformInt(0, 16)];
  }
  return uid;
}

// The scheduler's word on a pod no node can take (kube-scheduler's FitError, with the
// preemption summary of Kubernetes >= 1.27): the job's nodes are a dedicated pool, all but the
// fault's node full with the job's other pods.
std::string UnschedulableMessage(const Job& job, bool node_lost) {
  const std::string n = std::to_string(job.nodes), rest = std::to_string(job.nodes - 1);
  if (node_lost) {
    return "0/" + n + " nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, " + rest +
           " Insufficient nvidia.com/gpu. preemption: 0/" + n + " nodes are available: 1 Preemption is not helpful for "
           "scheduling, " + rest + " No preemption victims found for incoming pod.";
  }
  return "0/" + n + " nodes are available: " + n + " Insufficient nvidia.com/gpu. preemption: 0/" + n + " nodes are available: " + n +
         " No preemption victims found for incoming pod.";
}

// PyTorchJob under kubernetes.restarts: the operator counts the pods' restarts against
// backoffLimit (one per pod) and marks the job failed once the last container has restarted.
TimeNs BackoffLimitReached(const Job& restarted) {
  return *std::max_element(restarted.agent_start.begin(), restarted.agent_start.end()) - 500 * kNsPerMs;
}

void StartRows(const Job& job, int node, TimeNs t0, std::vector<Row>* rows) {
  const std::string pod = "pod/" + job.pod_names[node];
  rows->push_back({t0, "Normal", "Scheduled", pod,
                   "Successfully assigned " + job.kube_namespace + "/" + job.pod_names[node] + " to " + job.NodeName(node)});
  rows->push_back({t0 + 2 * kNsPerSec, "Normal", "Pulled", pod,
                   "Container image \"" + std::string(kImage) + "\" already present on machine"});
  rows->push_back({t0 + 2 * kNsPerSec, "Normal", "Created", pod, "Created container " + std::string(kContainer)});
  rows->push_back({t0 + 3 * kNsPerSec, "Normal", "Started", pod, "Started container " + std::string(kContainer)});
}

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

std::string JobObject(const Job& job) {
  return (job.kube_controller == v1::KUBE_CONTROLLER_JOBSET ? "jobset/" : "pytorchjob/") + job.kube_job;
}

// The controller's cleanup: the pods it deleted (their kubelets' `Killing`).
void DeletedRows(const Job& job, const Launcher& l, std::vector<Row>* rows) {
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  for (int node = 0; node < job.nodes; ++node) {
    if (l.pod_end(node) != PodEnd::kDeleted || l.pod_signal_time(node) < 0) continue;
    const TimeNs t = l.pod_signal_time(node);
    if (!jobset) rows->push_back({t - 40 * kNsPerMs, "Normal", "SuccessfulDeletePod", JobObject(job), "Deleted pod: " + job.pod_names[node]});
    rows->push_back({t, "Normal", "Killing", "pod/" + job.pod_names[node], "Stopping container " + std::string(kContainer)});
  }
}

// The JobSet's child Job (backoffLimit 0) fails with its first failed pod (job-controller).
Row ChildJobFailed(const Job& job, TimeNs t) {
  return {t, "Warning", "BackoffLimitExceeded", "job/" + job.kube_job + "-workers-0", "Job has reached the specified backoff limit"};
}

// kubernetes.restarts: what the controller and the kubelets said about restart K (`r`) of the
// attempt `l` ran, and the restarted attempt's pods (docs/log_formats.md §24, "Restarts"). `last`:
// the last restart, after which the controller gives up.
void RestartRows(const Job& job, const Launcher& l, const KubeRestart& r, bool last, std::vector<Row>* rows) {
  const Job& j1 = *r.job;
  const Launcher& l1 = *r.launcher;
  if (job.kube_controller == v1::KUBE_CONTROLLER_JOBSET) {
    rows->push_back(ChildJobFailed(job, l.job_failed_time() - 60 * kNsPerMs));
    rows->push_back({l.job_failed_time(), "Warning", "Restarting", JobObject(job), "restarting jobset, attempt " + std::to_string(j1.kube_attempt)});
    for (int node = 0; node < j1.nodes; ++node) {
      if (node == r.unplaced) continue;
      StartRows(j1, node, j1.start - 40 * kNsPerSec + node % 97 * 7 * kNsPerMs, rows);
    }
    if (r.unplaced >= 0) {
      // The scheduler retries the Pending pod with back-off; the row shows its latest try.
      const TimeNs latest = std::max(j1.start, l1.job_failed_time() - 95 * kNsPerSec);
      rows->push_back({latest, "Warning", "FailedScheduling", "pod/" + j1.pod_names[r.unplaced], UnschedulableMessage(j1, r.node_lost), last ? 4 : 0});
    }
    DeletedRows(j1, l1, rows);
    if (last && l1.job_failed_time() >= 0) {
      rows->push_back(ChildJobFailed(j1, l1.job_failed_time() - 60 * kNsPerMs));
      rows->push_back({l1.job_failed_time(), "Warning", "ReachedMaxRestarts", JobObject(job),
                       "jobset failed due to reaching max number of restarts (first failed job: " + job.kube_job + "-workers-0)", 5});
    }
    return;
  }
  // PyTorchJob, restartPolicy OnFailure: each container restarts in place after the kubelet's
  // back-off, and the operator marks the job failed at its backoffLimit. The same pod's
  // repeated rows are one row in `kubectl get events` (its latest): only the last restart's.
  if (!last) return;
  for (int node = 0; node < job.nodes; ++node) {
    const std::string pod = "pod/" + job.pod_names[node];
    const TimeNs t = j1.agent_start[node] - 2 * kNsPerSec;
    rows->push_back({t, "Normal", "Pulled", pod, "Container image \"" + std::string(kImage) + "\" already present on machine"});
    rows->push_back({t, "Normal", "Created", pod, "Created container " + std::string(kContainer)});
    rows->push_back({t + kNsPerSec, "Normal", "Started", pod, "Started container " + std::string(kContainer)});
    if (l1.exit_time(node) >= 0) {
      rows->push_back({l1.exit_time(node) + kBackOff, "Warning", "BackOff", pod,
                       "Back-off restarting failed container " + std::string(kContainer) + " in pod " + job.pod_names[node] + "_" +
                           job.kube_namespace + "(" + PodUid(job, node) + ")"});
    }
  }
  rows->push_back({BackoffLimitReached(j1), "Warning", "PyTorchJobFailed", JobObject(job),
                   "PyTorchJob " + job.kube_job + " has failed because it has reached the specified backoff limit", 5});
}

std::vector<Row> Events(const Job& job, const FaultPlan& fault, const Launcher& l, const std::vector<KubeRestart>& restarts) {
  std::vector<Row> rows;
  for (int node = 0; node < job.nodes; ++node) StartRows(job, node, job.start - 40 * kNsPerSec + node % 97 * 7 * kNsPerMs, &rows);
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
  DeletedRows(job, l, &rows);
  for (std::size_t k = 0; k < restarts.size(); ++k) {
    RestartRows(job, k == 0 ? l : *restarts[k - 1].launcher, restarts[k], k + 1 == restarts.size(), &rows);
  }
  if (restarts.empty() && l.job_failed_time() >= 0) {
    const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
    const int first = l.first_failed_pod();
    const std::string message =
        jobset ? "jobset failed due to one or more job failures"
               : "PyTorchJob " + job.kube_job + " is failed because 1 " + ReplicaName(job, first) + " replica(s) failed.";
    rows.push_back({l.job_failed_time(), "Warning", jobset ? "FailedJobs" : "PyTorchJobFailed", JobObject(job), message});
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.time < b.time; });
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
    if (r.cite == 4) cite->unplaced = c;
    if (r.cite == 5) cite->job_end = c;
    text += row;
    text += '\n';
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  return out ? Status::Ok() : Status::IoError(path.string() + ": cannot write");
}

// The container's state lines of `kubectl describe pod`: `prefix` "State" or "Last State".
void ContainerState(const Job& job, const Launcher& l, int node, std::string_view prefix, std::vector<std::string>* lines,
                    std::int64_t* reason_line) {
  const PodEnd end = l.pod_end(node);
  const std::string head = "    " + std::string(prefix) + ":" + std::string(16 - prefix.size() - 1, ' ');
  if (end == PodEnd::kNodeLost) {
    lines->push_back(head + "Running");
    lines->push_back("      Started:      " + Rfc1123(job.start));
    return;
  }
  lines->push_back(head + "Terminated");
  if (end == PodEnd::kOomKilled && reason_line != nullptr) *reason_line = static_cast<std::int64_t>(lines->size()) + 1;
  lines->push_back(std::string("      Reason:       ") + (end == PodEnd::kOomKilled ? "OOMKilled" : "Error"));
  lines->push_back(std::string("      Exit Code:    ") + (end == PodEnd::kOomKilled ? "137" : "1"));
  lines->push_back("      Started:      " + Rfc1123(job.start));
  lines->push_back("      Finished:     " + Rfc1123(std::max(l.exit_time(node), job.start)));
}

// `kubectl describe pod` of the pod running (or, restarted in place, last run) `node`'s share of
// `job`. `first_job`: the first attempt when `job` is a PyTorchJob's restarted attempt (the pod
// started then; the container now waits in CrashLoopBackOff, `job`'s run its Last State);
// `unplaced`: the pod the scheduler could not place (its Events).
std::string Describe(const Job& job, const Launcher& l, int node, const FaultPlan& fault, TimeNs now,
                     std::int64_t* reason_line, const Job* first_job = nullptr, const std::string* unplaced = nullptr) {
  const bool first = first_job != nullptr;
  const PodEnd end = l.pod_end(node);
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  std::vector<std::string> lines;
  auto add = [&](std::string s) { lines.push_back(std::move(s)); };
  add("Name:             " + job.pod_names[node]);
  add("Namespace:        " + job.kube_namespace);
  add("Priority:         0");
  add("Service Account:  default");
  add("Node:             " + (unplaced ? std::string("<none>") : job.NodeName(node) + "/" + NodeIp(node)));
  if (!unplaced) add("Start Time:       " + Rfc1123((first ? first_job->start : job.start) - 40 * kNsPerSec));
  if (jobset) {
    add("Labels:           batch.kubernetes.io/job-completion-index=" + std::to_string(node));
    add("                  jobset.sigs.k8s.io/jobset-name=" + job.kube_job);
    add("                  jobset.sigs.k8s.io/replicatedjob-name=workers");
    if (job.kube_restarts > 0) add("                  jobset.sigs.k8s.io/restart-attempt=" + std::to_string(job.kube_attempt));
  } else {
    add("Labels:           training.kubeflow.org/job-name=" + job.kube_job);
    add("                  training.kubeflow.org/replica-index=" + std::to_string(node == 0 ? 0 : node - 1));
    add("                  training.kubeflow.org/replica-type=" + std::string(node == 0 ? "master" : "worker"));
  }
  if (unplaced) {
    add("Status:           Pending");
  } else {
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
        add(first ? "Status:           Running" : "Status:           Failed");
    }
    add("IP:               " + PodIp(node));
  }
  add("Controlled By:    " + (jobset ? "Job/" + job.kube_job + "-workers-0" : "PyTorchJob/" + job.kube_job));
  add("Containers:");
  add("  " + std::string(kContainer) + ":");
  add("    Image:         " + std::string(kImage));
  add("    Command:");
  add("      torchrun");
  if (first) {  // restarted in place, failed again, and waiting out the kubelet's back-off
    add("    State:          Waiting");
    add("      Reason:       CrashLoopBackOff");
    ContainerState(job, l, node, "Last State", &lines, nullptr);
    add("    Ready:          False");
    add("    Restart Count:  " + std::to_string(job.kube_attempt));
  } else if (!unplaced) {
    ContainerState(job, l, node, "State", &lines, reason_line);
    add("    Ready:          False");
    add("    Restart Count:  0");
  }
  add("    Limits:");
  add("      memory:          1536Gi");
  add("      nvidia.com/gpu:  " + std::to_string(job.gpus_per_node));
  add("    Requests:");
  add("      memory:          1Ti");
  add("      nvidia.com/gpu:  " + std::to_string(job.gpus_per_node));
  add("Conditions:");
  add("  Type              Status");
  if (unplaced) {
    add("  PodScheduled      False");
    add("Events:");
    add("  Type     Reason            Age   From               Message");
    add("  ----     ------            ----  ----               -------");
    add("  Warning  FailedScheduling  " + Age(now - job.start) + "   default-scheduler  " + *unplaced);
  } else {
    add(std::string("  DisruptionTarget  ") + (end == PodEnd::kEvicted || end == PodEnd::kNodeLost ? "True" : "False"));
    add("  Ready             False");
    add("Events:            <none>");
  }
  std::string text;
  for (const std::string& s : lines) text += s + "\n";
  return text;
}

// `kubectl describe pytorchjob` / `jobset`: the spec's restart budget and the failed condition.
// `l`: the last attempt's agents.
std::string DescribeJob(const Job& job, const Launcher& l) {
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  const bool restarts = job.kube_restarts > 0;
  std::string s = "Name:         " + job.kube_job + "\nNamespace:    " + job.kube_namespace + "\n";
  if (jobset) {
    s += "API Version:  jobset.x-k8s.io/v1alpha2\nKind:         JobSet\nSpec:\n  Failure Policy:\n    Max Restarts:  " +
         std::to_string(job.kube_restarts) +
         "\n  Replicated Jobs:\n    Name:      workers\n    Replicas:  1\n    Template:\n      Spec:\n        Backoff Limit:  0\n"
         "        Completion Mode:  Indexed\n        Completions:  " + std::to_string(job.nodes) + "\n        Parallelism:  " +
         std::to_string(job.nodes) + "\nStatus:\n";
    if (l.job_failed_time() >= 0) {
      const std::string message = restarts ? "jobset failed due to reaching max number of restarts (first failed job: " + job.kube_job + "-workers-0)"
                                           : "jobset failed due to one or more job failures";
      s += "  Conditions:\n    Last Transition Time:  " + FormatRfc3339(l.job_failed_time()) + "\n    Message:               " + message +
           "\n    Reason:                " + (restarts ? "ReachedMaxRestarts" : "FailedJobs") +
           "\n    Status:                True\n    Type:                  Failed\n  Restarts:  " + std::to_string(job.kube_restarts) +
           "\n  Terminal State:  Failed\n";
    }
    return s;
  }
  const std::string policy = restarts ? "OnFailure" : "Never";
  s += "API Version:  kubeflow.org/v1\nKind:         PyTorchJob\nSpec:\n  Pytorch Replica Specs:\n    Master:\n      Replicas:        1\n"
       "      Restart Policy:  " + policy + "\n    Worker:\n      Replicas:        " + std::to_string(job.nodes - 1) +
       "\n      Restart Policy:  " + policy + "\n  Run Policy:\n    Backoff Limit:    " + std::to_string(job.nodes * job.kube_restarts) +
       "\n    Clean Pod Policy:  " + (restarts ? "None" : "Running") + "\nStatus:\n";
  if (restarts) {  // failed once every pod had restarted (the Events' PyTorchJobFailed row)
    s += "  Conditions:\n    Last Transition Time:  " + FormatRfc3339(BackoffLimitReached(job)) + "\n    Message:               PyTorchJob " + job.kube_job +
         " has failed because it has reached the specified backoff limit\n    Reason:                PyTorchJobFailed\n"
         "    Status:                True\n    Type:                  Failed\n";
  } else if (l.job_failed_time() >= 0) {
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
                                           const fs::path& dir, const std::vector<KubeRestart>& restarts) {
  KubeCitations cite;
  const Launcher& l = model.launcher();
  const TimeNs now = end_time + 95 * kNsPerSec;  // the operator collects a minute and a half later
  DENPEX_RETURN_IF_ERROR(WriteEvents(dir / "events.txt", Events(job, fault, l, restarts), now, &cite));
  std::error_code ec;
  fs::create_directories(dir / "describe", ec);
  if (ec) return Status::IoError((dir / "describe").string() + ": cannot create: " + ec.message());
  // The pods as they are now: the last attempt's when the job was restarted (a JobSet's earlier
  // pods are gone; a PyTorchJob's are the same pods, restarted in place).
  const KubeRestart* restart = restarts.empty() ? nullptr : &restarts.back();
  const Job& now_job = restart ? *restart->job : job;
  const Launcher& now_l = restart ? *restart->launcher : l;
  const bool in_place = restart && job.KubeRestartsInPlace();
  const std::string unplaced = restart && restart->unplaced >= 0 ? UnschedulableMessage(now_job, restart->node_lost) : "";
  for (int node = 0; node < job.nodes; ++node) {
    std::int64_t reason_line = 0;
    const bool pending = restart && node == restart->unplaced;
    const std::string text =
        Describe(now_job, now_l, node, fault, now, &reason_line, in_place ? &job : nullptr, pending ? &unplaced : nullptr);
    const std::string rel = "describe/" + now_job.pod_names[node] + ".txt";
    DENPEX_RETURN_IF_ERROR(WriteText(dir / rel, text));
    if (node == fault.node && reason_line > 0 && !restart) {
      std::size_t at = 0;
      for (std::int64_t i = 1; i < reason_line; ++i) at = text.find('\n', at) + 1;
      cite.pod_reason = {rel, reason_line, text.substr(at, text.find('\n', at) - at)};
    }
  }
  const bool jobset = job.kube_controller == v1::KUBE_CONTROLLER_JOBSET;
  DENPEX_RETURN_IF_ERROR(WriteText(dir / (jobset ? "jobset.txt" : "pytorchjob.txt"), DescribeJob(now_job, now_l)));
  return cite;
}

}  // namespace denpex::sim
