// StringTable: interned text that events keep (process-group names, op types, hosts, masked
// error signatures). Events hold a StrId; the text lives here once. Each file is parsed with
// its own table; the merge re-interns into one table in file order, so ids never depend on
// the thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace denpex::engine {

using StrId = std::uint32_t;
inline constexpr StrId kNoStr = 0;  // the empty string, always id 0

class StringTable {
 public:
  StringTable() { Intern({}); }
  // Get's views point into blocks that never move; a move keeps them. A copy interns every
  // string again, in id order, into blocks of its own (the same ids); only asked for by name
  // (`denpex watch` copies a growing log's table for each diagnosis).
  explicit StringTable(const StringTable& from) : StringTable() {
    for (StrId id = 1; id < from.views_.size(); ++id) Intern(from.views_[id]);
  }
  StringTable& operator=(const StringTable&) = delete;
  StringTable(StringTable&&) = default;
  StringTable& operator=(StringTable&&) = default;

  StrId Intern(std::string_view s) { return Insert(s, Hash(s), nullptr); }
  // Text a record keeps only to be shown (`denpex events`), which no analysis reads: interned
  // unless the table is set to leave it out (`KeepShown(false)`: a diagnosis's parse), then kNoStr.
  StrId InternShown(std::string_view s) { return keep_shown_ ? Intern(s) : kNoStr; }
  void KeepShown(bool keep) { keep_shown_ = keep; }
  // Interns every string of `from`, in id order (as Intern of each would), and takes over its
  // blocks, so no text is copied or hashed again; returns from's id -> this table's id. The
  // merge of a dense chunk's ~19 k strings (a watchdog note per rank, their texts unique)
  // re-hashed and copied each one. `from` is left empty.
  std::vector<StrId> Absorb(StringTable&& from) {
    if (from.views_.size() > views_.size()) return Adopt(std::move(from));
    std::vector<StrId> remap(from.views_.size());
    for (StrId id = 0; id < remap.size(); ++id) remap[id] = Insert(from.views_[id], from.hashes_[id], &from);
    for (auto& block : from.blocks_) blocks_.push_back(std::move(block));
    from = StringTable();
    return remap;
  }
  std::string_view Get(StrId id) const { return views_[id]; }
  // Room for `n` strings' ids, so that the id vectors are not copied as they grow (address space;
  // the slots still grow with what is stored).
  void Reserve(std::size_t n) {
    views_.reserve(n);
    hashes_.reserve(n);
  }
  std::size_t size() const { return views_.size(); }

