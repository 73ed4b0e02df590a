// ReadTrainingMetrics and the baseline (denpex/engine/metrics.h). A pass of its own over the
// files, apart from the diagnosis's parse: that one keeps only each rank's latest iteration,
// this one every step. Prefixes are peeled by parse/prefix.h as the parse peels them.
#include "denpex/engine/metrics.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "ingest/file_text.h"
#include "ingest/walk.h"
#include "metrics/metric_lines.h"
#include "parse/lines.h"
#include "parse/prefix.h"

namespace denpex::engine {

const char* TrainerShapeName(TrainerShape shape) {
  switch (shape) {
    case TrainerShape::kMegatron:
      return "megatron";
    case TrainerShape::kDeepSpeed:
      return "deepspeed";
    case TrainerShape::kDeepSpeedPipe:
      return "deepspeed_pipeline";
    case TrainerShape::kTorchtitan:
      return "torchtitan";
    case TrainerShape::kKeyValue:
      return "key_value";
    case TrainerShape::kPlainStep:
      return "plain_step";
    case TrainerShape::kHfTrainer:
      return "hf_trainer";
  }
  return "unknown";
}

namespace {

// A series being read: its steps, and for HF Trainer which bar total is the training bar's.
struct Building {
  TrainingSeries series;
  std::vector<std::int64_t> bar_total;  // per step: the bar's total, -1 not a bar
  std::optional<std::int64_t> training_total;
};

using Key = std::tuple<std::int32_t, std::string>;  // (rank, stream): stream empty when ranked

void Add(Building* b, const metrics::MetricLine& m, TrainingStep step) {
  auto& steps = b->series.steps;
  if (steps.empty()) b->series.shape = m.shape;
  if (m.step < 0) {  // HF Trainer's loss: the training bar's step it follows
    if (!steps.empty() && b->bar_total.back() >= 0) {
      steps.back().loss = m.loss;
      steps.back().file = step.file;
      steps.back().line = step.line;
      b->training_total = b->bar_total.back();
    }
    return;
  }
  step.step = m.step;
  step.loss = m.loss;
  step.seconds_per_step = m.seconds_per_step;
  if (m.bar && !steps.empty() && b->bar_total.back() == m.total && steps.back().step == m.step) {
    // A refresh of the same step's bar, or the loss a paste joined to it.
    if (m.seconds_per_step) steps.back().seconds_per_step = m.seconds_per_step;
    if (m.loss) {
      steps.back().loss = m.loss;
      steps.back().file = step.file;
      steps.back().line = step.line;
      b->training_total = m.total;
    }
    return;
  }
  // Two lines of one step (a rank's lines in two files, DeepSpeed's two lines): the first stays.
  if (!m.bar && !steps.empty() && steps.back().step == m.step) {
    if (!steps.back().loss) steps.back().loss = m.loss;
    if (!steps.back().seconds_per_step) steps.back().seconds_per_step = m.seconds_per_step;
    return;
  }
  steps.push_back(std::move(step));
  b->bar_total.push_back(m.bar ? m.total : -1);
  if (m.bar && m.loss) b->training_total = m.total;
}

// Bars of another total than the training bar's (evaluation) go; with no loss line, every bar.
void Finish(Building* b) {
  auto& steps = b->series.steps;
  std::vector<TrainingStep> kept;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (b->bar_total[i] >= 0 && b->bar_total[i] != b->training_total.value_or(-1)) continue;
    if (b->bar_total[i] >= 0 && !kept.empty() && kept.back().step == steps[i].step) {
      // The training bar redrawn after another bar (evaluation) was dropped between them.
      if (steps[i].loss) {
        kept.back().loss = steps[i].loss;
        kept.back().file = steps[i].file;
        kept.back().line = steps[i].line;
      }
      if (!kept.back().seconds_per_step) kept.back().seconds_per_step = steps[i].seconds_per_step;
      continue;
    }
    kept.push_back(std::move(steps[i]));
  }
  steps = std::move(kept);
  for (std::size_t i = 1; i < steps.size(); ++i) {
    TrainingStep& s = steps[i];
    const TrainingStep& p = steps[i - 1];
    if (s.seconds_per_step || !s.time || !p.time || s.step <= p.step || *s.time < *p.time) continue;
    s.seconds_per_step =
        static_cast<double>(*s.time - *p.time) / 1e9 / static_cast<double>(s.step - p.step);
    s.derived = true;
  }
}

struct Reader {
  TrainingMetrics out;
  std::map<Key, Building> series;

  void ReadText(std::string_view text, const std::string& rel) {
    const PrefixPolicy policy = SniffPrefixes(text);
    std::string clean;
    std::uint32_t number = 0;
    for (std::size_t pos = 0; pos < text.size();) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view raw = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++number;
      ++out.lines;
      if (raw.size() > (1u << 20) || !metrics::MayHoldMetric(raw)) continue;
      if (raw.find('\x1b') != std::string_view::npos) raw = WithoutEscapes(raw, &clean);
      Line(raw, policy, rel, number);
    }
  }

  void Line(std::string_view raw, const PrefixPolicy& policy, const std::string& rel,
            std::uint32_t number) {
    // Two processes' lines glued into one (GluedRecord): each a line of its own.
    if (const std::size_t glued = GluedRecord(raw); glued != std::string_view::npos) {
      Line(raw.substr(0, glued), policy, rel, number);
      Line(raw.substr(glued), policy, rel, number);
      return;
    }
    LineOrigin origin;
    std::string_view body = raw;
    StripPrefixes(&body, policy, &origin);
    // A tqdm bar rewrites its line with `\r`: each piece is a line of its own.
    for (std::size_t at = 0; at <= body.size();) {
      std::size_t cr = body.find('\r', at);
      if (cr == std::string_view::npos) cr = body.size();
      const std::string_view piece = body.substr(at, cr - at);
      at = cr + 1;
      if (!piece.empty()) Piece(piece, origin, rel, number);
    }
  }

