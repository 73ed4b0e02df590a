#include "checkpoint/pickle.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "checkpoint/byte_file.h"

namespace denpex::engine::ckpt {
namespace {

using Kind = PyValue::Kind;

// The opcodes of pickle protocols 2-5 this machine runs (Python's Lib/pickle.py names).
// clang-format off
enum Op : unsigned char {
  kMark = '(', kStop = '.', kPop = '0', kPopMark = '1', kDup = '2', kBinFloat = 'G',
  kBinInt = 'J', kBinInt1 = 'K', kBinInt2 = 'M', kNone = 'N', kBinPersId = 'Q', kReduce = 'R',
  kBinString = 'T', kShortBinString = 'U', kBinUnicode = 'X', kBinBytes = 'B',
  kShortBinBytes = 'C', kAppend = 'a', kBuild = 'b', kGlobal = 'c', kDict = 'd',
  kEmptyDict = '}', kAppends = 'e', kBinGet = 'h', kLongBinGet = 'j', kList = 'l',
  kEmptyList = ']', kBinPut = 'q', kLongBinPut = 'r', kSetItem = 's', kTuple = 't',
  kEmptyTuple = ')', kSetItems = 'u', kProto = 0x80, kNewObj = 0x81, kExt1 = 0x82,
  kExt2 = 0x83, kExt4 = 0x84, kTuple1 = 0x85, kTuple2 = 0x86, kTuple3 = 0x87,
  kNewTrue = 0x88, kNewFalse = 0x89, kLong1 = 0x8a, kLong4 = 0x8b,
  kShortBinUnicode = 0x8c, kBinUnicode8 = 0x8d, kBinBytes8 = 0x8e, kEmptySet = 0x8f,
  kAddItems = 0x90, kFrozenSet = 0x91, kNewObjEx = 0x92, kStackGlobal = 0x93,
  kMemoize = 0x94, kFrame = 0x95, kByteArray8 = 0x96,
};
// clang-format on

// The machine's state while it runs; on any error it stops and records why.
class Machine {
 public:
  Machine(std::string_view in, std::size_t start, Pickle& out)
      : in_(in), pos_(start), out_(out), budget_(kPickleMemorySlack + 2 * in.size()) {}

  void Run() {
    while (out_.ok()) {
      if (pos_ >= in_.size()) return Fail(PickleError::kTruncated, "the input ends before STOP");
      if (marks_.size() > kMaxPickleDepth) {
        return Fail(PickleError::kUnsupported, "nested deeper than " + std::to_string(kMaxPickleDepth) +
                                                   " marks at byte " + std::to_string(pos_));
      }
      if (MemoryUsed() > budget_) return OverBudget();
      const std::size_t at = pos_;
      const auto op = static_cast<unsigned char>(in_[pos_++]);
      if (op == kStop) {
        if (auto v = Pop()) out_.root = *v;
        out_.end = pos_;
        return;
      }
      Step(op, at);
    }
  }

 private:
  void Fail(PickleError e, std::string detail) {
    if (out_.ok()) {
      out_.error = e;
      out_.error_detail = std::move(detail);
    }
  }
  void OverBudget() {
    Fail(PickleError::kUnsupported, "needs more than " + std::to_string(budget_ >> 20) +
                                        " MiB of memory (twice its size and " +
                                        std::to_string(kPickleMemorySlack >> 20) +
                                        " MiB) by byte " + std::to_string(pos_));
  }
  // What the machine holds, counted as it grows: the stack, every container and its items,
  // every string, the memo. Checked before each opcode and before each new string.
  std::size_t MemoryUsed() const {
    return stack_.capacity() * sizeof(PyValue) + marks_.capacity() * sizeof(std::size_t) +
           out_.containers.size() * sizeof(PyContainer) + items_ * sizeof(PyValue) +
           out_.strings.size() * sizeof(std::string) + string_bytes_ +
           dense_memo_.capacity() * sizeof(PyValue) + sparse_memo_.size() * kMemoEntryBytes;
  }
  void Malformed(std::size_t at, const char* what) {
    Fail(PickleError::kMalformed, std::string(what) + " at byte " + std::to_string(at));
  }

