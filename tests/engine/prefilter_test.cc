// The line pre-filter (engine/src/parse/triggers.h): the SIMD search finds every trigger
// literal wherever it sits and counts lines exactly, and a pre-filtered parse gives exactly
// what reading every line gives, on simulated incidents of every family (so a recogniser
// whose family table lacks a row for a shape the simulator writes fails here).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "denpex/sim/simulator.h"
#include "incident_dump.h"
#include "ingest/chunks.h"
#include "ingest/load.h"
#include "parse/lines.h"
#include "parse/parse_log.h"
#include "parse/progress.h"
#include "parse/scan.h"
#include "parse/triggers.h"
#include "report/events_json.h"

namespace denpex::engine {
namespace {

namespace fs = std::filesystem;
using testing::Dump;

constexpr std::string_view kChatterLine =
    "12493: gpu-1562:2752775:2752775 [5] NCCL INFO Channel 01/0 : 12493[5] -> 12494[6] via P2P/CUMEM/read";

TEST(LineFilter, FindsEveryTriggerAtEveryOffsetAndCountsLines) {
  const LineFilter& filter = LineFilter::Default();
  for (const Trigger& t : AllTriggers()) {
    for (std::size_t at = 0; at < 70; at += 3) {
      // Chatter lines around a line holding the literal at `at`, so the literal falls at every
      // place in a 32-byte block and across blocks.
      std::string line = std::string(kChatterLine.substr(0, at)) + std::string(t.literal) + " tail";
      std::string text;
      for (int i = 0; i < 5; ++i) text += std::string(kChatterLine) + "\n";
      const std::size_t begin = text.size();
      text += line + "\n" + std::string(kChatterLine) + "\n";
      const LineFilter::Found f = filter.Next(text, 0, kMaxLineBytes);
      ASSERT_TRUE(f.found) << "'" << t.literal << "' at " << at;
      EXPECT_EQ(f.begin, begin) << t.literal;
      EXPECT_EQ(f.end, begin + line.size()) << t.literal;
      EXPECT_EQ(f.newlines, 5) << t.literal;
      EXPECT_GE(static_cast<int>(f.level), static_cast<int>(t.level)) << t.literal;
      EXPECT_GE(static_cast<int>(filter.Classify(line)), static_cast<int>(t.level)) << t.literal;
      // The literal as the very end of the text (the zero-padded tail).
      const std::string tail = std::string(kChatterLine) + "\n" + line.substr(0, at + t.literal.size());
      const LineFilter::Found g = filter.Next(tail, 0, kMaxLineBytes);
      ASSERT_TRUE(g.found) << t.literal << " at the end";
      EXPECT_EQ(g.newlines, 1);
    }
  }
}

// The placement every process uses (parse/filter_placement.inc) is the one the cost model makes of
// today's triggers: a trigger added, removed or changed without writing the file again fails here.
TEST(LineFilter, TheShippedPlacementIsTheCostModels) {
  const std::vector<Trigger> triggers = AllTriggers();
  const std::string model = LineFilter(triggers).PlacementFile();
  const fs::path shipped = fs::path(DENPEX_SOURCE_DIR) / "engine/src/parse/filter_placement.inc";
  std::ifstream in(shipped);
  std::stringstream file;
  file << in.rdbuf();
  if (file.str() != model) {
    const fs::path wanted = fs::path(::testing::TempDir()) / "filter_placement.inc";
    std::ofstream(wanted) << model;
    std::istringstream a(file.str()), b(model);
    std::string row, want;
    int n = 1;
    while (std::getline(a, row) && std::getline(b, want) && row == want) ++n;
    FAIL() << shipped << " is not the cost model's placement of today's triggers (line " << n
           << ": '" << row << "', the model's '" << want
           << "'): write it again with `scan_bench --placement` "
           << "(a build with -DDENPEX_BUILD_BENCHMARKS=ON), or copy " << wanted << " over it";
  }
  EXPECT_EQ(ShippedPlacement().size(), LineFilter::Default().size());
  EXPECT_EQ(LineFilter::Default().PlacementFile(), model);
}

// A placement that lists every literal is the one the filter takes, whatever it is; one that
// misses a literal or names one no longer a trigger is set aside for the cost model's. Each finds
// every literal.
TEST(LineFilter, TakesAWholePlacementAndSetsAsideAPartialOne) {
  const std::vector<Trigger> triggers = AllTriggers();
  const std::string model = LineFilter(triggers).PlacementFile();
  std::vector<PlacedLiteral> all_in_one(ShippedPlacement().begin(), ShippedPlacement().end());
  for (PlacedLiteral& p : all_in_one) p.offset = 0, p.bucket = 7;
  const LineFilter crowded(triggers, all_in_one);
  const std::string rows = crowded.PlacementFile();
  std::size_t in_bucket_7 = 0;
  for (std::size_t at = rows.find(", 0, 7},\n"); at != std::string::npos;
       at = rows.find(", 0, 7},\n", at + 1))
    ++in_bucket_7;
  EXPECT_EQ(in_bucket_7, all_in_one.size());  // every literal where the placement put it
  EXPECT_NE(rows, model);

  std::vector<PlacedLiteral> partial = all_in_one;
  partial.pop_back();
  EXPECT_EQ(LineFilter(triggers, partial).PlacementFile(), model);
  std::vector<PlacedLiteral> renamed = all_in_one;
  renamed.back().literal = "no such trigger";
  EXPECT_EQ(LineFilter(triggers, renamed).PlacementFile(), model);

  for (const Trigger& t : triggers) {
    const std::string text = std::string(kChatterLine) + "\n" +
                             std::string(kChatterLine.substr(0, 9)) + std::string(t.literal) +
                             " tail\n";
    const LineFilter::Found f = crowded.Next(text, 0, kMaxLineBytes);
    ASSERT_TRUE(f.found) << t.literal;
    EXPECT_EQ(f.begin, kChatterLine.size() + 1) << t.literal;
    EXPECT_GE(static_cast<int>(f.level), static_cast<int>(t.level)) << t.literal;
  }
}

// The hooks scan_bench --candidates counts with: every literal is a candidate that Verify
// finds somewhere in a line that holds it, and the commonest chatter line is no candidate.
TEST(LineFilter, BucketsAtAndVerifyAtSeeWhatTheScanSees) {
  const LineFilter& filter = LineFilter::Default();
  for (const Trigger& t : AllTriggers()) {
    if (t.literal.size() < 2) continue;
    const std::string line = std::string(kChatterLine.substr(0, 40)) + std::string(t.literal) + " tail";
    bool found = false;
    for (std::size_t q = 0; q < line.size() && !found; ++q) {
      found = filter.BucketsAt(line, q) != 0 && filter.VerifyAt(line, q, 0, line.size()) != TriggerLevel::kNone;
    }
    EXPECT_TRUE(found) << t.literal;
  }
  for (std::size_t q = 0; q < kChatterLine.size(); ++q) EXPECT_EQ(filter.BucketsAt(kChatterLine, q), 0) << q;
}

// The lines NCCL_DEBUG=INFO prints once per channel and peer (a quarter to a half of a large job's
// output), and its transport line, are no candidate anywhere: not only no fingerprint of them
// (FingerprintsMissTheCommonestChatter) but no window that a bucket's nibble cross product
// accepts. A bucket that accepts `Ser` of `[Proxy Service` makes a quarter of the benchmark's
// padding false candidates (docs/benchmarks.md, "The pre-filter's sample").
TEST(LineFilter, NoBucketAcceptsTheCommonestNcclLines) {
  constexpr std::string_view kPerChannel[] = {
      kChatterLine,
      " 8727: gpu-1091:4007:4208 [7] NCCL INFO [Proxy Service 8] Connected to proxy localRank 7 -> connection 0x7f0000a3c4",
      "gpu-0512:88210:88371 [6] NCCL INFO [Proxy Service 13] Connected to proxy localRank 6 -> connection 0x7f1ce4001f80",
      "gpu-0346:4005:4230 [5] NCCL INFO Channel 21/1 : 2765[5] -> 2766[6] via P2P/IPC/read",
      "gpu-1462:70476:70476 [1] NCCL INFO Channel 00/0 : 11[1] -> 12[1] [send] via NET/IB/1/GDRDMA",
      "gpu-0733:31337:31402 [4] NCCL INFO Channel 13/1 : 5860[4] -> 5868[4] [receive] via NET/IB/2/GDRDMA",
      " 3349: gpu-0419:4005:4005 [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
      "[3]mlx5_3:1/IB [RO]; OOB ib0:10.13.21.1<0>",
  };
  const LineFilter& filter = LineFilter::Default();
  for (std::string_view line : kPerChannel) {
    for (std::size_t q = 0; q < line.size(); ++q) {
      EXPECT_EQ(filter.BucketsAt(line, q), 0) << "'" << line.substr(q, 3) << "' of " << line;
    }
  }
}

TEST(LineFilter, ChatterHoldsNoTrigger) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += std::string(kChatterLine) + "\n";
  const LineFilter::Found f = LineFilter::Default().Next(text, 0, kMaxLineBytes);
  EXPECT_FALSE(f.found);
  EXPECT_EQ(f.newlines, 1000);
  EXPECT_EQ(f.long_lines, 0);
  EXPECT_EQ(f.begin, text.size());  // no unterminated last line
}

// A journal's `unit[pid]: ` (journalctl's short format) ends in `]:`, as a torchrun tag does, but
// its bracket is glued to the unit's name: not a tag, so a job's output collected through the
// journal is not read line by line for its prefixes. A tag behind the journal's prefix, or one
// opening the line, is still one.
TEST(LineFilter, AJournalsUnitAndPidIsNoTag) {
  const LineFilter& filter = LineFilter::Default();
  const std::string journal = "Mar 02 09:00:02 login-01 python3[40411]: ";
  std::string text;
  for (int i = 0; i < 1000; ++i) text += journal + std::string(kChatterLine) + "\n";
  const LineFilter::Found f = filter.Next(text, 0, kMaxLineBytes);
  EXPECT_FALSE(f.found);
  EXPECT_EQ(f.newlines, 1000);
  for (const std::string_view unit :
       {"python3[40411]: ", "torchrun[7]: ", "srun[123456]: ", "slurmd[1]: "})
    EXPECT_EQ(filter.Classify(std::string(unit) + "0: plain output"), TriggerLevel::kNone) << unit;
  for (const std::string& tagged :
       {journal + "[default3]: plain output", journal + "11689: [default3]: plain output",
        std::string("[default3]: plain output"), std::string("[3]: plain output"),
        std::string("trainer/0 [3]: plain output"),
        std::string("2026-03-02T09:00:02Z [default3]: plain output"),
        std::string("sn01:[0]: plain output"),
        std::string("python3[40411]:[default3]: plain output")}) {
    EXPECT_EQ(filter.Classify(tagged), TriggerLevel::kPrefix) << tagged;
    EXPECT_TRUE(filter.Next(tagged + "\n", 0, kMaxLineBytes).found) << tagged;
  }
}

// The lines NCCL_DEBUG=INFO prints by the million at 16k ranks: a fingerprint found in one of
// them sends every such line to the verifier (`Pro` of `[Proxy Service` or `han` of `Channel`
// would make millions of false candidates on the padded 16k-rank log).
TEST(LineFilter, FingerprintsMissTheCommonestChatter) {
  constexpr std::string_view kCommon[] = {
      kChatterLine,
      " 8727: gpu-1091:4007:4208 [7] NCCL INFO [Proxy Service 8] Connected to proxy localRank 7 -> connection 0x7f00000008",
      " 3349: gpu-0419:4005:4005 [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB "
      "[3]mlx5_3:1/IB [RO]; OOB ib0:10.13.21.1<0>",
      "gpu-0218:635442:635442 [6] NCCL INFO Trees [0] 90/-1/-1->89->88",
      "gpu-0221:2777299:2777299 [3] NCCL INFO Connected all rings",
      "gpu-1558:2726437:2726437 [6] NCCL INFO comm 0x550f824207d0 rank 12462 nranks 16384 cudaDev 6 nvmlDev 6 "
      "busId ba000 commId 0x74766af07776959e - Init START",
  };
  for (std::string_view fp : LineFilter::Default().Fingerprints()) {
    for (std::string_view line : kCommon) EXPECT_EQ(line.find(fp), std::string_view::npos) << "'" << fp << "' in " << line;
  }
}

TEST(LineFilter, CountsLongLinesAndAnUnterminatedLastLine) {
  std::string text = "short\n" + std::string(100, 'x') + "\r\n" + std::string(101, 'y') + "\n" +
                     std::string(5000, 'z') + "\nlast";
  const LineFilter::Found f = LineFilter::Default().Next(text, 0, 100);
  EXPECT_FALSE(f.found);
  EXPECT_EQ(f.newlines, 4);
  EXPECT_EQ(f.long_lines, 2);  // 101 y's and 5000 z's; 100 x's plus '\r' is not long
  EXPECT_EQ(text.substr(f.begin), "last");
}

// The AVX2 search and the byte-at-a-time one (CPUs without AVX2) must find the same lines, at
// the same level, with the same newline and long-line counts, wherever the literals, newlines,
// carriage returns and long lines fall relative to the 32- and 64-byte blocks. Random text
// from the bytes logs are made of (and some that are not), with every trigger planted, and
// srun labels (`  12: `) now and then: where a search says a line holds no label colon from
// some place on, it holds none.
TEST(LineFilter, ScalarAndSimdSearchesAgree) {
  const LineFilter& fast = LineFilter::Default();
  const LineFilter scalar(AllTriggers(), LineFilter::Search::kScalar);
  const std::vector<Trigger> triggers = AllTriggers();
  std::mt19937 rng(7);
  constexpr std::string_view kBytes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 :[]()/.-_=,|\t\r";
  int colon_free = 0, colon_unknown = 0;  // lines found with and without the label-colon answer
  for (int round = 0; round < 80; ++round) {
    // Long lines: over 100 bytes, or over 10 (a 64-byte block then holds several), or over
    // 20,000 (the fast loop's limits, as the parser's 1 MiB; runs of up to 45,000 bytes
    // without a newline make it hand over to the exact loop).
    const std::size_t limit = round % 4 == 2 ? 10 : round % 4 == 3 ? 20000 : 100;
    std::string text;
    const std::size_t size = limit == 20000 ? 200 + rng() % 200000 : 200 + rng() % 6000;
    while (text.size() < size) {
      const unsigned pick = rng() % 100;
      if (pick < 8) {
        text += '\n';
      } else if (pick < 10) {
        text += triggers[rng() % triggers.size()].literal;
      } else if (pick < 11) {
        text.append(rng() % (limit == 20000 ? (rng() % 50 == 0 ? 45000 : 3000) : 300), 'x');  // a long line now and then
      } else if (pick < 12) {
        text += static_cast<char>(0x80 + rng() % 128);  // not ASCII
      } else if (pick < 13) {
        text += kChatterLine;
      } else if (pick < 14) {
        text += "  12: ";
      } else {
        text += kBytes[rng() % kBytes.size()];
      }
    }
    if (round % 2 == 1) text += '\n';
    // Walk it as the parser does: from each found line's end to the next, from every start.
    for (std::size_t from = 0; from < text.size();) {
      const LineFilter::Found a = fast.Next(text, from, limit, true);
      const LineFilter::Found b = scalar.Next(text, from, limit, true);
      ASSERT_EQ(a.found, b.found) << "round " << round << " from " << from;
      EXPECT_EQ(a.begin, b.begin) << "round " << round << " from " << from;
      EXPECT_EQ(a.end, b.end) << "round " << round << " from " << from;
      EXPECT_EQ(a.level, b.level) << "round " << round << " from " << from;
      EXPECT_EQ(a.newlines, b.newlines) << "round " << round << " from " << from;
      EXPECT_EQ(a.long_lines, b.long_lines) << "round " << round << " from " << from;
      // And both against counting by hand: the lines in [from, begin), and those over `limit`
      // (a '\r' before the newline not counted; the unterminated last line counts when not found).
      std::int64_t newlines = 0, long_lines = 0;
      for (std::size_t line = from; line < a.begin || (!a.found && line < text.size());) {
        const std::size_t e = std::min(text.find('\n', line), text.size());
        std::size_t len = e - line;
        if (len > 0 && text[e - 1] == '\r') --len;
        long_lines += len > limit ? 1 : 0;
        newlines += e < text.size() ? 1 : 0;
        line = e + 1;
      }
      EXPECT_EQ(a.newlines, newlines) << "round " << round << " from " << from;
      EXPECT_EQ(a.long_lines, long_lines) << "round " << round << " from " << from;
      if (!a.found) break;
      EXPECT_EQ(a.end, std::min(text.find('\n', a.begin), text.size())) << "round " << round << " from " << from;
      EXPECT_EQ(a.no_label_colon_from, b.no_label_colon_from) << "round " << round << " from " << from;
      EXPECT_EQ(fast.Next(text, from, limit).no_label_colon_from, std::string_view::npos);  // not asked
      if (a.no_label_colon_from != std::string_view::npos) {
        ++colon_free;
        ASSERT_GE(a.no_label_colon_from, a.begin);
        for (std::size_t c = std::max<std::size_t>(a.no_label_colon_from, 1); c + 1 < a.end; ++c) {
          ASSERT_FALSE(text[c] == ':' && text[c + 1] == ' ' && IsDigit(text[c - 1]))
              << "round " << round << " from " << from << " colon at " << c;
        }
      } else {
        ++colon_unknown;
      }
      // The level found is the whole line's (Next classifies only what follows its first hit).
      const std::string_view found = std::string_view(text).substr(a.begin, a.end - a.begin);
      EXPECT_EQ(a.level, scalar.Classify(found)) << "round " << round << " from " << from;
      EXPECT_EQ(fast.Classify(found), scalar.Classify(found));
      from = a.end + 1;
    }
    // Every line on its own, as Classify sees lines inside an open record.
    for (std::size_t begin = 0; begin < text.size();) {
      std::size_t end = text.find('\n', begin);
      if (end == std::string::npos) end = text.size();
      const std::string_view line = std::string_view(text).substr(begin, end - begin);
      ASSERT_EQ(fast.Classify(line), scalar.Classify(line)) << "round " << round << " line at " << begin;
      begin = end + 1;
    }
  }
  EXPECT_GT(colon_free, 1000);     // the answer is given on most lines found in the 64-byte loop
  EXPECT_GT(colon_unknown, 100);   // and not where a label colon follows (or the text ends)
}

// The AVX2 search assumes ASCII fingerprints; a literal that is not ASCII is still found.
TEST(LineFilter, FindsLiteralsThatAreNotAscii) {
  const Trigger triggers[] = {{"\xc3\xa9t\xc3\xa9 ", TriggerLevel::kRecord}, {"NCCL WARN", TriggerLevel::kRecord}};
  const LineFilter filter(triggers);
  const std::string text = std::string(kChatterLine) + "\nl'\xc3\xa9t\xc3\xa9 dernier\n" + std::string(kChatterLine) + "\n";
  const LineFilter::Found f = filter.Next(text, 0, kMaxLineBytes);
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.begin, kChatterLine.size() + 1);
  EXPECT_EQ(f.newlines, 1);
  EXPECT_EQ(f.level, TriggerLevel::kRecord);
}

