// Docker's json-file logs and a journal's JSON export (engine/src/ingest/json_logs.h): known by
// their first lines, read as
// the CRI lines they stand for, every escape Docker writes read back, a split line's records
// joined, and what is no record kept as it is.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "denpex/engine/engine.h"
#include "ingest/file_text.h"
#include "ingest/json_logs.h"
#include "ingest/load.h"
#include "support/gzip.h"
#include "support/json_logs.h"
#include "support/temp_dir.h"

namespace denpex::engine {
namespace {

bool IsDocker(std::string_view head) { return SniffJsonLog(head) == JsonLog::kDocker; }
JsonLogText Docker(std::string_view bytes, std::size_t limit = std::string::npos) {
  return DecodeJsonLog(bytes, JsonLog::kDocker, limit);
}

std::string Decoded(std::string_view bytes) {
  const JsonLogText d = Docker(bytes);
  return std::string(d.text.begin(), d.text.end());
}

TEST(DockerJson, KnownByItsFirstRecordsNotByAnyJsonLines) {
  EXPECT_TRUE(
      IsDocker("{\"log\":\"hello\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21."
               "972589808Z\"}\n"));
  // Docker leaves out an empty log or stream; attributes come before the time; any zone.
  EXPECT_TRUE(IsDocker(
      "{\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}\n"
      "{\"log\":\"a\\n\",\"attrs\":{\"tag\":\"x\"},\"time\":\"2024-06-01T11:00:21.5+02:00\"}\n"));
  // A first line cut short (no newline in the head) says nothing.
  EXPECT_FALSE(
      IsDocker("{\"log\":\"hello\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}"));
  // A program's own JSON lines (structlog, Go's slog, a Fluent Bit record) are a log of their
  // own, read line by line, not decoded.
  EXPECT_FALSE(
      IsDocker("{\"time\":\"2024-06-01T09:00:21Z\",\"level\":\"INFO\",\"msg\":\"step 10\"}\n"));
  EXPECT_FALSE(IsDocker("{\"log\":\"x\\n\",\"date\":1717232421.972}\n"));
  EXPECT_FALSE(IsDocker("{\"log\":\"x\\n\",\"time\":\"yesterday\"}\n"));
  EXPECT_FALSE(IsDocker("{\"log\":\"x\\n\",\"time\":\"2024-06-01T09:00:21.1234567890Z\"}\n"));
  // The first four lines must all be records.
  EXPECT_FALSE(IsDocker("{\"log\":\"x\\n\",\"time\":\"2024-06-01T09:00:21Z\"}\nplain text\n"));
  EXPECT_FALSE(IsDocker("[rank0]:[E1206 18:44:12.715] {\"log\":\"x\"}\n"));
}

TEST(DockerJson, EveryEscapeDockerWritesIsReadBack) {
  // moby's jsonlog escapes `<`, `>`, `&` and control bytes as \u00XX (a colour code's ESC, a
  // tab), `"` and `\` with a backslash, U+2028 and a byte that is no UTF-8 as \u escapes.
  const std::string in =
      R"({"log":"\u001b[1;31mRuntimeError:\u0009CUDA error \u003cunknown\u003e \u0026 \"quoted\" C:\\path \u2028 \ufffd \ud83d\ude80 \ud83d\u001b[0m\n","stream":"stderr","time":"2024-06-01T09:00:21.97258980Z"})"
      "\n";
  EXPECT_EQ(Decoded(in),
            "2024-06-01T09:00:21.97258980Z stderr F \x1b[1;31mRuntimeError:\tCUDA error <unknown> "
            "& \"quoted\" "
            "C:\\path \xe2\x80\xa8 \xef\xbf\xbd \xf0\x9f\x9a\x80 \xef\xbf\xbd\x1b[0m\n");
}

TEST(DockerJson, ASplitLinesRecordsAreTaggedPartialAndAStreamlessRecordHasNoTag) {
  const std::string in =
      "{\"log\":\"[rank3]:[E1206 18:44:12.715] first half "
      "\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}\n"
      "{\"log\":\"and the rest\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}\n"
      "{\"log\":\"no stream\\n\",\"time\":\"2024-06-01T09:00:22Z\"}\n"
      "{\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:23Z\"}\n";
  EXPECT_EQ(Decoded(in),
            "2024-06-01T09:00:21Z stdout P [rank3]:[E1206 18:44:12.715] first half \n"
            "2024-06-01T09:00:21Z stdout F and the rest\n"
            "2024-06-01T09:00:22Z no stream\n"
            "2024-06-01T09:00:23Z stdout F \n");
}

TEST(DockerJson, LinesThatAreNoRecordAreKeptAndSaidSo) {
  // A crash cuts the last record; a collector's merged record holds several lines.
  const std::string in =
      "{\"log\":\"Traceback (most recent call last):\\n  File \\\"train.py\\\", line "
      "3\\n\",\"stream\":\"stderr\",\"time\":\"2024-06-01T09:00:21Z\"}\n"
      "{\"log\":\"RuntimeError: boom\\n\",\"stream\":\"stderr\",\"ti";
  const JsonLogText d = Docker(in);
  EXPECT_EQ(std::string(d.text.begin(), d.text.end()),
            "2024-06-01T09:00:21Z stderr F Traceback (most recent call last):\n"
            "2024-06-01T09:00:21Z stderr F   File \"train.py\", line 3\n"
            "{\"log\":\"RuntimeError: boom\\n\",\"stream\":\"stderr\",\"ti\n");
  EXPECT_EQ(d.records, 1u);
  EXPECT_EQ(d.other_lines, 1u);
  EXPECT_EQ(d.extra_lines, 1u);
  const std::string problem = JsonLogProblem(d, JsonLog::kDocker);
  EXPECT_NE(problem.find("1 line that is no record"), std::string::npos) << problem;
  EXPECT_NE(problem.find("numbered in the decoded text"), std::string::npos) << problem;
  EXPECT_EQ(JsonLogProblem(Docker("{\"log\":\"x\\n\",\"time\":\"2024-06-01T09:00:21Z\"}\n"),
                           JsonLog::kDocker),
            "");
}

// A file of records over the size the engine maps is read whole and decoded, as a compressed one
// is inflated, and a cited line is quoted from the decoded text.
TEST(DockerJson, ALargeFileIsDecodedAndItsLinesQuotedDecoded) {
  std::string records;
  for (int i = 0; records.size() < (std::size_t{1} << 20); ++i) {
    records +=
        "{\"log\":\"NCCL INFO step " + std::to_string(i) +
        " \\u003cok\\u003e\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21.5Z\"}\n";
  }
  const testing::TempDir dir;
  std::ofstream(dir.path() / "a.log", std::ios::binary) << records;
  std::ofstream(dir.path() / "b.log", std::ios::binary) << denpex::testing::Gzip(records);
  for (const char* name : {"a.log", "b.log"}) {
    auto text = FileText::Open(dir.path() / name);
    ASSERT_TRUE(text.ok()) << text.status().message();
    EXPECT_EQ(text->encoding(), "Docker JSON");
    EXPECT_EQ(text->problem(), "");
    const std::string_view view = text->view();
    EXPECT_TRUE(view.starts_with("2024-06-01T09:00:21.5Z stdout F NCCL INFO step 0 <ok>\n"))
        << view.substr(0, 80);
    const std::string line = "2024-06-01T09:00:21.5Z stdout F NCCL INFO step 9000 <ok>";
    const std::size_t at = view.find(line);
    ASSERT_NE(at, std::string_view::npos);
    auto quoted = ReadSpan(dir.path() / name, at, static_cast<std::uint32_t>(line.size()));
    ASSERT_TRUE(quoted.ok()) << quoted.status().message();
    EXPECT_EQ(*quoted, line);
  }
}

// The decoded text kept for quotes is the file's as it is now: a file written again (another size
// or modification time) is decoded again, never quoted from the text of its old contents.
TEST(DockerJson, AQuoteIsOfTheFileAsItIsNow) {
  const auto records = [](const std::string& word) {
    std::string out;
    for (int i = 0; out.size() < (std::size_t{1} << 20); ++i) {
      out += "{\"log\":\"" + word + " " + std::to_string(i) +
             "\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}\n";
    }
    return out;
  };
  const testing::TempDir dir;
  const std::filesystem::path path = dir.path() / "d.log";
  std::ofstream(path, std::ios::binary) << records("alpha");
  const std::string line = "2024-06-01T09:00:21Z stdout F alpha 9000";
  auto first = FileText::Open(path);
  ASSERT_TRUE(first.ok());
  const std::size_t at = first->view().find(line);
  ASSERT_NE(at, std::string_view::npos);
  KeepForQuotes(std::move(*first));
  EXPECT_EQ(*ReadSpan(path, at, static_cast<std::uint32_t>(line.size())), line);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << records("omega-longer");
  auto now = ReadSpan(path, at, 10);
  ASSERT_TRUE(now.ok());
  auto again = FileText::Open(path);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*now, std::string(again->view().substr(at, 10)));
  EXPECT_EQ(now->find("alpha"), std::string::npos);
}

