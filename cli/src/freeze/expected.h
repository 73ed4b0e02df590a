// A frozen entry's expected.json: drafted from the frozen copy's diagnosis (so it names only
// replacements), marked as a draft until `denpex freeze --confirm`; and FREEZE.md, what the
// freeze did (never an original name).
#pragma once

#include <filesystem>
#include <string>

#include "denpex/common/status.h"
#include "denpex/v1/diagnosis.pb.h"
#include "denpex/v1/truth.pb.h"
#include "freeze/freeze.h"

namespace denpex::freeze {

// The expected outcome a diagnosis proposes, as a draft (`corpus_entry.draft`).
v1::Truth DraftExpected(const v1::Diagnosis& d, const std::string& scenario,
                        const std::string& drafted_by, const std::string& now);

Status WriteDraft(const std::filesystem::path& entry, const v1::Diagnosis& frozen,
                  const std::string& drafted_by, const std::filesystem::path& incident);
Status WriteFreezeNotes(const std::filesystem::path& entry, const FreezeReport& report,
                        const std::filesystem::path& incident);

}  // namespace denpex::freeze