// A candidate verifies only where every byte of the literal matches: one byte changed anywhere
// (the middle words of a literal over 16 bytes, the last byte of a 2-byte one) is no hit.
TEST(LineFilter, ALiteralOfAnyLengthVerifiesOnlyWhenEveryByteMatches) {
  const std::string alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP";
  for (std::size_t n = 2; n <= 40; ++n) {
    const std::string literal = alphabet.substr(0, n);
    const Trigger triggers[] = {{literal, TriggerLevel::kRecord}};
    const LineFilter filter(triggers);
    const std::string line = "x " + literal + " y";
    const LineFilter::Found whole = filter.Next(line, 0, kMaxLineBytes);
    EXPECT_TRUE(whole.found && whole.level == TriggerLevel::kRecord) << n;
    for (std::size_t k = 0; k < n; ++k) {
      std::string changed = line;
      changed[2 + k] = '#';
      EXPECT_FALSE(filter.Next(changed, 0, kMaxLineBytes).found) << n << " byte " << k;
    }
  }
}

TEST(LineFilter, FindsTheLastTimeOrDateAnywhere) {
  EXPECT_EQ(LastStampPattern("no stamp here: 1:2 and 12-x", 27), std::string_view::npos);
  for (std::size_t pad = 0; pad < 160; ++pad) {  // across the 64-byte blocks of the search
    for (const std::string stamp : {"09:27:14", "2026-03-02", "E0302 23:59:60"}) {
      // near misses after it: a lone colon, lone hyphens, a month without its day
      const std::string text = std::string(pad, 'x') + stamp +
                               " tail 1:2 gpu-01 12-x 12-34 2026-03" + std::string(pad % 70, 'y');
      const std::size_t at = LastStampPattern(text, text.size());
      ASSERT_NE(at, std::string_view::npos) << stamp << " at " << pad;
      EXPECT_GE(at, pad) << stamp;  // inside the stamp, not in the tail's near misses
      EXPECT_LT(at, pad + stamp.size()) << stamp;
      EXPECT_EQ(LastStampPattern(text, pad), std::string_view::npos);  // nothing before it
      // Cut by `end`: what lies past it counts as nothing, so the stamp is no longer whole.
      EXPECT_EQ(LastStampPattern(text, pad + 4), std::string_view::npos) << stamp << " at " << pad;
    }
  }
}