// A file read in pieces decoded in parallel is decoded as one pass over it is: pieces end at
// newlines, a line longer than a piece (9 MiB) grows its piece, a last record without its
// newline is read too.
TEST(DockerJson, AFileReadInPiecesIsDecodedAsOnePass) {
  std::string records;
  for (int i = 0; records.size() < (std::size_t{12} << 20); ++i) {
    const std::string text =
        i == 2000 ? std::string(std::size_t{9} << 20, 'z') : "line " + std::to_string(i);
    records +=
        "{\"log\":\"" + text + "\\n\",\"stream\":\"stderr\",\"time\":\"2024-06-01T09:00:21Z\"}\n";
  }
  records += "{\"log\":\"cut";  // a crash cut the last record
  const testing::TempDir dir;
  std::ofstream(dir.path() / "c.log", std::ios::binary) << records;
  auto text = FileText::Open(dir.path() / "c.log");
  ASSERT_TRUE(text.ok()) << text.status().message();
  const JsonLogText once = Docker(records);
  EXPECT_TRUE(text->view() == std::string_view(once.text.data(), once.text.size()));
  EXPECT_EQ(once.other_lines, 1u);
  EXPECT_NE(text->problem().find("1 line that is no record"), std::string::npos) << text->problem();
}

std::string Decoded(const JsonLogText& d) { return std::string(d.text.begin(), d.text.end()); }

// A journal exported with `journalctl -o json` is known by its entries (`__REALTIME_TIMESTAMP`
// and `MESSAGE` on each of the first lines) and read as `journalctl -o short-iso-precise` prints
// them, in UTC: the kernel's as `<host> kernel: `, a process's as `<identifier>[<pid>]: `; a
// message of bytes (no UTF-8) or of several lines is read too.
TEST(JournalJson, EntriesAreReadAsTheJournalPrintsThem) {
  const std::string xid =
      "NVRM: Xid (PCI:0000:5d:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
  const std::string in =
      denpex::testing::JournalRecord(xid, 1732897531123456LL, "gpu-0001", "kernel", 0) +
      denpex::testing::JournalRecord("RuntimeError: boom\n  at \"x\"", 1732897532000001LL,
                                     "gpu-0001", "python3", 4242) +
      "{\"__REALTIME_TIMESTAMP\":\"1732897533000000\",\"_HOSTNAME\":\"gpu-0002\",\"_COMM\":"
      "\"slurmd\","
      "\"MESSAGE\":[79,75,32,255]}\n"
      "{\"__REALTIME_TIMESTAMP\":\"1732897534000000\",\"_HOSTNAME\":\"gpu-0002\",\"MESSAGE\":null}"
      "\n";
  EXPECT_EQ(SniffJsonLog(in), JsonLog::kJournal);
  EXPECT_EQ(SniffJsonLog(std::string_view(in).substr(0, 40)), JsonLog::kNone);  // no whole entry
  const JsonLogText d = DecodeJsonLog(in, JsonLog::kJournal);
  EXPECT_EQ(std::string(d.text.begin(), d.text.end()),
            "2024-11-29T16:25:31.123456+00:00 gpu-0001 kernel: " + xid +
                "\n"
                "2024-11-29T16:25:32.000001+00:00 gpu-0001 python3[4242]: RuntimeError: boom\n"
                "2024-11-29T16:25:32.000001+00:00 gpu-0001 python3[4242]:   at \"x\"\n"
                "2024-11-29T16:25:33.000000+00:00 gpu-0002 slurmd: OK \xff\n"
                "2024-11-29T16:25:34.000000+00:00 gpu-0002 unknown: \n");
  EXPECT_EQ(d.records, 4u);
  EXPECT_EQ(d.extra_lines, 1u);
  // Docker's records are no journal's, nor a program's JSON lines with a time and a message.
  EXPECT_EQ(
      SniffJsonLog("{\"log\":\"x\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}\n"),
      JsonLog::kDocker);
  EXPECT_EQ(SniffJsonLog("{\"timestamp\":\"1732897531123456\",\"MESSAGE\":\"x\"}\n"),
            JsonLog::kNone);
}

// The kernel's Xid read from a journal's JSON export names its GPU and node as the kernel log
// does: an incident whose node's kernel log is such an export gives the kernel log's answer.
TEST(JournalJson, AnXidExportedFromTheJournalIsTheKernelLogs) {
  const testing::TempDir dir;
  const std::string xid =
      "NVRM: Xid (PCI:0000:5d:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
  std::ofstream(dir.path() / "kern.json", std::ios::binary)
      << denpex::testing::JournalRecord("Linux version 5.15.0-105-generic", 1732897000000000LL,
                                        "gpu-0001", "kernel", 0)
      << denpex::testing::JournalRecord(xid, 1732897531123456LL, "gpu-0001", "kernel", 0);
  auto text = FileText::Open(dir.path() / "kern.json");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->encoding(), "journal JSON");
  auto inc = LoadIncident(dir.path(), 1);
  ASSERT_TRUE(inc.ok()) << inc.status().message();
  ASSERT_EQ(inc->events.size(), 1u);
  EXPECT_EQ(inc->events[0].kind, Kind::kXid);
  EXPECT_EQ(inc->events[0].line, 2u);
  ASSERT_GE(inc->events[0].node, 0);
  EXPECT_EQ(inc->nodes[static_cast<std::size_t>(inc->events[0].node)], "gpu-0001");
}

