#include "freeze/freeze.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "denpex/common/output_file.h"
#include "denpex/engine/compressed.h"
#include "denpex/engine/engine.h"
#include "denpex/proto/json_io.h"
#include "freeze/codec.h"
#include "freeze/expected.h"
#include "freeze/name_map.h"
#include "freeze/names.h"

namespace denpex::freeze {
namespace fs = std::filesystem;
namespace {

Result<std::string> ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::IoError(p.string() + ": cannot read it; check its permissions");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return Status::IoError(p.string() + ": read failed");
  return s.str();
}

Status WriteAll(const fs::path& p, std::string_view data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  if (!out) return Status::IoError(p.string() + ": write failed (disk full?)");
  return Status::Ok();
}

bool IsText(std::string_view data) { return data.find('\0') == std::string_view::npos; }

bool IsPickle(std::string_view data) {
  return data.size() > 2 && static_cast<unsigned char>(data[0]) == 0x80 && data[1] >= 2 &&
         data[1] <= 5;
}

std::string_view BinaryKind(std::string_view data) {
  if (data.substr(0, 4) == std::string_view("PK\x03\x04", 4)) return "zip archive (torch.save)";
  if (IsPickle(data)) return "pickle";
  if (data.size() > 8) return "binary file";
  return "binary file";
}

// The incident's files and folders, sorted, links apart.
struct Tree {
  std::vector<fs::path> dirs, files, links;  // relative to the incident
};

Result<Tree> Walk(const fs::path& root) {
  Tree t;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::none, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(root);
    const auto st = it->symlink_status(ec);
    if (fs::is_symlink(st)) {
      t.links.push_back(rel);
    } else if (fs::is_directory(st)) {
      t.dirs.push_back(rel);
    } else if (fs::is_regular_file(st)) {
      t.files.push_back(rel);
    }
  }
  if (ec) return Status::IoError(root.string() + ": cannot list it: " + ec.message());
  std::sort(t.dirs.begin(), t.dirs.end());
  std::sort(t.files.begin(), t.files.end());
  std::sort(t.links.begin(), t.links.end());
  return t;
}

// The text the engine reads of a file: decompressed when compressed; nullopt for a binary.
struct Content {
  std::string codec;  // compressed with this; empty: not compressed
  std::string text;
  bool text_like = false;
  std::string error;
};

Content ContentOf(const std::string& data) {
  Content c;
  engine::DecompressedLog d = engine::DecompressLog(data, std::size_t{1} << 34);
  if (!d.codec.empty()) {
    c.codec = d.codec;
    c.text = std::move(d.text);
    c.error = d.error;
    c.text_like = true;
    return c;
  }
  c.text_like = IsText(data);
  if (c.text_like) c.text = data;
  return c;
}

fs::path RewritePath(const fs::path& rel, const Rewriter& rw) {
  fs::path out;
  for (const auto& part : rel) out /= rw.Apply(part.string());
  return out;
}

// The originals of `names` still present in `data` (a byte search), by kind.
std::string LeftIn(std::string_view data, const Found& f) {
  std::map<std::string, int> left;
  const auto scan = [&](const std::set<std::string>& set, const char* kind) {
    for (const std::string& s : set) {
      if (s.size() >= 3 && data.find(s) != std::string_view::npos) ++left[kind];
    }
  };
  scan(f.hosts, "host names");
  scan(f.ipv4, "IPv4 addresses");
  scan(f.ipv6, "IPv6 addresses");
  scan(f.users, "user names");
  scan(f.emails, "e-mail addresses");
  scan(f.secrets, "secrets");
  scan(f.uuids, "UUIDs");
  scan(f.paths, "project folders");
  scan(f.job_names, "job names");
  std::string out;
  for (const auto& [kind, n] : left)
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  return out;
}

// A pickle's names replaced in place where the replacement has the original's length (every
// string's length prefix and every frame's length stay true); the rest is reported.
std::string RewritePickle(std::string data, const Rewriter& rw, std::size_t* replaced) {
  for (const auto& [original, replacement] : rw.tokens()) {
    if (original.size() < 3 || original.size() != replacement.size()) continue;
    for (std::size_t at = data.find(original); at != std::string::npos;
         at = data.find(original, at + replacement.size())) {
      data.replace(at, original.size(), replacement);
      ++*replaced;
    }
  }
  return data;
}

void SetTimes(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  const auto t = fs::last_write_time(from, ec);
  if (!ec) fs::last_write_time(to, t, ec);
  const auto perms = fs::status(from, ec).permissions();
  if (!ec) fs::permissions(to, perms | fs::perms::owner_write | fs::perms::owner_read, ec);
}