  // The next `n` input bytes, or nullopt (and kTruncated) when the input ends first.
  std::optional<std::string_view> Take(std::uint64_t n) {
    if (n > in_.size() - pos_) {
      Fail(PickleError::kTruncated, "an argument runs past the end of the input");
      return std::nullopt;
    }
    auto s = in_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::optional<std::uint64_t> TakeLe(int width) {
    auto b = Take(width);
    if (!b) return std::nullopt;
    std::uint64_t v = 0;
    for (int k = width - 1; k >= 0; --k) v = v << 8 | static_cast<unsigned char>((*b)[k]);
    return v;
  }
  std::optional<std::string_view> TakeLine() {
    const auto nl = in_.find('\n', pos_);
    if (nl == std::string_view::npos) {
      Fail(PickleError::kTruncated, "a text argument has no end of line");
      return std::nullopt;
    }
    auto s = in_.substr(pos_, nl - pos_);
    pos_ = nl + 1;
    return s;
  }

  std::size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  std::optional<PyValue> Pop() {
    if (stack_.size() <= Floor()) {
      Fail(PickleError::kMalformed, "stack underflow before byte " + std::to_string(pos_));
      return std::nullopt;
    }
    PyValue v = stack_.back();
    stack_.pop_back();
    return v;
  }
  // Everything above the newest MARK, which is removed.
  std::optional<std::vector<PyValue>> PopMark() {
    if (marks_.empty()) {
      Fail(PickleError::kMalformed, "no MARK before byte " + std::to_string(pos_));
      return std::nullopt;
    }
    std::vector<PyValue> items(stack_.begin() + static_cast<std::ptrdiff_t>(marks_.back()),
                               stack_.end());
    stack_.resize(marks_.back());
    marks_.pop_back();
    return items;
  }

  PyValue NewString(std::string_view s, Kind kind = Kind::kStr) {
    if (MemoryUsed() + s.size() > budget_) {
      OverBudget();
      return {};
    }
    string_bytes_ += s.size();
    out_.strings.emplace_back(s);
    return {kind, 0, static_cast<std::uint32_t>(out_.strings.size() - 1)};
  }
  PyValue NewContainer(Kind kind, std::vector<PyValue> items = {}) {
    items_ += items.size();
    out_.containers.push_back({std::move(items), {}, {}});
    const auto ref = static_cast<std::uint32_t>(out_.containers.size() - 1);
    if (kind == Kind::kDict) out_.dicts.push_back(ref);
    return {kind, 0, ref};
  }
  PyValue NewObject(PyValue type, PyValue args) {
    PyValue obj = NewContainer(Kind::kObject, {args});
    out_.containers[obj.ref].type = type;
    return obj;
  }
  // APPENDS and SETITEMS: the items above the newest MARK appended to the list or dict below
  // it, straight from the stack (AddTo's rules).
  void AddMarked(Kind want, std::size_t at) {
    if (marks_.empty())
      return Fail(PickleError::kMalformed, "no MARK before byte " + std::to_string(pos_));
    const std::size_t begin = marks_.back();
    marks_.pop_back();
    const std::size_t n = stack_.size() - begin;
    if (want == Kind::kDict && n % 2 != 0) return Malformed(at, "an odd number of dict items");
    if (begin <= Floor()) return Fail(PickleError::kMalformed, "nothing to add items to");
    const PyValue target = Receiver(stack_[begin - 1], want);
    if (target.kind == want) {
      auto& dst = out_.containers[target.ref].items;
      items_ += n;
      dst.insert(dst.end(), stack_.begin() + static_cast<std::ptrdiff_t>(begin), stack_.end());
    }
    stack_.resize(begin);
  }
  // What items added to `target` go into: itself, or for an OrderedDict (every module's
  // state_dict) or another dict subclass given dict items, the object's state dict (made on
  // first use), where Get finds them.
  PyValue Receiver(PyValue target, Kind want) {
    if (target.kind != Kind::kObject || want != Kind::kDict) return target;
    const std::uint32_t obj = target.ref;
    if (out_.containers[obj].state.kind == Kind::kNone) {
      const PyValue d = NewContainer(Kind::kDict);
      out_.containers[obj].state = d;
    }
    return out_.containers[obj].state;
  }
  // Appends to the list or dict on top of the stack (anything else: the items are dropped).
  void AddTo(std::vector<PyValue> items, Kind want) {
    if (stack_.size() <= Floor()) return Fail(PickleError::kMalformed, "nothing to add items to");
    const PyValue target = Receiver(stack_.back(), want);
    if (target.kind != want) return;
    auto& dst = out_.containers[target.ref].items;
    items_ += items.size();
    dst.insert(dst.end(), items.begin(), items.end());
  }
  void PushInt(std::int64_t v) { stack_.push_back({Kind::kInt, v, 0}); }
  void PushLong(std::string_view b) {
    if (b.size() > 8) return stack_.push_back({Kind::kOther, 0, 0});  // too big to matter
    std::uint64_t v = 0;
    for (std::size_t k = b.size(); k-- > 0;) v = v << 8 | static_cast<unsigned char>(b[k]);
    if (!b.empty() && b.size() < 8 && (static_cast<unsigned char>(b.back()) & 0x80)) {
      v |= ~std::uint64_t{0} << (8 * b.size());  // sign-extend
    }
    PushInt(static_cast<std::int64_t>(v));
  }
  // The memo: picklers number its entries 0, 1, 2, ... (Python memoizes every string and
  // container): those are a vector; an index far past them (hostile) goes to a map.
  void Memo(std::uint64_t index) {
    if (stack_.size() <= Floor()) return Fail(PickleError::kMalformed, "memoizing an empty stack");
    if (index < dense_memo_.size() + kDenseMemoStep) {
      if (index >= dense_memo_.size()) {
        dense_memo_.resize(index + 1, {Kind::kOther, 0, kUnset});
      }
      memo_count_ += dense_memo_[index].ref == kUnset && dense_memo_[index].kind == Kind::kOther;
      dense_memo_[index] = stack_.back();
      return;
    }
    memo_count_ += sparse_memo_.insert_or_assign(index, stack_.back()).second;
  }
  void Recall(std::uint64_t index, std::size_t at) {
    if (index < dense_memo_.size()) {
      const PyValue v = dense_memo_[index];
      if (v.kind != Kind::kOther || v.ref != kUnset) return stack_.push_back(v);
    }
    auto it = sparse_memo_.find(index);
    if (it == sparse_memo_.end()) return Malformed(at, "GET of a memo entry never stored");
    stack_.push_back(it->second);
  }

  // A value this machine does not represent (floats, bytes, extensions): skip its bytes.
  void SkipValue(std::uint64_t n) {
    if (Take(n)) stack_.push_back({Kind::kOther, 0, 0});
  }
  void PushTuple(int n) {
    std::vector<PyValue> items(n);
    for (auto it = items.rbegin(); it != items.rend(); ++it) {
      auto v = Pop();
      if (!v) return;
      *it = *v;
    }
    stack_.push_back(NewContainer(Kind::kTuple, std::move(items)));
  }
  // DICT (a new dict of the pairs) or SETITEMS (the pairs added to the dict on top).
  void PushPairs(std::vector<PyValue> pairs, std::size_t at, bool into_top) {
    if (pairs.size() % 2 != 0) return Malformed(at, "an odd number of dict items");
    if (into_top) return AddTo(std::move(pairs), Kind::kDict);
    stack_.push_back(NewContainer(Kind::kDict, std::move(pairs)));
  }
  // A class reference, "module.name".
  void PushGlobal(std::string_view module, std::string_view name) {
    if (MemoryUsed() + module.size() + name.size() > budget_) return OverBudget();
    std::string qualified;
    qualified.reserve(module.size() + 1 + name.size());
    qualified.append(module).append(".").append(name);
    stack_.push_back(NewString(qualified, Kind::kGlobal));
  }
  void PushStackGlobal(const PyValue& module, const PyValue& name, std::size_t at) {
    if (module.kind != Kind::kStr || name.kind != Kind::kStr) {
      return Malformed(at, "STACK_GLOBAL of non-strings");
    }
    PushGlobal(out_.Str(module), out_.Str(name));
  }
  void Build(const PyValue& state, std::size_t at) {
    if (stack_.size() <= Floor()) return Malformed(at, "BUILD with nothing to build");
    if (stack_.back().kind != Kind::kObject) return;
    PyValue& current = out_.containers[stack_.back().ref].state;
    if (current.kind == Kind::kDict && state.kind == Kind::kDict && current.ref != state.ref) {
      // An OrderedDict's items came first (SETITEMS), then its __dict__ (`_metadata`).
      if (MemoryUsed() + out_.containers[state.ref].items.size() * sizeof(PyValue) > budget_)
        return OverBudget();
      const std::vector<PyValue> more = out_.containers[state.ref].items;
      auto& dst = out_.containers[current.ref].items;
      items_ += more.size();
      dst.insert(dst.end(), more.begin(), more.end());
      return;
    }
    current = state;
  }

  void Step(unsigned char op, std::size_t at);
  bool StepScalar(unsigned char op);
  bool StepContainer(unsigned char op, std::size_t at);
  bool StepObject(unsigned char op, std::size_t at);

  std::string_view in_;
  std::size_t pos_;
  Pickle& out_;
  std::vector<PyValue> stack_;
  std::vector<std::size_t> marks_;
  std::vector<PyValue> dense_memo_;  // unset entries: kOther with ref kUnset
  std::unordered_map<std::uint64_t, PyValue> sparse_memo_;
  std::size_t memo_count_ = 0;  // entries stored (MEMOIZE's next index)
  static constexpr std::uint32_t kUnset = ~std::uint32_t{0};
  static constexpr std::uint64_t kDenseMemoStep = 4096;
  std::size_t budget_;            // bytes: kPickleMemorySlack and twice the input
  std::size_t items_ = 0;         // items of every container
  std::size_t string_bytes_ = 0;  // characters of every string
  // An unordered_map node of the memo: the pair, the hash-chain link and the bucket.
  static constexpr std::size_t kMemoEntryBytes = sizeof(std::pair<std::uint64_t, PyValue>) + 24;
};

// Scalars: constants, integers, strings and bytes. False when `op` is not one of them.
bool Machine::StepScalar(unsigned char op) {
  switch (op) {
    case kNone:
      stack_.push_back({});
      return true;
    case kNewTrue:
      stack_.push_back({Kind::kBool, 1, 0});
      return true;
    case kNewFalse:
      stack_.push_back({Kind::kBool, 0, 0});
      return true;
    case kBinInt:
      if (auto v = TakeLe(4)) PushInt(static_cast<std::int32_t>(*v));
      return true;
    case kBinInt1:
    case kBinInt2:
      if (auto v = TakeLe(op == kBinInt1 ? 1 : 2)) PushInt(static_cast<std::int64_t>(*v));
      return true;
    case kLong1:
    case kLong4:
      if (auto n = TakeLe(op == kLong1 ? 1 : 4)) {
        if (auto b = Take(*n)) PushLong(*b);
      }
      return true;
    case kBinUnicode:
    case kBinString:
    case kShortBinUnicode:
    case kShortBinString:
    case kBinUnicode8: {
      const int width = op == kBinUnicode8 ? 8 : (op == kBinUnicode || op == kBinString) ? 4 : 1;
      if (auto n = TakeLe(width)) {
        if (auto str = Take(*n)) stack_.push_back(NewString(*str));
      }
      return true;
    }
    case kBinBytes:
    case kShortBinBytes:
    case kBinBytes8:
    case kByteArray8: {
      const int width = op == kBinBytes ? 4 : op == kShortBinBytes ? 1 : 8;
      if (auto n = TakeLe(width)) SkipValue(*n);
      return true;
    }
    case kBinFloat:
      SkipValue(8);
      return true;
    case kExt1:
      SkipValue(1);
      return true;  // the extension registry is unknown
    case kExt2:
      SkipValue(2);
      return true;
    case kExt4:
      SkipValue(4);
      return true;
    default:
      return false;
  }
}

// Marks, tuples, lists, dicts, sets and the stack itself.
bool Machine::StepContainer(unsigned char op, std::size_t at) {
  switch (op) {
    case kMark:
      marks_.push_back(stack_.size());
      return true;
    case kPop:
      if (stack_.size() > Floor()) {
        stack_.pop_back();
      } else {
        (void)PopMark();
      }
      return true;
    case kPopMark:
      (void)PopMark();
      return true;
    case kDup:
      if (auto v = Pop()) stack_.insert(stack_.end(), 2, *v);
      return true;
    case kEmptyTuple:
      stack_.push_back(NewContainer(Kind::kTuple));
      return true;
    case kEmptyList:
      stack_.push_back(NewContainer(Kind::kList));
      return true;
    case kEmptyDict:
      stack_.push_back(NewContainer(Kind::kDict));
      return true;
    case kEmptySet:
      stack_.push_back({Kind::kOther, 0, 0});
      return true;
    case kTuple:
    case kList:
      if (auto v = PopMark())
        stack_.push_back(NewContainer(op == kTuple ? Kind::kTuple : Kind::kList, std::move(*v)));
      return true;
    case kTuple1:
    case kTuple2:
    case kTuple3:
      PushTuple(op - kTuple1 + 1);
      return true;
    case kDict:
      if (auto v = PopMark()) PushPairs(std::move(*v), at, /*into_top=*/false);
      return true;
    case kFrozenSet:
      if (PopMark()) stack_.push_back({Kind::kOther, 0, 0});
      return true;
    case kAddItems:
      (void)PopMark();
      return true;
    case kAppend:
      if (auto v = Pop()) AddTo({*v}, Kind::kList);
      return true;
    case kAppends:
      AddMarked(Kind::kList, at);
      return true;
    case kSetItem:
      if (auto v = Pop()) {
        if (auto k = Pop()) AddTo({*k, *v}, Kind::kDict);
      }
      return true;
    case kSetItems:
      AddMarked(Kind::kDict, at);
      return true;
    default:
      return false;
  }
}

// Class references, calls, BUILD, persistent ids and the memo.
bool Machine::StepObject(unsigned char op, std::size_t at) {
  switch (op) {
    case kGlobal:  // "module\nname\n"
      if (auto m = TakeLine()) {
        if (auto n = TakeLine()) PushGlobal(*m, *n);
      }
      return true;
    case kStackGlobal:
      if (auto n = Pop()) {
        if (auto m = Pop()) PushStackGlobal(*m, *n, at);
      }
      return true;
    case kReduce:
    case kNewObj:
    case kNewObjEx:  // cls, args, kwargs
      if (op == kNewObjEx && !Pop()) return true;
      if (auto args = Pop()) {
        if (auto type = Pop()) stack_.push_back(NewObject(*type, *args));
      }
      return true;
    case kBuild:
      if (auto state = Pop()) Build(*state, at);
      return true;
    case kBinPersId:
      if (auto pid = Pop()) {
        out_.persistent_ids.push_back(*pid);
        stack_.push_back(NewObject(NewString("persistent_load", Kind::kGlobal), *pid));
      }
      return true;
    case kBinGet:
    case kLongBinGet:
      if (auto i = TakeLe(op == kBinGet ? 1 : 4)) Recall(*i, at);
      return true;
    case kBinPut:
    case kLongBinPut:
      if (auto i = TakeLe(op == kBinPut ? 1 : 4)) Memo(*i);
      return true;
    case kMemoize:
      Memo(memo_count_);
      return true;
    default:
      return false;
  }
}

void Machine::Step(unsigned char op, std::size_t at) {
  if (op == kProto) {
    if (auto v = TakeLe(1); v && *v > 5)
      Fail(PickleError::kUnsupported, "pickle protocol " + std::to_string(*v));
    return;
  }
  if (op == kFrame) {  // a size hint only
    (void)Take(8);
    return;
  }
  if (StepScalar(op) || StepContainer(op, at) || StepObject(op, at)) return;
  static constexpr char kHex[] = "0123456789abcdef";
  Fail(PickleError::kUnsupported, std::string("opcode 0x") + kHex[op >> 4] + kHex[op & 15] +
                                      " at byte " + std::to_string(at) + " is not supported");
}

}  // namespace

std::string_view Pickle::Str(const PyValue& v) const {
  if ((v.kind != PyValue::Kind::kStr && v.kind != PyValue::Kind::kGlobal) ||
      v.ref >= strings.size())
    return {};
  return strings[v.ref];
}

std::span<const PyValue> Pickle::Items(const PyValue& v) const {
  if ((v.kind != PyValue::Kind::kTuple && v.kind != PyValue::Kind::kList) ||
      v.ref >= containers.size())
    return {};
  return containers[v.ref].items;
}

const PyValue* Pickle::Get(const PyValue& dict, std::string_view key) const {
  const PyValue* d = &dict;
  if (d->kind == PyValue::Kind::kObject && d->ref < containers.size())
    d = &containers[d->ref].state;
  if (d->kind != PyValue::Kind::kDict || d->ref >= containers.size()) return nullptr;
  const auto& items = containers[d->ref].items;
  for (std::size_t k = 0; k + 1 < items.size(); k += 2) {
    if (items[k].kind == PyValue::Kind::kStr && Str(items[k]) == key) return &items[k + 1];
  }
  return nullptr;
}

std::optional<std::int64_t> Pickle::GetInt(const PyValue& dict, std::string_view key) const {
  const PyValue* v = Get(dict, key);
  if (v == nullptr || v->kind != PyValue::Kind::kInt) return std::nullopt;
  return v->i;
}

Pickle RunPickle(std::string_view bytes, std::size_t start) {
  Pickle out;
  if (start > bytes.size()) start = bytes.size();
  Machine(bytes, start, out).Run();
  return out;
}

}  // namespace denpex::engine::ckpt