// Fluent Bit's `systemd` input ships a journal's entries without their address fields (no
// `__REALTIME_TIMESTAMP`): the entry's time is the output's `date`. Read as the journal prints
// them, as an export's; a `date` and a `MESSAGE` alone (no journal field beside them) are not.
TEST(JournalJson, EntriesFluentBitShippedAreReadByTheirDate) {
  const std::string xid =
      "NVRM: Xid (PCI:0000:5d:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
  const std::string in =
      R"({"date":1732897531.123456,"PRIORITY":"4","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","_HOSTNAME":"gpu-0001","_BOOT_ID":"9f1c","MESSAGE":")" +
      xid +
      R"("})"
      "\n"
      R"({"date":"2024-11-29T16:25:32.000001Z","_HOSTNAME":"gpu-0001","SYSLOG_IDENTIFIER":"slurmd","_PID":"812","MESSAGE":"error: *** JOB 4242 ON gpu-0001 CANCELLED ***"})"
      "\n";
  EXPECT_EQ(SniffJsonLog(in), JsonLog::kJournal);
  EXPECT_EQ(Decoded(DecodeJsonLog(in, JsonLog::kJournal)),
            "2024-11-29T16:25:31.123456+00:00 gpu-0001 kernel: " + xid +
                "\n"
                "2024-11-29T16:25:32.000001+00:00 gpu-0001 slurmd[812]: error: *** JOB 4242 ON "
                "gpu-0001 CANCELLED ***\n");
  EXPECT_EQ(SniffJsonLog(R"({"date":1732897531.5,"MESSAGE":"x"})"
                         "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"({"date":"yesterday","_HOSTNAME":"gpu-0001","MESSAGE":"x"})"
                         "\n"),
            JsonLog::kNone);
}

// A journal's entries as Vector's journald source ships them (`message` for MESSAGE, `host` for
// _HOSTNAME, the journal's other fields beside, `__REALTIME_TIMESTAMP` kept), and as Fluent Bit's
// `systemd` input with `Lowercase On` (every key lowered): the journal's lines, a kernel's Xid a
// kernel log's line.
TEST(JournalJson, EntriesVectorOrLowercasedShippedAreTheJournalsLines) {
  const std::string xid =
      "NVRM: Xid (PCI:0000:5d:00): 79, pid=4242, name=python3, GPU has fallen off the bus.";
  const std::string vector =
      R"({"__REALTIME_TIMESTAMP":"1732897531123456","__MONOTONIC_TIMESTAMP":"98694000446","_BOOT_ID":"9f1c","PRIORITY":"4","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","host":"gpu-0001","message":")" +
      xid +
      R"(","source_type":"journald","timestamp":"2024-11-29T16:25:31.123456Z"})"
      "\n";
  EXPECT_EQ(SniffJsonLog(vector), JsonLog::kJournal);
  EXPECT_EQ(Decoded(DecodeJsonLog(vector, JsonLog::kJournal)),
            "2024-11-29T16:25:31.123456+00:00 gpu-0001 kernel: " + xid + "\n");
  const std::string lowered =
      R"({"date":1732897532.000001,"_hostname":"gpu-0001","syslog_identifier":"slurmd","_pid":"812","message":"error: *** JOB 4242 ON gpu-0001 CANCELLED ***"})"
      "\n";
  EXPECT_EQ(SniffJsonLog(lowered), JsonLog::kJournal);
  EXPECT_EQ(Decoded(DecodeJsonLog(lowered, JsonLog::kJournal)),
            "2024-11-29T16:25:32.000001+00:00 gpu-0001 slurmd[812]: error: *** JOB 4242 ON "
            "gpu-0001 CANCELLED ***\n");
  // a shipper's record of a machine's file (Vector's `file` source: `host`, no journal field) is
  // no journal entry
  EXPECT_NE(SniffJsonLog(R"({"date":1732897531.5,"host":"gpu-0001","message":"x"})"
                         "\n"),
            JsonLog::kJournal);
}

// ---- a log shipper's records --------------------------------------------------------------

std::string Shipped(std::string_view bytes) {
  const JsonLogText d = DecodeJsonLog(bytes, JsonLog::kShipper);
  return std::string(d.text.begin(), d.text.end());
}

// Each shipper's record of a container's line: the text, its time and its pod and node under the
// shipper's own keys, read as the line Loki's `logcli query` prints for that stream.
TEST(ShipperJson, EachShippersRecordIsReadAsItsStreamsLine) {
  const std::string want =
      "{container=\"pytorch\", namespace=\"default\", node_name=\"gpu-0007\", "
      "pod=\"llama-worker-3\"} [rank3]:[E1206 18:44:12.715] boom\n";
  // Fluent Bit's `kubernetes` filter; `date` a double (stdout's json_lines) or ISO 8601 (s3).
  const std::string fluent_bit =
      R"({"date":1717232421.972589,"stream":"stderr","_p":"F","log":"[rank3]:[E1206 18:44:12.715] boom","kubernetes":{"pod_name":"llama-worker-3","namespace_name":"default","pod_id":"1c4f","labels":{"app":"x"},"host":"gpu-0007","container_name":"pytorch","docker_id":"ab12"}})"
      "\n";
  EXPECT_EQ(SniffJsonLog(fluent_bit), JsonLog::kShipper);
  EXPECT_EQ(Shipped(fluent_bit), "2024-06-01T09:00:21.972589000Z " + want);
  EXPECT_EQ(
      Shipped(
          R"({"date":"2024-06-01T09:00:21.972589Z","log":"[rank3]:[E1206 18:44:12.715] boom\n","kubernetes":{"pod_name":"llama-worker-3","namespace_name":"default","host":"gpu-0007","container_name":"pytorch"}})"),
      "2024-06-01T09:00:21.972589Z " + want);
  // Vector's `kubernetes_logs` source
  EXPECT_EQ(
      Shipped(
          R"({"file":"/var/log/pods/x/pytorch/0.log","kubernetes":{"container_name":"pytorch","pod_labels":{"app":"x"},"pod_name":"llama-worker-3","pod_namespace":"default","pod_node_name":"gpu-0007"},"message":"[rank3]:[E1206 18:44:12.715] boom","source_type":"kubernetes_logs","stream":"stderr","timestamp":"2024-06-01T09:00:21.972589Z"})"),
      "2024-06-01T09:00:21.972589Z " + want);
  // Elastic's ECS document (Filebeat, Elastic Agent), as a search's hit exports it
  EXPECT_EQ(
      Shipped(
          R"({"_index":"logs","_id":"x","_source":{"@timestamp":"2024-06-01T09:00:21.972Z","message":"[rank3]:[E1206 18:44:12.715] boom","kubernetes":{"pod":{"name":"llama-worker-3"},"namespace":"default","container":{"name":"pytorch"},"node":{"name":"gpu-0007"}},"host":{"name":"gpu-0007"}}})"),
      "2024-06-01T09:00:21.972Z " + want);
  // Google Cloud Logging's entry of a GKE container
  EXPECT_EQ(
      Shipped(
          R"({"insertId":"x","labels":{"compute.googleapis.com/resource_name":"gpu-0007","k8s-pod/app":"x"},"logName":"projects/p/logs/stderr","resource":{"labels":{"container_name":"pytorch","namespace_name":"default","pod_name":"llama-worker-3","project_id":"p"},"type":"k8s_container"},"severity":"ERROR","textPayload":"[rank3]:[E1206 18:44:12.715] boom","timestamp":"2024-06-01T09:00:21.972589808Z"})"),
      "2024-06-01T09:00:21.972589808Z " + want);
  // Loki's `logcli query --output=jsonl`
  EXPECT_EQ(
      Shipped(
          R"({"labels":{"container":"pytorch","namespace":"default","node_name":"gpu-0007","pod":"llama-worker-3","stream":"stderr"},"line":"[rank3]:[E1206 18:44:12.715] boom","timestamp":"2024-06-01T11:00:21.972589808+02:00"})"),
      "2024-06-01T11:00:21.972589808+02:00 " + want);
  // A machine's shipper outside Kubernetes names its host alone; a text of several lines (a
  // shipper's multiline parser joined a traceback) is a line each; escapes are read.
  const JsonLogText d = DecodeJsonLog(
      R"({"@timestamp":"2024-06-01T09:00:21Z","message":"Traceback (most recent call last):\n  File \"train.py\", line 3\u003e\n","host":{"name":"gpu-0007"}})",
      JsonLog::kShipper);
  EXPECT_EQ(std::string(d.text.begin(), d.text.end()),
            "2024-06-01T09:00:21Z {node_name=\"gpu-0007\"} Traceback (most recent call last):\n"
            "2024-06-01T09:00:21Z {node_name=\"gpu-0007\"}   File \"train.py\", line 3>\n");
  EXPECT_EQ(d.extra_lines, 1u);
  // A machine's files shipped (Filebeat's ECS, Vector's `file` source): one stream, the
  // machine's (read per file, a rank's file would lose what its path said of it: its name's rank,
  // its node's folder).
  EXPECT_EQ(
      Shipped(
          R"({"@timestamp":"2024-06-01T09:00:21Z","message":"x","host":{"name":"gpu-0007"},"log":{"file":{"path":"/var/log/train/rank_5.log"},"offset":12}})"
          "\n"
          R"({"file":"/var/log/kern.log","host":"gpu-0007","message":"y","source_type":"file","timestamp":"2024-06-01T09:00:22Z"})"),
      "2024-06-01T09:00:21Z {node_name=\"gpu-0007\"} x\n"
      "2024-06-01T09:00:22Z {node_name=\"gpu-0007\"} y\n");
}