// The search agrees with reading every place: random text dense in digits, colons and hyphens,
// every end, across the 64-byte blocks and the zero-padded first one.
TEST(LineFilter, TheLastTimeOrDateIsTheOneReadingEveryPlaceFinds) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto reference = [&](std::string_view t, std::size_t end) {
    for (std::size_t j = end; j-- > 0;) {
      const auto d = [&](std::size_t k) { return j + k < end && is_digit(t[j + k]); };
      const auto is = [&](std::size_t k, char c) { return j + k < end && t[j + k] == c; };
      const bool digits = d(0) && d(1) && d(3) && d(4) && d(6) && d(7);
      if (digits && ((is(2, '-') && is(5, '-')) || (is(2, ':') && is(5, ':')))) return j;
    }
    return std::string_view::npos;
  };
  std::uint64_t state = 12345;
  const auto next = [&] {
    return (state = state * 6364136223846793005ull + 1442695040888963407ull) >> 33;
  };
  const std::string alphabet = "0123456789::--- x\n";
  for (int round = 0; round < 300; ++round) {
    std::string text(next() % 300, ' ');
    for (char& c : text) c = next() % 4 == 0 ? 'y' : alphabet[next() % alphabet.size()];
    for (std::size_t end = 0; end <= text.size(); ++end) {
      ASSERT_EQ(LastStampPattern(text, end), reference(text, end))
          << "round " << round << " end " << end << ": " << text;
    }
  }
}

