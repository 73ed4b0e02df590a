#include "metrics/metric_lines.h"

#include <charconv>

#include "parse/lines.h"

namespace denpex::engine::metrics {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// A float as Python prints it (`2.345678E+00`, `12.47824`, `1.5e-07`, `nan`): the whole of `v`.
bool Float(std::string_view v, double* out) {
  v = Trim(v);
  if (v.empty()) return false;
  const char* end = v.data() + v.size();
  const auto r = std::from_chars(v.data(), end, *out);
  return r.ec == std::errc() && r.ptr == end;
}

// A float at the scanner, up to a space, comma or bar.
bool FloatAt(Scanner* s, double* out) {
  s->SkipSpaces();
  return Float(s->Token(" ,|}"), out);
}

bool StepNumber(Scanner* s, std::int64_t* v) {
  s->SkipSpaces();
  return s->Digits(1, 12, v);
}

// Megatron-LM's training_log: ` [stamp] iteration <i:8>/<N:8> | name: value | ... |`; the stamp
// is absent before 2023 and has microseconds from 2026 (`%H:%M:%S.%f`).
Match Megatron(std::string_view msg, MetricLine* out) {
  const std::size_t at = msg.find("iteration ");
  if (at == std::string_view::npos || (at > 0 && msg[at - 1] != ' ')) return Match::kNo;
  Scanner s(msg.substr(at + 10));
  std::int64_t i, n;
  if (!StepNumber(&s, &i) || !s.Char('/') || !StepNumber(&s, &n)) return Match::kNo;
  s.SkipSpaces();
  if (!s.Char('|')) return Match::kNo;
  out->shape = TrainerShape::kMegatron;
  out->step = i;
  out->total = n;
  std::optional<double> first_loss;
  for (std::string_view rest = s.Rest(); !rest.empty();) {
    const std::size_t bar = rest.find('|');
    const std::string_view field = Trim(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view() : rest.substr(bar + 1);
    const std::size_t colon = field.rfind(": ");
    if (colon == std::string_view::npos) continue;
    const std::string_view name = field.substr(0, colon), value = field.substr(colon + 2);
    double v;
    if (name == "elapsed time per iteration (ms)") {
      // A fork's `<this interval>/<running mean>`: the interval's.
      if (!Float(value.substr(0, value.find('/')), &v)) return Match::kMalformed;
      out->seconds_per_step = v / 1000.0;
    } else if (name == "lm loss") {
      if (!Float(value, &v)) return Match::kMalformed;
      out->loss = v;
    } else if (name.ends_with("loss") && name != "loss scale" && !first_loss && Float(value, &v)) {
      first_loss = v;
    }
  }
  if (!out->loss) out->loss = first_loss;
  return Match::kYes;
}

// DeepSpeed's engine (`_report_progress`, through log_dist on rank 0): `[Rank 0] step=<n>,
// skipped=<k>, lr=[...], mom=[...]`. No loss, no duration: the stamps give it.
Match DeepSpeedStep(std::string_view msg, MetricLine* out) {
  const std::size_t at = msg.find("[Rank ");
  if (at == std::string_view::npos) return Match::kNo;
  Scanner s(msg.substr(at + 6));
  std::int64_t rank, step;
  if (!s.Digits(1, 7, &rank) || !s.Lit("] step=")) return Match::kNo;
  if (!s.Digits(1, 12, &step) || !s.Lit(", skipped=")) return Match::kMalformed;
  out->shape = TrainerShape::kDeepSpeed;
  out->step = step;
  out->rank = static_cast<std::int32_t>(rank);
  return Match::kYes;
}

// DeepSpeed's PipelineEngine.train_batch on global rank 0 (print): `steps: <n> loss: <l>
// [<name>: <l> ...] iter time (s): <t> samples/sec: <s>`.
Match DeepSpeedPipe(std::string_view msg, MetricLine* out) {
  Scanner s(msg);
  std::int64_t step;
  double loss, t;
  if (!s.Lit("steps: ") || !s.Digits(1, 12, &step) || !s.Lit(" loss: ")) return Match::kNo;
  if (!FloatAt(&s, &loss) || !s.SkipPast("iter time (s): ") || !FloatAt(&s, &t))
    return Match::kMalformed;
  out->shape = TrainerShape::kDeepSpeedPipe;
  out->step = step;
  out->loss = loss;
  out->seconds_per_step = t;
  return Match::kYes;
}

// torchtitan's MetricsProcessor.log (colour codes already removed): `step: <n:2>  loss: <l>  ...`,
// behind its `[titan] <asctime> - root - INFO - ` header. `validate step:` is not a training step.
Match Torchtitan(std::string_view msg, MetricLine* out) {
  std::size_t at = msg.find("step: ");
  while (at != std::string_view::npos && at > 0 && msg[at - 1] != ' ')
    at = msg.find("step: ", at + 1);
  if (at == std::string_view::npos || msg.substr(0, at).ends_with("validate ")) return Match::kNo;
  Scanner s(msg.substr(at + 6));
  std::int64_t step;
  double loss;
  if (!StepNumber(&s, &step)) return Match::kNo;
  s.SkipSpaces();
  if (!s.Lit("loss: ")) return Match::kNo;
  if (!FloatAt(&s, &loss)) return Match::kMalformed;
  out->shape = TrainerShape::kTorchtitan;
  out->step = step;
  out->loss = loss;
  return Match::kYes;
}

// corpora/capture/train.py: `rank=<R> step=<n>/<N> loss=<l> data_ms=<ms> step_ms=<ms>`; any
// key=value line with `step=` and `loss=` whose values are plain numbers.
Match KeyValue(std::string_view msg, MetricLine* out) {
  MetricLine m;
  m.shape = TrainerShape::kKeyValue;
  bool any_loss = false;
  std::string_view key, value;
  while (NextKeyValue(&msg, &key, &value)) {
    double v;
    if (key == "step") {
      Scanner s(value);
      if (!s.Digits(1, 12, &m.step)) return Match::kNo;
      if (s.Char('/') && !s.Digits(1, 12, &m.total)) return Match::kNo;
      if (!s.AtEnd()) return Match::kNo;
    } else if (key == "loss") {
      if (!Float(value, &v)) return Match::kNo;
      m.loss = v;
      any_loss = true;
    } else if (key == "step_ms") {
      if (!Float(value, &v)) return Match::kMalformed;
      m.seconds_per_step = v / 1000.0;
    } else if (key == "rank") {
      Scanner s(value);
      std::int64_t r;
      if (s.Digits(1, 7, &r) && s.AtEnd()) m.rank = static_cast<std::int32_t>(r);
    }
  }
  if (m.step < 0 || !any_loss) return Match::kNo;
  *out = m;
  return Match::kYes;
}

// corpora/capture/train2.py: `step <n> loss <l>`, the whole message.
Match PlainStep(std::string_view msg, MetricLine* out) {
  Scanner s(Trim(msg));
  std::int64_t step;
  double loss;
  if (!s.Lit("step ") || !s.Digits(1, 12, &step) || !s.Lit(" loss ") || !Float(s.Rest(), &loss))
    return Match::kNo;
  out->shape = TrainerShape::kPlainStep;
  out->step = step;
  out->loss = loss;
  return Match::kYes;
}

Match TqdmBar(std::string_view msg, MetricLine* out);

// HF Trainer's ProgressCallback.on_log (tqdm.write(str(logs))) or PrinterCallback (print(logs)):
// `{'loss': <l>, 'grad_norm': <g>, 'learning_rate': <lr>, 'epoch': <e>}`, its values quoted
// strings in transformers 5 (`{'loss': '1.178', ...}`). No step: the training bar's is the step
// the loss belongs to, on the same piece when a paste joined them (`...4.96it/s]{'loss': ...`),
// else the bar before it in the stream (ReadTrainingMetrics).
Match HfLogs(std::string_view msg, MetricLine* out) {
  constexpr std::string_view kOpen = "{'loss': ";
  const std::size_t at = msg.find(kOpen);
  if (at == std::string_view::npos) return Match::kNo;
  Scanner s(msg.substr(at + kOpen.size()));
  std::string_view value = s.Token(",}");
  if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'')
    value = value.substr(1, value.size() - 2);
  double loss;
  if (!Float(value, &loss)) return Match::kMalformed;
  MetricLine m;
  if (at > 0 && TqdmBar(msg.substr(0, at), &m) != Match::kYes) m = {};
  m.shape = TrainerShape::kHfTrainer;
  m.loss = loss;
  *out = m;
  return Match::kYes;
}

// A tqdm bar: `<desc>: <p>%|<bar>| <n>/<N> [<elapsed><<remaining>, <r>it/s<, postfix>]`, or
// `<r>s/it` when a step takes more than a second; `?it/s` before a rate is known.
Match TqdmBar(std::string_view msg, MetricLine* out) {
  const std::size_t open = msg.rfind(" [");
  const std::size_t bar = msg.rfind("| ", open);
  if (open == std::string_view::npos || bar == std::string_view::npos) return Match::kNo;
  Scanner n(msg.substr(bar + 2, open - bar - 2));
  std::int64_t step, total;
  if (!n.Digits(1, 12, &step) || !n.Char('/') || !n.Digits(1, 12, &total) || !n.AtEnd())
    return Match::kNo;
  const std::string_view inside = msg.substr(open + 2);
  const std::size_t comma = inside.find(", ");
  if (inside.find('<') == std::string_view::npos || comma == std::string_view::npos)
    return Match::kNo;
  const std::string_view rate =
      inside.substr(comma + 2, inside.find_first_of(",]", comma + 2) - comma - 2);
  out->shape = TrainerShape::kHfTrainer;
  out->bar = true;
  out->step = step;
  out->total = total;
  double r;
  if (rate.ends_with("it/s") && Float(rate.substr(0, rate.size() - 4), &r) && r > 0) {
    out->seconds_per_step = 1.0 / r;
  } else if (rate.ends_with("s/it") && Float(rate.substr(0, rate.size() - 4), &r)) {
    out->seconds_per_step = r;
  }
  return Match::kYes;
}

struct Row {
  const char* name;
  Match (*fn)(std::string_view, MetricLine*);
};
// Tried in order; the first that takes the message wins. DeepSpeed's `step=` before the key=value
// shape; Megatron's fields before torchtitan's `step: `.
constexpr Row kRows[] = {
    {"megatron iteration", Megatron},      {"deepspeed step", DeepSpeedStep},
    {"deepspeed pipeline", DeepSpeedPipe}, {"torchtitan step", Torchtitan},
    {"key=value step", KeyValue},          {"plain step", PlainStep},
    {"hf trainer logs", HfLogs},           {"tqdm bar", TqdmBar},
};

}  // namespace

Match RecogniseMetricLine(std::string_view message, MetricLine* out) {
  for (const Row& row : kRows) {
    MetricLine m;
    const Match r = row.fn(message, &m);
    if (r == Match::kNo) continue;
    if (r == Match::kYes) *out = m;
    return r;
  }
  return Match::kNo;
}

std::optional<TimeNs> LeadingStamp(std::string_view message) {
  constexpr std::size_t kMaxHeader = 24;
  for (std::size_t i = 0; i < message.size() && i <= kMaxHeader; ++i) {
    if (!IsDigit(message[i]) || (i > 0 && IsDigit(message[i - 1]))) continue;
    Scanner s(message.substr(i));
    TimeNs t;
    if (ScanDateTime(&s, &t)) return t;
  }
  return std::nullopt;
}

bool MayHoldMetric(std::string_view line) {
  return line.find("step") != std::string_view::npos ||
         line.find("iteration ") != std::string_view::npos ||
         line.find("'loss'") != std::string_view::npos ||
         line.find("it/s") != std::string_view::npos || line.find("s/it") != std::string_view::npos;
}

}  // namespace denpex::engine::metrics