// A shipper's file is known by its records: each of its first lines a record with a line, its
// time, and the pod or node it came from. A program's own JSON lines (a time and a message, no
// pod or node), Docker's records and journal entries are not a shipper's.
TEST(ShipperJson, KnownByRecordsThatNameTheirPodOrNode) {
  const auto record = [](std::string_view time, std::string_view extra) {
    return "{\"message\":\"step 10\",\"timestamp\":" + std::string(time) + std::string(extra) +
           "}\n";
  };
  const std::string pod = ",\"kubernetes\":{\"pod_name\":\"llama-worker-3\"}";
  EXPECT_EQ(SniffJsonLog(record("\"2024-06-01T09:00:21Z\"", pod)), JsonLog::kShipper);
  EXPECT_EQ(SniffJsonLog(record("\"2024-06-01T09:00:21Z\"", "")), JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(record("\"2024-06-01T09:00:21Z\"", ",\"level\":\"info\"")),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(record("\"yesterday\"", pod)), JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(record("1717232421.5", pod)), JsonLog::kShipper);
  EXPECT_EQ(SniffJsonLog(record("-3", pod)), JsonLog::kNone);
  // a whole number of milliseconds (13 digits), microseconds (16) or nanoseconds (19)
  EXPECT_EQ(Shipped(record("1717232421972", pod)),
            "2024-06-01T09:00:21.972000000Z {pod=\"llama-worker-3\"} step 10\n");
  EXPECT_EQ(Shipped(record("1717232421972589808", pod)),
            "2024-06-01T09:00:21.972589808Z {pod=\"llama-worker-3\"} step 10\n");
  // seconds with a fraction of any width, whatever the number's size (16 bytes, as microseconds')
  EXPECT_EQ(Shipped(record("1717232421.97258", pod)),
            "2024-06-01T09:00:21.972580000Z {pod=\"llama-worker-3\"} step 10\n");
  EXPECT_EQ(SniffJsonLog(record("17172324219", pod)), JsonLog::kNone);  // 11 digits: no unit
  EXPECT_EQ(SniffJsonLog(record("9717232421", pod)), JsonLog::kNone);   // past TimeNs' years
  EXPECT_EQ(SniffJsonLog(record("9717232421972589808", pod)), JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("{\"message\":7,\"timestamp\":\"2024-06-01T09:00:21Z\"" + pod + "}\n"),
            JsonLog::kNone);  // no line's text
  // every one of the first four lines
  EXPECT_EQ(SniffJsonLog(record("\"2024-06-01T09:00:21Z\"", pod) + "plain text\n"), JsonLog::kNone);
  EXPECT_EQ(
      SniffJsonLog("{\"log\":\"x\\n\",\"stream\":\"stdout\",\"time\":\"2024-06-01T09:00:21Z\"}\n"),
      JsonLog::kDocker);
  // a line that is no record (cut by the shipper's crash) is kept and said
  const JsonLogText d = DecodeJsonLog(
      record("\"2024-06-01T09:00:21Z\"", pod) + "{\"message\":\"cut", JsonLog::kShipper);
  EXPECT_EQ(d.records, 1u);
  EXPECT_EQ(d.other_lines, 1u);
  EXPECT_NE(JsonLogProblem(d, JsonLog::kShipper).find("a log shipper's JSON records of 1 record"),
            std::string::npos)
      << JsonLogProblem(d, JsonLog::kShipper);
}