  // 16 bytes a step, each pair of 8-byte words folded by one 64x64->128-bit multiply (as
  // wyhash does); the last 1..16 bytes are read as two overlapping words. Every error event
  // interns its masked signature (up to 240 bytes): std::hash's byte-wise MurmurHash took
  // ~4 % of the instructions of the benchmark's dense tail. Ids never depend on the hash.
  static std::uint64_t Hash(std::string_view s) {
    const auto mix = [](std::uint64_t a, std::uint64_t b) {
      __extension__ using Wide = unsigned __int128;  // GCC and Clang on 64-bit targets
      const Wide r = static_cast<Wide>(a) * b;
      return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
    };
    const auto word = [](const char* p) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      return w;
    };
    constexpr std::uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull, k2 = 0x8ebc6af09c88c6e3ull;
    const char* p = s.data();
    std::size_t n = s.size();
    std::uint64_t h = k2 ^ n;
    for (; n > 16; p += 16, n -= 16) h = mix(word(p) ^ k0, word(p + 8) ^ h);
    std::uint64_t a = 0, b = 0;
    if (n >= 8) {
      a = word(p), b = word(p + n - 8);
    } else if (n >= 4) {
      std::uint32_t x, y;
      std::memcpy(&x, p, 4), std::memcpy(&y, p + n - 4, 4);
      a = x, b = y;
    } else if (n > 0) {
      a = static_cast<std::uint64_t>(static_cast<unsigned char>(p[0])) << 16 |
          static_cast<std::uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 | static_cast<unsigned char>(p[n - 1]);
    }
    return mix(a ^ k0 ^ h, b ^ k1) ^ h;
  }

 private:
  // Open addressing (linear probing, at most half full): no node per string, and most misses
  // end at the slot's hash without touching the string.
  struct Slot {
    StrId id_plus_one = 0;  // 0: empty
    std::uint32_t hash_high = 0;
  };
  // `s` (hashed `hash`) stays where it is when it belongs to `owner`, whose blocks this table
  // takes over; otherwise a new one is copied into this table's blocks.
  StrId Insert(std::string_view s, std::uint64_t hash, const StringTable* owner) {
    if ((views_.size() + 1) * 2 > slots_.size()) Grow();
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& slot = slots_[i];
      if (slot.id_plus_one == 0) {
        const auto id = static_cast<StrId>(views_.size());
        views_.push_back(owner != nullptr ? s : Store(s));
        hashes_.push_back(hash);
        slot = {id + 1, static_cast<std::uint32_t>(hash >> 32)};
        return id;
      }
      if (slot.hash_high == static_cast<std::uint32_t>(hash >> 32) && views_[slot.id_plus_one - 1] == s) {
        return slot.id_plus_one - 1;
      }
    }
  }
  // Absorb of a larger table, with the same ids: `from`'s vectors and slots are kept and renumbered
  // in one pass each, and only this table's strings are looked up (in `from`) and placed. A 131k-
  // rank srun log's ~0.3 M strings joined the incident's kernel logs' few by as many probes into
  // a fresh table of 1 M slots, ~60 ms of the load's serial part (docs/benchmarks.md).
  std::vector<StrId> Adopt(StringTable&& from) {
    constexpr StrId kUnset = ~StrId{0};
    const std::size_t n = views_.size(), m = from.views_.size();
    std::vector<StrId> remap(m, kUnset);  // from's id -> the id it gets
    std::vector<StrId> missing;           // this table's ids whose strings `from` lacks
    for (StrId id = 0; id < n; ++id) {
      const StrId j = from.Find(views_[id], hashes_[id]);
      if (j != kUnset) {
        remap[j] = id;
      } else {
        missing.push_back(id);
      }
    }
    StrId next = static_cast<StrId>(n);  // from's new strings follow this table's, in from's order
    for (StrId& id : remap) {
      if (id == kUnset) id = next++;
    }
    // Each new string moves to a higher index (n is at least the strings of `from` found here):
    // placed from the back, none is overwritten before it is read.
    from.views_.resize(next);
    from.hashes_.resize(next);
    for (std::size_t j = m; j-- > 0;) {
      if (remap[j] >= n) {
        from.views_[remap[j]] = from.views_[j];
        from.hashes_[remap[j]] = from.hashes_[j];
      }
    }
    std::copy(views_.begin(), views_.end(), from.views_.begin());
    std::copy(hashes_.begin(), hashes_.end(), from.hashes_.begin());
    for (Slot& slot : from.slots_) {
      if (slot.id_plus_one != 0) slot.id_plus_one = remap[slot.id_plus_one - 1] + 1;
    }
    views_ = std::move(from.views_);
    hashes_ = std::move(from.hashes_);
    slots_ = std::move(from.slots_);
    if ((views_.size() + 1) * 2 > slots_.size()) {
      Grow();  // every id placed from hashes_
    } else {
      for (const StrId id : missing) Place(id, &slots_);
    }
    for (auto& block : from.blocks_) blocks_.push_back(std::move(block));
    from = StringTable();
    return remap;
  }
  // The id of `s` (hashed `hash`), or ~0 when it is not interned.
  StrId Find(std::string_view s, std::uint64_t hash) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.id_plus_one == 0) return ~StrId{0};
      if (slot.hash_high == static_cast<std::uint32_t>(hash >> 32) &&
          views_[slot.id_plus_one - 1] == s) {
        return slot.id_plus_one - 1;
      }
    }
  }
  // A copy of `s` in the current block (a new one when it does not fit): blocks grow from
  // 512 bytes to 64 KiB, so the table of a file with a few strings stays small.
  std::string_view Store(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > left_) {
      block_size_ = std::min<std::size_t>(kMaxBlock, block_size_ == 0 ? kFirstBlock : 2 * block_size_);
      const std::size_t size = std::max(block_size_, s.size());
      blocks_.push_back(std::make_unique<char[]>(size));
      free_ = blocks_.back().get();
      left_ = size;
    }
    std::memcpy(free_, s.data(), s.size());
    const std::string_view stored(free_, s.size());
    free_ += s.size();
    left_ -= s.size();
    return stored;
  }
  // Twice the slots (more if need be, so that the ids stored and one more fill at most half).
  void Grow() {
    std::size_t size = slots_.empty() ? 64 : slots_.size() * 2;
    while ((views_.size() + 1) * 2 > size) size *= 2;
    std::vector<Slot> slots(size);
    for (StrId id = 0; id < hashes_.size(); ++id) Place(id, &slots);
    slots_ = std::move(slots);
  }
  // `id` in the first free slot from its hash's (the string is known not to be there).
  void Place(StrId id, std::vector<Slot>* slots) const {
    const std::size_t mask = slots->size() - 1;
    std::size_t i = hashes_[id] & mask;
    while ((*slots)[i].id_plus_one != 0) i = (i + 1) & mask;
    (*slots)[i] = {id + 1, static_cast<std::uint32_t>(hashes_[id] >> 32)};
  }

  static constexpr std::size_t kFirstBlock = 512;
  static constexpr std::size_t kMaxBlock = 64 << 10;
  std::vector<std::string_view> views_;  // per id
  std::vector<std::uint64_t> hashes_;    // per id, to grow the table (and for Absorb)
  std::vector<Slot> slots_;
  std::vector<std::unique_ptr<char[]>> blocks_;  // the text of views_
  char* free_ = nullptr;  // the current block's unused bytes
  std::size_t left_ = 0;
  std::size_t block_size_ = 0;
  bool keep_shown_ = true;
};

}  // namespace denpex::engine
