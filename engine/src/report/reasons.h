// The words of every reason template (analyze/reason.h): a finding's reason and its recovery
// texts, rendered.
#pragma once

#include <string>
#include <string_view>

#include "analyze/reason.h"

namespace denpex::engine {

// `r`'s parts, each template's `{name}` blanks filled with its arguments. A blank with no
// argument is left as written (`{name}`), for the tests to catch.
std::string RenderReason(const Reason& r);

// The template's words (for the tests).
std::string_view ReasonTemplate(ReasonId id);

}  // namespace denpex::engine