// Fluent Bit's `file` output in its default format: `<tag>: [<seconds>, <record>]`. The record's
// time where it keeps one, else the event's; its pod, namespace and container from the kubernetes
// filter's metadata, else (each) from the container log file its tail input's tag names.
TEST(ShipperJson, FluentBitsFileOutputLinesAreRecords) {
  const std::string id(64, 'a');
  const std::string tag = "kube.var.log.containers.llama-worker-3_train_pytorch-" + id + ".log";
  const std::string k8s =
      R"("kubernetes":{"pod_name":"llama-worker-3","namespace_name":"train","host":"gpu-0007"})";
  EXPECT_EQ(SniffJsonLog(tag + R"(: [1717232421.972589808, {"log":"step 10",)" + k8s + "}]\n"),
            JsonLog::kShipper);
  EXPECT_EQ(Shipped(tag + R"(: [1717232421.972589808, {"log":"step 10",)" + k8s + "}]\n"),
            "2024-06-01T09:00:21.972589808Z {container=\"pytorch\", namespace=\"train\", "
            "node_name=\"gpu-0007\", pod=\"llama-worker-3\"} step 10\n");
  // the record's own time (the container runtime's, kept by the CRI parser) before the event's
  EXPECT_EQ(Shipped(tag + R"(: [1717232499.0, {"time":"2024-06-01T09:00:21.5Z","log":"x",)" + k8s +
                    "}]\n"),
            "2024-06-01T09:00:21.5Z {container=\"pytorch\", namespace=\"train\", "
            "node_name=\"gpu-0007\", pod=\"llama-worker-3\"} x\n");
  // no kubernetes filter: the tag's file name
  EXPECT_EQ(Shipped(tag + R"(: [1717232421.500000, {"stream":"stderr","_p":"F","log":"x"}])"
                          "\n"),
            "2024-06-01T09:00:21.500000000Z {container=\"pytorch\", namespace=\"train\", "
            "pod=\"llama-worker-3\"} x\n");
  // the record's metadata before the tag's name
  EXPECT_EQ(Shipped(tag + R"(: [1717232421.5, {"log":"x","kubernetes":{"pod_name":"w-9"}}])"
                          "\n"),
            "2024-06-01T09:00:21.500000000Z {container=\"pytorch\", namespace=\"train\", "
            "pod=\"w-9\"} x\n");
  // a tag that names no container log, a line that is no such output, an unclosed one: no record
  EXPECT_EQ(SniffJsonLog(R"(app.log: [1717232421.5, {"log":"x"}])"
                         "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"(note: [1717232421.5, {"log":"x","host":"gpu-0007"}] and more)"
                         "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(tag + R"(: [1717232421.5, {"log":"x"})"
                               "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("[W socket.cpp:697] [c10d] x: [1717232421.5, {\"log\":\"x\"}]\n"),
            JsonLog::kNone);
  // a pod name with dots (a DNS subdomain) after the tail input's path; any other tag prefix
  EXPECT_EQ(Shipped("kube.var.log.containers.llama.worker-3_default_pytorch-" + id +
                    R"(.log: [1717232421.5, {"log":"x"}])"
                    "\n"),
            "2024-06-01T09:00:21.500000000Z {container=\"pytorch\", namespace=\"default\", "
            "pod=\"llama.worker-3\"} x\n");
  EXPECT_EQ(Shipped("pods.llama-worker-3_default_pytorch-" + id +
                    R"(.log: [1717232421.5, {"log":"x"}])"
                    "\n"),
            "2024-06-01T09:00:21.500000000Z {container=\"pytorch\", namespace=\"default\", "
            "pod=\"llama-worker-3\"} x\n");
}

// One Cloud Logging entry of a GKE container as `gcloud logging read --format=json` prints it:
// pretty-printed, its keys sorted, indented as an element of the array.
std::string GcloudEntry(std::string_view time, std::string_view pod, std::string_view text) {
  return R"(  {
    "insertId": "1x2y3z",
    "labels": {
      "compute.googleapis.com/resource_name": "gpu-0007"
    },
    "logName": "projects/p/logs/stderr",
    "receiveTimestamp": "2024-06-01T09:00:23.1Z",
    "resource": {
      "labels": {
        "container_name": "pytorch",
        "namespace_name": "default",
        "pod_name": ")" +
         std::string(pod) + R"("
      },
      "type": "k8s_container"
    },
    "severity": "ERROR",
    "textPayload": ")" +
         std::string(text) + R"(",
    "timestamp": ")" +
         std::string(time) + "\"\n  }";
}

std::string ArrayOf(const std::vector<std::string>& elements) {
  std::string out = "[\n";
  for (const std::string& e : elements) out += (out.size() > 2 ? ",\n" : "") + e;
  return out + "\n]\n";
}

// `gcloud logging read --format=json` (and the Logs Explorer's download) writes the entries as one
// pretty-printed JSON array, newest first: each read as its stream's line (ShipperJson's above),
// in the order of their times, entries of one time as the array holds them.
TEST(ShipperArray, ACloudLoggingExportIsReadInTimeOrder) {
  const std::string bytes = ArrayOf({
      GcloudEntry("2024-06-01T09:00:22.5Z", "w-3", "[rank3]:[E1206] boom"),
      GcloudEntry("2024-06-01T09:00:22Z", "w-1", "second of two"),
      GcloudEntry("2024-06-01T09:00:22Z", "w-1", "first of two"),
      GcloudEntry("2024-06-01T09:00:21Z", "w-1", R"(Traceback:\n  File \"t.py\")"),
  });
  EXPECT_EQ(SniffJsonLog(bytes), JsonLog::kShipperArray);
  const JsonLogText d = DecodeJsonLog(bytes, JsonLog::kShipperArray);
  const std::string w1 =
      " {container=\"pytorch\", namespace=\"default\", node_name=\"gpu-0007\", pod=\"w-1\"} ";
  EXPECT_EQ(Decoded(d), "2024-06-01T09:00:21Z" + w1 + "Traceback:\n" +  //
                            "2024-06-01T09:00:21Z" + w1 + "  File \"t.py\"\n" +
                            "2024-06-01T09:00:22Z" + w1 + "first of two\n" +
                            "2024-06-01T09:00:22Z" + w1 + "second of two\n" +
                            "2024-06-01T09:00:22.5Z {container=\"pytorch\", namespace=\"default\", "
                            "node_name=\"gpu-0007\", pod=\"w-3\"} [rank3]:[E1206] boom\n");
  EXPECT_EQ(d.records, 4u);
  EXPECT_NE(JsonLogProblem(d, JsonLog::kShipperArray).find("numbered in the decoded text"),
            std::string::npos);
  // oldest first (`--order=asc`), compact, behind a byte order mark: the same lines
  std::string asc = "\xEF\xBB\xBF[";
  for (const char* t : {"2024-06-01T09:00:21Z", "2024-06-01T09:00:22Z"})
    asc += std::string(asc.size() > 4 ? "," : "") + R"({"textPayload":"x","timestamp":")" + t +
           R"(","resource":{"labels":{"pod_name":"w-1"}}})";
  asc += "]";
  EXPECT_EQ(SniffJsonLog(asc), JsonLog::kShipperArray);
  EXPECT_EQ(Decoded(DecodeJsonLog(asc, JsonLog::kShipperArray)),
            "2024-06-01T09:00:21Z {pod=\"w-1\"} x\n2024-06-01T09:00:22Z {pod=\"w-1\"} x\n");
}

