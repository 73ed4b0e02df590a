#include "checkpoint/zip.h"

#include <algorithm>
#include <string_view>
#include <variant>

namespace denpex::engine::ckpt {
namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50;    // PK\3\4
constexpr std::uint32_t kCentralSig = 0x02014b50;  // PK\1\2
constexpr std::uint32_t kEocdSig = 0x06054b50;     // PK\5\6
constexpr std::uint32_t kZip64Sig = 0x06064b50;    // PK\6\6
constexpr std::uint32_t kLocatorSig = 0x07064b50;  // PK\6\7
constexpr std::uint64_t kEocdSize = 22;
constexpr std::uint64_t kLocatorSize = 20;
constexpr std::uint64_t kZip64Size = 56;
constexpr std::uint64_t kCentralSize = 46;
constexpr std::uint64_t kLocalSize = 30;
constexpr std::uint64_t kMaxComment = 65535;
constexpr std::uint64_t kMaxCentralDirectory = 256ull << 20;
constexpr std::uint16_t kTorchPaddingId = 0x4246;  // "FB"

// Where the central directory is, from the end records.
struct EndRecords {
  std::uint64_t start = 0;   // the archive's first byte
  std::uint64_t cd_pos = 0;  // absolute
  std::uint64_t cd_size = 0;
  std::uint64_t entries = 0;
  std::uint64_t cd_limit = 0;  // the central directory must end by here
  bool zip64 = false;
};

std::string At(std::uint64_t pos) { return "offset " + Thousands(pos); }

// The EOCD position: at end-22 (torch writes no comment), else the last PK\5\6 whose
// comment length reaches exactly to `end`.
std::variant<std::uint64_t, Finding> FindEocd(const ByteFile& f, std::uint64_t lo,
                                              std::uint64_t end) {
  const std::uint64_t len = std::min(end - lo, kEocdSize + kMaxComment);
  auto tail = f.Read(end - len, len);
  if (!tail.ok()) return Unreadable("end of the archive", tail.status());
  const std::string_view t = *tail;
  for (std::uint64_t p = len - kEocdSize + 1; p-- > 0;) {
    if (Le32(t, p) == kEocdSig && p + kEocdSize + Le16(t, p + 20) == len) return end - len + p;
  }
  const std::uint64_t probe = std::min<std::uint64_t>(len, 64);
  if (t.substr(len - probe).find_first_not_of('\0') == std::string_view::npos) {
    return Corrupt("the last " + std::to_string(probe) +
                   " bytes are zeros and there is no end-of-"
                   "central-directory record: the data never reached the disk (a crash with "
                   "delayed allocation on NFS/Lustre?)");
  }
  return Incomplete("no end-of-central-directory record at the end (" + Thousands(end - lo) +
                    " bytes): truncated, as a kill during torch.save leaves it (torch.load: "
                    "'failed finding central directory')");
}

// Reads the ZIP64 record the locator before the EOCD points to.
std::variant<EndRecords, Finding> ReadZip64(const ByteFile& f, std::uint64_t loc_pos,
                                            std::optional<std::uint64_t> start, std::uint64_t lo) {
  auto loc = f.Read(loc_pos, kLocatorSize);
  if (!loc.ok()) return Unreadable("ZIP64 locator", loc.status());
  const std::uint64_t rel = Le64(*loc, 8);
  // A standalone archive's locator points at its record; back-to-back archives carry offsets
  // relative to their own start, and torch writes the record right before the locator.
  const std::uint64_t pos = start ? *start + rel : loc_pos - kZip64Size;
  if (pos < lo || pos > loc_pos || loc_pos - pos < kZip64Size || rel > pos) {
    return Corrupt("the ZIP64 locator at " + At(loc_pos) + " points outside the archive (" +
                   At(rel) + ")");
  }
  auto rec = f.Read(pos, kZip64Size);
  if (!rec.ok()) return Unreadable("ZIP64 end record", rec.status());
  if (Le32(*rec, 0) != kZip64Sig) return Corrupt("no ZIP64 end record at " + At(pos));
  EndRecords er;
  er.zip64 = true;
  er.start = pos - rel;
  er.entries = Le64(*rec, 32);
  er.cd_size = Le64(*rec, 40);
  er.cd_pos = Le64(*rec, 48);  // relative until checked below
  er.cd_limit = pos;
  return er;
}

std::variant<EndRecords, Finding> ReadEndRecords(const ByteFile& f, std::uint64_t end,
                                                 std::optional<std::uint64_t> start,
                                                 std::uint64_t lo) {
  auto eocd_at = FindEocd(f, lo, end);
  if (auto* bad = std::get_if<Finding>(&eocd_at)) return *bad;
  const std::uint64_t eocd = std::get<std::uint64_t>(eocd_at);
  auto rec = f.Read(eocd, kEocdSize);
  if (!rec.ok()) return Unreadable("end-of-central-directory record", rec.status());
  const std::string_view r = *rec;
  if ((Le16(r, 4) != 0 && Le16(r, 4) != 0xFFFF) || (Le16(r, 6) != 0 && Le16(r, 6) != 0xFFFF)) {
    return Corrupt("the end record at " + At(eocd) + " describes a multi-disk archive");
  }
  const bool saturated =
      Le16(r, 10) == 0xFFFF || Le32(r, 12) == 0xFFFFFFFF || Le32(r, 16) == 0xFFFFFFFF;
  bool has_locator = false;
  if (eocd - lo >= kLocatorSize) {
    auto loc = f.Read(eocd - kLocatorSize, 4);
    if (!loc.ok()) return Unreadable("ZIP64 locator", loc.status());
    has_locator = Le32(*loc, 0) == kLocatorSig;
  }
  EndRecords er;
  if (has_locator) {
    auto z = ReadZip64(f, eocd - kLocatorSize, start, lo);
    if (auto* bad = std::get_if<Finding>(&z)) return *bad;
    er = std::get<EndRecords>(z);
  } else if (saturated) {
    return Corrupt("the end record at " + At(eocd) + " needs ZIP64 but there is no ZIP64 locator");
  } else {
    er.entries = Le16(r, 10);
    er.cd_size = Le32(r, 12);
    er.cd_pos = Le32(r, 16);  // relative until checked below
    er.cd_limit = eocd;
    if (er.cd_size + er.cd_pos > eocd - lo) {
      return Corrupt("the central directory (" + At(er.cd_pos) + ", " + Thousands(er.cd_size) +
                     " bytes) lies outside the archive, which ends at " + At(eocd));
    }
    er.start = start ? *start : eocd - er.cd_size - er.cd_pos;
  }
  if (start && er.start != *start) {
    return Corrupt("the end records place the archive's start at " + At(er.start) + ", not " +
                   At(*start));
  }
  if (er.start < lo) return Corrupt("the end records place the archive's start before " + At(lo));
  const std::uint64_t room = er.cd_limit - er.start;
  if (er.cd_pos > room || er.cd_size > room - er.cd_pos) {
    return Corrupt("the central directory (" + At(er.cd_pos) + ", " + Thousands(er.cd_size) +
                   " bytes) lies outside the archive, which ends at " + At(er.cd_limit));
  }
  er.cd_pos += er.start;
  return er;
}

// Fills size, compressed size and local offset from a ZIP64 extra field where the 32-bit
// fields are saturated. False when the field is missing or short.
bool ApplyZip64Extra(std::string_view extra, ZipEntry& e) {
  for (std::size_t p = 0; p + 4 <= extra.size();) {
    const std::uint16_t id = Le16(extra, p);
    const std::size_t len = Le16(extra, p + 2);
    if (p + 4 + len > extra.size()) return false;
    if (id == 1) {
      std::size_t q = p + 4;
      for (std::uint64_t* field : {&e.size, &e.compressed_size, &e.local_offset}) {
        if (*field != 0xFFFFFFFF) continue;
        if (q + 8 > p + 4 + len) return false;
        *field = Le64(extra, q);
        q += 8;
      }
      return true;
    }
    p += 4 + len;
  }
  return e.size != 0xFFFFFFFF && e.compressed_size != 0xFFFFFFFF && e.local_offset != 0xFFFFFFFF;
}

Finding WalkCentralDirectory(const ByteFile& f, const EndRecords& er, std::vector<ZipEntry>& out) {
  if (er.cd_size > kMaxCentralDirectory) {
    return Inconclusive("the central directory holds " + Thousands(er.cd_size) +
                        " bytes, more than this verifier reads");
  }
  if (er.entries > er.cd_size / kCentralSize) {
    return Corrupt("the end record promises " + Thousands(er.entries) +
                   " entries but the central directory holds only " + Thousands(er.cd_size) +
                   " bytes");
  }
  auto cd = f.Read(er.cd_pos, er.cd_size);
  if (!cd.ok()) return Unreadable("central directory", cd.status());
  const std::string_view c = *cd;
  std::size_t p = 0;
  for (std::uint64_t n = 0; n < er.entries; ++n) {
    if (p + kCentralSize > c.size() || Le32(c, p) != kCentralSig) {
      return Corrupt(
          "central directory entry " + std::to_string(n) + " at " + At(er.cd_pos + p) +
          " has no PK\\1\\2 signature (torch.load: 'invalid header or archive is corrupted')");
    }
    const std::size_t name_len = Le16(c, p + 28), extra_len = Le16(c, p + 30),
                      comment_len = Le16(c, p + 32);
    if (p + kCentralSize + name_len + extra_len + comment_len > c.size()) {
      return Corrupt("central directory entry " + std::to_string(n) +
                     " runs past the directory's end");
    }
    ZipEntry e;
    e.method = Le16(c, p + 10);
    e.crc = Le32(c, p + 16);
    e.compressed_size = Le32(c, p + 20);
    e.size = Le32(c, p + 24);
    e.local_offset = Le32(c, p + 42);
    e.name = std::string(c.substr(p + kCentralSize, name_len));
    if (!ApplyZip64Extra(c.substr(p + kCentralSize + name_len, extra_len), e)) {
      return Corrupt("entry '" + e.name + "' has saturated sizes but no valid ZIP64 extra field");
    }
    out.push_back(std::move(e));
    p += kCentralSize + name_len + extra_len + comment_len;
  }
  if (p != c.size()) {
    return Corrupt("the central directory has " + Thousands(c.size() - p) + " bytes after its " +
                   std::to_string(er.entries) + " entries");
  }
  return Valid("");
}

bool HasTorchPadding(std::string_view extra) {
  for (std::size_t p = 0; p + 4 <= extra.size(); p += 4 + Le16(extra, p + 2)) {
    if (Le16(extra, p) == kTorchPaddingId) return true;
  }
  return false;
}

// Every entry's local header: signature, the same name, and data inside the archive.
Finding CheckLocalHeaders(const ByteFile& f, const EndRecords& er, std::vector<ZipEntry>& entries) {
  for (ZipEntry& e : entries) {
    if (e.local_offset > er.cd_pos - er.start ||
        er.cd_pos - er.start - e.local_offset < kLocalSize) {
      return Corrupt("entry '" + e.name + "': its local header offset " +
                     Thousands(e.local_offset) + " lies outside the archive");
    }
    const std::uint64_t at = er.start + e.local_offset;
    auto head = f.Read(at, kLocalSize);
    if (!head.ok()) return Unreadable("local header of '" + e.name + "'", head.status());
    if (Le32(*head, 0) != kLocalSig) {
      return Corrupt("entry '" + e.name + "': no local header at " + At(at) +
                     " (torch.load: 'invalid header or archive is corrupted')");
    }
    const std::uint64_t name_len = Le16(*head, 26), extra_len = Le16(*head, 28);
    e.data_offset = at + kLocalSize + name_len + extra_len;
    if (e.data_offset > er.cd_pos || e.compressed_size > er.cd_pos - e.data_offset) {
      return Corrupt("entry '" + e.name + "': its " + Thousands(e.compressed_size) + " bytes at " +
                     At(e.data_offset) + " run into the central directory at " + At(er.cd_pos));
    }
    auto ne = f.Read(at + kLocalSize, name_len + extra_len);
    if (!ne.ok()) return Unreadable("local header of '" + e.name + "'", ne.status());
    if (std::string_view(*ne).substr(0, name_len) != e.name) {
      return Corrupt("the local header at " + At(at) + " names a different record than '" + e.name +
                     "'");
    }
    e.padded = HasTorchPadding(std::string_view(*ne).substr(name_len));
  }
  std::vector<const ZipEntry*> by_pos;
  for (const ZipEntry& e : entries) by_pos.push_back(&e);
  std::sort(by_pos.begin(), by_pos.end(),
            [](auto* a, auto* b) { return a->local_offset < b->local_offset; });
  for (std::size_t k = 1; k < by_pos.size(); ++k) {
    if (by_pos[k - 1]->data_offset + by_pos[k - 1]->compressed_size >
        er.start + by_pos[k]->local_offset) {
      return Corrupt("records '" + by_pos[k - 1]->name + "' and '" + by_pos[k]->name + "' overlap");
    }
  }
  return Valid("");
}

}  // namespace

