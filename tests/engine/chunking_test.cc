// Results never depend on the chunk size large files are parsed in (ingest/chunks.h): every
// frozen incident of corpora/real and simulated incidents across launchers and torch versions,
// parsed in chunks of 4 KiB, 64 KiB and 1 MiB and as whole files, give the same events, the same
// per-file facts and the same diagnosis; nor does the diagnosis depend on the texts that are only
// shown (parse/parse_log.h's Texts), which its parse leaves out. What a boundary must not change:
// an untimed line at a chunk's start borrows the stamp before it, a watchdog's status line in the
// next chunk is kept, only the file's first lines date the file, and a ChildFailedError table (or a
// traceback) cut by a boundary keeps its entries.
#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "denpex/sim/simulator.h"
#include "incident_dump.h"
#include "ingest/chunks.h"
#include "ingest/file_text.h"
#include "ingest/load.h"
#include "parse/prefix.h"
#include "parse/triggers.h"
#include "report/events_json.h"

namespace denpex::engine {
namespace {
namespace fs = std::filesystem;
using testing::Dump;

constexpr std::size_t kWhole = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kChunks[] = {4 << 10, 64 << 10, 1 << 20};

// The first line where two dumps differ, from each.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = a.rfind('\n', i) == std::string::npos ? 0 : a.rfind('\n', i) + 1;
  return "whole files:\n" + a.substr(from, a.find('\n', i) - from) + "\nchunked:\n" + b.substr(from, b.find('\n', i) - from);
}

void ExpectChunkSizeIndependent(const fs::path& dir, const std::string& what) {
  auto whole = LoadIncident(dir, 2, {}, false, kWhole);
  ASSERT_TRUE(whole.ok()) << what << ": " << whole.status().message();
  const std::string expected = Dump(*whole);
  auto diagnosis = Diagnose(dir, {.threads = 2, .chunk_bytes = kWhole});
  ASSERT_TRUE(diagnosis.ok()) << what;
  const std::string expected_diagnosis = diagnosis->DebugString();
  for (const std::size_t chunk : kChunks) {
    auto chunked = LoadIncident(dir, 2, {}, false, chunk);
    ASSERT_TRUE(chunked.ok()) << what;
    const std::string got = Dump(*chunked);
    if (got != expected) ADD_FAILURE() << what << " in chunks of " << chunk << " bytes: " << FirstDifference(expected, got);
    auto d = Diagnose(dir, {.threads = 2, .chunk_bytes = chunk});
    ASSERT_TRUE(d.ok()) << what;
    if (d->DebugString() != expected_diagnosis) {
      ADD_FAILURE() << what << ": the diagnosis in chunks of " << chunk
                    << " bytes differs: " << FirstDifference(expected_diagnosis, d->DebugString());
    }
  }
  // Nor on the texts that are only shown, which a diagnosis's parse leaves out.
  auto shown = Diagnose(dir, {.threads = 2, .chunk_bytes = kWhole, .shown_texts = true});
  ASSERT_TRUE(shown.ok()) << what;
  if (shown->DebugString() != expected_diagnosis) {
    ADD_FAILURE() << what << ": the diagnosis with the texts only shown differs: "
                  << FirstDifference(expected_diagnosis, shown->DebugString());
  }
}

// The same text parsed whole and in chunks of `chunk` bytes: the same events (line, time,
// kind, watchdog status) and counts.
// `behind`, when given, is handed the bytes the chunked parse has passed.
void ExpectSameParse(std::string_view text, std::size_t chunk, const ReadBehind* behind = nullptr) {
  const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseLog(text, ctx);
  FileContext chunked_ctx = ctx;
  chunked_ctx.read_behind = behind;
  const ParsedLog chunked = ParseChunked(text, chunked_ctx, chunk);
  ASSERT_EQ(chunked.events.size(), whole.events.size());
  EXPECT_EQ(chunked.lines, whole.lines);
  EXPECT_EQ(chunked.malformed, whole.malformed);
  EXPECT_EQ(chunked.broken, whole.broken);
  EXPECT_EQ(chunked.untimed, whole.untimed);
  EXPECT_EQ(chunked.first_dated, whole.first_dated);
  for (std::size_t i = 0; i < whole.events.size(); ++i) {
    const Event &a = whole.events[i], &b = chunked.events[i];
    EXPECT_EQ(b.line, a.line) << i;
    EXPECT_EQ(b.kind, a.kind) << i;
    EXPECT_EQ(b.time, a.time) << i;
    EXPECT_EQ(b.clock, a.clock) << i;
    EXPECT_EQ(b.time_borrowed, a.time_borrowed) << i;
    if (const auto* w = std::get_if<WatchdogTimeout>(&a.detail)) {
      EXPECT_EQ(std::get<WatchdogTimeout>(b.detail).last_enqueued, w->last_enqueued) << i;
      EXPECT_EQ(std::get<WatchdogTimeout>(b.detail).last_completed, w->last_completed) << i;
    }
  }
}

// Untimed lines (torch <= 2.3 c10, srun's task exit) at the start of a chunk borrow the last
// stamp of the chunk before, as in one pass; a status line in the next chunk completes its
// timeout; a stamp with a year past the first lines of a later chunk does not date the file.
std::string WatchdogText(bool tracebacks) {
  std::string text;
  for (int i = 0; i < 200; ++i) {
    const std::string r = std::to_string(i % 8), ss = std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60);
    const std::string head = r + ": [rank" + r + "]:[E302 09:10:" + ss + ".100000000 ProcessGroupNCCL.cpp:";
    text += head + "607] [PG 1 Rank " + r +
            "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, NumelIn=5, NumelOut=5, "
            "Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
    text += head + "1664] [PG 1 Rank " + r +
            "] Exception (either an error or timeout) detected by watchdog at work: 21, last enqueued NCCL work: 21, last "
            "completed NCCL work: 20.\n";
    text += "srun: error: gpu-01: task " + r + ": Exited with exit code 1\n";
    if (i % 7 == 3) text += "slurmstepd: error: *** STEP 42.0 ON gpu-01 CANCELLED AT 2026-03-02T09:10:22 ***\n";
    if (tracebacks && i % 5 == 2) {  // a record that chunk boundaries cut: merged after the in-order merge stops
      text += r + ": Traceback (most recent call last):\n" + r + ":   File \"train.py\", line 12, in <module>\n" + r +
              ": RuntimeError: CUDA error: an illegal memory access was encountered\n";
    }
  }
  return text;
}