// An Elasticsearch search response (`curl …/_search`, what Kibana's "Inspect" shows): its hits'
// `_source` documents are the records, in the order of their times (a search sorts by score).
TEST(ShipperArray, AnElasticsearchSearchResponsesHitsAreItsRecords) {
  const auto hit = [](std::string_view time, std::string_view message) {
    return R"({"_index":".ds-logs-2024.06.01","_id":"x","_score":1.0,"_source":{"@timestamp":")" +
           std::string(time) + R"(","message":")" + std::string(message) +
           R"(","kubernetes":{"pod":{"name":"w-1"},"node":{"name":"gpu-0007"}}}})";
  };
  const std::string response =
      R"({"took":12,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":2,"relation":"eq"},"max_score":1.0,"hits":[)" +
      hit("2024-06-01T09:00:22Z", "second") + "," + hit("2024-06-01T09:00:21Z", "first") + "," +
      hit("2024-06-01T09:00:23Z", "third") + "]}}\n";
  EXPECT_EQ(SniffJsonLog(response), JsonLog::kShipperArray);
  EXPECT_TRUE(WholeJsonValue(response));  // what `denpex watch` waits for
  EXPECT_FALSE(WholeJsonValue(response.substr(0, response.size() - 3)));
  const JsonLogText d = DecodeJsonLog(response, JsonLog::kShipperArray);
  EXPECT_EQ(Decoded(d),
            "2024-06-01T09:00:21Z {node_name=\"gpu-0007\", pod=\"w-1\"} first\n"
            "2024-06-01T09:00:22Z {node_name=\"gpu-0007\", pod=\"w-1\"} second\n"
            "2024-06-01T09:00:23Z {node_name=\"gpu-0007\", pod=\"w-1\"} third\n");
  EXPECT_EQ(d.other_lines, 0u);
  // hits out of time order with no place in their file: said (lines of one time keep the hits')
  EXPECT_EQ(d.unordered, 1u);
  EXPECT_NE(JsonLogProblem(d, JsonLog::kShipperArray).find("1 record out of time order"),
            std::string::npos)
      << JsonLogProblem(d, JsonLog::kShipperArray);
  // hits of one millisecond in the order their lines stand in their file (Filebeat's `log.offset`)
  const auto at = [](int offset, std::string_view message) {
    return R"({"_source":{"@timestamp":"2024-06-01T09:00:21.5Z","message":")" +
           std::string(message) + R"(","log":{"offset":)" + std::to_string(offset) +
           R"(},"kubernetes":{"pod":{"name":"w-1"}}}})";
  };
  EXPECT_EQ(Decoded(DecodeJsonLog(R"({"hits":{"hits":[)" + at(30, "  File \\\"t.py\\\"") + "," +
                                      at(0, "Traceback:") + "," + at(60, "RuntimeError") + "]}}",
                                  JsonLog::kShipperArray)),
            "2024-06-01T09:00:21.5Z {pod=\"w-1\"} Traceback:\n"
            "2024-06-01T09:00:21.5Z {pod=\"w-1\"}   File \"t.py\"\n"
            "2024-06-01T09:00:21.5Z {pod=\"w-1\"} RuntimeError\n");
  // a response with no hits, or any other object, is no array of records
  EXPECT_EQ(SniffJsonLog(R"({"took":3,"hits":{"total":{"value":0},"hits":[]}})"
                         "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"({"hits":3,"message":"x"})"
                         "\n"),
            JsonLog::kNone);
}

// A CloudWatch Logs response as the AWS CLI prints it (`aws logs filter-log-events --output
// json`: pretty-printed, four spaces an indent level): its events are the records, each log stream
// a stream of its own (SageMaker's `<job>/algo-<n>-<epoch>`, the CloudWatch agent's instance),
// naming no pod or node; an event whose message is a shipper's record (EKS Container Insights:
// Fluent Bit's `cloudwatch_logs` output) is that record, its time the event's where it keeps none.
// `get-log-events` gives one stream's events without its name.
TEST(ShipperArray, ACloudWatchResponsesEventsAreItsRecords) {
  const auto event = [](std::string_view stream, long long ms, std::string_view message) {
    return "        {\n            \"logStreamName\": \"" + std::string(stream) +
           "\",\n            \"timestamp\": " + std::to_string(ms) +
           ",\n            \"message\": \"" + std::string(message) +
           "\",\n            \"ingestionTime\": " + std::to_string(ms + 812) +
           ",\n            \"eventId\": "
           "\"37910516273848152829403714718211694931289317645426393088\"\n"
           "        }";
  };
  const auto response = [](const std::vector<std::string>& events) {
    std::string out = "{\n    \"events\": [\n";
    for (const std::string& e : events) out += (out.ends_with("[\n") ? "" : ",\n") + e;
    return out + "\n    ],\n    \"searchedLogStreams\": []\n}\n";
  };
  const std::string sagemaker = response({
      event("llama/algo-1-1717232400", 1717232421972, "[default0]:step 10"),
      event("llama/algo-2-1717232400", 1717232421972, "[default0]:step 10"),
      event("llama/algo-2-1717232400", 1717232422001,
            R"([default3]:RuntimeError: CUDA error: an illegal memory access was encountered)"),
  });
  EXPECT_EQ(SniffJsonLog(sagemaker), JsonLog::kShipperArray);
  EXPECT_TRUE(WholeJsonValue(sagemaker));
  const JsonLogText d = DecodeJsonLog(sagemaker, JsonLog::kShipperArray);
  EXPECT_EQ(Decoded(d),
            "2024-06-01T09:00:21.972000000Z {log_stream=\"llama/algo-1-1717232400\"} "
            "[default0]:step 10\n"
            "2024-06-01T09:00:21.972000000Z {log_stream=\"llama/algo-2-1717232400\"} "
            "[default0]:step 10\n"
            "2024-06-01T09:00:22.001000000Z {log_stream=\"llama/algo-2-1717232400\"} "
            "[default3]:RuntimeError: CUDA error: an illegal memory access was encountered\n");
  EXPECT_EQ(d.records, 3u);
  EXPECT_EQ(d.other_lines, 0u);
  EXPECT_FALSE(d.ties_unordered);

  // Container Insights: the message is Fluent Bit's record, JSON-escaped once more
  const std::string record =
      R"({\"log\":\"[rank3]:[E1206] Watchdog caught\\ttimeout\",\"stream\":\"stderr\",)"
      R"(\"kubernetes\":{\"pod_name\":\"w-3\",\"namespace_name\":\"default\",)"
      R"(\"host\":\"ip-10-0-1-7.ec2.internal\",\"container_name\":\"pytorch\"}})";
  const std::string insights = response({
      event("ip-10-0-1-7.ec2.internal-application.var.log.containers.w-3_default_pytorch-"
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log",
            1717232421972, record),
      event("ip-10-0-1-7.ec2.internal-application.var.log.containers.w-3_default_pytorch-"
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log",
            1717232421980, R"({\"step\":3})"),  // a program's own JSON line: the message itself,
                                                // of the pod its stream's name gives
      event("ip-10-0-1-7.ec2.internal-application.var.log.containers.w-3_default_pytorch-"
            "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log",
            1717232421990,  // a record without the kubernetes filter's metadata: its own time,
            R"({\"time\":\"2024-06-01T09:00:21.990589Z\",\"stream\":\"stderr\",\"log\":\"bare\"})"),
  });  // the pod its stream's name gives
  EXPECT_EQ(SniffJsonLog(insights), JsonLog::kShipperArray);
  EXPECT_EQ(Decoded(DecodeJsonLog(insights, JsonLog::kShipperArray)),
            "2024-06-01T09:00:21.972000000Z {container=\"pytorch\", namespace=\"default\", "
            "node_name=\"ip-10-0-1-7.ec2.internal\", pod=\"w-3\"} "
            "[rank3]:[E1206] Watchdog caught\ttimeout\n"
            "2024-06-01T09:00:21.980000000Z {container=\"pytorch\", namespace=\"default\", "
            "pod=\"w-3\"} {\"step\":3}\n"
            "2024-06-01T09:00:21.990589Z {container=\"pytorch\", namespace=\"default\", "
            "pod=\"w-3\"} bare\n");

  // `aws logs get-log-events`: one stream, unnamed
  const std::string one =
      R"({"events":[{"timestamp":1717232421972,"message":"first","ingestionTime":1717232422784},)"
      R"({"timestamp":1717232421973,"message":"second","ingestionTime":1717232422784}],)"
      R"("nextForwardToken":"f/3791","nextBackwardToken":"b/3791"})";
  EXPECT_EQ(SniffJsonLog(one), JsonLog::kShipperArray);
  EXPECT_EQ(Decoded(DecodeJsonLog(one, JsonLog::kShipperArray)),
            "2024-06-01T09:00:21.972000000Z {} first\n"
            "2024-06-01T09:00:21.973000000Z {} second\n");
  // no events, or events that are no log's
  EXPECT_EQ(SniffJsonLog(R"({"events":[],"searchedLogStreams":[]})"
                         "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"({"events":[{"type":"step","step":3}]})"
                         "\n"),
            JsonLog::kNone);
  // a record of a log stream's name alone, outside a CloudWatch response, is a shipper's too
  EXPECT_EQ(SniffJsonLog(R"([{"logStreamName":"a","timestamp":1717232421972,"message":"x"}])"),
            JsonLog::kShipperArray);
}

