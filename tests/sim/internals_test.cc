// The simulator's building blocks on their own: the text builder, the line tables' lookup by
// release, random streams, the event queue, the writer pool, the parallel layout and the
// rendezvous rule.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "format/profiles.h"
#include "format/text.h"
#include "model/event_queue.h"
#include "model/job.h"
#include "model/rendezvous.h"
#include "model/rng.h"
#include "output/file_pool.h"
#include "sim_test_util.h"

namespace denpex::sim {
namespace {

std::string Built(void (*f)(LineBuilder&)) {
  std::string s;
  LineBuilder b(&s);
  f(b);
  return s;
}

TEST(LineBuilder, FormatsIntegersPaddingAndHexLikePrintf) {
  EXPECT_EQ(Built([](LineBuilder& b) { b.Int(-42).Char(' ').Int(0); }), "-42 0");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Padded(7, 8, ' '); }), "       7");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Zero(5, 2).Zero(123456789, 9).Zero(-3, 3); }),
            "05123456789-03");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Padded(123456, 3, ' '); }), "123456");  // never truncates
  EXPECT_EQ(Built([](LineBuilder& b) { b.Hex(0x7f3b2c1d4e5aULL); }), "7f3b2c1d4e5a");
}

TEST(LineBuilder, FormatsFixedAndScientificLikePrintf) {
  EXPECT_EQ(Built([](LineBuilder& b) { b.Fixed(1523.44, 1); }), "1523.4");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Fixed(0.0625, 3); }), "0.063");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Fixed(-2.5, 0); }), "-3");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Sci(1.5e-4, 6); }), "1.500000E-04");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Sci(10.65868, 6); }), "1.065868E+01");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Sci(9.9999999, 6); }), "1.000000E+01");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Sci(0, 6); }), "0.000000E+00");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Sci(1000, 2); }), "1.00E+03");
}

TEST(LineBuilder, FormatsFloatsLikePythonRepr) {
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(0.00015); }), "0.00015");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(0.0001); }), "0.0001");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(1.5e-05); }), "1.5e-05");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(7.5e-08); }), "7.5e-08");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(60.0); }), "60.0");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(61.05); }), "61.05");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(7.864669709950182); }), "7.864669709950182");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(-2.5); }), "-2.5");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(1e16); }), "1e+16");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(123456789012345.0); }), "123456789012345.0");
  EXPECT_EQ(Built([](LineBuilder& b) { b.PyFloat(0.0); }), "0.0");
}

TEST(LineBuilder, CountsLines) {
  std::string s;
  LineBuilder b(&s);
  b.Str("a").EndLine();
  b.Str("b\nc\n").AddLines(2);
  EXPECT_EQ(b.lines(), 3);
  EXPECT_EQ(s, "a\nb\nc\n");
}

TEST(LineBuilder, FillsNumberedPlaceholdersAndLeavesOtherBracesAlone) {
  EXPECT_EQ(Built([](LineBuilder& b) {
              b.Fill("[{1}]:{0} ({2})", {29400, "gpu-0001", ""});
            }),
            "[gpu-0001]:29400 ()");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Fill("{x} {} {9} {0", {7}); }), "{x} {} {9} {0");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Fill("rank={0} ", {std::int64_t{-3}}); }), "rank=-3 ");
  EXPECT_EQ(Built([](LineBuilder& b) { b.Fill("", {1}); }), "");
}

TEST(VersionRow, ReleasesOrderByPartsAndAPartialEndCoversItsPatches) {
  static_assert(ReleaseNumber("2.21.5") == 2'021'005);
  static_assert(ReleaseNumber("2.4") == 2'004'000);
  static_assert(ReleaseNumber("2.18.5+cuda12.2") == 2'018'005);
  static_assert(ReleaseNumber("2.10") > ReleaseNumber("2.9"));
  static_assert(ReleaseNumber("23.02") > ReleaseNumber("22.05"));
  constexpr VersionRow<int> kTable[] = {
      {{"", "2.18"}, 18}, {{"2.19", "2.21"}, 21}, {{"2.22", ""}, 22}};
  static_assert(CoversEach(kTable, kNcclReleases));
  EXPECT_EQ(RowFor(kTable, "2.18.5"), 18);
  EXPECT_EQ(RowFor(kTable, "2.21.5"), 21);
  EXPECT_EQ(RowFor(kTable, "2.26.2"), 22);
  constexpr VersionRow<int> kGap[] = {{{"", "1.13"}, 1}, {{"2.4", ""}, 2}};
  static_assert(!CoversEach(kGap, kTorchReleases));  // 2.1 falls between the rows
  EXPECT_EQ(RowFor(kGap, "2.1"), 2);                 // ... and gets the newest
}

