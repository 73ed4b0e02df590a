#include "collect/slurm_lines.h"

#include <algorithm>
#include <array>
#include <ctime>

namespace denpex::cli::collect {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}
bool IsHostChar(char c) { return IsWordChar(c) || c == '.'; }

std::string_view Digits(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  return s.substr(0, n);
}

void AddId(std::string_view id, std::vector<std::string>* out) {
  if (id.empty()) return;
  if (std::find(out->begin(), out->end(), id) == out->end()) out->emplace_back(id);
}

// After `JobId=`: `<id>`, `<array>_<task>`, `<id>+<n>`, each maybe followed by `(<id>)`.
void AddJobIdValue(std::string_view v, std::vector<std::string>* out) {
  const std::string_view head = Digits(v);
  if (head.empty()) return;
  std::size_t n = head.size();
  if (n < v.size() && (v[n] == '_' || v[n] == '+')) {
    const std::string_view tail = Digits(v.substr(n + 1));
    if (!tail.empty()) n += 1 + tail.size();
  }
  AddId(v.substr(0, n), out);
  if (n < v.size() && v[n] == '(') AddId(Digits(v.substr(n + 1)), out);
}

// Every place `key` occurs in `line`, calling fn(rest of the line after it).
template <typename Fn>
void ForEach(std::string_view line, std::string_view key, Fn&& fn) {
  for (std::size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
    fn(line.substr(at + key.size()), at);
  }
}

// The message after a `[YYYY-MM-DDThh:mm:ss.mmm] ` stamp (the whole line when there is none).
std::string_view Message(std::string_view line) {
  if (line.size() > 26 && line[0] == '[' && line[5] == '-' && line[11] == 'T' &&
      line.find("] ") != std::string_view::npos && line.find("] ") < 32) {
    return line.substr(line.find("] ") + 2);
  }
  return line;
}

std::optional<std::int64_t> LocalSeconds(std::tm tm) {
  tm.tm_isdst = -1;
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<std::int64_t>(t);
}

}  // namespace

std::vector<std::string> JobIdsNamed(std::string_view line) {
  std::vector<std::string> ids;
  for (std::string_view key : {"JobId=", "JobID=", "job_id="}) {
    ForEach(line, key, [&](std::string_view rest, std::size_t) { AddJobIdValue(rest, &ids); });
  }
  ForEach(line, "StepId=", [&](std::string_view rest, std::size_t) { AddId(Digits(rest), &ids); });
  ForEach(line, "*** JOB ", [&](std::string_view rest, std::size_t) { AddId(Digits(rest), &ids); });
  ForEach(line, "*** STEP ",
          [&](std::string_view rest, std::size_t) { AddId(Digits(rest), &ids); });
  // slurmd's and slurmstepd's `[<id>.<step>] ` prefix.
  const std::string_view msg = Message(line);
  if (msg.size() > 3 && msg[0] == '[') {
    const std::string_view id = Digits(msg.substr(1));
    if (!id.empty() && msg.size() > id.size() + 1 && msg[id.size() + 1] == '.') AddId(id, &ids);
  }
  for (std::string_view key : {"job ", "Job ", "JOB "}) {
    ForEach(line, key, [&](std::string_view rest, std::size_t at) {
      if (at > 0 && IsHostChar(line[at - 1])) return;  // `batch_job `, `myjob `
      const std::string_view id = Digits(rest);
      // `job 4200 `, `job 4200.0`; never `job 42a` or `job 4200-7`.
      if (!id.empty() && (id.size() == rest.size() || !IsWordChar(rest[id.size()])))
        AddId(id, &ids);
    });
  }
  return ids;
}

std::optional<std::int64_t> DaemonLineTime(std::string_view line) {
  if (line.size() < 21 || line[0] != '[') return std::nullopt;
  std::tm tm{};
  const std::string stamp(line.substr(1, 19));
  const char* end = ::strptime(stamp.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return LocalSeconds(tm);
}

std::optional<std::int64_t> DmesgLineTime(std::string_view line) {
  const std::size_t close = line.find(']');
  if (line.empty() || line[0] != '[' || close == std::string_view::npos || close > 40)
    return std::nullopt;
  std::tm tm{};
  const std::string stamp(line.substr(1, close - 1));
  const char* end = ::strptime(stamp.c_str(), "%a %b %e %H:%M:%S %Y", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return LocalSeconds(tm);
}

bool NamesWord(std::string_view line, std::string_view word) {
  if (word.empty()) return false;
  for (std::size_t at = line.find(word); at != std::string_view::npos;
       at = line.find(word, at + 1)) {
    const std::size_t after = at + word.size();
    if ((at == 0 || !IsHostChar(line[at - 1])) &&
        (after == line.size() || !IsHostChar(line[after]) ||
         (line[after] == '.' && (after + 1 == line.size() || !IsHostChar(line[after + 1]))))) {
      return true;
    }
  }
  return false;
}

FilterCounts FilterDaemonLog(std::istream& in, const JobScope& scope, std::string_view node,
                             std::ostream& out) {
  FilterCounts c;
  const auto in_window = [&](std::string_view line) {
    const auto t = DaemonLineTime(line);
    return t && scope.start && *t >= *scope.start && (!scope.end || *t <= *scope.end);
  };
  for (std::string line; std::getline(in, line);) {
    ++c.lines;
    const std::vector<std::string> ids = JobIdsNamed(line);
    if (!ids.empty()) {
      if (std::find(ids.begin(), ids.end(), scope.job_id) != ids.end()) {
        ++c.job_lines;
        out << line << '\n';
      } else {
        ++c.other_job_lines;
      }
      continue;
    }
    const bool its_node =
        !node.empty() || std::any_of(scope.nodes.begin(), scope.nodes.end(),
                                     [&](const std::string& n) { return NamesWord(line, n); });
    if (its_node && in_window(line)) {
      ++c.node_lines;
      out << line << '\n';
    }
  }
  return c;
}

}  // namespace denpex::cli::collect
