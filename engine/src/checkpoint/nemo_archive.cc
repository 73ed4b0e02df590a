#include "checkpoint/nemo_archive.h"

#include <string>
#include <vector>

#include "checkpoint/torch_file.h"
#include "checkpoint/zip.h"
#include "denpex/engine/checkpoint.h"

namespace denpex::engine::ckpt {
namespace {

constexpr std::uint64_t kBlock = 512;
constexpr std::size_t kMaxMembers = 100000;

struct Member {
  std::string name;
  std::uint64_t data = 0;  // where its bytes begin
  std::uint64_t size = 0;
  char type = '0';
};

// An octal field (NUL or space terminated); nullopt when it holds anything else. A size over
// 8 GiB uses the base-256 form (the field's first byte has its high bit set).
std::optional<std::uint64_t> Octal(std::string_view field) {
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80) != 0) {
    std::uint64_t v = 0;
    for (std::size_t k = 1; k < field.size(); ++k)
      v = (v << 8) | static_cast<unsigned char>(field[k]);
    return v;
  }
  std::uint64_t v = 0;
  bool digits = false;
  for (char c : field) {
    if (c == ' ' && !digits) continue;
    if (c == '\0' || c == ' ') break;
    if (c < '0' || c > '7') return std::nullopt;
    v = v * 8 + static_cast<std::uint64_t>(c - '0');
    digits = true;
  }
  return v;
}

// The header's checksum: its bytes summed with the checksum field read as spaces.
bool ChecksumAgrees(std::string_view h) {
  const auto want = Octal(h.substr(148, 8));
  std::uint64_t sum = 0;
  for (std::size_t k = 0; k < kBlock; ++k)
    sum += (k >= 148 && k < 156) ? ' ' : static_cast<unsigned char>(h[k]);
  return want && *want == sum;
}

std::string CString(std::string_view field) {
  return std::string(field.substr(0, field.find('\0')));
}

std::string Where(std::uint64_t at) { return "at byte " + Thousands(at); }

// The members up to the end-of-archive block, or the finding that stops the walk.
Finding Walk(const ByteFile& f, std::vector<Member>& members) {
  std::uint64_t at = 0;
  std::string long_name;  // a GNU 'L' or PAX 'x' record's name for the next member
  while (true) {
    if (at + kBlock > f.size()) {
      return Incomplete("the archive ends " + Where(f.size()) +
                        " without its end-of-archive blocks: truncated, as a kill while NeMo "
                        "wrote it leaves it (tarfile: 'unexpected end of data')");
    }
    auto h = f.Read(at, kBlock);
    if (!h.ok()) return Unreadable("tar header", h.status());
    if (h->find_first_not_of('\0') == std::string::npos) return Valid("");
    if (!ChecksumAgrees(*h))
      return Corrupt("the tar header " + Where(at) +
                     " fails its checksum (tarfile: 'bad checksum')");
    const auto size = Octal(std::string_view(*h).substr(124, 12));
    if (!size) return Corrupt("the tar header " + Where(at) + " holds no size");
    Member m;
    m.type = (*h)[156];
    m.data = at + kBlock;
    m.size = *size;
    const std::string prefix =
        h->compare(257, 5, "ustar") == 0 ? CString(std::string_view(*h).substr(345, 155)) : "";
    m.name = !long_name.empty() ? long_name
                                : (prefix.empty() ? "" : prefix + "/") +
                                      CString(std::string_view(*h).substr(0, 100));
    long_name.clear();
    if (m.data + m.size > f.size()) {
      return Incomplete(m.name + " needs " + Thousands(m.size) + " bytes from " + Where(m.data) +
                        ", past the end of the archive (" + Thousands(f.size()) +
                        " bytes): truncated");
    }
    if (m.type == 'L' && m.size <= 4096) {  // GNU long name
      auto text = f.Read(m.data, m.size);
      if (text.ok()) long_name = CString(*text);
    } else if (m.type == 'x' && m.size <= 65536) {  // PAX: "<len> path=<name>\n" records
      auto text = f.Read(m.data, m.size);
      const std::size_t key = text.ok() ? text->find(" path=") : std::string::npos;
      if (key != std::string::npos)
        long_name = text->substr(key + 6, text->find('\n', key) - key - 6);
    } else if (m.type != 'g') {
      members.push_back(m);
      if (members.size() > kMaxMembers)
        return Inconclusive("more than " + Thousands(kMaxMembers) + " members; not read further");
    }
    at = m.data + (m.size + kBlock - 1) / kBlock * kBlock;
  }
}

bool EndsWithName(const std::string& path, std::string_view name) {
  return path.size() >= name.size() &&
         path.compare(path.size() - name.size(), name.size(), name) == 0 &&
         (path.size() == name.size() || path[path.size() - name.size() - 1] == '/');
}

}  // namespace

Finding CheckNemoArchive(const ByteFile& f) {
  auto magic = f.Read(0, std::min<std::uint64_t>(f.size(), 2));
  if (magic.ok() && *magic == "\x1f\x8b")
    return Inconclusive("a gzip-compressed .nemo (NeMo before 1.7): its members are not read");
  std::vector<Member> members;
  Finding walked = Walk(f, members);
  if (!walked.ok()) return walked;
  bool config = false, dist = false;
  std::vector<const Member*> weights;
  for (const Member& m : members) {
    config |= EndsWithName(m.name, "model_config.yaml");
    dist |= m.name.find("model_weights/") != std::string::npos;
    if (EndsWithName(m.name, "model_weights.ckpt") && m.type != '5') weights.push_back(&m);
  }
  if (!config) return Incomplete("no model_config.yaml in the archive: NeMo cannot restore it");
  if (weights.empty() && !dist) return Incomplete("no model_weights.ckpt in the archive");
  for (const Member* m : weights) {
    ZipRead z = ReadZip(f, m->data + m->size, m->data);
    Finding r = z.finding.ok() ? CheckTorchArchive(f, z.archive) : z.finding;
    if (!r.ok()) return {r.verdict, m->name + ": " + r.detail};
  }
  std::string detail = std::to_string(members.size()) + " tar members, " +
                       std::to_string(weights.size()) + " model_weights.ckpt verified";
  if (dist) {
    return Inconclusive(detail +
                        "; a model_weights/ distributed checkpoint inside the archive is not read");
  }
  return Valid(detail);
}

}  // namespace denpex::engine::ckpt
