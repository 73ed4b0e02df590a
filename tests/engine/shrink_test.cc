// A log that shrinks while the engine reads it (a live job's log truncated with `> file`, or
// rotated by copytruncate, during `denpex diagnose`) is a counted input problem, never a SIGBUS:
// the mapping's pages past the new end read as NUL bytes (ingest/sigbus_guard.h), the parse
// keeps what lies before the cut and drops what lay after it, and the report names the file.
// A file that grows is read up to the length it had when it was opened.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <oneapi/tbb/task_arena.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "fixture.h"
#include "ingest/chunks.h"
#include "ingest/file_text.h"
#include "parse/prefix.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

constexpr std::size_t kChunk = 64 << 10;  // so a file of a few MiB is parsed in parallel chunks

// ~2.4 MiB of srun-labelled watchdog blocks (an event every ~300 bytes) and untimed task exits.
std::string Log() {
  std::string text;
  for (int i = 0; i < 6000; ++i) {
    const std::string r = std::to_string(i % 8), ss = std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60);
    const std::string head = r + ": [rank" + r + "]:[E302 09:10:" + ss + ".100000000 ProcessGroupNCCL.cpp:";
    text += head + "607] [PG 1 Rank " + r +
            "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=5, "
            "NumelOut=5, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
    text += "srun: error: gpu-01: task " + r + ": Exited with exit code 1\n";
  }
  return text;
}

struct TempFile {
  fs::path path;
  explicit TempFile(const std::string& text)
      : path(fs::temp_directory_path() / ("denpex_shrink_" + std::to_string(::getpid()) + ".log")) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
};

// The parse load.cc runs, on `threads` TBB threads, in chunks of kChunk.
ParsedLog Parse(std::string_view text, int threads, const ReadBehind* behind) {
  const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(text), .read_behind = behind};
  ParsedLog log;
  tbb::task_arena arena(threads);
  arena.execute([&] { log = ParseChunked(text, ctx, kChunk); });
  return log;
}

void ExpectSameEvents(const ParsedLog& got, const ParsedLog& want) {
  ASSERT_EQ(got.events.size(), want.events.size());
  for (std::size_t i = 0; i < want.events.size(); ++i) {
    EXPECT_EQ(got.events[i].line, want.events[i].line) << i;
    EXPECT_EQ(got.events[i].offset, want.events[i].offset) << i;
    EXPECT_EQ(got.events[i].kind, want.events[i].kind) << i;
    EXPECT_EQ(got.events[i].time, want.events[i].time) << i;
  }
}

// The offset just past the newline of the line holding `at`.
std::size_t NextLine(const std::string& text, std::size_t at) { return text.find('\n', at) + 1; }

class ShrinkTest : public ::testing::TestWithParam<int> {};  // the TBB thread count

TEST_P(ShrinkTest, FileTruncatedAtALineUnderItsMappingReadsAsTheFileUpToTheCut) {
  const std::string text = Log();
  TempFile file(text);
  auto mapped = FileText::Open(file.path);
  ASSERT_TRUE(mapped.ok()) << mapped.status().message();
  const std::size_t cut = NextLine(text, text.size() * 2 / 5);
  fs::resize_file(file.path, cut);  // past here the mapping's pages are no longer the file's

  ParsedLog log = Parse(mapped->view(), GetParam(), &*mapped);  // no SIGBUS
  EXPECT_EQ(mapped->Readable(), cut);
  bool ends_cut = true;
  const std::string problem = KeepReadable(*mapped, "gpu-01/slurm.out", &log, &ends_cut);

  EXPECT_TRUE(problem.starts_with("gpu-01/slurm.out: shrank from " + std::to_string(text.size()) + " to " +
                                  std::to_string(cut) + " bytes while it was read"))
      << problem;
  EXPECT_NE(problem.find("rerun once the job has stopped writing it"), std::string::npos);
  EXPECT_FALSE(ends_cut);
  const ParsedLog want = Parse(std::string_view(text).substr(0, cut), 1, nullptr);
  ExpectSameEvents(log, want);
  EXPECT_EQ(log.lines, want.lines);
  EXPECT_GT(want.untimed, 0);  // srun's task exits borrow the stamp before them
  EXPECT_EQ(log.untimed, want.untimed);
  EXPECT_EQ(log.last_line.line, want.last_line.line);
  EXPECT_EQ(log.last_line.offset, want.last_line.offset);
  EXPECT_EQ(log.last_line.length, want.last_line.length);
  EXPECT_FALSE(mapped->LooksBinary());
}