TEST(Chunking, BorrowedTimesWatchdogStatusAndDatesCrossChunkBoundaries) {
  const std::string text = WatchdogText(false);
  for (const std::size_t chunk : {std::size_t{512}, std::size_t{4096}, std::size_t{10000}}) ExpectSameParse(text, chunk);
}

// Chunks are merged by whichever worker finishes the one next in line, as they arrive
// (ingest/chunks.cc, OrderedMerge): with 1, 2 or 8 workers (more than this machine's cores, so
// they interleave), hundreds of small chunks, and open records that stop the in-order merge,
// the result is the one-pass parse's.
TEST(Chunking, ChunksMergedAsTheyArriveAreTheSameAtAnyThreadCount) {
  const std::string text = WatchdogText(true);
  for (const int threads : {1, 2, 8}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      for (const std::size_t chunk : {std::size_t{512}, std::size_t{4096}}) ExpectSameParse(text, chunk);
    });
  }
}

// A combined log's iteration lines: each srun task's (or pdsh host's rank's) last survives, in
// the place of its first, and a requeue starts new ones (ingest/chunks.cc folds only where each
// key's latest record is, and copies the survivors once every chunk is merged: their lines
// shifted and their hosts re-interned by the chunk they came from). Chunks of 512 bytes to 16 KiB
// on 1 and 2 workers give the one-pass parse's progress events, host and all.
TEST(Chunking, ProgressRecordsFoldedAcrossChunksAreTheOnePassOnes) {
  std::string text;  // pdsh's host prefix is taken where the first lines show it
  for (int h = 0; h < 64; ++h) text += "gpu-000" + std::to_string(h % 4) + ": SLURM_JOB_ID=7 SLURM_RESTART_COUNT=0\n";
  for (int i = 0; i < 3000; ++i) {
    const int task = (i * 37) % 61;
    char line[160];
    std::snprintf(line, sizeof line, " [2026-03-02 08:%02d:%02d] iteration %8d/  100000 | consumed samples: %d |", i / 60 % 60,
                  i % 60, i / 7, i * 512);
    if (i % 3 == 0) {
      text += "gpu-000" + std::to_string(task % 4) + ": " + std::to_string(task) + ": " + line + "\n";  // a host
    } else {
      text += std::to_string(task) + ": " + line + "\n";
    }
    if (i % 11 == 0) text += std::to_string(task) + ": NCCL INFO Channel 00/0 : " + std::to_string(task) + " -> 1\n";
    // the next runs: their lines are new events (one requeue inside the first chunk, one later)
    if (i == 120 || i == 1700) text += "0: SLURM_RESTART_COUNT=" + std::to_string(i == 120 ? 1 : 2) + "\n";
  }
  const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(text)};
  const ParsedLog whole = ParseLog(text, ctx);
  std::size_t hosted = 0;
  for (const Event& e : whole.events) hosted += e.kind == Kind::kIteration && e.host != kNoStr ? 1 : 0;
  ASSERT_GT(hosted, 0u);
  for (const int threads : {1, 2}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      for (const std::size_t chunk : {std::size_t{512}, std::size_t{4096}, std::size_t{16384}}) {
        const ParsedLog chunked = ParseChunked(text, ctx, chunk);
        ASSERT_EQ(chunked.events.size(), whole.events.size()) << chunk;
        for (std::size_t i = 0; i < whole.events.size(); ++i) {
          const Event &a = whole.events[i], &b = chunked.events[i];
          EXPECT_EQ(b.line, a.line) << chunk << " " << i;
          EXPECT_EQ(b.kind, a.kind) << chunk << " " << i;
          EXPECT_EQ(b.offset, a.offset) << chunk << " " << i;
          EXPECT_EQ(b.task, a.task) << chunk << " " << i;
          EXPECT_EQ(b.rank, a.rank) << chunk << " " << i;
          EXPECT_EQ(chunked.strings.Get(b.host), whole.strings.Get(a.host)) << chunk << " " << i;
          if (const auto* it = std::get_if<Iteration>(&a.detail)) {
            EXPECT_EQ(std::get<Iteration>(b.detail).iteration, it->iteration) << chunk << " " << i;
          }
        }
      }
    });
  }
}

