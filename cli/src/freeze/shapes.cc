#include "freeze/shapes.h"

#include <cstdint>

namespace denpex::freeze {

// Whether the digits at [at, end) name a Slurm job: `JobId=N`, `job N`, `*** JOB N`,
// `STEP N.s`, `StepId=N.s`, slurmd's `[N.s]`, `slurm-N.out`, `SLURM_JOB_ID=N`. A training
// log's `step N` is a step, never a job.
bool JobContext(std::string_view text, std::size_t at, std::size_t end) {
  const bool dotted = end + 1 < text.size() && text[end] == '.' && IsDigit(text[end + 1]);
  // slurmd's `[5370.0]`, `[5370.batch]`; never the kernel's uptime stamp `[2359191.562732]`.
  if (at > 0 && text[at - 1] == '[' && end < text.size() && text[end] == '.') {
    const std::size_t close = text.find(']', end);
    const std::string_view step =
        close == std::string_view::npos ? "" : text.substr(end + 1, close - end - 1);
    if ((AllDigits(step) && step.size() <= 3) || step == "batch" || step == "extern" ||
        step == "interactive")
      return true;
  }
  std::size_t from = at >= 24 ? at - 24 : 0;
  std::string before = Lower(text.substr(from, at - from));
  if (const std::size_t nl = before.rfind('\n'); nl != std::string::npos)
    before = before.substr(nl + 1);
  // Only the last word before the number counts.
  std::size_t k = before.size();
  while (k > 0 && !IsAlnum(before[k - 1])) --k;
  const std::size_t gap = before.size() - k;
  std::size_t w = k;
  while (w > 0 && (IsAlnum(before[w - 1]) || before[w - 1] == '_')) --w;
  const std::string word = before.substr(w, k - w);
  if (gap > 3) return false;
  if (word == "step" || word == "stepid") return dotted;
  return word == "job" || word == "jobid" || word == "job_id" || word == "slurm_job_id" ||
         word == "slurm" || word == "slurm_jobid" || word == "slurm_array_job_id";
}

namespace {

int Sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-' || c == '+') return 62;
  if (c == '_' || c == '/') return 63;
  return -1;
}

}  // namespace

bool Base64Decode(std::string_view in, std::string* out) {
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  std::uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    const int v = Sextet(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return !out->empty();
}

std::string Base64Encode(std::string_view in, bool urlsafe, bool pad) {
  const char* alphabet = urlsafe
                             ? "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
                             : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(in[i]) << 16) |
                            (static_cast<unsigned char>(in[i + 1]) << 8) |
                            static_cast<unsigned char>(in[i + 2]);
    for (int k = 18; k >= 0; k -= 6) out.push_back(alphabet[(v >> k) & 63]);
  }
  if (i < in.size()) {
    std::uint32_t v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    const int chars = i + 1 < in.size() ? 3 : 2;
    for (int k = 0; k < chars; ++k) out.push_back(alphabet[(v >> (18 - 6 * k)) & 63]);
    if (pad) out.append(static_cast<std::size_t>(4 - chars), '=');
  }
  return out;
}

bool IsBase64Char(char c) { return Sextet(c) >= 0 || c == '='; }

}  // namespace denpex::freeze
