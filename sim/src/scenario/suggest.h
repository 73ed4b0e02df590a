// Closest-name suggestions for error messages ("did you mean 'nodes'?"). Used by scenario
// parsing for unknown fields, enum values and --set paths.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace denpex::sim {

// Levenshtein distance (insertions, deletions, substitutions), case-sensitive.
std::size_t EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `typo` when it is plausibly what the user meant: a small edit
// distance relative to the length, or one name being a prefix of the other. Ties go to the
// earlier candidate, so the answer is stable.
std::optional<std::string> ClosestName(std::string_view typo,
                                       std::span<const std::string> candidates);

// "'name'": quoting for messages (built by appending; GCC 12 misreports -Wrestrict on
// "'" + std::string chains).
std::string Quoted(std::string_view s);

// "a, b, c" for hints that list the valid choices.
std::string JoinNames(std::span<const std::string> names);

}  // namespace denpex::sim