TEST(Rng, StreamsAreReproducibleAndIndependent) {
  Rng a(1, StreamId::kRankCompute, 7), b(1, StreamId::kRankCompute, 7);
  Rng c(1, StreamId::kRankCompute, 8), d(2, StreamId::kRankCompute, 7), e(1, StreamId::kAgent, 7);
  const std::uint64_t first = a.Next();
  EXPECT_EQ(first, b.Next());
  EXPECT_NE(first, c.Next());
  EXPECT_NE(first, d.Next());
  EXPECT_NE(first, e.Next());
}

TEST(Rng, UniformAndNormalHaveTheRightShape) {
  Rng rng(42, StreamId::kTrainer, 0);
  double sum = 0, sum_sq = 0;
  constexpr int kN = 200'000;
  for (int i = 0; i < kN; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    const std::int64_t k = rng.UniformInt(3, 9);
    ASSERT_GE(k, 3);
    ASSERT_LT(k, 9);
    const double z = rng.Normal();
    sum += z;
    sum_sq += z * z;
  }
  EXPECT_NEAR(sum / kN, 0.0, 0.01);
  EXPECT_NEAR(sum_sq / kN, 1.0, 0.02);
}

TEST(EventQueue, OrdersByTimeThenInsertion) {
  EventQueue q;
  q.Push(30, EventKind::kAgentPoll, 1);
  q.Push(10, EventKind::kRankResume, 2);
  q.Push(10, EventKind::kFault, 3);
  q.Push(20, EventKind::kRendezvousDone, kMaxEventId);
  std::vector<std::pair<TimeNs, std::uint32_t>> order;
  while (!q.empty()) {
    const Event e = q.Pop();
    order.emplace_back(e.time, e.id());
  }
  const std::vector<std::pair<TimeNs, std::uint32_t>> want = {
      {10, 2}, {10, 3}, {20, kMaxEventId}, {30, 1}};
  EXPECT_EQ(order, want);
}

Job LayoutJob(int nodes, int tp, int pp) {
  auto s = testing_util::MustParse("job { nodes: " + std::to_string(nodes) +
                                   " tp: " + std::to_string(tp) + " pp: " + std::to_string(pp) +
                                   " }\nfaults { kind: FAULT_KIND_SIGKILL }");
  return Job::Build(s, 1);
}

// Jobs of one key land in submission order (create, then appends), even with a pending-bytes
// bound far below the total; a file that cannot be opened is reported by path.
TEST(FilePool, KeepsEachFilesOrderAndReportsTheFirstError) {
  namespace fs = std::filesystem;
  const fs::path dir = testing_util::FreshDir();
  fs::create_directories(dir);
  std::string expected[4];
  {
    FilePool pool(3, /*max_pending_bytes=*/64);
    for (int i = 0; i < 400; ++i) {
      const int file = i % 4;
      const std::string text = std::to_string(i) + "\n";
      expected[file] += text;
      pool.Submit(static_cast<std::size_t>(file),
                  {(dir / std::to_string(file)).string(), text, /*append=*/i >= 4});
    }
    EXPECT_TRUE(pool.Finish().ok());
  }
  for (int file = 0; file < 4; ++file) {
    EXPECT_EQ(testing_util::ReadAll(dir / std::to_string(file)), expected[file]);
  }
  FilePool failing(1);
  failing.Submit(0, {(dir / "no_such_dir" / "f").string(), "x", false});
  const Status status = failing.Finish();
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("no_such_dir/f: cannot open"), std::string::npos)
      << status.message();
}

