// The RAS poller's file (scenario `nccl_ras`, docs/log_formats.md §29): each poll's `date -Is`
// line and `ncclras`'s report of the job's NCCL communicators, as text (its wording a row per
// range of NCCL releases, kRasTextShapes) or as `ncclras -f json`'s document (kRasJsonShapes).
// The communicators are the world communicator (torch's default group: every rank, comm rank =
// global rank) and the job's TP and DP groups of two ranks or more; the pipeline's p2p
// communicators are left out (RAS counts no send/recv).
#pragma once

#include <string>
#include <string_view>

#include "model/job.h"
#include "model/records.h"
#include "profiles.h"

namespace denpex::sim {

class NcclRasFormatter {
 public:
  NcclRasFormatter(const Job& job, const NcclProfile& nccl);
  // The poll's `date -Is` line (the first node's clock) and, when a RAS server answered, its
  // report.
  void Append(std::string& out, const NcclRasReport& report) const;
  std::string Text(const NcclRasReport& report) const;
  std::string Json(const NcclRasReport& report) const;
  // The first node's clock at the poll: the file's time after its last report.
  TimeNs NodeTime(TimeNs t) const;

 private:
  const Job& job_;
  std::string_view release_;  // "2.26.2"
  std::string_view cuda_;     // "12.8": the banner's "+cuda" part
  int cuda_version_;          // 12080
};

}  // namespace denpex::sim