ZipRead ReadZip(const ByteFile& f, std::uint64_t end, std::optional<std::uint64_t> start,
                std::uint64_t floor) {
  ZipRead out;
  const std::uint64_t lo = start.value_or(floor);
  if (end > f.size() || lo > end) {
    out.finding =
        Corrupt("the archive range " + At(lo) + ".." + At(end) + " lies outside the file");
    return out;
  }
  if (end - lo < kEocdSize) {
    out.finding = Incomplete(
        end == lo ? "empty (0 bytes): the save was killed right after it opened the file "
                    "(torch.load: 'EOFError: Ran out of input')"
                  : "only " + std::to_string(end - lo) +
                        " bytes: no room for an "
                        "end-of-central-directory record (truncated)");
    return out;
  }
  auto er = ReadEndRecords(f, end, start, lo);
  if (auto* bad = std::get_if<Finding>(&er)) {
    out.finding = *bad;
    return out;
  }
  const EndRecords& r = std::get<EndRecords>(er);
  out.archive.start = r.start;
  out.archive.end = end;
  out.archive.zip64 = r.zip64;
  out.finding = WalkCentralDirectory(f, r, out.archive.entries);
  if (out.finding.ok()) out.finding = CheckLocalHeaders(f, r, out.archive.entries);
  return out;
}

}  // namespace denpex::engine::ckpt