TEST(Job, MegatronLayoutKeepsTensorGroupsInsideANode) {
  const Job job = LayoutJob(4, 4, 2);  // 32 ranks, dp 4
  EXPECT_EQ(job.dp, 4);
  EXPECT_EQ(job.hostnames[0], "gpu-0001");
  EXPECT_EQ(job.hostnames[3], "gpu-0004");
  for (int rank = 0; rank < job.world; ++rank) {
    EXPECT_EQ(rank, job.TpRank(rank) + job.tp * (job.DpRank(rank) + job.dp * job.PpRank(rank)));
    const int uid = job.GroupUid(rank, PgKind::kTensor);
    for (int i = 0; i < job.tp; ++i)
      EXPECT_EQ(job.NodeOf(job.GroupMember(uid, i)), job.NodeOf(rank));
  }
}

TEST(Job, GroupUidsAreSharedByMembersAndFollowCreationOrder) {
  const Job job = LayoutJob(4, 4, 2);
  // uid 0 default, then 8 TP groups (1..8), 16 PP groups (9..24), 8 DP groups (25..32).
  EXPECT_EQ(job.NumGroups(), 1 + 8 + 16 + 8);
  std::set<int> uids;
  for (int rank = 0; rank < job.world; ++rank) {
    for (PgKind kind : {PgKind::kDefault, PgKind::kTensor, PgKind::kPipeline, PgKind::kData}) {
      const int uid = job.GroupUid(rank, kind);
      uids.insert(uid);
      EXPECT_EQ(job.KindOfGroup(uid), kind);
      // The member at this rank's group rank is this rank: members sorted, uid shared.
      EXPECT_EQ(job.GroupMember(uid, job.GroupRank(rank, kind)), rank);
      for (int i = 1; i < job.GroupSize(kind); ++i) {
        EXPECT_LT(job.GroupMember(uid, i - 1), job.GroupMember(uid, i));
      }
    }
  }
  EXPECT_EQ(static_cast<int>(uids.size()), job.NumGroups());
  EXPECT_EQ(job.GroupUid(0, PgKind::kTensor), 1);
  EXPECT_EQ(job.GroupUid(0, PgKind::kPipeline), 9);
  EXPECT_EQ(job.GroupUid(0, PgKind::kData), 25);
  EXPECT_EQ(job.GroupMember(job.GroupUid(5, PgKind::kData), 1), 5);  // DP strides tp
}

TEST(Rendezvous, CompletesOnlyWhenEveryMemberArrivedAndNoneDied) {
  const Job job = LayoutJob(1, 4, 2);  // 8 ranks: TP groups {0..3}, {4..7}
  Rendezvous rv(job);
  const std::uint32_t tp0 = rv.GroupId(0, PgKind::kTensor);
  EXPECT_FALSE(rv.Arrive(tp0, 100));
  EXPECT_FALSE(rv.Arrive(tp0, 300));
  EXPECT_FALSE(rv.Arrive(tp0, 200));
  EXPECT_TRUE(rv.Arrive(tp0, 150));
  EXPECT_EQ(rv.LastArrival(tp0), 300);
  rv.Reset(tp0);
  rv.Arrive(tp0, 400);
  rv.Poison(tp0);  // an arrived member died
  rv.Arrive(tp0, 401);
  rv.Arrive(tp0, 402);
  EXPECT_FALSE(rv.Arrive(tp0, 403));
  // A p2p channel joins the same (tp, dp) position of adjacent stages.
  const std::uint32_t ch = rv.ChannelId(1, /*toward_next=*/true);
  EXPECT_EQ(ch, rv.ChannelId(1 + 4, /*toward_next=*/false));
  EXPECT_EQ(rv.Size(ch), 2);
  EXPECT_EQ(rv.Member(ch, 0), 1);
  EXPECT_EQ(rv.Member(ch, 1), 5);
}

}  // namespace
}  // namespace denpex::sim
