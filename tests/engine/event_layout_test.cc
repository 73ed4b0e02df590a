// An Event keeps its 1-byte fields in its detail variant's tail padding (parse/event.h): whatever
// is done to the detail alone (assigned from each alternative, emplaced, copied or moved from
// another variant, swapped) must leave every field beside it as it was.
#include <gtest/gtest.h>

#include <cstddef>
#include <tuple>
#include <utility>
#include <variant>

#include "parse/event.h"

namespace denpex::engine {
namespace {

// Every header field set to a value that no default holds.
Event Marked() {
  Event e;
  e.clock = Clock::kNoYear;
  e.time_borrowed = true;
  e.time_collected = true;
  e.family = Family::kNcclRas;
  e.kind = Kind::kRasRank;
  e.rank = 131071;
  e.local_rank = 7;
  e.task = 4242;
  e.node = 16383;
  e.host = 11;
  e.file = 12;
  e.line = 13;
  e.length = 14;
  e.signature = 15;
  e.time = -16;
  e.offset = 17;
  return e;
}

// Another event's header: every field differs from Marked()'s, so that a copy or move of the
// whole variant (its tail padding, where these live, included) would show.
Event Other() {
  Event e;
  e.clock = Clock::kFull;
  e.family = Family::kXid;
  e.kind = Kind::kXid;
  return e;
}

// Every field beside the detail.
auto Fields(const Event& e) {
  return std::make_tuple(e.clock, static_cast<bool>(e.time_borrowed),
                         static_cast<bool>(e.time_collected), e.family, e.kind, e.rank,
                         e.local_rank, e.task, e.node, e.host, e.file, e.line, e.length,
                         e.signature, e.time, e.offset);
}

void ExpectMarked(const Event& e, const char* what) {
  EXPECT_EQ(Fields(e), Fields(Marked())) << what;
}
void ExpectOther(const Event& e, const char* what) {
  EXPECT_EQ(Fields(e), Fields(Other())) << what;
}

template <std::size_t... I>
void EveryAlternative(std::index_sequence<I...>) {
  (
      [] {
        using T = std::variant_alternative_t<I, EventDetail>;
        Event e = Marked();
        Event o = Other();
        o.detail.emplace<I>();
        e.detail = o.detail;  // from a Note to alternative I
        ExpectMarked(e, "copied over another alternative");
        EXPECT_EQ(e.detail.index(), I);
        e.detail = o.detail;  // the same alternative
        ExpectMarked(e, "copied over the same alternative");
        e.detail = Note{};
        e.detail = std::move(o.detail);
        ExpectMarked(e, "moved into");
        ExpectOther(o, "moved from");
        o.detail = Note{};
        std::swap(e.detail, o.detail);
        ExpectMarked(e, "swapped");
        ExpectOther(o, "swapped");
        e.detail.emplace<I>();
        ExpectMarked(e, "emplaced");
        e.detail = T{};
        ExpectMarked(e, "assigned a value");
        e.detail = EventDetail{};
        ExpectMarked(e, "assigned an empty variant");
        const Event copy = e;  // the whole event: every field with it
        ExpectMarked(copy, "the event copied");
      }(),
      ...);
}

TEST(EventLayout, TheDetailChangesNothingBesideIt) {
  EveryAlternative(std::make_index_sequence<std::variant_size_v<EventDetail>>{});
}

TEST(EventLayout, IsOneHundredAndTwentyEightBytes) {
  // The header's 55 bytes and the variant's 73 (its largest alternative and its index): the
  // size this layout exists for, on the compilers that lend a member's tail padding.
#if defined(__GNUC__) && defined(__x86_64__)
  EXPECT_EQ(sizeof(Event), 128u);
  EXPECT_GE(offsetof(Event, family), sizeof(WatchdogTimeout) + 1);
#endif
  EXPECT_LE(offsetof(Event, family), sizeof(EventDetail));
}

}  // namespace
}  // namespace denpex::engine