TEST_P(ShrinkTest, FileTruncatedMidLineKeepsNoEventOfTheZeroFilledTail) {
  const std::string text = Log();
  TempFile file(text);
  auto mapped = FileText::Open(file.path);
  ASSERT_TRUE(mapped.ok());
  // Inside a watchdog line near the end: under 1 MiB of NUL bytes follow its head, so the
  // recognisers read that line whole.
  const std::size_t line = text.rfind('\n', text.find("Watchdog caught", text.size() - 200 * 1024)) + 1;
  const std::size_t cut = line + 120;
  ASSERT_LT(cut, NextLine(text, line));
  fs::resize_file(file.path, cut);

  ParsedLog log = Parse(mapped->view(), GetParam(), &*mapped);
  bool ends_cut = false;
  const std::string problem = KeepReadable(*mapped, "slurm.out", &log, &ends_cut);
  EXPECT_NE(problem.find("to " + std::to_string(cut) + " bytes"), std::string::npos) << problem;
  EXPECT_TRUE(ends_cut);
  for (const Event& e : log.events) EXPECT_LE(e.offset + e.length, cut) << e.line;

  ParsedLog want = Parse(std::string_view(text).substr(0, cut), 1, nullptr);
  std::erase_if(want.events, [&](const Event& e) { return e.offset >= line; });  // the cut line itself
  ExpectSameEvents(log, want);
  EXPECT_EQ(log.lines, want.lines);
  EXPECT_EQ(log.last_line.offset, line);  // the head of the cut line, as the file now ends
  EXPECT_EQ(log.last_line.length, 120u);
  EXPECT_EQ(log.last_line.line, want.lines);
}

TEST_P(ShrinkTest, FileTruncatedToNothingHasNoEventsAndIsNotCalledBinary) {
  const std::string text = Log();
  TempFile file(text);
  auto mapped = FileText::Open(file.path);
  ASSERT_TRUE(mapped.ok());
  fs::resize_file(file.path, 0);
  EXPECT_FALSE(mapped->LooksBinary());  // its first page reads as NUL bytes: it shrank, it is not binary
  ParsedLog log = Parse(mapped->view(), GetParam(), &*mapped);
  bool ends_cut = true;
  const std::string problem = KeepReadable(*mapped, "x.log", &log, &ends_cut);
  EXPECT_NE(problem.find("x.log: shrank from " + std::to_string(text.size()) + " to 0 bytes"), std::string::npos);
  EXPECT_TRUE(log.events.empty());
  EXPECT_EQ(log.lines, 0);
  EXPECT_EQ(log.last_line.line, 0u);
  EXPECT_FALSE(ends_cut);
}

// Truncated once the parse is over: what lay past the cut can no longer be quoted from the file.
TEST_P(ShrinkTest, FileTruncatedAfterTheParseDropsWhatLayPastTheCut) {
  const std::string text = Log();
  TempFile file(text);
  auto mapped = FileText::Open(file.path);
  ASSERT_TRUE(mapped.ok());
  ParsedLog log = Parse(mapped->view(), GetParam(), &*mapped);
  const std::size_t cut = NextLine(text, text.size() / 2);
  fs::resize_file(file.path, cut);
  bool ends_cut = true;
  EXPECT_FALSE(KeepReadable(*mapped, "x.log", &log, &ends_cut).empty());
  const ParsedLog want = Parse(std::string_view(text).substr(0, cut), 1, nullptr);
  ExpectSameEvents(log, want);
  EXPECT_EQ(log.lines, want.lines);
  EXPECT_EQ(log.last_line.offset, want.last_line.offset);
}

