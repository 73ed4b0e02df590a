// Edit-distance suggestions and name lists for error messages (see suggest.h).
#include "suggest.h"

#include <algorithm>
#include <vector>

namespace denpex::sim {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  // One row of the classic dynamic programme; names are short.
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const std::size_t subst = diag + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({up + 1, row[j - 1] + 1, subst});
      diag = up;
    }
  }
  return row[b.size()];
}

namespace {
char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}
}  // namespace

std::optional<std::string> ClosestName(std::string_view typo,
                                       std::span<const std::string> candidates) {
  const std::string t = Lowered(typo);
  std::optional<std::string> best;
  std::size_t best_score = static_cast<std::size_t>(-1);
  for (const std::string& c : candidates) {
    const std::string lc = Lowered(c);
    std::size_t score = EditDistance(t, lc);
    // "gpus" for "gpus_per_node": a prefix is a plausible abbreviation.
    const bool prefix = t.size() >= 3 && (lc.starts_with(t) || t.starts_with(lc));
    const std::size_t limit = std::max<std::size_t>(2, std::max(t.size(), lc.size()) / 3);
    if (score > limit && !prefix) continue;
    if (prefix) score = std::min(score, limit);
    if (score < best_score) {
      best_score = score;
      best = c;
    }
  }
  return best;
}

std::string Quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out += '\'';
  out += s;
  out += '\'';
  return out;
}

std::string JoinNames(std::span<const std::string> names) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace denpex::sim