TEST(LineFilter, ParsedLineNumbersStayExact) {
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    text += std::string(kChatterLine) + "\n";
    if (i % 700 == 3) text += "RuntimeError: boom " + std::to_string(i) + "\n";
  }
  const ParsedLog fast = ParseLog(text, FileContext{.prefixes = SniffPrefixes(text)});
  const ParsedLog every = ParseLog(text, FileContext{.prefixes = SniffPrefixes(text), .every_line = true});
  ASSERT_EQ(fast.events.size(), 5u);
  EXPECT_EQ(fast.lines, every.lines);
  for (std::size_t i = 0; i < fast.events.size(); ++i) {
    EXPECT_EQ(fast.events[i].line, every.events[i].line);
    EXPECT_EQ(fast.events[i].offset, every.events[i].offset);
    EXPECT_EQ(text.substr(fast.events[i].offset, fast.events[i].length).substr(0, 14), "RuntimeError: ");
  }
  EXPECT_EQ(fast.last_line.line, every.last_line.line);
  EXPECT_EQ(fast.last_line.offset, every.last_line.offset);
}

// The pre-filtered parse `fast` gave the events the every-line parse `every` gave, with the same
// places, times, ranks and iteration fields; returns how many are iterations.
std::size_t ExpectSameProgressEvents(const ParsedLog& fast, const ParsedLog& every) {
  EXPECT_EQ(fast.events.size(), every.events.size());
  std::size_t iterations = 0;
  for (std::size_t i = 0; i < std::min(fast.events.size(), every.events.size()); ++i) {
    const Event &a = fast.events[i], &b = every.events[i];
    EXPECT_EQ(a.line, b.line) << i;
    EXPECT_EQ(a.time, b.time) << i;
    EXPECT_EQ(a.clock, b.clock) << i;
    EXPECT_EQ(a.kind, b.kind) << i;
    EXPECT_EQ(a.rank, b.rank) << i;
    EXPECT_EQ(a.local_rank, b.local_rank) << i;
    EXPECT_EQ(a.task, b.task) << i;
    EXPECT_EQ(a.offset, b.offset) << i;
    EXPECT_EQ(a.length, b.length) << i;
    if (const auto* it = std::get_if<Iteration>(&a.detail)) {
      ++iterations;
      EXPECT_EQ(it->iteration, std::get<Iteration>(b.detail).iteration) << i;
      EXPECT_EQ(it->total, std::get<Iteration>(b.detail).total) << i;
    }
  }
  return iterations;
}

