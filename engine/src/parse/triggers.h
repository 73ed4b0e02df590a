// Trigger literals: the pre-filter that lets ParseLog skip the lines no recogniser can use.
//
// Every recogniser declares, in its row of the recogniser table (recognisers.h), the literals a
// line must hold for that recogniser to do anything with it: emit an event, open or close a
// multi-line record, or change what the parser knows about its file. A line that holds none
// of the literals of any family is counted and never read closely; most lines of a large
// incident (NCCL INFO chatter, warnings, progress bars) are such lines.
//
// The contract, for whoever adds a recogniser: when your recogniser can return true for a
// line, that line holds one of the literals of your row. Add a literal when you add a shape.
// `Prefilter.*` (tests/engine/prefilter_test.cc) parses simulated incidents of every family twice
// (every line read, and pre-filtered) and fails when the two differ, so a missing literal shows
// up there; `LineFilter.*` checks that every literal is found wherever it sits.
//
// LineFilter finds lines with any trigger literal with a Teddy-style SIMD search (nibble
// lookup tables over 3-byte fingerprints, 8 buckets; Langdale's algorithm from Hyperscan, as
// ripgrep also uses it) and counts the newlines it passes, so line numbers stay exact.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

// What a line holding the literal needs.
enum class TriggerLevel : std::uint8_t {
  kNone,    // no literal: counted only
  kPrefix,  // only its prefixes matter (`[rank<G>]:`, `[default<L>]:`): read them, not the message
  kRecord,  // it may be (part of) a record: read it whole
};

struct Trigger {
  std::string_view literal;  // 2 bytes or more, no newline
  TriggerLevel level = TriggerLevel::kRecord;
  // The literal closes a bracketed tag (`]:` of `[default3]:`): where the `[` it closes is glued
  // to a letter or a digit before it, as in a journal line's `python3[40411]: `, the bracket is a
  // word's (a unit and its pid), no tag, and the literal no trigger there.
  bool closes_tag = false;
};

// The tables of what LogParser itself reads; each family recogniser's literals are in its row of
// the recogniser table (recognisers.cc).
std::span<const Trigger> PrefixTriggers();    // prefix.cc: rank, MPI and local-rank tags
std::span<const Trigger> RecordTriggers();    // file_parser.cc: c10 errors, traceback, table, steps
std::span<const Trigger> WatchdogTriggers();  // watchdog.cc: ProcessGroupNCCL timeouts, status and notes

// Those three tables and every recogniser's triggers (the list ParseLog uses).
std::vector<Trigger> AllTriggers();

// The last place in text[0, end) where a time of day `dd:dd:dd` or a date `dd-dd-dd` (of
// `YYYY-MM-DD`) starts (npos: none). Every stamp the parser reads holds one, so a line without
// one has no stamp.
std::size_t LastStampPattern(std::string_view text, std::size_t end);

// Where the filter looks for a literal: its fingerprint's offset in it and the bucket that holds
// the fingerprint.
struct PlacedLiteral {
  std::string_view literal;
  std::uint8_t offset = 0;
  std::uint8_t bucket = 0;
};

// The cost model's placement of AllTriggers(), as it was when the code was built
// (parse/filter_placement.inc, written by `scan_bench --placement`): each process would otherwise
// spend ~4 ms of a core placing them (`scan_bench --build`), most of a small incident's parse.
// `LineFilter.TheShippedPlacementIsTheCostModels` fails when a trigger changed and it was not
// written again.
std::span<const PlacedLiteral> ShippedPlacement();

class LineFilter {
 public:
  // kScalar: the byte-at-a-time search even where the CPU has AVX2 (tests compare the two).
  enum class Search : std::uint8_t { kFastest, kScalar };
  // The triggers placed by the cost model (triggers.cc).
  explicit LineFilter(std::span<const Trigger> triggers, Search search = Search::kFastest);
  // The triggers placed as `placement` says when it lists each of their literals of 2 bytes or
  // more, in the filter's order (shortest first, then by text: PlacementFile), and by the cost
  // model otherwise. Any placement finds every literal; it decides only how many false
  // candidates the search stops at.
  LineFilter(std::span<const Trigger> triggers, std::span<const PlacedLiteral> placement,
             Search search = Search::kFastest);
  // The filter over AllTriggers(), built once, placed as shipped.
  static const LineFilter& Default();

  struct Found {
    bool found = false;
    std::size_t begin = 0;        // the line that holds a trigger: [begin, end), end at its '\n'
    std::size_t end = 0;          //   or at the end of the text
    TriggerLevel level = TriggerLevel::kNone;
    std::int64_t newlines = 0;    // newlines in [from, begin) (all of [from, size) when not found)
    std::int64_t long_lines = 0;  // lines in [from, begin) longer than `long_line` bytes ('\r' not counted)
    // The line holds no label colon (a digit, `:`, a space: where an srun label ends) at or after
    // this place (npos: not known, or not asked). Found while the line's end is searched, from the
    // same loads, so that a progress line is not searched again for another task's label
    // (interleave.cc).
    std::size_t no_label_colon_from = std::string_view::npos;
    // Positions in [from, begin] that the SIMD tables accepted but where no literal was
    // (the pre-filter's false candidates on this walk).
    std::int64_t false_candidates = 0;
  };
  // The first line at or after `from` (a line start) that holds a trigger; `label_colons`: also
  // say where it holds no label colon (Found::no_label_colon_from; ~5 ns a line found).
  Found Next(std::string_view text, std::size_t from, std::size_t long_line, bool label_colons = false) const;
  // The highest level of any trigger in `line` (kNone: none).
  TriggerLevel Classify(std::string_view line) const {
    return Classify(line, 0, TriggerLevel::kNone);
  }
  // The higher of `level` and the highest level of a trigger whose fingerprint starts at or after
  // `from` in `line` (the literal itself may start before it).
  TriggerLevel Classify(std::string_view line, std::size_t from, TriggerLevel level) const;