Status CheckPlaces(const FreezeOptions& o, const fs::path& map) {
  std::error_code ec;
  if (!fs::is_directory(o.incident, ec)) {
    return Status::NotFound(o.incident.string() +
                            ": not a directory; name the incident directory to freeze");
  }
  const fs::path inc = fs::weakly_canonical(o.incident, ec);
  const fs::path entry = fs::weakly_canonical(o.entry, ec);
  const fs::path map_abs = fs::weakly_canonical(map, ec);
  const auto under = [](const fs::path& p, const fs::path& root) {
    const auto rel = p.lexically_relative(root);
    return !rel.empty() && *rel.begin() != "..";
  };
  if (under(entry, inc) || entry == inc) {
    return Status::InvalidArgument("--out " + o.entry.string() +
                                   ": inside the incident; the incident is never written");
  }
  if (under(inc, entry))
    return Status::InvalidArgument("--out " + o.entry.string() +
                                   ": holds the incident; choose a new entry");
  if (under(map_abs, entry) || map_abs == entry) {
    return Status::InvalidArgument("--map " + map.string() +
                                   ": inside the entry; the map must stay outside it");
  }
  if (under(map_abs, inc))
    return Status::InvalidArgument("--map " + map.string() +
                                   ": inside the incident, which is never written");
  if (fs::exists(o.entry, ec) && !(fs::is_directory(o.entry, ec) && fs::is_empty(o.entry, ec))) {
    return Status::InvalidArgument("--out " + o.entry.string() +
                                   ": exists and is not empty; choose a new entry name");
  }
  if (!fs::is_directory(o.entry.parent_path().empty() ? fs::path(".") : o.entry.parent_path(),
                        ec)) {
    return Status::InvalidArgument("--out " + o.entry.string() + ": its folder " +
                                   o.entry.parent_path().string() +
                                   " does not exist; create the corpus folder first");
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, int>> Counts(const Found& f) {
  return {{"hosts", static_cast<int>(f.hosts.size())},
          {"hostlists", static_cast<int>(f.hostlist_prefixes.size())},
          {"ipv4", static_cast<int>(f.ipv4.size())},
          {"ipv6", static_cast<int>(f.ipv6.size())},
          {"users", static_cast<int>(f.users.size())},
          {"emails", static_cast<int>(f.emails.size())},
          {"secrets", static_cast<int>(f.secrets.size())},
          {"jobs", static_cast<int>(f.jobs.size())},
          {"uuids", static_cast<int>(f.uuids.size())},
          {"paths", static_cast<int>(f.paths.size())},
          {"job names", static_cast<int>(f.job_names.size())}};
}

}  // namespace

std::string ComparableDiagnosis(v1::Diagnosis d, const fs::path& incident) {
  d.mutable_input()->clear_bytes();
  std::string json = proto::ToJson(d);
  for (const std::string& p :
       {incident.string(), fs::absolute(incident).lexically_normal().string()}) {
    for (std::size_t at = json.find(p); !p.empty() && at != std::string::npos;
         at = json.find(p, at)) {
      json.replace(at, p.size(), "<incident>");
    }
  }
  return json;
}

namespace {

// What the incident names: the engine's reading, then the line shapes of every text and of
// every file name (`slurm-<id>.out`).
Result<Found> FindNames(const FreezeOptions& o, const Tree& tree) {
  auto names = engine::NamesIn(o.incident, o.threads);
  if (!names.ok()) return names.status();
  Found found;
  for (const std::string& n : names->nodes) AddHost(n, &found);
  for (const std::string& h : names->hosts) AddHost(h, &found);
  for (const std::int64_t j : names->slurm_jobs) {
    if (j >= 100)
      found.jobs.insert(std::to_string(j));  // a shorter id is too likely another number
  }
  for (const fs::path& rel : tree.files) {
    auto data = ReadAll(o.incident / rel);
    if (!data.ok()) return data.status();
    const Content c = ContentOf(*data);
    if (c.text_like) Discover(c.text, &found);
    Discover(rel.filename().string(), &found);
  }
  return found;
}

// One file into the entry: a text rewritten (and checked by a second pass), a compressed log
// rewritten and compressed again, a pickle rewritten in place, anything else copied; what still
// holds an original is reported.
Status FreezeFile(const fs::path& from, const fs::path& to, const std::string& shown,
                  const Rewriter& forward, const Found& found, FreezeReport* report) {
  auto data = ReadAll(from);
  if (!data.ok()) return data.status();
  Content c = ContentOf(*data);
  ++report->files;
  if (c.text_like) {
    std::string text = forward.Apply(c.text, &report->replacements);
    std::size_t again = 0;
    (void)forward.Apply(text, &again);
    if (again > 0)
      report->not_anonymised.push_back(shown + ": " + std::to_string(again) +
                                       " names survived the rewrite");
    if (c.codec.empty()) {
      DENPEX_RETURN_IF_ERROR(WriteAll(to, text));
      ++report->rewritten;
    } else {
      auto packed = Compress(text, c.codec);
      if (!packed.ok()) return packed.status();
      DENPEX_RETURN_IF_ERROR(WriteAll(to, *packed));
      ++report->recompressed;
      if (!c.error.empty()) {
        report->notes.push_back(shown + ": " + c.codec + " stream: " + c.error +
                                " (what came before it was kept)");
      }
    }
  } else {
    std::string bytes = std::move(*data);
    if (IsPickle(bytes)) {
      const std::size_t before = report->replacements;
      bytes = RewritePickle(std::move(bytes), forward, &report->replacements);
      if (report->replacements > before) ++report->binary_rewritten;
    }
    DENPEX_RETURN_IF_ERROR(WriteAll(to, bytes));
    if (const std::string left = LeftIn(bytes, found); !left.empty()) {
      report->not_anonymised.push_back(shown + ": " + std::string(BinaryKind(bytes)) +
                                       " copied unchanged; it still holds " + left);
    }
  }
  SetTimes(from, to);
  return Status::Ok();
}

// The frozen copy's diagnosis against the original's, its names mapped back (an error
// signature masks a name's digits, `sn<n>`: its letter runs are mapped back as words).
void CompareDiagnoses(const v1::Diagnosis& original, const fs::path& incident,
                      const v1::Diagnosis& frozen, const fs::path& frozen_incident,
                      const v1::NameMap& map, FreezeReport* report) {
  const Rewriter back(map, Rewriter::Direction::kBack);
  const std::string a = ComparableDiagnosis(original, incident);
  std::string b;
  std::istringstream lines(back.Apply(ComparableDiagnosis(frozen, frozen_incident)));
  for (std::string line; std::getline(lines, line);) {
    if (!b.empty()) b += '\n';
    b += line.find("\"signature\":") != std::string::npos ? back.ApplyWords(line) : line;
  }
  std::string a_lines;
  std::istringstream la_in(a);
  for (std::string line; std::getline(la_in, line);)
    a_lines += (a_lines.empty() ? "" : "\n") + line;
  report->diagnosis_identical = a_lines == b;
  if (report->diagnosis_identical) return;
  std::istringstream sa(a_lines), sb(b);
  std::string la, lb;
  while (std::getline(sa, la) && std::getline(sb, lb)) {
    if (la != lb) {
      report->difference = "original: " + la + "\nfrozen (mapped back): " + lb;
      return;
    }
  }
  report->difference = "the diagnoses differ in length";
}

}  // namespace

Result<FreezeReport> Freeze(const FreezeOptions& o) {
  FreezeReport report;
  fs::path entry_name = o.entry.lexically_normal();
  if (entry_name.filename().empty()) entry_name = entry_name.parent_path();  // "corpus/x/"
  const fs::path map_path = o.map.empty() ? fs::path(entry_name.string() + ".map.json") : o.map;
  report.map = map_path;
  DENPEX_RETURN_IF_ERROR(CheckPlaces(o, map_path));
  auto tree = Walk(o.incident);
  if (!tree.ok()) return tree.status();
  auto original = engine::Diagnose(o.incident, {.threads = o.threads});
  if (!original.ok()) return original.status();

  // 1. The names, and the map extended and saved before anything is written into the entry.
  auto found = FindNames(o, *tree);
  if (!found.ok()) return found.status();
  report.names = Counts(*found);
  auto map = NameMap::Load(map_path);
  if (!map.ok()) return map.status();
  Allocate(*found, &*map);
  DENPEX_RETURN_IF_ERROR(map->Save(map_path));
  const Rewriter forward(map->proto(), Rewriter::Direction::kForward);

  // 2. The entry: folders, then files.
  const fs::path out_incident = o.entry / "incident";
  std::error_code ec;
  fs::create_directories(out_incident, ec);
  if (ec) return Status::IoError(out_incident.string() + ": cannot create it: " + ec.message());
  for (const fs::path& rel : tree->dirs) {
    const fs::path dir = out_incident / RewritePath(rel, forward);
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError(dir.string() + ": " + ec.message());
  }
  std::set<fs::path> written;
  for (const fs::path& rel : tree->files) {
    const fs::path to_rel = RewritePath(rel, forward);
    if (!written.insert(to_rel).second) {
      return Status::InvalidInput(
          rel.string() + ": its anonymised name " + to_rel.string() +
          " is another file's; rename one of them in a copy and freeze that");
    }
    DENPEX_RETURN_IF_ERROR(FreezeFile(o.incident / rel, out_incident / to_rel,
                                      "incident/" + to_rel.string(), forward, *found, &report));
  }
  for (const fs::path& rel : tree->links) {
    report.notes.push_back("incident/" + RewritePath(rel, forward).string() +
                           ": a symbolic link, left out");
  }
  for (auto it = tree->dirs.rbegin(); it != tree->dirs.rend(); ++it) {
    SetTimes(o.incident / *it, out_incident / RewritePath(*it, forward));
  }

  // 3. The frozen copy diagnosed: the same answer once its names are mapped back.
  auto frozen = engine::Diagnose(out_incident, {.threads = o.threads});
  if (!frozen.ok()) return frozen.status();
  CompareDiagnoses(*original, o.incident, *frozen, out_incident, map->proto(), &report);

  // 4. The drafted expected outcome and the entry's record of what was done.
  DENPEX_RETURN_IF_ERROR(WriteDraft(o.entry, *frozen, o.drafted_by, o.incident));
  DENPEX_RETURN_IF_ERROR(WriteFreezeNotes(o.entry, report, o.incident));
  return report;
}

}  // namespace denpex::freeze