// Megatron iteration lines take a shortcut past the prefix and header parsers (LogParser::
// ProgressLine); every_line reads them the general way. Both must agree on every shape near the
// shortcut's edges: srun labels of any width, no label, 8-digit "labels", stamps that change
// date or do not parse, cut lines, and iteration lines inside a traceback.
TEST(Prefilter, ProgressLinesMatchTheGeneralParser) {
  const std::vector<std::string> shapes = {
      "%s [2026-03-02 08:50:%02d] iteration %d/ 100000 | consumed samples: 512 | lm loss: 2.0E+00 |",
      "%s [2026-03-03 23:59:%02d] iteration      %d/  100000 | elapsed time per iteration (ms): 1500.2 |",
      "%s [2026-13-02 08:50:%02d] iteration %d/ 100000 |",   // no such month: malformed
      "%s [2026-03-02 24:50:%02d] iteration %d/ 100000 |",   // no such hour
      "%s [2026-03-02T08:51:%02d] iteration %d/100000 |",
      "%s [2026-03-02 08:52:%02d.5] iteration %d/ 100000 |", // a fraction: not the 19-byte stamp
      "%s [2026-03-02 08:53:%02d] iteration %d/ x |",        // no total
      "%s [2026-03-02 08:54:%02d] iteration x%d",
      "%s [2026-03-02 08:55:%02d]  iteration %d/ 1 |",       // not `] iteration `
      "%s [2026-03-02 08:56:%02d",
  };
  const std::vector<std::string> labels = {"", "3:", "  7:", "12345:", "1234567:", "12345678:", " 0:", "x1:"};
  std::string text = "gpu-0001:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 8 cudaDev 0 busId 1000 commId 0x2 - Init COMPLETE\n";
  char buf[512];
  for (int i = 0; i < 400; ++i) {
    const std::string& label = labels[static_cast<std::size_t>(i * 7) % labels.size()];
    std::snprintf(buf, sizeof buf, shapes[static_cast<std::size_t>(i * 3) % shapes.size()].c_str(), label.c_str(), i % 61, i);
    text += std::string(buf) + "\n";
    if (i % 37 == 5) text += "Traceback (most recent call last):\n  File \"x.py\", line 1\n";
    if (i % 37 == 6) text += "RuntimeError: boom\n";
    if (i % 53 == 9) text += "[rank3]: RuntimeError: rank " + std::to_string(i) + "\n";
    if (i % 41 == 2) text += std::string(kChatterLine) + "\n";
  }
  text += " [2026-03-02 08:57:00] iteration 9/ 10 |";  // the last line, unterminated
  for (const std::int32_t name_rank : {-1, 5}) {
    const FileContext ctx{.name_rank = name_rank, .prefixes = SniffPrefixes(text)};
    FileContext every_ctx = ctx;
    every_ctx.every_line = true;
    const ParsedLog fast = ParseLog(text, ctx), every = ParseLog(text, every_ctx);
    EXPECT_GT(fast.events.size(), 3u);
    ExpectSameProgressEvents(fast, every);
    EXPECT_EQ(fast.lines, every.lines);
    EXPECT_EQ(fast.malformed, every.malformed);
    EXPECT_GT(fast.malformed, 0);
    EXPECT_EQ(fast.untimed, every.untimed);
    EXPECT_EQ(fast.first_dated, every.first_dated);
    EXPECT_EQ(fast.task_labels, every.task_labels);
    EXPECT_EQ(fast.prefix_ranks, every.prefix_ranks);
    EXPECT_EQ(fast.last_line.line, every.last_line.line);
    EXPECT_EQ(fast.last_line.offset, every.last_line.offset);
  }
}

