// `denpex watch`: a running job's incident directory followed while it is written, and a
// provisional diagnosis of what is on disk so far. The files are read by what they gained since
// the last look (whole lines), parsed by the engine's own parser chunk after chunk, and
// assembled and analysed exactly as Diagnose does; only the time differs: the job is not over,
// so a rank whose step lines stopped first is a finding too (a progress stall).
//
//   auto w = engine::Watcher::Open("out/incident", {});
//   w->Refresh(nullptr, WallNow());          // every file, and new ones
//   auto d = w->Evaluate(WallNow());         // DIAGNOSED once the evidence names someone
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "denpex/common/status.h"
#include "denpex/common/time.h"
#include "denpex/engine/engine.h"
#include "denpex/v1/diagnosis.pb.h"

namespace denpex::engine {

struct WatchOptions {
  int threads = 0;  // 0 = all cores
  // A rank's step lines stopped for longer than this many of the job's recent step times is a
  // stall (docs/watch.md). The recent step time is measured from the step lines themselves.
  double stall_factor = 5;
  // Log seconds per wall second: 1 for a live job; S for an incident replayed at `--replay S`.
  double time_scale = 1;
};

class Watcher {
 public:
  // kNotFound / kInvalidInput when `dir` is missing or not a directory (it may hold no log yet).
  static Result<Watcher> Open(const std::filesystem::path& dir, const WatchOptions& options);
  Watcher(Watcher&&) noexcept;
  Watcher& operator=(Watcher&&) noexcept;
  ~Watcher();

  // Reads what the files gained at wall time `wall`: `changed` their paths relative to the
  // directory (null: every file, and new ones). Returns the bytes read.
  Result<std::uint64_t> Refresh(const std::vector<std::string>* changed, TimeNs wall);
  // Events other than step lines read so far: when it moved, something happened.
  std::uint64_t signals() const;
  std::uint64_t bytes() const;
  const std::filesystem::path& root() const;

  // The provisional diagnosis of what was read, at wall time `wall`: the engine's, or, when that
  // names no one, a progress stall's. kInvalidInput while no file holds a readable line.
  Result<v1::Diagnosis> Evaluate(TimeNs wall);
  // Lines were read since the last Evaluate: the next assembles and analyses the incident again
  // (otherwise it only looks at the stall again, which costs microseconds).
  bool dirty() const;
  // The last Evaluate's answer came from the step lines (a progress stall), not a line that says
  // what happened.
  bool stalled() const;

 private:
  Watcher();
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace denpex::engine