// The ranges a parse gives back (ingest/file_text.h releases a mapping's pages).
class Recorder final : public ReadBehind {
 public:
  void Release(std::uint64_t offset, std::uint64_t length) const override {
    std::lock_guard lock(mu_);
    ranges_.emplace_back(offset, length);
  }
  std::vector<std::pair<std::uint64_t, std::uint64_t>> Sorted() const {
    auto r = ranges_;
    std::sort(r.begin(), r.end());
    return r;
  }

 private:
  mutable std::mutex mu_;
  mutable std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges_;
};

// ~6.5 MB of watchdog timeouts, status lines, untimed srun lines and tracebacks.
std::string LongText() {
  std::string text;
  while (text.size() < (6u << 20)) text += WatchdogText(true);
  return text;
}

// A file's bytes are given back a few MiB behind the line being read, in order and never past
// it, not only once a 32 MiB chunk is parsed; what the parse reads again after (a stamp search
// back through skipped lines, a chunk's last stamps in the merge) is still the file's text.
TEST(Chunking, ReadBehindGivesBackOnlyWhatTheParseHasPassed) {
  const std::string text = LongText();
  const FileContext ctx{.file = 0, .prefixes = SniffPrefixes(text)};
  Recorder one_pass;
  FileContext behind = ctx;
  behind.read_behind = &one_pass;
  const ParsedLog released = ParseLog(text, behind);
  EXPECT_EQ(released.events.size(), ParseLog(text, ctx).events.size());
  const auto ranges = one_pass.Sorted();
  ASSERT_GE(ranges.size(), 2u);  // 6 MB in steps of a few MiB
  std::uint64_t next = 0;
  for (const auto& [offset, length] : ranges) {
    EXPECT_EQ(offset, next);  // contiguous from the text's start
    next = offset + length;
  }
  EXPECT_LT(next, text.size());  // the parse's last bytes are not given back by the parse itself
  for (const std::size_t chunk : {std::size_t{4} << 20, std::size_t{64} << 10}) {
    Recorder chunked;
    ExpectSameParse(text, chunk, &chunked);
    std::uint64_t covered = 0;  // each chunk is given back whole once parsed
    for (const auto& [offset, length] : chunked.Sorted()) {
      EXPECT_LE(offset, covered);
      covered = std::max(covered, offset + length);
    }
    EXPECT_EQ(covered, text.size()) << chunk;
  }
}

