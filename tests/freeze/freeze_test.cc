// `denpex freeze` (cli/src/freeze/): names found by their line shapes, replaced consistently and
// reversibly with the shapes the engine reads kept, the map reused across freezes and never in
// the entry, compressed logs rewritten in their codec, binaries reported, the incident never
// written, the drafted expected.json confirmed and corrected, and `eval --corpus` reading it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "denpex/cli/commands.h"
#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "denpex/v1/truth.pb.h"
#include "freeze/codec.h"
#include "freeze/freeze.h"
#include "freeze/name_map.h"
#include "freeze/names.h"
#include "freeze_support.h"
#include "support/temp_dir.h"

namespace denpex::freeze {
namespace {

namespace fs = std::filesystem;
using testing::FilesOf;
using ::testing::HasSubstr;
using testing::HoldsName;
using ::testing::Not;
using testing::ReadBytes;
using testing::TempDir;

void Write(const fs::path& p, std::string_view data) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << data;
}

TEST(FreezeNames, FindsHostsByTheLineShapesThatNameThem) {
  Found f;
  Discover(
      "gpu-0007:4127:4190 [3] NCCL INFO Bootstrap : Using ib0:10.64.0.26<0>\n"
      "Nov 29 16:25:31 gr064 kernel: NVRM: Xid (PCI:0000:3b:00): 79\n"
      "[2026-11-29 16:25:31] JobId=5370 NodeList=dgx-[0001-0003,0010] BatchHost=dgx-0001\n"
      "  host      : node-b.cluster.example\n"
      "export MASTER_ADDR=login-7 SLURM_JOB_ID=5370 HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz012345\n"
      "File \"/home/jdoe/llm-pretrain/train.py\", line 10, contact jane.doe@example.com\n"
      "pod uid 3f2504e0-4f89-11d3-9a0c-0305e82c3301 at fe80::1ff:fe23:4567:890a stamp 16:25:34\n",
      &f);
  EXPECT_THAT(f.hosts, ::testing::IsSupersetOf({"gpu-0007", "gr064", "dgx-0001", "dgx-0003",
                                                "dgx-0010", "node-b.cluster.example", "login-7"}));
  EXPECT_THAT(f.hostlist_prefixes, ::testing::ElementsAre("dgx-"));
  EXPECT_THAT(f.ipv4, ::testing::ElementsAre("10.64.0.26"));
  EXPECT_THAT(f.ipv6, ::testing::ElementsAre("fe80::1ff:fe23:4567:890a"));
  EXPECT_THAT(f.jobs, ::testing::ElementsAre("5370"));
  EXPECT_THAT(f.users, ::testing::ElementsAre("jdoe"));
  EXPECT_THAT(f.paths, ::testing::ElementsAre("llm-pretrain"));
  EXPECT_THAT(f.emails, ::testing::ElementsAre("jane.doe@example.com"));
  EXPECT_THAT(f.secrets, ::testing::ElementsAre("hf_abcdefghijklmnopqrstuvwxyz012345"));
  EXPECT_THAT(f.uuids, ::testing::ElementsAre("3f2504e0-4f89-11d3-9a0c-0305e82c3301"));
  // Words are not hosts, nor are loopback addresses, versions or times.
  Found g;
  Discover(
      "node: initializing\nhost=localhost NCCL version 2.18.5 at 127.0.0.1:29500 time 16:25:34\n",
      &g);
  EXPECT_TRUE(g.hosts.empty());
  EXPECT_TRUE(g.ipv4.empty());
  EXPECT_TRUE(g.ipv6.empty());
}

TEST(FreezeNames, ReplacementsKeepTheShapesAndMapBack) {
  Found f;
  const std::string text =
      "gpu-0007:4127:4190 [3] NCCL INFO Using ib0:10.64.0.26<0> nodes gpu-[0001-0008] job 5370\n"
      "slurmstepd: error: *** STEP 5370.0 ON gpu-0007 CANCELLED ***; user jdoe at /home/jdoe/x\n";
  Discover(text, &f);
  NameMap map = *NameMap::Load("/nonexistent/map.json");
  for (const auto& h : f.hosts) map.Host(h);
  for (const auto& p : f.hostlist_prefixes) map.HostlistPrefix(p);
  for (const auto& a : f.ipv4) map.Ipv4(a);
  for (const auto& u : f.users) map.User(u);
  for (const auto& j : f.jobs) map.Job(j);
  const Rewriter forward(map.proto(), Rewriter::Direction::kForward);
  std::size_t n = 0;
  const std::string frozen = forward.Apply(text, &n);
  EXPECT_GE(n, 8u);
  EXPECT_EQ(frozen.size(), text.size());  // every replacement here keeps its length
  for (const char* original : {"gpu-0007", "10.64.0.26", "gpu-[", "5370", "jdoe"}) {
    EXPECT_THAT(frozen, Not(HasSubstr(original))) << frozen;
  }
  // The host keeps its digits and its hostlist still expands to it.
  const std::string host = map.Host("gpu-0007");
  EXPECT_EQ(host.substr(3), "-0007");
  EXPECT_THAT(frozen, HasSubstr(host + ":4127:4190 [3] NCCL INFO"));
  const std::string prefix = map.HostlistPrefix("gpu-");
  EXPECT_THAT(frozen, HasSubstr(prefix + "[0001-0008]"));
  EXPECT_THAT(ExpandHostlist(prefix + "[0001-0008]", 100), ::testing::Contains(host));
  EXPECT_TRUE(IsIpv4(map.Ipv4("10.64.0.26")));
  EXPECT_THAT(frozen, HasSubstr("STEP " + map.Job("5370") + ".0"));
  EXPECT_EQ(Rewriter(map.proto(), Rewriter::Direction::kBack).Apply(frozen), text);
}

TEST(FreezeNames, DeepSpeedsEncodedWorldInfoIsRewrittenInsideItsEncoding) {
  // base64.urlsafe_b64encode(b'{"gpu-0001": [0, 1], "gpu-0002": [0, 1]}')
  const std::string line =
      "cmd = pdsh -S -f 1024 -w gpu-0001,gpu-0002 ... --world_info="
      "eyJncHUtMDAwMSI6IFswLCAxXSwgImdwdS0wMDAyIjogWzAsIDFdfQ== --master_addr=gpu-0001\n";
  Found f;
  Discover(line, &f);
  EXPECT_THAT(f.hosts, ::testing::ElementsAre("gpu-0001", "gpu-0002"));
  NameMap map = *NameMap::Load("/nonexistent/map.json");
  for (const auto& h : f.hosts) map.Host(h);
  const std::string frozen = Rewriter(map.proto(), Rewriter::Direction::kForward).Apply(line);
  EXPECT_THAT(frozen, Not(HasSubstr("eyJncHUtMDAwMSI6")));
  Found again;
  Discover(frozen, &again);
  EXPECT_THAT(again.hosts, ::testing::ElementsAre(map.Host("gpu-0001"), map.Host("gpu-0002")));
  EXPECT_EQ(Rewriter(map.proto(), Rewriter::Direction::kBack).Apply(frozen), line);
}

TEST(FreezeNames, AnIpv4MappedIpv6AddressKeepsItsShape) {
  const std::string line =
      "vendor err 129 (Send) localGid ::ffff:10.64.0.11 remoteGids::ffff:10.64.0.12\n";
  Found f;
  Discover(line, &f);
  EXPECT_THAT(f.ipv4, ::testing::ElementsAre("10.64.0.11", "10.64.0.12"));
  EXPECT_TRUE(f.ipv6.empty());
  NameMap map = *NameMap::Load("/nonexistent/map.json");
  for (const auto& a : f.ipv4) map.Ipv4(a);
  const std::string frozen = Rewriter(map.proto(), Rewriter::Direction::kForward).Apply(line);
  EXPECT_THAT(frozen, HasSubstr("remoteGids::ffff:" + map.Ipv4("10.64.0.12") + "\n"));
  EXPECT_EQ(Rewriter(map.proto(), Rewriter::Direction::kBack).Apply(frozen), line);
}

TEST(FreezeNames, TheSameOriginalAlwaysGetsTheSameReplacementAcrossLoads) {
  const TempDir dir;
  const fs::path path = dir.path() / "team.map.json";
  NameMap a = *NameMap::Load(path);
  const std::string h = a.Host("node-a"), ip = a.Ipv4("172.16.5.9"), u = a.User("alice");
  EXPECT_EQ(a.Host("node-a"), h);
  EXPECT_NE(a.Host("node-b"), h);
  EXPECT_EQ(ip.size(), std::string("172.16.5.9").size());
  ASSERT_TRUE(a.Save(path).ok());
  NameMap b = *NameMap::Load(path);
  EXPECT_EQ(b.Host("node-a"), h);
  EXPECT_EQ(b.Ipv4("172.16.5.9"), ip);
  EXPECT_EQ(b.User("alice"), u);
  // Hosts that share a stem share its replacement.
  EXPECT_EQ(b.Host("node-c").substr(0, 4), h.substr(0, 4));
  EXPECT_EQ(fs::status(path).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
}

TEST(FreezeCodec, CompressedLogsComeBackAsTheEngineReadsThem) {
  const std::string text = "line one gpu-0001\nline two\n";
  for (const char* codec : {"gzip", "xz", "zstd", "UTF-16LE", "UTF-16BE"}) {
    auto packed = Compress(text, codec);
    ASSERT_TRUE(packed.ok()) << codec;
    const engine::DecompressedLog d = engine::DecompressLog(*packed, 1 << 20);
    EXPECT_EQ(d.codec, codec);
    EXPECT_EQ(d.text, text);
  }
}

// A small torchrun-shaped incident with a gzip, an xz and a zstd log, a UTF-16 one, a pickle
// naming a host and a zip checkpoint naming one.
fs::path MakeIncident(const fs::path& root) {
  const fs::path inc = root / "incident";
  Write(inc / "gpu-node-17/rank_0.log",
        "[rank0]: step 11 loss 2.3 on gpu-node-17 user=jdoe\n"
        "gpu-node-17:4127:4190 [0] NCCL INFO Bootstrap : Using ib0:10.64.0.26<0>\n");
  Write(inc / "gpu-node-17/rank_1.log", "[rank1]: step 11 loss 2.3\n");
  const std::string rank2 =
      "[rank2]: step 11 loss 2.3\ngpu-node-18:4130:4190 [0] NCCL INFO Bootstrap : Using "
      "ib0:10.64.0.27<0>\n";
  Write(inc / "gpu-node-18/rank_2.log.gz", *Compress(rank2, "gzip"));
  Write(inc / "gpu-node-18/rank_3.log.xz",
        *Compress("[rank3]: step 11 loss 2.3 /home/jdoe/run\n", "xz"));
  Write(inc / "gpu-node-18/kern.log.zst",
        *Compress("Nov 29 16:25:31 gpu-node-18 kernel: hello\n", "zstd"));
  Write(inc / "gpu-node-17/agent.log",  // PowerShell 5.1's `>`: UTF-16LE with its mark
        *Compress("[default0]: running on gpu-node-17 as jdoe\r\n", "UTF-16LE"));
  std::string pickle("\x80\x02X\x0b\x00\x00\x00gpu-node-18q\x00.", 22);
  Write(inc / "gpu-node-18/fr_dump_2.pkl", pickle);
  Write(inc / "checkpoints/step_10.pt",
        std::string("PK\x03\x04", 4) + std::string(20, '\0') + "saved on gpu-node-17");
  return inc;
}

TEST(Freeze, AnonymisesEveryFileAndKeepsTheMapOutsideTheEntry) {
  const TempDir dir;
  const fs::path inc = MakeIncident(dir.path());
  std::vector<std::pair<std::string, std::string>> before = FilesOf(inc);
  fs::create_directories(dir.path() / "corpus");
  auto r = Freeze({.incident = inc, .entry = dir.path() / "corpus/inc1", .drafted_by = "test"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(FilesOf(inc), before);  // the incident is never written
  EXPECT_EQ(r->map, dir.path() / "corpus/inc1.map.json");
  ASSERT_TRUE(fs::exists(r->map));
  EXPECT_EQ(r->recompressed, 4);
  EXPECT_EQ(r->binary_rewritten, 1);
  const std::string map_text = ReadBytes(r->map);
  for (const auto& [rel, text] : FilesOf(dir.path() / "corpus/inc1")) {
    EXPECT_THAT(rel, Not(HasSubstr("map"))) << "the map never lands in the entry";
    EXPECT_THAT(rel, Not(HasSubstr("gpu-node")));
    EXPECT_NE(text, map_text);
    if (rel.find("step_10.pt") != std::string::npos) continue;  // reported, below
    for (const char* original :
         {"gpu-node-17", "gpu-node-18", "10.64.0.26", "10.64.0.27", "jdoe"}) {
      EXPECT_FALSE(HoldsName(text, original)) << rel << " holds " << original;
    }
  }
  // The zip checkpoint is copied unchanged and reported, never silently.
  ASSERT_EQ(r->not_anonymised.size(), 1u);
  EXPECT_THAT(r->not_anonymised[0], HasSubstr("step_10.pt: zip archive"));
  EXPECT_THAT(r->not_anonymised[0], HasSubstr("1 host names"));
  EXPECT_THAT(ReadBytes(dir.path() / "corpus/inc1/FREEZE.md"), HasSubstr("step_10.pt"));
  // The pickle keeps its length prefix true.
  const fs::path pkl =
      dir.path() / "corpus/inc1/incident" /
      fs::path(Rewriter(*&(*NameMap::Load(r->map)).proto(), Rewriter::Direction::kForward)
                   .Apply("gpu-node-18")) /
      "fr_dump_2.pkl";
  ASSERT_TRUE(fs::exists(pkl));
  EXPECT_EQ(ReadBytes(pkl).size(), 22u);
  // The map refuses to be placed inside the entry.
  auto inside = Freeze({.incident = inc,
                        .entry = dir.path() / "corpus/inc2",
                        .map = dir.path() / "corpus/inc2/m.json"});
  ASSERT_FALSE(inside.ok());
  EXPECT_THAT(inside.status().message(), HasSubstr("inside the entry"));
  auto in_incident = Freeze({.incident = inc, .entry = inc / "copy"});
  EXPECT_FALSE(in_incident.ok());
}

TEST(Freeze, ASecondIncidentReusesTheTeamsMap) {
  const TempDir dir;
  const fs::path inc = MakeIncident(dir.path() / "a");
  fs::create_directories(dir.path() / "b/incident/gpu-node-18");
  Write(dir.path() / "b/incident/gpu-node-18/rank_0.log",
        "gpu-node-18:77:77 [0] NCCL INFO Bootstrap : Using ib0:10.64.0.27<0>\n"
        "gpu-node-99:78:78 [0] NCCL INFO Bootstrap : Using ib0:10.64.0.99<0>\n");
  fs::create_directories(dir.path() / "corpus");
  const fs::path map = dir.path() / "team.map.json";
  ASSERT_TRUE(Freeze({.incident = inc, .entry = dir.path() / "corpus/a", .map = map}).ok());
  const std::string after_a = *&(*NameMap::Load(map)).proto().hosts().at("gpu-node-18");
  ASSERT_TRUE(
      Freeze({.incident = dir.path() / "b/incident", .entry = dir.path() / "corpus/b", .map = map})
          .ok());
  const v1::NameMap m = NameMap::Load(map)->proto();
  EXPECT_EQ(m.hosts().at("gpu-node-18"), after_a);
  EXPECT_TRUE(m.hosts().contains("gpu-node-99"));
  EXPECT_TRUE(fs::exists(dir.path() / "corpus/b/incident" / after_a / "rank_0.log"));
  // The same address became the same replacement in both entries.
  const std::string ip = m.ipv4().at("10.64.0.27");
  bool in_a = false, in_b = false;
  for (const auto& [rel, text] : FilesOf(dir.path() / "corpus/a"))
    in_a |= text.find(ip) != std::string::npos;
  for (const auto& [rel, text] : FilesOf(dir.path() / "corpus/b"))
    in_b |= text.find(ip) != std::string::npos;
  EXPECT_TRUE(in_a && in_b);
}

TEST(Freeze, DraftsTheExpectedOutcomeAndConfirmCorrectsIt) {
  const TempDir dir;
  const fs::path inc = MakeIncident(dir.path());
  fs::create_directories(dir.path() / "corpus");
  const fs::path entry = dir.path() / "corpus/inc1";
  ASSERT_TRUE(Freeze({.incident = inc, .entry = entry, .drafted_by = "denpex freeze test"}).ok());
  v1::Truth t;
  ASSERT_TRUE(proto::ReadJsonFile(entry / "expected.json", &t).ok());
  EXPECT_TRUE(t.corpus_entry().draft());
  EXPECT_EQ(t.corpus_entry().drafted_by(), "denpex freeze test");
  EXPECT_EQ(t.scenario(), "inc1");

  ConfirmOptions c{.entry = entry,
                   .owner = "host",
                   .failure_class = "FAILURE_CLASS_HOST_OOM",
                   .rank = 2,
                   .node = "gpu-node-18",
                   .checkpoint = "step_10.pt@10",
                   .resumed_from = "step_5.pt@5",
                   .recovery = {"drained the node", "resubmitted"},
                   .investigation_started = "2026-11-29T16:30:00Z",
                   .investigation_ended = "2026-11-29T17:15:00Z",
                   .process_owner = "application",
                   .now = "2026-11-30T09:00:00Z"};
  ASSERT_TRUE(Confirm(c).ok());
  ASSERT_TRUE(proto::ReadJsonFile(entry / "expected.json", &t).ok());
  EXPECT_FALSE(t.corpus_entry().draft());
  EXPECT_EQ(t.corpus_entry().confirmed_at(), "2026-11-30T09:00:00Z");
  EXPECT_EQ(t.owner(), v1::OWNER_HOST);
  EXPECT_EQ(t.initiator().failure_class(), v1::FAILURE_CLASS_HOST_OOM);
  EXPECT_EQ(t.initiator().rank(), 2);
  // The real node name given is stored as its replacement.
  EXPECT_EQ(t.initiator().node(),
            NameMap::Load(dir.path() / "corpus/inc1.map.json")->proto().hosts().at("gpu-node-18"));
  EXPECT_EQ(t.checkpoint().path(), "step_10.pt");
  EXPECT_EQ(t.checkpoint().step(), 10);
  const v1::Postmortem& pm = t.corpus_entry().postmortem();
  EXPECT_EQ(pm.resumed_from(), "step_5.pt");
  EXPECT_EQ(pm.resumed_step(), 5);
  EXPECT_THAT(pm.recovery(), ::testing::ElementsAre("drained the node", "resubmitted"));
  EXPECT_DOUBLE_EQ(pm.operator_minutes(), 45.0);
  EXPECT_EQ(pm.process_owner(), v1::OWNER_APPLICATION);
  EXPECT_THAT(ReadBytes(entry / "expected.json"), Not(HasSubstr("gpu-node-18")));

  ConfirmOptions bad{.entry = entry, .owner = "nobody-in-particular"};
  const Status st = Confirm(bad);
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("--owner nobody-in-particular"));
}

TEST(Freeze, EvalReadsOldAndDraftedEntriesAndSaysWhichAreDrafts) {
  const TempDir dir;
  const fs::path inc = MakeIncident(dir.path());
  const fs::path corpus = dir.path() / "corpus";
  fs::create_directories(corpus);
  ASSERT_TRUE(
      Freeze({.incident = inc, .entry = corpus / "inc1", .map = dir.path() / "m.json"}).ok());
  // An entry written by hand, as every entry before `denpex freeze` was.
  fs::copy(fs::path(DENPEX_SOURCE_DIR) / "corpora/real/tr_sigkill_rank3",
           corpus / "tr_sigkill_rank3", fs::copy_options::recursive);
  std::ostringstream out, err;
  cli::EvalArgs args;
  args.corpora = {corpus};
  args.strategies = {"engine"};
  args.jobs = 1;
  const int rc = cli::RunEval(args, out, err);
  EXPECT_EQ(rc, 0) << err.str();
  EXPECT_THAT(err.str(), HasSubstr("inc1: expected.json is a draft"));
  EXPECT_THAT(err.str(), Not(HasSubstr("tr_sigkill_rank3: expected.json is a draft")));
}

}  // namespace
}  // namespace denpex::freeze