TEST_P(ShrinkTest, FileThatGrowsIsReadToTheLengthItHadWhenOpened) {
  const std::string text = Log();
  TempFile file(text);
  auto mapped = FileText::Open(file.path);
  ASSERT_TRUE(mapped.ok());
  std::ofstream(file.path, std::ios::app | std::ios::binary) << text;
  ParsedLog log = Parse(mapped->view(), GetParam(), &*mapped);
  EXPECT_EQ(mapped->view().size(), text.size());
  EXPECT_EQ(mapped->Readable(), text.size());
  bool ends_cut = false;
  EXPECT_EQ(KeepReadable(*mapped, "x.log", &log, &ends_cut), "");
  ExpectSameEvents(log, Parse(text, 1, nullptr));
}

// Truncated, a page past the cut touched, then written again whole: the file did not shrink in
// the end, but what that page read (NUL bytes) was not the file's. Also what an I/O error on a
// network file system looks like to the guard.
TEST_P(ShrinkTest, PageReadWhileTheFileWasShortIsCalledUnreadable) {
  const std::string text = Log();
  TempFile file(text);
  auto mapped = FileText::Open(file.path);
  ASSERT_TRUE(mapped.ok());
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t short_length = text.size() / 3, touched = short_length + 3 * page;
  fs::resize_file(file.path, short_length);
  EXPECT_EQ(mapped->view()[touched], '\0');  // faults: from its page on, the view reads NUL bytes
  std::ofstream(file.path, std::ios::binary) << text;
  EXPECT_FALSE(mapped->Shrank());
  const std::size_t cut = touched / page * page;
  EXPECT_EQ(mapped->Readable(), cut);
  ParsedLog log = Parse(mapped->view(), GetParam(), &*mapped);
  bool ends_cut = false;
  const std::string problem = KeepReadable(*mapped, "x.log", &log, &ends_cut);
  EXPECT_TRUE(problem.starts_with("x.log: could not be read past byte " + std::to_string(cut) + " of " +
                                  std::to_string(text.size())))
      << problem;
  for (const Event& e : log.events) EXPECT_LE(e.offset + e.length, cut);
}

INSTANTIATE_TEST_SUITE_P(Threads, ShrinkTest, ::testing::Values(1, 2));

// Many files open at once, each truncated: every mapping is guarded on its own.
TEST(Shrink, EachOfManyMappedFilesKnowsItsOwnCut) {
  const std::string text = Log().substr(0, 256 << 10);
  TempDir tmp;
  std::vector<FileText> open;
  for (int i = 0; i < 40; ++i) {
    const fs::path p = tmp.path() / (std::to_string(i) + ".log");
    std::ofstream(p, std::ios::binary) << text;
    auto t = FileText::Open(p);
    ASSERT_TRUE(t.ok());
    open.push_back(std::move(*t));
    if (i % 2 == 1) fs::resize_file(p, static_cast<std::size_t>(i) * 4096 + 17);
  }
  for (int i = 0; i < 40; ++i) {
    const std::string_view v = open[i].view();
    std::size_t nul = 0;
    for (const char c : v) nul += c == '\0' ? 1 : 0;  // touches every page
    EXPECT_EQ(open[i].Readable(), i % 2 == 1 ? static_cast<std::size_t>(i) * 4096 + 17 : text.size()) << i;
    EXPECT_EQ(nul, text.size() - open[i].Readable()) << i;
  }
}

// How a process dies of a SIGBUS no handler of ours owns: killed by it, or, in a build with
// AddressSanitizer (DENPEX_SANITIZE), reported by ASan's handler, which ours chained to and
// which exits 1.
bool DiedOfForeignSigbus(int status) {
#if defined(__SANITIZE_ADDRESS__)
  if (WIFEXITED(status) && WEXITSTATUS(status) == 1) return true;
#endif
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
}

// A SIGBUS the guard does not own still takes the process down as it did before.
TEST(ShrinkDeathTest, ASigbusOutsideAGuardedMappingStillKills) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string text = Log();
  TempFile file(text);
  auto guarded = FileText::Open(file.path);  // installs the handler
  ASSERT_TRUE(guarded.ok());
  EXPECT_EXIT(
      {
        const fs::path p = file.path.string() + ".raw";
        std::ofstream(p, std::ios::binary) << text;
        const int fd = ::open(p.c_str(), O_RDONLY);
        const auto* bytes = static_cast<const volatile char*>(::mmap(nullptr, text.size(), PROT_READ, MAP_PRIVATE, fd, 0));
        ::ftruncate(::open(p.c_str(), O_WRONLY), 0);
        fs::remove(p);
        std::_Exit(bytes[text.size() - 1] == 0 ? 3 : 4);  // the read faults: never exits
      },
      DiedOfForeignSigbus, "");
}

