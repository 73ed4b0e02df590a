// Helpers shared by the shapes' functions (shapes*.cc); private to cli/src/shapes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "denpex/common/time.h"
#include "shapes.h"

namespace denpex::cli::shapes {

// The shapes' functions (one per row of AllShapes()).
Status RelayMerged(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayInterleaved(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayKubectlPrefix(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayFluentBit(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayFilebeat(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayCloudLogging(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayCloudWatch(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayCloudWatchTail(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayFlat(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayRenamed(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayNested(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayRotated(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelaySameHost(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayCri(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayJournald(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayKubectlTs(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayDockerJson(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayJournaldJson(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayPaste(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayOneNode(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelayVictimsOnly(const Source& src, const std::filesystem::path& out, Relaid* r);
Status RelaySharedDaemons(const Source& src, const std::filesystem::path& out, Relaid* r);

// Deterministic pseudo-random numbers (splitmix64): the same seed, the same copy.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t Next();
  std::uint64_t Below(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  std::uint64_t s_;
};
std::uint64_t Hash(std::string_view s, std::uint64_t seed = 0);

Result<std::string> ReadText(const std::filesystem::path& p);
Status WriteText(const std::filesystem::path& p, std::string_view text);  // creates dirs
// Copies the files that are not logs (the checkpoint tree, binary files) to the same path.
Status CopyKept(const Source& src, const std::filesystem::path& out);

// The lines of `text`, without their '\n'; a last line without one is kept.
std::vector<std::string_view> Lines(std::string_view text);

// The node folder a file sits in (its first path component, for files below one; not the
// Kubernetes pods/ and describe/ folders or the checkpoint tree); empty for other files.
std::string NodeOf(std::string_view rel);
// Every node name of the incident: its node folders and the truth's nodes.
std::set<std::string> NodeNames(const Source& src);
// The truth's initiator node (else its first event's); empty for a job-level truth.
std::string InitiatorNode(const Source& src);
// Kubernetes: each pod's node, from `describe/<pod>.txt`'s `Node: <node>/<ip>`; and the pod a
// file of pods/ or describe/ belongs to (empty for other files).
std::map<std::string, std::string> PodNodes(const Source& src);
std::string PodOf(std::string_view rel);
// The files that are the initiator node's: below its folder, and (Kubernetes) the pod logs
// and descriptions of the pods `describe/<pod>.txt` places on it.
std::set<std::string> FilesOfNode(const Source& src, const std::string& node);

// `bytes` as a JSON string's content, escaped as Docker's json-file driver (and Go's encoding/json)
// escapes a log (moby's jsonlog: `\n`, `\r`, `\"`, `\\`; `<`, `>`, `&` and the other control bytes
// as `\u00XX`; U+2028 and U+2029 escaped; a byte that is no UTF-8 as `\ufffd`).
void AppendJsonEscaped(std::string_view bytes, std::string* out);

// `len` lower-case hex characters derived from the incident and `what`.
std::string Opaque(const Source& src, std::string_view what, int len = 12);

// A line's own time: the first full stamp near its start (RFC 3339 and its relatives,
// c10/glog `E1206 18:44:12.715`, syslog `Mar  2 09:00:03`, `dmesg -T`); year-less stamps get
// `year`. Kernel uptime brackets are not times.
std::optional<TimeNs> LineTime(std::string_view line, int year);
// Each line's time for a collector that stamps on arrival: its own stamp, else the previous
// line's; lines before the file's first stamp get that stamp (src.start_ns in a file
// without any).
std::vector<TimeNs> ArrivalTimes(const std::vector<std::string_view>& lines, const Source& src);

}  // namespace denpex::cli::shapes