// A 16k-task srun log's progress lines are noted by their fields only (LogParser::FastProgress,
// ProgressTable::Note) and made records only if they stay their key's last; lines of any other
// shape keep full records in the same table. Mixed on the same tasks, with lines srun's
// interleaving split (inside the fixed part and past it), requeues closing the records,
// label-like text past the fixed part, values too large to note, CR line ends and a tail with
// no newline, the result is what reading every line the general way gives.
TEST(Prefilter, NotedProgressLinesMatchTheGeneralParser) {
  char buf[512];
  const auto progress = [&](int i, long long iteration, const char* tail) {
    std::snprintf(buf, sizeof buf, " [2026-03-0%d 0%d:%02d:%02d] iteration %8lld/  100000 | consumed samples: %d |%s",
                  2 + i / 500, i / 120 % 10, i / 2 % 60, i % 60, iteration, i * 512, tail);
    return std::string(buf);
  };
  const auto label = [](int task) {  // srun pads every label to the widest task id (999 here)
    const std::string l = std::to_string(task) + ": ";
    return std::string(l.size() < 5 ? 5 - l.size() : 0, ' ') + l;
  };
  std::string text = "SLURM_JOB_ID=7 SLURM_RESTART_COUNT=0\n";
  for (int i = 0; i < 1500; ++i) {
    const int task = (i * 37) % 97 + (i % 5 == 0 ? 900 : 0);
    const std::string line = progress(i, i / 3, " grad norm: 0.5 |");
    switch (i % 23) {
      case 3:  // split inside the fixed part: the tail comes on the task's next line
        text += label(task) + line.substr(0, 14) + label(task + 1) + progress(i, 1, "") + "\n" + label(task) + line.substr(14) + "\n";
        break;
      case 7:  // split past the fixed part
        text += label(task) + line.substr(0, 60) + label(task + 2) + "NCCL INFO x\n" + label(task) + line.substr(60) + "\n";
        break;
      case 9:
        text += label(task) + progress(i, i, " 12: not a label, 123: [rank1]: maybe one |") + "\n";
        break;
      case 11:
        text += label(task) + progress(i, 99999999999LL, "") + "\n";  // past 32 bits
        break;
      case 13:
        text += label(task) + line + "\r\n";
        break;
      case 15:
        text += line + "\n";  // no label
        break;
      case 17:
        text += label(task) + "[rank" + std::to_string(task) + "]:" + line + "\n";
        break;
      case 19:
        if (i % 3 == 0) text += label(task) + "SLURM_RESTART_COUNT=" + std::to_string(1 + i % 2) + "\n";
        text += label(task) + line + "\n";
        break;
      case 21:
        text += label(task) + progress(i, i, "").substr(0, 40) + "\n";  // cut short: malformed
        break;
      default:
        text += label(task) + line + "\n";
    }
    if (i % 101 == 50) text += label(task) + "Traceback (most recent call last):\n" + label(task) + "RuntimeError: boom\n";
  }
  text += label(5) + progress(1499, 1500, "");  // unterminated
  for (const std::int32_t name_rank : {-1, 5}) {
    const FileContext ctx{.name_rank = name_rank, .prefixes = SniffPrefixes(text)};
    ASSERT_TRUE(ctx.prefixes.srun_labels);
    FileContext every_ctx = ctx;
    every_ctx.every_line = true;
    const ParsedLog fast = ParseLog(text, ctx), every = ParseLog(text, every_ctx);
    const std::size_t iterations = ExpectSameProgressEvents(fast, every);
    EXPECT_GT(iterations, name_rank < 0 ? 200u : 3u);  // one per task per run (requeues close them)
    EXPECT_EQ(fast.lines, every.lines);
    EXPECT_EQ(fast.malformed, every.malformed);
    EXPECT_GT(fast.malformed, 0);
    EXPECT_EQ(fast.interleaved, every.interleaved);
    EXPECT_GT(fast.interleaved, 0);
    EXPECT_EQ(fast.first_dated, every.first_dated);
    EXPECT_EQ(fast.task_labels, every.task_labels);
    EXPECT_EQ(fast.last_line.line, every.last_line.line);
  }
}