// The same through a real mapped file: its chunks read with pread into the workers' buffers, the
// mapping where the merge looks back into a chunk's last lines; the text is the file's bytes.
TEST(Chunking, MappedFileReadByChunksIsTheSame) {
  const std::string text = LongText();
  const fs::path path = fs::temp_directory_path() / ("denpex_read_behind_" + std::to_string(::getpid()) + ".log");
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  auto file = FileText::Open(path);
  fs::remove(path);  // the mapping keeps the bytes
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->view(), text);
  for (const std::size_t chunk : {std::size_t{4} << 20, std::size_t{1} << 20}) ExpectSameParse(file->view(), chunk, &*file);
  EXPECT_EQ(file->view(), text);
}

// Reads a file's bytes from `file` as FileText::Copy reads them with pread (a copy the parse reads
// instead of the text it was given), up to `readable` bytes: past them it cannot (a file
// shorter now).
class Copier final : public ReadBehind {
 public:
  explicit Copier(std::string_view file,
                  std::size_t readable = std::numeric_limits<std::size_t>::max())
      : file_(file), readable_(readable) {}
  void Release(std::uint64_t, std::uint64_t) const override {}
  bool Copy(std::uint64_t offset, std::size_t length, char* into) const override {
    if (offset + length > std::min(readable_, file_.size())) {
      ++refused_;
      return false;
    }
    std::memcpy(into, file_.data() + offset, length);
    copied_ += length;
    return true;
  }
  std::size_t copied() const { return copied_; }
  std::size_t refused() const { return refused_; }

 private:
  std::string_view file_;
  std::size_t readable_;
  mutable std::atomic<std::size_t> copied_{0}, refused_{0};
};

// Each chunk parsed from a copy of its bytes in the worker's buffer (ingest/chunks.cc,
// ParseChunk) is the one-pass parse. An untimed line at a chunk's start borrows a stamp that the
// chunk before held on a line the parse skipped: the merge finds it in the file's text, not in the
// buffer, which holds the next chunk by then (one worker, so its buffer is reused). A file that
// no longer gives a chunk's bytes has that chunk read from the text.
TEST(Chunking, ChunksReadFromCopiesOfTheFileAreTheOnePassParse) {
  std::string text;
  for (int i = 0; i < 400; ++i) {
    const std::string r = std::to_string(i % 8),
                      ss = std::string(i % 60 < 10 ? "0" : "") + std::to_string(i % 60);
    text += r + ": [rank" + r + "]:[E302 09:10:" + ss +
            ".100000000 ProcessGroupNCCL.cpp:607] [PG 1 Rank " + r +
            "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=21, OpType=ALLREDUCE, "
            "NumelIn=5, "
            "NumelOut=5, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
    // a later stamp on a line no recogniser reads, then an untimed line that borrows it
    const std::string skipped = r + ": I0302 09:" + std::to_string(20 + i % 30) + ":" + ss +
                                ".123000 12345 data.py:10] heartbeat ok" +
                                std::string(static_cast<std::size_t>(i * 7 % 53),
                                            '.');  // chunks start on each kind of line
    ASSERT_EQ(LineFilter::Default().Classify(skipped), TriggerLevel::kNone)
        << skipped;  // the parse skips it
    text += skipped + "\n";
    text += "srun: error: gpu-01: task " + r + ": Exited with exit code 1\n";
  }
  for (const int threads : {1, 2}) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
      for (const std::size_t chunk : {std::size_t{512}, std::size_t{4096}}) {
        const Copier copier(text);
        ExpectSameParse(text, chunk, &copier);
        EXPECT_GE(copier.copied(), text.size()) << chunk;  // every chunk from a copy
        const Copier shrunk(text, text.size() / 2);
        ExpectSameParse(text, chunk, &shrunk);
        EXPECT_GT(shrunk.refused(), 0u) << chunk;
      }
    });
  }
}

