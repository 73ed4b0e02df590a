// A slow NIC from its IB port's counters (docs/log_formats.md §5c): a collection script's
// `grep -H . /sys/class/infiniband/*/ports/1/{rate,state,counters/...}` per node
// (`<hostname>/ib_counters.log`, read outside the line parser). Under a slow NIC every rank's
// step timers grow alike (each collective waits for its slowest link), so timing cannot name
// it; the port can: a rate below the job's usual one, or a PortXmitWait far above every other
// port's. Symbol errors and link-downed counts corroborate (a few symbol errors alone are an
// old event, not a slow port). Port mlx5_<i> serves local GPU i; its rank is the node's rank
// with local rank i, else (srun, no line ties tasks to hosts) the i-th task of the node's block
// in slurmctld's `sched: Allocate ... NodeList=` order.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/facts.h"
#include "analyze/finding.h"
#include "incident/incident.h"

namespace denpex::engine {

struct SlowPort {
  std::int32_t node = -1;
  std::int32_t device = -1;  // mlx5_<device>: the local GPU it serves
  std::int32_t rank = -1;    // that GPU's global rank, when known
  bool by_allocation = false;  // the rank from slurmctld's node list (srun's block distribution)
  std::uint32_t file = 0;
  LineSpan line;             // its most telling line (symbol_error when it errs, else rate or xmit wait)
  bool half_rate = false;
  std::int64_t symbol_error = 0, link_downed = 0;
  double wait_ratio = 0;     // its port_xmit_wait over the median port's
  std::int32_t ports = 0;    // ports read across the job
};

// nullopt without counter files, or when no one port stands out.
std::optional<SlowPort> FindSlowPort(const Incident& inc, const JobFacts& facts);

// A port whose counters show link trouble: symbol errors in the hundreds or more (a few are an
// old event) or a link-downed count.
struct ErringPort {
  std::int32_t node = -1;
  std::int32_t device = -1;  // mlx5_<device>
  std::uint32_t file = 0;
  LineSpan line;             // its symbol_error line
  std::int64_t symbol_error = 0, link_downed = 0;
};

// The erring ports among those of `nodes` (empty without counter files).
std::vector<ErringPort> FindErringPorts(const Incident& inc, const std::vector<std::int32_t>& nodes);

// Fills `f`: the rank (else the node), class STRAGGLER, owner NETWORK, the counter line, recovery.
void DiagnoseSlowPort(const Incident& inc, const JobFacts& facts, const SlowPort& p, Finding* f);

}  // namespace denpex::engine