// `aws logs tail <group>` in its default format: each line an event's time, its log stream and its
// message, read as the CloudWatch response's event it printed; a message's further lines as they
// stand.
TEST(CloudWatchTail, EachLineIsItsEventsRecord) {
  const std::string sagemaker =
      "2024-06-01T09:00:21.972000+00:00 llama/algo-1-1717232400 [default0]:step 10\n"
      "2024-06-01T09:00:21.972000+00:00 llama/algo-2-1717232400 [default0]:step 10\n"
      "2024-06-01T09:00:22.001000+00:00 llama/algo-2-1717232400 [default3]:Traceback (most "
      "recent call last):\n"
      "  File \"train.py\", line 7, in <module>\n"  // a message of several lines
      "2024-06-01T09:00:22.001000+00:00 llama/algo-2-1717232400 [default3]:RuntimeError: CUDA "
      "error: an illegal memory access was encountered\n"
      "2024-06-01T09:00:22.002000+00:00 llama/algo-1-1717232400\n";  // an empty message
  EXPECT_EQ(SniffJsonLog(sagemaker), JsonLog::kCloudWatchTail);
  const JsonLogText d = DecodeJsonLog(sagemaker, JsonLog::kCloudWatchTail);
  EXPECT_EQ(Decoded(d),
            "2024-06-01T09:00:21.972000+00:00 {log_stream=\"llama/algo-1-1717232400\"} "
            "[default0]:step 10\n"
            "2024-06-01T09:00:21.972000+00:00 {log_stream=\"llama/algo-2-1717232400\"} "
            "[default0]:step 10\n"
            "2024-06-01T09:00:22.001000+00:00 {log_stream=\"llama/algo-2-1717232400\"} "
            "[default3]:Traceback (most recent call last):\n"
            "  File \"train.py\", line 7, in <module>\n"
            "2024-06-01T09:00:22.001000+00:00 {log_stream=\"llama/algo-2-1717232400\"} "
            "[default3]:RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "2024-06-01T09:00:22.002000+00:00 {log_stream=\"llama/algo-1-1717232400\"} \n");
  EXPECT_EQ(d.records, 5u);
  EXPECT_EQ(d.other_lines, 0u);
  EXPECT_EQ(d.extra_lines, 0u);  // a line for each of the file's
  EXPECT_EQ(JsonLogProblem(d, JsonLog::kCloudWatchTail), "");
  // read in pieces, the same text
  JsonLogText pieces;
  const std::size_t cut = sagemaker.find("  File");
  DecodeJsonLog(std::string_view(sagemaker).substr(0, cut), JsonLog::kCloudWatchTail,
                std::string::npos, &pieces);
  DecodeJsonLog(std::string_view(sagemaker).substr(cut), JsonLog::kCloudWatchTail,
                std::string::npos, &pieces);
  EXPECT_EQ(Decoded(pieces), Decoded(d));

  // Container Insights: each message Fluent Bit's record, as it is (the tail prints it unescaped)
  const std::string stream =
      "ip-10-0-1-7.ec2.internal-application.var.log.containers.w-3_default_pytorch-"
      "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.log";
  const std::string insights =
      "2024-06-01T09:00:21.972000+00:00 " + stream +
      R"( {"log":"[rank3]:[E1206] Watchdog caught\ttimeout","stream":"stderr",)"
      R"("kubernetes":{"pod_name":"w-3","namespace_name":"default",)"
      R"("host":"ip-10-0-1-7.ec2.internal","container_name":"pytorch"}})"
      "\n2024-06-01T09:00:21.980000+00:00 " +
      stream +
      R"( {"step":3})"  // a program's own JSON line: of the pod its stream's name gives
      "\n2024-06-01T09:00:21.990000+00:00 " +
      stream +
      R"( {"time":"2024-06-01T09:00:21.990589Z","stream":"stderr","log":"bare"})"
      "\n2024-06-01T09:00:21.991000+00:00 " +
      stream + " plain\n";  // Fluent Bit's `log_key log`
  EXPECT_EQ(SniffJsonLog(insights), JsonLog::kCloudWatchTail);
  EXPECT_EQ(Decoded(DecodeJsonLog(insights, JsonLog::kCloudWatchTail)),
            "2024-06-01T09:00:21.972000+00:00 {container=\"pytorch\", namespace=\"default\", "
            "node_name=\"ip-10-0-1-7.ec2.internal\", pod=\"w-3\"} "
            "[rank3]:[E1206] Watchdog caught\ttimeout\n"
            "2024-06-01T09:00:21.980000+00:00 {container=\"pytorch\", namespace=\"default\", "
            "pod=\"w-3\"} {\"step\":3}\n"
            "2024-06-01T09:00:21.990589Z {container=\"pytorch\", namespace=\"default\", "
            "pod=\"w-3\"} bare\n"
            "2024-06-01T09:00:21.991000+00:00 {container=\"pytorch\", namespace=\"default\", "
            "pod=\"w-3\"} plain\n");

  // what is no tail: a program's isoformat stamps before a level, kubectl's stamps (Go's, `Z`),
  // logcli's lines (a label set), a file whose first line is no event's, a second's stamp
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21.972000+00:00 INFO step 1\n"
                         "2024-06-01T09:00:21.973000+00:00 WARNING slow\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21.972589808Z W0302 09:00:21.972000 71 run.py:792] x\n"
                         "2024-06-01T09:00:21.972589808Z W0302 09:00:21.972000 71 run.py:792] y\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21+00:00 {pod=\"w-3\"} [rank3]:x\n"
                         "2024-06-01T09:00:21+00:00 {} [rank3]:y\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("Traceback (most recent call last):\n"
                         "2024-06-01T09:00:21.972000+00:00 llama/algo-1-1717232400 x\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21+00:00 llama/algo-1-1717232400 x\n"), JsonLog::kNone);
  // no stream: a time and a shipper's record, as an export to S3 writes each event (the stream
  // its folder's name) and `--format short` prints it (UTC, to the second)
  const std::string record =
      R"({"time":"2024-06-01T09:00:21.972589Z","stream":"stderr","_p":"F","log":"[rank3]:x",)"
      R"("kubernetes":{"pod_name":"w-3","namespace_name":"default","host":"gpu-7"}})";
  for (const char* stamp : {"2024-06-01T09:00:21.972Z ", "2024-06-01T09:00:21 "}) {
    std::string lines = std::string(stamp).append(record).append("\n");
    lines += lines;
    EXPECT_EQ(SniffJsonLog(lines), JsonLog::kCloudWatchTail) << stamp;
    EXPECT_EQ(Decoded(DecodeJsonLog(lines, JsonLog::kCloudWatchTail)),
              "2024-06-01T09:00:21.972589Z {namespace=\"default\", node_name=\"gpu-7\", "
              "pod=\"w-3\"} [rank3]:x\n"
              "2024-06-01T09:00:21.972589Z {namespace=\"default\", node_name=\"gpu-7\", "
              "pod=\"w-3\"} [rank3]:x\n");
  }
  // ... but a program's own JSON line behind a stamp is no record, nor one whose time is only the
  // short stamp's (no zone)
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21.972Z {\"level\":\"info\",\"step\":3}\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"(2024-06-01T09:00:21 {"log":"x","kubernetes":{"pod_name":"w-3"}})"
                         "\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"(2024-06-01T09:00:21.972Z {"log":"x","kubernetes":{"pod_name":"w-3"}})"
                         "\n"),
            JsonLog::kCloudWatchTail);  // the line's time is the record's
  // its lines between many further ones: a message of several lines at a time
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21.972000+00:00 i-0abc x\n  a\n  b\n  c\n"),
            JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("2024-06-01T09:00:21.972000+00:00 i-0abc x\n  a\n"
                         "2024-06-01T09:00:21.973000+00:00 i-0abc y\n"),
            JsonLog::kCloudWatchTail);
}

