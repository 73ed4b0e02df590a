// The year of year-less stamps (ingest/resolve.cc, docs/events_format.md `time`): c10, glog and
// syslog lines take it from the incident's dated lines (slurmctld, Ray's driver, the journal's
// ISO stamps, `dmesg -T`); a node's boot lines months older than the job land in the year
// before; with no dated line at all `denpex events` prints the stamp as the log gives it,
// without a year, never in 1970.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "parse/headers.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;
using testing::Write;

std::string Events(const fs::path& dir) {
  std::ostringstream out;
  EXPECT_TRUE(WriteEvents(dir, {.threads = 1}, out).ok());
  return out.str();
}

// The events line of `file`:`line`.
std::string EventAt(const std::string& events, const std::string& file, int line) {
  const std::string key = "\"file\":\"" + file + "\",\"line\":" + std::to_string(line) + ",";
  std::istringstream in(events);
  for (std::string l; std::getline(in, l);) {
    if (l.find(key) != std::string::npos) return l;
  }
  return "";
}

const char* kXidLine = "Mar  2 09:00:17 gpu-0001 kernel: [2138194.382209] NVRM: Xid (PCI:0000:2a:00): 48, pid='<unknown>', "
                       "name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer\n";
const char* kBootXid = "May 14 03:12:44 gpu-0001 kernel: [  812.000000] NVRM: Xid (PCI:0000:18:00): 63, pid='<unknown>', "
                       "name=<unknown>, Row Remapper: New row (0x000108e5ac96) marked for remapping, reset gpu to activate.\n";

TEST(Years, RaysDriverTabAndTheJournalsColonlessZoneAreDated) {
  Header h;
  ASSERT_EQ(ParseHeader("2026-03-02 09:00:22,283\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_7fbcd_00000",
                        &h),
            Match::kYes);
  EXPECT_EQ(h.clock, Clock::kFull);
  EXPECT_EQ(h.time, *ParseRfc3339("2026-03-02T09:00:22.283Z"));
  // journalctl -o short-iso before systemd 250 writes the zone without a colon.
  ASSERT_EQ(ParseHeader("2026-03-02T10:00:17+0100 gpu-0001 kernel: NVRM: GPU at PCI:0000:2a:00: GPU-890b7c7a", &h), Match::kYes);
  EXPECT_EQ(h.clock, Clock::kFull);
  EXPECT_EQ(h.time, *ParseRfc3339("2026-03-02T09:00:17Z"));
}

TEST(Years, SyslogStampsTakeTheYearOfTheSchedulersLines) {
  TempDir tmp;
  Write(tmp.path() / "gpu-0001/kern.log", std::string(kXidLine));
  Write(tmp.path() / "slurmctld.log",
        "[2026-03-02T09:00:00.000] sched: Allocate JobId=42 NodeList=gpu-0001 #CPUs=112 Partition=gpu\n"
        "[2026-03-02T09:10:19.358] _job_complete: JobId=42 WEXITSTATUS 1\n");
  const std::string xid = EventAt(Events(tmp.path()), "gpu-0001/kern.log", 1);
  EXPECT_NE(xid.find("\"time\":\"2026-03-02T09:00:17.000000000Z\""), std::string::npos) << xid;
  EXPECT_EQ(xid.find("yearless_time"), std::string::npos) << xid;
}

// A node up for ten months: its boot-time Xid (May) is from the year before the job (March).
TEST(Years, BootLinesMonthsBeforeTheJobTakeTheYearBefore) {
  TempDir tmp;
  Write(tmp.path() / "gpu-0001/kern.log", std::string(kBootXid) + kXidLine);
  Write(tmp.path() / "gpu-0001/journal.log", "2026-03-02T09:00:17+0000 gpu-0001 kernel: NVRM: GPU at PCI:0000:2a:00: GPU-890b7c7a\n");
  const std::string events = Events(tmp.path());
  EXPECT_NE(EventAt(events, "gpu-0001/kern.log", 1).find("\"time\":\"2025-05-14T03:12:44"), std::string::npos) << events;
  EXPECT_NE(EventAt(events, "gpu-0001/kern.log", 2).find("\"time\":\"2026-03-02T09:00:17"), std::string::npos) << events;
}

// The year is worked out once per calendar day (ingest/resolve.cc): two lines of one day on
// either side of "a month after the latest dated line" still take different years, and a
// leap day lands where the dated year puts it (2026 has no Feb 29: March 1).
TEST(Years, LinesOfOneDayTakeTheirOwnYear) {
  TempDir tmp;
  const std::string xid = std::string(kXidLine).substr(std::string_view("Mar  2 09:00:17").size());
  Write(tmp.path() / "gpu-0001/kern.log", "Apr  2 09:00:16" + xid + "Apr  2 09:00:18" + xid + "Feb 29 12:00:00" + xid);
  Write(tmp.path() / "gpu-0001/journal.log", "2026-03-02T09:00:17+0000 gpu-0001 kernel: NVRM: GPU at PCI:0000:2a:00: GPU-890b7c7a\n");
  const std::string events = Events(tmp.path());
  EXPECT_NE(EventAt(events, "gpu-0001/kern.log", 1).find("\"time\":\"2026-04-02T09:00:16"), std::string::npos) << events;
  EXPECT_NE(EventAt(events, "gpu-0001/kern.log", 2).find("\"time\":\"2025-04-02T09:00:18"), std::string::npos) << events;
  EXPECT_NE(EventAt(events, "gpu-0001/kern.log", 3).find("\"time\":\"2026-03-01T12:00:00"), std::string::npos) << events;
}

// `dmesg -T` carries the year in its stamp: it dates the other nodes' syslog lines.
TEST(Years, DmesgTDatesTheOtherNodesSyslogLines) {
  TempDir tmp;
  Write(tmp.path() / "gpu-0001/kern.log", std::string(kXidLine));
  Write(tmp.path() / "gpu-0002/dmesg.log",
        "[Mon Mar  2 09:00:21 2026] NVRM: Xid (PCI:0000:5d:00): 45, pid=2000550, name=python3, Ch 00000030\n");
  const std::string xid = EventAt(Events(tmp.path()), "gpu-0001/kern.log", 1);
  EXPECT_NE(xid.find("\"time\":\"2026-03-02T09:00:17"), std::string::npos) << xid;
}

// Nothing says the year: the stamp is printed as the log gives it, and the diagnosis says so.
TEST(Years, WithNoDatedLineTheStampIsPrintedWithoutAYear) {
  TempDir tmp;
  Write(tmp.path() / "gpu-0001/kern.log", std::string(kXidLine));
  Write(tmp.path() / "gpu-0001/rank_1.log",
        "[E302 09:00:18.116000000 ProcessGroupNCCL.cpp:1595] [PG 0 (default_pg) Rank 1] Process group watchdog thread "
        "terminated with exception: CUDA error: uncorrectable ECC error encountered\n");
  const std::string events = Events(tmp.path());
  EXPECT_EQ(events.find("1970"), std::string::npos) << events;
  const std::string xid = EventAt(events, "gpu-0001/kern.log", 1);
  EXPECT_NE(xid.find("\"time\":null,\"yearless_time\":\"--03-02T09:00:17.000000000\""), std::string::npos) << xid;
  auto d = Diagnose(tmp.path(), {.threads = 1});
  ASSERT_TRUE(d.ok()) << d.status().message();
  bool said = false;
  for (const auto& p : d->input().problems()) said |= p.find("no line carries a year") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(d->initiator().time(), "");
}

}  // namespace
}  // namespace denpex::engine
