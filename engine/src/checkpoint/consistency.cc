#include "checkpoint/consistency.h"

#include <cctype>

#include "checkpoint/layouts.h"
#include "checkpoint/torch_file.h"

namespace denpex::engine::ckpt {
namespace {

// `s` with its first run of digits (all of them when `all`) read as '#'.
std::string Masked(const std::string& s, bool all) {
  std::string out;
  bool done = false;
  for (std::size_t k = 0; k < s.size(); ++k) {
    const bool digit = std::isdigit(static_cast<unsigned char>(s[k])) != 0;
    if (!digit || (done && !all)) {
      out += s[k];
      continue;
    }
    out += '#';
    while (k + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[k + 1])) != 0) ++k;
    done = true;
  }
  return out;
}

std::string ShapeText(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (k > 0) out += ", ";
    out += std::to_string(shape[k]);
  }
  return out + "]";
}

// The first difference between two files' tensors, phrased with their names; empty if none.
// `same_names`: a tensor in one file only is a difference too (else only shapes are compared).
std::string Difference(const TensorShapes& a, const std::string& a_name, const TensorShapes& b,
                       const std::string& b_name, bool same_names = true) {
  for (const auto& [name, shape] : a) {
    auto it = b.find(name);
    if (it == b.end() && !same_names) continue;
    if (it == b.end()) return a_name + " holds tensor '" + name + "', " + b_name + " does not";
    if (it->second != shape) {
      return "tensor '" + name + "' is " + ShapeText(shape) + " in " + a_name + " and " +
             ShapeText(it->second) + " in " + b_name;
    }
  }
  for (const auto& [name, shape] : b) {
    if (same_names && a.count(name) == 0) return b_name + " holds tensor '" + name + "', " + a_name + " does not";
  }
  return "";
}

}  // namespace

std::optional<TensorShapes> ReadTensorShapes(const std::filesystem::path& file) {
  auto p = ReadTorchObject(file);
  if (!p) return std::nullopt;
  TensorShapes out;
  for (const PickledTensor& t : PickledTensors(*p)) {
    out.emplace(t.name, t.shape.value_or(
                            std::vector<std::int64_t>{static_cast<std::int64_t>(t.storage_numel)}));
  }
  return out;
}

std::optional<Finding> CheckRankShapes(const std::vector<StepFile>& files, bool even) {
  std::map<std::string, std::vector<const StepFile*>> groups;
  for (const StepFile& f : files) {
    if (f.second->kind == EntryKind::kFile) groups[Masked(f.first, false)].push_back(&f);
  }
  int compared = 0;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    std::optional<TensorShapes> first;
    const StepFile* first_file = nullptr;
    for (const StepFile* f : members) {
      auto shapes = ReadTensorShapes(f->second->path);
      if (!shapes) continue;  // not a torch.save file: its own check judged it
      ++compared;
      if (!first) {
        first = std::move(shapes);
        first_file = f;
        continue;
      }
      const std::string diff = Difference(*first, first_file->first, *shapes, f->first, even);
      if (diff.empty()) continue;
      if (even) {
        return Corrupt("rank files disagree: " + diff +
                       " (the layout splits evenly across ranks: one of them is from another run "
                       "or model, or was damaged)");
      }
      return Inconclusive("rank files disagree: " + diff +
                          " (damage, or uneven sharding this verifier cannot tell apart)");
    }
  }
  if (compared == 0) return std::nullopt;
  return Valid(std::to_string(compared) + " rank files hold the same tensors and shapes as their peers");
}

std::vector<std::string> ChangesSincePrevious(const Listing& step, const Listing& previous,
                                              const std::string& previous_path) {
  std::map<std::string, const Entry*> before;
  for (const Entry& e : previous.entries) {
    if (e.kind == EntryKind::kFile) before.emplace(Masked(e.name, true), &e);
  }
  std::vector<std::string> out;
  for (const Entry& e : step.entries) {
    if (e.kind != EntryKind::kFile) continue;
    auto it = before.find(Masked(e.name, true));
    if (it == before.end()) continue;
    auto now = ReadTensorShapes(e.path);
    if (!now) continue;
    auto then = ReadTensorShapes(it->second->path);
    if (!then) continue;
    const std::string diff =
        Difference(*now, e.name, *then, previous_path + "/" + it->second->name);
    if (!diff.empty()) out.push_back("the model changed since " + previous_path + ": " + diff);
  }
  return out;
}

}  // namespace denpex::engine::ckpt
