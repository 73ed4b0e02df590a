// Fuzz target for `denpex freeze`'s reading of an incident's text (cli/src/freeze/names.h): any
// bytes as a log whose names are found, mapped, replaced and mapped back. Discovery, the map's
// allocation and both rewrites take any input; a rewrite keeps the input's lines (names hold no
// newline) and grows it by a bounded factor.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "freeze/name_map.h"
#include "freeze/names.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using denpex::freeze::Found;
  using denpex::freeze::NameMap;
  using denpex::freeze::Rewriter;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  Found f;
  denpex::freeze::Discover(input, &f);
  auto map = NameMap::Load("/nonexistent/denpex-fuzz-map.json");
  if (!map.ok()) std::abort();
  denpex::freeze::Allocate(f, &*map);
  const std::string forward = Rewriter(map->proto(), Rewriter::Direction::kForward).Apply(input);
  const std::string back = Rewriter(map->proto(), Rewriter::Direction::kBack).Apply(forward);
  const auto lines = [](std::string_view s) { return std::count(s.begin(), s.end(), '\n'); };
  if (lines(forward) != lines(input) || lines(back) != lines(input)) std::abort();
  if (forward.size() > 4 * input.size() + 64 || back.size() > 4 * forward.size() + 64) std::abort();
  return 0;
}