// ProgressTable keeps each key's last line, at the place and in the order of its first, whether
// its lines were noted or updated whole; the tables a thread makes one after another share
// their memory (ProgressTable::Spare), and a table dropped without Take leaves nothing behind.
TEST(Prefilter, ProgressTablesOneAfterAnotherKeepEachKeysLastLine) {
  std::mt19937 rng(11);
  for (int table = 0; table < 6; ++table) {
    ProgressTable t;
    struct Want {
      std::int32_t key;
      std::uint32_t at;
      ProgressRecord last;
    };
    std::vector<Want> want;  // in the order of each key's first line
    const int lines = table == 2 ? 5 : 3000 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < lines; ++i) {
      const std::int32_t task = static_cast<std::int32_t>(rng() % (table % 2 == 0 ? 700 : 40));
      const std::int32_t rank = rng() % 10 == 0 ? static_cast<std::int32_t>(task + 5000) : -1;  // some full records
      const std::int32_t key = ProgressKey(rank, task);
      const auto at = static_cast<std::uint32_t>(i / 3);
      ProgressRecord r{.time = 1000 + i, .iteration = i, .total = 99, .offset = 64ull * i, .line = static_cast<std::uint32_t>(i + 1),
                       .length = 40, .rank = rank, .local_rank = -1, .task = task, .at = at};
      if (rank >= 0) {
        t.Update(r);
      } else {
        t.Note(key, {.line = r.line, .offset = static_cast<std::uint32_t>(r.offset), .length = r.length, .task = task,
                     .iteration = static_cast<std::uint32_t>(i), .total = 99, .time = r.time},
               at);
      }
      auto it = std::find_if(want.begin(), want.end(), [&](const Want& w) { return w.key == key; });
      if (it == want.end()) it = want.insert(want.end(), {key, at, r});
      it->last = r;
    }
    if (table == 4) continue;  // dropped without Take: the next table must not see its keys
    const std::vector<ProgressRecord> got = t.Take(0, -1, -1);
    ASSERT_EQ(got.size(), want.size()) << "table " << table;
    for (std::size_t k = 0; k < got.size(); ++k) {
      const ProgressRecord& w = want[k].last;
      EXPECT_EQ(got[k].line, w.line) << "table " << table << " record " << k;
      EXPECT_EQ(got[k].time, w.time);
      EXPECT_EQ(got[k].iteration, w.iteration);
      EXPECT_EQ(got[k].offset, w.offset);
      EXPECT_EQ(got[k].task, w.task);
      EXPECT_EQ(got[k].rank, w.rank);
      EXPECT_EQ(got[k].at, want[k].at);
      EXPECT_EQ(got[k].seq, k);
    }
  }
}

// ParseIteration keeps the date of the last stamp it read; what it gives is what reading each
// stamp whole gives, when the date changes, the time does not parse, or the stamp is longer, and
// its quick path reads the numbers after it as the general one does.
TEST(Prefilter, IterationStampCacheGivesWhatParsingTheStampGives) {
  IterationStampCache cache;
  const std::vector<std::string> stamps = {"2026-03-02 08:50:01", "2026-03-02 08:50:02", "2026-03-02T23:59:60",
                                           "2026-03-02 24:00:00", "2026-03-02 23:60:00", "2026-03-03 00:00:00",
                                           "2026-03-02 0a:00:00", "2026-03-03 00:00:07.25", "2026-03-03 00:00:08",
                                           "2026-03-0x 00:00:01", "2026-03-03 00:00:09", "2026-03-03_00:00:10",
                                           "2024-02-29 12:00:00", "2024-02-29 12:00:01"};
  for (int round = 0; round < 2; ++round) {
    for (const std::string& stamp : stamps) {
      for (const char* numbers : {"7/ 100 |", "   7/100", "123456789012/ 1", "1234567890123/ 1", "7 / 100", "/ 100", "7/",
                                  "7/ x", "7/ 1x"}) {
        const std::string line = " [" + stamp + "] iteration " + numbers;
        TimeNs t1 = -1, t2 = -1;
        std::int64_t i1 = -1, i2 = -1, n1 = -1, n2 = -1;
        const Match m1 = ParseIteration(line, &t1, &i1, &n1, &cache);
        const Match m2 = ParseIteration(line, &t2, &i2, &n2);
        EXPECT_EQ(m1, m2) << line;
        EXPECT_EQ(t1, t2) << line;
        EXPECT_EQ(i1, i2) << line;
        EXPECT_EQ(n1, n2) << line;
      }
    }
  }
}

// IterationFast (FastProgress's inlined quick path, 8 bytes a step) gives what ParseIteration
// gives whenever it answers: random numbers, spaces and stray bytes after ` [<stamp>] iteration `,
// stamps of the cached date with a byte changed, lines that end right after the numbers.
TEST(Prefilter, IterationFastGivesWhatParseIterationGives) {
  std::mt19937 rng(5);
  IterationStampCache cache;
  TimeNs t0;
  std::int64_t a, b;
  ASSERT_EQ(ParseIteration(" [2026-03-02 08:50:01] iteration 1/ 2", &t0, &a, &b, &cache), Match::kYes);
  constexpr std::string_view kStray = "0123456789 /|x:T\x80\xff";
  int answered = 0;
  for (int k = 0; k < 200000; ++k) {
    std::string numbers;
    const int length = static_cast<int>(rng() % 24);
    for (int j = 0; j < length; ++j) {
      numbers += rng() % 3 == 0 ? kStray[rng() % kStray.size()] : static_cast<char>('0' + rng() % 10);
    }
    std::string stamp = "2026-03-02 08:50:01";
    if (rng() % 4 == 0) stamp[rng() % stamp.size()] = kStray[rng() % kStray.size()];
    const std::string line = " [" + stamp + "] iteration " + numbers;
    TimeNs t1 = -1, t2 = -1;
    std::int64_t i1 = -1, i2 = -1, n1 = -1, n2 = -1;
    if (!IterationFast(line, cache, &t1, &i1, &n1)) continue;
    ++answered;
    ASSERT_EQ(ParseIteration(line, &t2, &i2, &n2), Match::kYes) << line;
    EXPECT_EQ(t1, t2) << line;
    EXPECT_EQ(i1, i2) << line;
    EXPECT_EQ(n1, n2) << line;
  }
  EXPECT_GT(answered, 1000);
  // Megatron's own padding, and the numbers' widths around the 8-byte steps.
  for (const char* numbers : {"       7/  100000 |", "1234567/1 |", "12345678/1 |", "7/1234567 ", "7/12345678 ", "7/ 1", "7/1"}) {
    const std::string line = std::string(" [2026-03-02 23:59:60] iteration ") + numbers;
    TimeNs t1 = -1, t2 = -1;
    std::int64_t i1 = -1, i2 = -1, n1 = -1, n2 = -1;
    const Match general = ParseIteration(line, &t2, &i2, &n2);
    if (IterationFast(line, cache, &t1, &i1, &n1)) {
      EXPECT_EQ(general, Match::kYes) << line;
      EXPECT_EQ(t1, t2) << line;
      EXPECT_EQ(i1, i2) << line;
      EXPECT_EQ(n1, n2) << line;
    }
  }
  TimeNs t;
  std::int64_t i, n;
  EXPECT_TRUE(IterationFast(" [2026-03-02 23:59:60] iteration       7/  100000 |", cache, &t, &i, &n));
  EXPECT_EQ(i, 7);
  EXPECT_EQ(n, 100000);
}