// End to end: a monitoring log is truncated after it is mapped and before it is parsed (the
// test seam stands for a job's logrotate racing `denpex diagnose`).
fs::path g_victim;
std::uintmax_t g_victim_cut = 0;

void TruncateVictim(const fs::path& path) {
  std::error_code ec;
  if (fs::equivalent(path, g_victim, ec)) fs::resize_file(path, g_victim_cut);
}

bool HasProblem(const v1::Diagnosis& d, const std::string& needle) {
  for (const auto& p : d.input().problems()) {
    if (p.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_P(ShrinkTest, DiagnoseNamesAFileThatShrankWhileReadAndDiagnosesTheRest) {
  TempDir tmp;
  testing::WriteIncident(tmp.path(), testing::Incident{});
  std::string monitor;
  for (int i = 0; monitor.size() < (512 << 10); ++i) monitor += "monitor: sample " + std::to_string(i) + " gpu util 97%\n";
  const std::size_t cut = NextLine(monitor, 100 << 10);
  monitor += "[rank5]:[E302 09:17:01.000000000 ProcessGroupNCCL.cpp:607] [PG 9 Rank 0] Watchdog caught collective "
             "operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
             "for 600000 milliseconds before timing out.\n";
  testing::Write(tmp.path() / "gpu-0002" / "monitor.log", monitor);
  g_victim = fs::canonical(tmp.path() / "gpu-0002" / "monitor.log");
  g_victim_cut = cut;
  SetMappedHookForTest(TruncateVictim);
  auto d = Diagnose(tmp.path(), {.threads = GetParam()});
  SetMappedHookForTest(nullptr);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(fs::file_size(g_victim), cut);  // the seam ran
  EXPECT_EQ(d->initiator().rank(), 3);
  EXPECT_TRUE(HasProblem(*d, "gpu-0002/monitor.log: shrank from " + std::to_string(monitor.size()) + " to " +
                                 std::to_string(cut) + " bytes"));
  EXPECT_EQ(d->input().unreadable_files(), 0);
}

}  // namespace
}  // namespace denpex::engine

namespace denpex::engine {
namespace {

// A log truncated while its writer, which had not opened it to append, went on writing at its
// old offset starts with a hole of NUL bytes: it is read from after the hole, each event cited
// at its place in the file, and the report says so. A file of NUL bytes only is still binary.
TEST_P(ShrinkTest, FileStartingWithAHoleIsReadFromAfterItAsTheFileWithoutIt) {
  TempDir plain, holed;
  testing::WriteIncident(plain.path(), testing::Incident{});
  testing::WriteIncident(holed.path(), testing::Incident{});
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(holed.path())) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  ASSERT_FALSE(files.empty());
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(files[i], std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t hole = i % 2 == 0 ? 100 : (70 << 10);  // read into memory, and mapped
    std::ofstream(files[i], std::ios::binary | std::ios::trunc) << std::string(hole, '\0') << text;
  }
  std::ofstream(holed.path() / "zeros.log", std::ios::binary) << std::string(4096, '\0');
  auto a = Diagnose(plain.path(), {.threads = GetParam()});
  auto b = Diagnose(holed.path(), {.threads = GetParam()});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(b->initiator().rank(), a->initiator().rank());
  ASSERT_EQ(b->evidence_size(), a->evidence_size());
  for (int i = 0; i < a->evidence_size(); ++i) {
    EXPECT_EQ(b->evidence(i).file(), a->evidence(i).file());
    EXPECT_EQ(b->evidence(i).line(), a->evidence(i).line());
    EXPECT_EQ(b->evidence(i).text(), a->evidence(i).text());  // quoted from the file by offset
  }
  const fs::path first = fs::relative(files[1], holed.path());
  EXPECT_TRUE(HasProblem(*b, first.string() + ": starts with " + std::to_string(70 << 10) + " NUL bytes"));
  EXPECT_TRUE(HasProblem(*b, "zeros.log: binary file (NUL bytes), skipped"));
  EXPECT_EQ(b->input().unreadable_files(), 1);
}

}  // namespace
}  // namespace denpex::engine