  std::size_t size() const { return literals_.size(); }
  // 16 bits of a fingerprint's bytes (little-endian), by Fibonacci hashing: the filter's table of
  // the fingerprints' first bytes is by these bits, its table of the literals by their low bits.
  static std::uint32_t FingerprintHash16(std::uint32_t bytes) { return bytes * 0x9e3779b1u >> 16; }
  // Buckets and fingerprints, one line per literal (to see what the cost model chose).
  std::string Describe() const;
  // The placement as parse/filter_placement.inc holds it: a row `{"literal", offset, bucket},`
  // (C++ string escapes) per literal, in the filter's order.
  std::string PlacementFile() const;
  // Each literal's fingerprint (its 2 or 3 bytes the SIMD search looks for).
  std::vector<std::string_view> Fingerprints() const;
  // For measuring the scan (scan_bench --candidates): the buckets whose tables accept the 3
  // bytes at `q` (bit b: bucket b; 0: the scan passes q without a look; bytes past the text
  // read as 0), and the level Verify gives a candidate at `q` of the line [begin, end).
  std::uint8_t BucketsAt(std::string_view text, std::size_t q) const;
  TriggerLevel VerifyAt(std::string_view text, std::size_t q, std::size_t begin, std::size_t end) const {
    return Verify(text, q, begin, end);
  }

 private:
  friend struct LineFilterScan;
  struct Literal {
    std::string text;
    std::uint8_t offset = 0;  // where its fingerprint starts in it
    TriggerLevel level = TriggerLevel::kRecord;
    std::uint32_t fingerprint = 0;  // its fingerprint bytes, little-endian (2 for a 2-byte literal)
    std::uint32_t mask = 0;
    bool closes_tag = false;  // Trigger::closes_tag
  };
  // The level of the literals whose fingerprint is at `q` and that lie in [lo, hi), of those whose
  // level is above `above` (kNone where none is: the line's classification has reached `above`).
  TriggerLevel Verify(std::string_view text, std::size_t q, std::size_t lo, std::size_t hi,
                      TriggerLevel above = TriggerLevel::kNone) const;
  // Files literals_ by exact fingerprint (by_fingerprint_, short_literals_).
  void IndexFingerprints();

  static constexpr int kWidth = 3;  // fingerprint bytes
  alignas(32) std::array<std::array<unsigned char, 16>, kWidth> lo_{};  // bucket bits per low nibble
  alignas(32) std::array<std::array<unsigned char, 16>, kWidth> hi_{};  // ... per high nibble
  std::vector<Literal> literals_;
  std::array<std::vector<std::uint16_t>, 8> buckets_;  // literal indexes per bucket
  // A candidate is verified against the literals whose fingerprint is exactly the 3 bytes
  // there (found by hashing them), not against every literal of its buckets: the fullest
  // bucket holds 20-odd, and a large job's progress lines are millions of candidates.
  struct FingerprintSlot {
    std::uint32_t fingerprint = ~std::uint32_t{0};  // 3 bytes, little-endian; all ones: empty
    std::uint16_t first = 0;  // its literals: by_fingerprint_literals_[first, first + count)
    std::uint16_t count = 0;
  };
  // A bit per FingerprintHash of every 3 bytes that may start a literal's fingerprint (a 2-byte
  // literal's with each third byte): a candidate whose 3 bytes have no bit holds no literal
  // there, which one load of this table (8 KiB, kept in the L1 cache) says instead of a call of
  // Verify and its probe. Most candidates are false: ~10 M in the 131k-rank scale incident's srun
  // log, against ~2 M trigger lines.
  std::array<std::uint64_t, 1024> may_start_{};
  bool MayStart(std::string_view text, std::size_t q) const {
    if (q + 4 > text.size()) return true;  // Verify reads the last bytes one at a time
    std::uint32_t word;
    std::memcpy(&word, text.data() + q, 4);
    const std::uint32_t h = FingerprintHash16(word & 0xffffffu);
    return (may_start_[h >> 6] >> (h & 63) & 1) != 0;
  }
  std::vector<FingerprintSlot> by_fingerprint_;  // open addressing, a power of two in size
  std::vector<std::uint16_t> by_fingerprint_literals_;
  // The 2-byte literals (a 2-byte fingerprint), by first byte; those that start with byte
  // value b are short_literals_[short_from_[b] .. short_from_[b + 1]).
  std::vector<std::uint16_t> short_literals_;
  std::array<std::uint16_t, 257> short_from_{};
  bool avx2_ = false;
};

}  // namespace denpex::engine
