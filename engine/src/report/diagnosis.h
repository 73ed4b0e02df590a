// Report: a Finding written as the v1::Diagnosis contract (docs/diagnosis_format.md), with
// each cited line quoted verbatim from its file.
#pragma once

#include <string>
#include <string_view>

#include "analyze/finding.h"
#include "denpex/v1/diagnosis.pb.h"
#include "incident/incident.h"

namespace denpex::engine {

v1::Diagnosis ToDiagnosis(const Incident& inc, const Finding& f);

// `s` with every byte sequence that is not UTF-8 replaced by U+FFFD (protobuf strings must be
// UTF-8; log lines need not be).
std::string ValidUtf8(std::string_view s);

}  // namespace denpex::engine