// A file's last chunks shrink (a quarter of what is left, not below kTailChunkBytes) so the
// workers finish together: every start follows a newline, sizes never grow (but for the line
// each start moves past), full chunks first. The parse over such chunks is the one-pass parse.
TEST(Chunking, LastChunksShrinkAndParseTheSame) {
  std::string text;
  while (text.size() < (26u << 20)) text += LongText();
  constexpr std::size_t kChunk = 6 << 20;
  const std::vector<std::size_t> starts = ChunkStarts(text, kChunk);
  ASSERT_GE(starts.size(), 5u);
  EXPECT_EQ(starts[0], 0u);
  std::vector<std::size_t> sizes;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    if (i > 0) {
      EXPECT_EQ(text[starts[i] - 1], '\n') << i;
    }
    sizes.push_back((i + 1 < starts.size() ? starts[i + 1] : text.size()) - starts[i]);
  }
  constexpr std::size_t kLine = 400;  // longer than any line of the text
  EXPECT_GE(sizes[0], kChunk);
  EXPECT_LE(sizes[0], kChunk + kLine);
  for (std::size_t i = 1; i + 1 < sizes.size(); ++i) {
    EXPECT_LE(sizes[i], sizes[i - 1] + kLine) << i;
    EXPECT_GE(sizes[i], kTailChunkBytes) << i;
  }
  EXPECT_LT(sizes[sizes.size() - 2], kChunk) << "the last chunks shrink";
  ExpectSameParse(text, kChunk);
  // Chunks up to kTailChunkBytes never shrink.
  const std::vector<std::size_t> small = ChunkStarts(text, 1 << 20);
  for (std::size_t i = 1; i + 1 < small.size(); ++i) EXPECT_GE(small[i + 1] - small[i], std::size_t{1} << 20) << i;
}

TEST(Chunking, EveryRealIncidentIsTheSameInChunksOfAnySize) {
  std::vector<fs::path> incidents;
  for (const auto& e : fs::directory_iterator(fs::path(DENPEX_SOURCE_DIR) / "corpora/real")) {
    if (fs::is_directory(e.path() / "incident")) incidents.push_back(e.path() / "incident");
  }
  std::sort(incidents.begin(), incidents.end());
  ASSERT_GE(incidents.size(), 10u);
  for (const fs::path& dir : incidents) ExpectChunkSizeIndependent(dir, dir.parent_path().filename().string());
}

struct Removed {
  fs::path dir;
  ~Removed() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// Simulated at 16 nodes (or the fewest the layout accepts): torchrun, srun (torch 2.1 untimed,
// and --label), mpirun, Kubernetes, Ray, a torchrun log dir; torch 1.13 to 2.6. (A short list of
// scenarios keeps it fast.)
TEST(Chunking, SimulatedIncidentsAcrossLaunchersAreTheSameInChunksOfAnySize) {
  const char* scenarios[] = {
      "scenarios/smoke/sigkill_4096.textproto",          "scenarios/families/hang_4096_srun.textproto",
      "scenarios/families/xid_ecc_1024_srun_torch21.textproto", "scenarios/families/exception_1024_torch113.textproto",
      "scenarios/families/sigsegv_1024_mpirun.textproto", "scenarios/families/k8s_oomkilled_1024_pytorchjob.textproto",
      "scenarios/families/ray_actor_died_1024_sigkill.textproto",
      "scenarios/families/pinned_oom_16384_logdir_torch21.textproto", "scenarios/families/sigsegv_1024_torch26.textproto",
      "scenarios/families/time_limit_2048_srun.textproto",
      // a pod's log holds torchrun's ChildFailedError table: at 4 KiB it crosses chunk boundaries
      "scenarios/families/k8s_hang_4096_jobset_torch26.textproto",
  };
  const fs::path scratch = fs::temp_directory_path() / ("denpex_chunking_" + std::to_string(::getpid()));
  const Removed removed{scratch};
  for (const char* rel : scenarios) {
    const fs::path path = fs::path(DENPEX_SOURCE_DIR) / rel;
    auto scenario = sim::LoadScenario(path);
    for (const char* nodes : {"job.nodes=16", "job.nodes=32", "job.nodes=64"}) {  // the smallest the layout accepts
      const std::vector<std::string> set{nodes, "job.dp=0"};
      if (auto small = sim::LoadScenario(path, set); small.ok()) {
        scenario = std::move(small);
        break;
      }
    }
    ASSERT_TRUE(scenario.ok()) << rel << ": " << scenario.status().message();
    const fs::path out = scratch / path.stem();
    auto sim = sim::Simulate(*scenario, {.out_dir = out, .seed = 3});
    ASSERT_TRUE(sim.ok()) << rel << ": " << sim.status().message();
    ExpectChunkSizeIndependent(out / "incident", path.stem().string());
  }
}

}  // namespace
}  // namespace denpex::engine