// A search response's hits out of time order, with no place in their file: where two of one
// stream share a time, the order of that stream's lines of one time is not known, and the parse
// is told (FileContext::ties_unordered); ties of different streams, an array in time order, or
// hits with their `log.offset` leave it known.
TEST(ShipperArray, TiesOfOneStreamWithNoPlaceInTheirFileAreSaidUnordered) {
  const auto hit = [](std::string_view time, std::string_view pod, std::string_view extra = "") {
    return R"({"_source":{"@timestamp":")" + std::string(time) + R"(","message":"x",)" +
           std::string(extra) + R"("kubernetes":{"pod":{"name":")" + std::string(pod) + R"("}}}})";
  };
  const auto decoded = [](const std::vector<std::string>& hits, std::string_view head = "{") {
    std::string response = std::string(head) + R"("hits":{"hits":[)";
    for (const std::string& h : hits) response += (response.back() == '[' ? "" : ",") + h;
    return DecodeJsonLog(response + "]}}", JsonLog::kShipperArray);
  };
  const JsonLogText tied =
      decoded({hit("2024-06-01T09:00:21Z", "w-1"), hit("2024-06-01T09:00:22Z", "w-1"),
               hit("2024-06-01T09:00:21.5Z", "w-1"), hit("2024-06-01T09:00:21.5Z", "w-1")});
  EXPECT_EQ(tied.unordered, 1u);
  EXPECT_TRUE(tied.ties_unordered);
  EXPECT_NE(JsonLogProblem(tied, JsonLog::kShipperArray).find("read each alone"), std::string::npos)
      << JsonLogProblem(tied, JsonLog::kShipperArray);
  // one time, two pods: each stream's order is whole
  const JsonLogText apart =
      decoded({hit("2024-06-01T09:00:21Z", "w-1"), hit("2024-06-01T09:00:22Z", "w-1"),
               hit("2024-06-01T09:00:21.5Z", "w-1"), hit("2024-06-01T09:00:21.5Z", "w-2")});
  EXPECT_EQ(apart.unordered, 1u);
  EXPECT_FALSE(apart.ties_unordered);
  EXPECT_EQ(JsonLogProblem(apart, JsonLog::kShipperArray).find("read each alone"),
            std::string::npos);
  // in time order: the array's order is the lines', unless a search sorted by time gathered them
  // from several shards (each shard's hits of one time in their order, the shards one after
  // another)
  const std::vector<std::string> in_order = {hit("2024-06-01T09:00:21.5Z", "w-1"),
                                             hit("2024-06-01T09:00:21.5Z", "w-1"),
                                             hit("2024-06-01T09:00:22Z", "w-1")};
  EXPECT_FALSE(decoded(in_order).ties_unordered);
  EXPECT_FALSE(
      decoded(in_order, R"({"took":3,"_shards":{"total":1,"successful":1},)").ties_unordered);
  const JsonLogText shards =
      decoded(in_order, R"({"took":3,"_shards":{"total":3,"successful":3},)");
  EXPECT_EQ(shards.unordered, 0u);
  EXPECT_TRUE(shards.ties_unordered);
  EXPECT_NE(JsonLogProblem(shards, JsonLog::kShipperArray).find("several shards"),
            std::string::npos)
      << JsonLogProblem(shards, JsonLog::kShipperArray);
  // each line's place in its file orders them
  EXPECT_FALSE(decoded({hit("2024-06-01T09:00:21Z", "w-1", R"("log":{"offset":1},)"),
                        hit("2024-06-01T09:00:22Z", "w-1", R"("log":{"offset":9},)"),
                        hit("2024-06-01T09:00:21.5Z", "w-1", R"("log":{"offset":3},)"),
                        hit("2024-06-01T09:00:21.5Z", "w-1", R"("log":{"offset":5},)")})
                   .ties_unordered);
}

// An array is a shipper's when the elements its head holds whole are records; an element cut by
// the head's end says nothing. What is no record is kept where it stands, as its own line; an
// array cut short keeps its tail as lines.
TEST(ShipperArray, KnownByItsWholeElementsAndKeepsWhatIsNoRecord) {
  const std::string entry = GcloudEntry("2024-06-01T09:00:21Z", "w-1", "x");
  EXPECT_EQ(SniffJsonLog(ArrayOf({entry}).substr(0, 200)), JsonLog::kNone);  // nothing whole
  EXPECT_EQ(SniffJsonLog(ArrayOf({entry, entry}).substr(0, entry.size() + 200)),
            JsonLog::kShipperArray);
  EXPECT_EQ(SniffJsonLog(ArrayOf({entry, R"({"jsonPayload":{"step":3}})"})), JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog("[1, 2, 3]\n"), JsonLog::kNone);
  EXPECT_EQ(SniffJsonLog(R"([{"message":"step 10","time":"2024-06-01T09:00:21Z"}])"),
            JsonLog::kNone);  // a program's own JSON: no pod, no node
  // a Cloud Logging entry of a program's JSON line (`jsonPayload.message`) is a record too
  const std::string structured =
      R"({"jsonPayload":{"message":"step 10","level":"info"},"resource":{"labels":{"pod_name":"w-1"}},"timestamp":"2024-06-01T09:00:22Z"})";
  const std::string bytes = ArrayOf({entry, structured, R"({"jsonPayload":{"step":3}})"});
  const JsonLogText d = DecodeJsonLog(bytes, JsonLog::kShipperArray);
  EXPECT_EQ(d.records, 2u);
  EXPECT_EQ(d.other_lines, 1u);
  EXPECT_NE(Decoded(d).find("{pod=\"w-1\"} step 10\n{\"jsonPayload\":{\"step\":3}}\n"),
            std::string::npos)
      << Decoded(d);
  const JsonLogText cut = DecodeJsonLog(bytes.substr(0, entry.size() + 40), JsonLog::kShipperArray);
  EXPECT_EQ(cut.records, 1u);
  EXPECT_EQ(cut.other_lines, 1u) << Decoded(cut);  // `  {"jsonPayload":{"message":"st`
  EXPECT_NE(JsonLogProblem(cut, JsonLog::kShipperArray).find("1 line of it no record"),
            std::string::npos)
      << JsonLogProblem(cut, JsonLog::kShipperArray);
}

}  // namespace
}  // namespace denpex::engine
