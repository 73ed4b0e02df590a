// DeepSpeed's runner and launcher over pdsh (docs/log_formats.md §26b), as deepspeed.log holds
// them (and the runner's command line under `--launcher openmpi|slurm`, §26d): the runner's lines (login-01's clock) unprefixed, each node's launch.py lines behind
// pdsh's `<host>: ` (the node's clock), and pdsh's own `pdsh@login-01: <host>: ...` lines. The
// `[file.py:line:func]` numbers are DeepSpeed 0.14's; they move between releases.
#include "formatter.h"

#include <array>

namespace denpex::sim {

namespace {

constexpr std::string_view kScript = "train.py";
constexpr std::string_view kPython = "/usr/bin/python3";
constexpr std::string_view kScriptArgs = " --deepspeed --deepspeed_config ds_config.json";  // the user's script flags

// Python logging's asctime and DeepSpeed's prefix: "[2026-03-02 09:00:36,123] [INFO] [".
void Stamp(LineBuilder& out, TimeNs local, std::string_view level) {
  const CivilTime c = ToCivil(local);
  out.Char('[').Zero(c.year, 4).Char('-').Zero(c.month, 2).Char('-').Zero(c.day, 2);
  out.Char(' ').Zero(c.hour, 2).Char(':').Zero(c.minute, 2).Char(':').Zero(c.second, 2);
  out.Char(',').Zero(c.nanos / 1'000'000, 3).Str("] [").Str(level).Str("] [");
}

// Python's repr of the child's argv, as launch.py logs `cmd`.
void ChildArgv(int local_rank, LineBuilder& out) {
  out.Str("['").Str(kPython).Str("', '-u', '").Str(kScript).Str("', '--local_rank=").Int(local_rank);
  out.Str("', '--deepspeed', '--deepspeed_config', 'ds_config.json']");
}

// {'gpu-0001': [0, 1, ...], ...}: Python's repr of the world info (one node per host line).
void WorldDict(const Job& job, std::string_view quote, LineBuilder& out) {
  out.Char('{');
  for (int node = 0; node < job.nodes; ++node) {
    if (node > 0) out.Str(", ");
    out.Str(quote).Str(job.hostnames[node]).Str(quote).Str(": [");
    for (int local = 0; local < job.gpus_per_node; ++local) {
      if (local > 0) out.Str(", ");
      out.Int(local);
    }
    out.Char(']');
  }
  out.Char('}');
}

void GlobalRankMapping(const Job& job, LineBuilder& out) {
  out.Str("defaultdict(<class 'list'>, {");
  for (int node = 0; node < job.nodes; ++node) {
    if (node > 0) out.Str(", ");
    out.Char('\'').Str(job.hostnames[node]).Str("': [");
    for (int local = 0; local < job.gpus_per_node; ++local) {
      if (local > 0) out.Str(", ");
      out.Int(node * job.gpus_per_node + local);
    }
    out.Char(']');
  }
  out.Str("})");
}

// base64.urlsafe_b64encode(json.dumps(world_info)): the runner's --world_info.
void UrlsafeBase64(std::string_view in, LineBuilder& out) {
  static constexpr std::string_view kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = (static_cast<std::uint8_t>(in[i]) << 16) |
                            (static_cast<std::uint8_t>(in[i + 1]) << 8) | static_cast<std::uint8_t>(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out.Char(kAlphabet[(v >> k) & 63]);
  }
  if (i < in.size()) {
    std::uint32_t v = static_cast<std::uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<std::uint8_t>(in[i + 1]) << 8;
    out.Char(kAlphabet[(v >> 18) & 63]).Char(kAlphabet[(v >> 12) & 63]);
    out.Char(i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=').Char('=');
  }
}

// The master's address as the runner resolves it (`hostname -I` on the first host).
void MasterIp(LineBuilder& out) { out.Str("10.10.0.2"); }

void Host(const Job& job, int node, LineBuilder& out) { out.Str(job.hostnames[node]).Str(": "); }

// The runner's exports (EXPORT_ENVS' NCCL_*, PYTHONPATH), each value in double quotes as
// add_export keeps it: `<sep><key>="<value>"` per variable.
void Exports(std::string_view sep, LineBuilder& out) {
  out.Str(sep).Str("PYTHONPATH=\"/workspace\"").Str(sep).Str("NCCL_IB_HCA=\"mlx5\"");
  out.Str(sep).Str("NCCL_SOCKET_IFNAME=\"eth0\"");
}

// OpenMPIRunner.get_cmd: mpirun with the runner's fixed MCA options, the user's --launcher_args
// (here `--tag-output`, and `--report-bindings --bind-to none` when the daemons report), one `-x`
// per export (UCX_TLS first: the runner adds it), then the script.
void OpenMpiCmd(const Job& job, LineBuilder& out) {
  out.Str("mpirun -n ").Int(job.world).Str(" -hostfile hostfile --mca btl ^openib --mca btl_tcp_if_include eth0 --tag-output");
  if (job.report_bindings) out.Str(" --report-bindings --bind-to none");
  out.Str(" -x UCX_TLS=\"tcp\"");
  Exports(" -x ", out);
  out.Char(' ').Str(kPython).Str(" -u ").Str(kScript).Str(kScriptArgs);
}

// SlurmRunner.get_cmd: srun -n <world>, the user's --launcher_args (`-l`, and KillOnBadExit's
// flag when set), `--export=ALL,<key>=<value>,...`, then the script.
void SlurmCmd(const Job& job, LineBuilder& out) {
  out.Str("srun -n ").Int(job.world).Str(" -l");
  if (job.kill_on_bad_exit) out.Str(" --kill-on-bad-exit=1");
  out.Str(" --export=ALL");
  Exports(",", out);
  out.Char(' ').Str(kPython).Str(" -u ").Str(kScript).Str(kScriptArgs);
}

// `deepspeed --launcher openmpi|slurm`: the master address (resolved over ssh for openmpi; the
// sbatch script passes --master_addr under Slurm), then the command it runs.
void OtherRunner(const Job& job, TimeNs t, LineBuilder& out) {
  if (job.launcher == v1::LAUNCHER_MPIRUN) {
    Stamp(out, t, "INFO");
    out.Str("runner.py:463:main] Using IP address of ");
    MasterIp(out);
    out.Str(" for node ").Str(job.hostnames[0]).EndLine();
  }
  Stamp(out, t + 3 * kNsPerMs, "INFO");
  out.Str("runner.py:568:main] cmd = ");
  if (job.launcher == v1::LAUNCHER_MPIRUN) {
    OpenMpiCmd(job, out);
  } else {
    SlurmCmd(job, out);
  }
  out.EndLine();
}

}  // namespace

void DeepSpeedMasterIp(LineBuilder& out) { MasterIp(out); }

std::int64_t LineFormatter::Format(const PdshNotice& r, LineBuilder& out) const {
  switch (r.kind) {
    case PdshNoticeKind::kRunner: {
      if (job_.launcher != v1::LAUNCHER_PDSH) {
        OtherRunner(job_, r.time, out);
        return 0;
      }
      Stamp(out, r.time, "INFO");
      out.Str("runner.py:463:main] Using IP address of ");
      MasterIp(out);
      out.Str(" for node ").Str(job_.hostnames[0]).EndLine();
      Stamp(out, r.time + 2 * kNsPerMs, "INFO");
      out.Str("multinode_runner.py:81:get_cmd] Running on the following workers: ");
      for (int node = 0; node < job_.nodes; ++node) out.Str(node > 0 ? "," : "").Str(job_.hostnames[node]);
      out.EndLine();
      Stamp(out, r.time + 3 * kNsPerMs, "INFO");
      out.Str("runner.py:568:main] cmd = pdsh -S -f 1024 -w ");
      for (int node = 0; node < job_.nodes; ++node) out.Str(node > 0 ? "," : "").Str(job_.hostnames[node]);
      out.Str(" export PYTHONPATH=\"/workspace\"; export NCCL_IB_HCA=\"mlx5\"; export NCCL_SOCKET_IFNAME=\"eth0\"; ");
      out.Str("cd /workspace; ").Str(kPython).Str(" -u -m deepspeed.launcher.launch --world_info=");
      std::string json;
      LineBuilder dict(&json);
      WorldDict(job_, "\"", dict);
      UrlsafeBase64(json, out);
      out.Str(" --node_rank=%n --master_addr=");
      MasterIp(out);
      out.Str(" --master_port=29500 ").Str(kScript).Str(kScriptArgs).EndLine();
      return 2;
    }
    case PdshNoticeKind::kLaunch: {
      const TimeNs t = Local(r.node, r.time);
      const int first = r.node * job_.gpus_per_node;
      Host(job_, r.node, out);
      Stamp(out, t, "INFO");
      out.Str("launch.py:138:main] ").Int(r.node).Str(" NCCL_IB_HCA=mlx5").EndLine();
      Host(job_, r.node, out);
      Stamp(out, t + 1 * kNsPerMs, "INFO");
      out.Str("launch.py:145:main] WORLD INFO DICT: ");
      WorldDict(job_, "'", out);
      out.EndLine();
      Host(job_, r.node, out);
      Stamp(out, t + 1 * kNsPerMs, "INFO");
      out.Str("launch.py:151:main] nnodes=").Int(job_.nodes).Str(", num_local_procs=").Int(job_.gpus_per_node);
      out.Str(", node_rank=").Int(r.node).EndLine();
      Host(job_, r.node, out);
      Stamp(out, t + 2 * kNsPerMs, "INFO");
      out.Str("launch.py:162:main] global_rank_mapping=");
      GlobalRankMapping(job_, out);
      out.EndLine();
      Host(job_, r.node, out);
      Stamp(out, t + 2 * kNsPerMs, "INFO");
      out.Str("launch.py:163:main] dist_world_size=").Int(job_.world).EndLine();
      Host(job_, r.node, out);
      Stamp(out, t + 2 * kNsPerMs, "INFO");
      out.Str("launch.py:165:main] Setting CUDA_VISIBLE_DEVICES=");
      for (int local = 0; local < job_.gpus_per_node; ++local) out.Str(local > 0 ? "," : "").Int(job_.PhysicalGpu(first + local));
      out.EndLine();
      for (int local = 0; local < job_.gpus_per_node; ++local) {
        Host(job_, r.node, out);
        Stamp(out, t + (3 + local) * kNsPerMs, "INFO");
        out.Str("launch.py:256:main] process ").Int(job_.worker_pid[first + local]).Str(" spawned with command: ");
        ChildArgv(local, out);
        out.EndLine();
      }
      return 0;
    }
    case PdshNoticeKind::kKilling:
      Host(job_, r.node, out);
      Stamp(out, Local(r.node, r.time), "INFO");
      out.Str("launch.py:315:sigkill_handler] Killing subprocess ");
      out.Int(job_.worker_pid[r.node * job_.gpus_per_node + r.exit_code]).EndLine();
      return 0;
    case PdshNoticeKind::kLaunchError:  // `cmd` is the loop's last value: the last local rank's
      Host(job_, r.node, out);
      Stamp(out, Local(r.node, r.time), "ERROR");
      out.Str("launch.py:321:sigkill_handler] ");
      ChildArgv(job_.gpus_per_node - 1, out);
      out.Str(" exits with return code = ").Int(r.exit_code).EndLine();
      return 0;
    case PdshNoticeKind::kSshExit:
      out.Str("pdsh@login-01: ").Str(job_.hostnames[r.node]).Str(": ssh exited with exit code ").Int(r.exit_code).EndLine();
      return 0;
    case PdshNoticeKind::kSshTimeout:
      Host(job_, r.node, out);
      out.Str("Timeout, server ").Str(job_.hostnames[r.node]).Str(" not responding.").EndLine();
      return 0;
  }
  return 0;
}

}  // namespace denpex::sim