  void Piece(std::string_view piece, const LineOrigin& origin, const std::string& rel,
             std::uint32_t number) {
    metrics::MetricLine m;
    const Match r = metrics::RecogniseMetricLine(piece, &m);
    if (r == Match::kMalformed) ++out.malformed;
    if (r != Match::kYes) return;
    TrainingStep step;
    step.time = metrics::LeadingStamp(piece);
    if (!step.time && origin.timed && !origin.coarse) step.time = origin.time;
    step.file = rel;
    step.line = number;
    const std::int32_t rank = m.rank >= 0 ? m.rank : origin.rank;
    std::string stream;
    if (rank < 0) {
      stream = rel;
      if (origin.task >= 0) stream.append(" task ").append(std::to_string(origin.task));
      if (origin.local_rank >= 0)
        stream.append(" local rank ").append(std::to_string(origin.local_rank));
      if (!origin.host.empty()) stream.append(" host ").append(origin.host);
    }
    Building& b = series[Key{rank, stream}];
    b.series.rank = rank;
    b.series.stream = stream;
    Add(&b, m, std::move(step));
  }

  void ReadFile(const std::filesystem::path& path, const std::string& rel) {
    auto text = FileText::Open(path);
    if (!text.ok()) {
      out.problems.push_back(rel + ": " + text.status().message());
      return;
    }
    ++out.files;
    if (!text->problem().empty()) out.problems.push_back(rel + ": " + text->problem());
    if (text->LooksBinary()) return;
    const std::size_t hole = text->LeadingHole(), end = text->Readable();
    ReadText(text->view().substr(hole, end > hole ? end - hole : 0), rel);
  }
};

}  // namespace

Result<TrainingMetrics> ReadTrainingMetrics(const std::filesystem::path& incident_dir_or_file) {
  std::error_code ec;
  Reader reader;
  if (std::filesystem::is_regular_file(incident_dir_or_file, ec)) {
    reader.ReadFile(incident_dir_or_file, incident_dir_or_file.filename().string());
  } else {
    auto listing = ListIncident(incident_dir_or_file);
    if (!listing.ok()) return listing.status();
    std::vector<const SourceFile*> files;
    for (const SourceFile& f : listing->files) files.push_back(&f);
    // A rotated log's pieces oldest first, so its steps come in the order they were printed.
    std::stable_sort(files.begin(), files.end(), [](const SourceFile* a, const SourceFile* b) {
      const std::string& sa = a->stream.empty() ? a->rel : a->stream;
      const std::string& sb = b->stream.empty() ? b->rel : b->stream;
      return std::tie(sa, b->age) < std::tie(sb, a->age);
    });
    for (const SourceFile* f : files) reader.ReadFile(f->path, f->rel);
    reader.out.problems.insert(reader.out.problems.end(), listing->problems.begin(),
                               listing->problems.end());
  }
  TrainingMetrics out = std::move(reader.out);
  for (auto& [key, b] : reader.series) {  // ranked first (rank >= 0 sorts after -1: moved below)
    Finish(&b);
    if (!b.series.steps.empty()) out.series.push_back(std::move(b.series));
  }
  std::stable_partition(out.series.begin(), out.series.end(),
                        [](const TrainingSeries& s) { return s.rank >= 0; });
  return out;
}

namespace {

bool Within(const TrainingStep& s, const BaselineBound& bound) {
  if (bound.not_after_step && s.step > *bound.not_after_step) return false;
  if (bound.not_after_time && s.time && *s.time > *bound.not_after_time) return false;
  return true;
}

}  // namespace

Baseline SummarizeSeries(const TrainingSeries& series, const BaselineBound& bound) {
  Baseline b;
  b.rank = series.rank;
  b.stream = series.stream;
  // The steps within the bound, from the last restart on.
  std::vector<const TrainingStep*> run;
  for (const TrainingStep& s : series.steps) {
    if (!Within(s, bound)) continue;
    if (!run.empty() && s.step < run.back()->step) run.clear();
    run.push_back(&s);
  }
  if (run.empty()) return b;
  b.found = true;
  b.last_step = run.back()->step;
  b.last_step_cite = run.back()->Cite();
  std::vector<double> times;
  for (auto it = run.rbegin(); it != run.rend(); ++it) {
    const TrainingStep& s = **it;
    if (!b.last_loss && s.loss) {
      b.last_loss = s.loss;
      b.last_loss_cite = s.Cite();
    }
    if (s.seconds_per_step && static_cast<int>(times.size()) < bound.last_steps)
      times.push_back(*s.seconds_per_step);
  }
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    const std::size_t n = times.size();
    b.median_seconds_per_step = n % 2 == 1 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    b.steps_measured = static_cast<int>(n);
  }
  return b;
}

Baseline SummarizeBaseline(const TrainingMetrics& metrics, const BaselineBound& bound) {
  Baseline best;
  std::size_t best_count = 0;
  for (const TrainingSeries& s : metrics.series) {
    const Baseline b = SummarizeSeries(s, bound);
    if (!b.found) continue;
    const std::size_t count = static_cast<std::size_t>(std::count_if(
        s.steps.begin(), s.steps.end(), [&](const TrainingStep& t) { return Within(t, bound); }));
    const bool better =
        !best.found || b.last_step > best.last_step ||
        (b.last_step == best.last_step && count > best_count);  // earlier series win ties
    if (better) {
      best = b;
      best_count = count;
    }
  }
  return best;
}

}  // namespace denpex::engine