// Removes a scratch directory when it goes out of scope, also when an assertion returns early.
struct Removed {
  fs::path dir;
  ~Removed() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

fs::path Scratch(const std::string& name) {
  std::error_code ec;
  const fs::path root = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0 ? fs::path("/dev/shm")
                                                                                            : fs::temp_directory_path();
  const fs::path dir = root / ("denpex_prefilter_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir, ec);
  return dir;
}

// The scenario at a small scale (the smallest node count its layout accepts).
Result<v1::Scenario> Small(const fs::path& path) {
  for (const char* nodes : {"job.nodes=16", "job.nodes=32", "job.nodes=64", "job.nodes=128"}) {
    const std::vector<std::string> overrides{nodes};
    auto s = sim::LoadScenario(path, overrides);
    if (s.ok()) return s;
  }
  return sim::LoadScenario(path);
}

TEST(Prefilter, GivesWhatReadingEveryLineGivesOnEveryFamily) {
  std::vector<fs::path> scenarios;
  for (const char* dir : {"scenarios/families", "scenarios/smoke"}) {
    for (const auto& e : fs::directory_iterator(fs::path(DENPEX_SOURCE_DIR) / dir)) {
      if (e.path().extension() == ".textproto") scenarios.push_back(e.path());
    }
  }
  std::sort(scenarios.begin(), scenarios.end());
  ASSERT_GE(scenarios.size(), 20u);
  for (const fs::path& path : scenarios) {
    auto scenario = Small(path);
    ASSERT_TRUE(scenario.ok()) << path << ": " << scenario.status().message();
    for (std::uint64_t seed : {1, 2}) {
      const fs::path out = Scratch(path.stem().string() + "_" + std::to_string(seed));
      const Removed removed{out};
      auto sim = sim::Simulate(*scenario, {.out_dir = out, .seed = seed});
      ASSERT_TRUE(sim.ok()) << path << ": " << sim.status().message();
      auto every = LoadIncident(out / "incident", 2, {}, /*every_line=*/true);
      auto fast = LoadIncident(out / "incident", 2);
      ASSERT_TRUE(every.ok() && fast.ok()) << path;
      EXPECT_GT(every->events.size(), 0u) << path;
      const std::string a = Dump(*every), b = Dump(*fast);
      if (a != b) {  // the first difference, not two walls of text
        std::size_t i = 0;
        while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
        const std::size_t from = a.rfind('\n', i) == std::string::npos ? 0 : a.rfind('\n', i) + 1;
        ADD_FAILURE() << path << " seed " << seed << ": the pre-filtered parse differs; every line read:\n"
                      << a.substr(from, a.find('\n', i) - from) << "\npre-filtered:\n"
                      << b.substr(from, b.find('\n', i) - from);
      }
    }
  }
}

// Chunks of a combined log, each with its own opening lines and gaps: the same as reading
// every line of the same chunks.
TEST(Prefilter, ChunkedCombinedLogMatches) {
  auto scenario = Small(fs::path(DENPEX_SOURCE_DIR) / "scenarios/families/hang_4096_srun.textproto");
  ASSERT_TRUE(scenario.ok());
  const fs::path out = Scratch("chunked");
  const Removed removed{out};
  ASSERT_TRUE(sim::Simulate(*scenario, {.out_dir = out}).ok());
  for (const auto& e : fs::directory_iterator(out / "incident")) {
    if (e.path().extension() != ".out") continue;
    std::string text;
    {
      std::FILE* f = std::fopen(e.path().c_str(), "rb");
      ASSERT_NE(f, nullptr);
      char buf[1 << 16];
      for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
      std::fclose(f);
    }
    FileContext ctx{.prefixes = SniffPrefixes(text)};
    const ParsedLog fast = ParseChunked(text, ctx, 16 << 10);
    ctx.every_line = true;
    const ParsedLog every = ParseChunked(text, ctx, 16 << 10);
    ASSERT_EQ(fast.events.size(), every.events.size());
    EXPECT_GT(fast.events.size(), 0u);
    for (std::size_t i = 0; i < fast.events.size(); ++i) {
      EXPECT_EQ(fast.events[i].line, every.events[i].line) << i;
      EXPECT_EQ(fast.events[i].time, every.events[i].time) << i;
      EXPECT_EQ(fast.events[i].kind, every.events[i].kind) << i;
    }
    EXPECT_EQ(fast.lines, every.lines);
    EXPECT_EQ(fast.malformed, every.malformed);
    EXPECT_EQ(fast.prefix_ranks, every.prefix_ranks);
    EXPECT_EQ(fast.last_line.line, every.last_line.line);
  }
}

}  // namespace
}  // namespace denpex::engine
