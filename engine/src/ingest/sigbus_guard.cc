#include "ingest/sigbus_guard.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <limits>

namespace denpex::engine {
namespace {

constexpr std::uintptr_t kNoFault = std::numeric_limits<std::uintptr_t>::max();

// One guarded mapping. `taken` is claimed with a CAS by the FileText that owns the slot; only
// that owner writes the rest, as a seqlock (`seq` odd while it writes), so the handler reads a
// consistent [begin, end) or skips the slot.
struct Slot {
  std::atomic<bool> taken{false};
  std::atomic<std::uint64_t> seq{0};
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};  // begin == end: guards nothing
  std::atomic<std::uintptr_t> first_fault{kNoFault};  // the lowest faulting page's address
};
static_assert(std::atomic<std::uintptr_t>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the SIGBUS handler may use lock-free atomics only");

Slot g_slots[kGuardSlots];
std::atomic<int> g_used{0};  // slots [0, g_used) have been taken at some time: the handler's scan
struct sigaction g_previous;  // the handler ours replaced
std::uintptr_t g_page = 4096;

// The owner's write of its slot's range.
void Publish(Slot* s, std::uintptr_t begin, std::uintptr_t end) {
  const std::uint64_t seq = s->seq.load();
  s->seq.store(seq + 1);
  s->begin.store(begin);
  s->end.store(end);
  s->seq.store(seq + 2);
}

// The slot whose guarded range holds `addr`, or nullptr (async-signal-safe).
Slot* Owner(std::uintptr_t addr) {
  const int used = g_used.load();
  for (int i = 0; i < used; ++i) {
    Slot& s = g_slots[i];
    const std::uint64_t seq = s.seq.load();
    if (seq % 2 != 0) continue;
    const std::uintptr_t begin = s.begin.load();
    const std::uintptr_t end = s.end.load();
    if (s.seq.load() != seq) continue;
    if (addr >= begin && addr < end) return &s;
  }
  return nullptr;
}

// Anonymous zero pages over the faulting page and the rest of the slot's mapping (every page
// after one wholly past the file's end is past it too), so the read that faulted goes on.
bool ZeroFill(Slot* s, std::uintptr_t addr) {
  const std::uintptr_t page = addr & ~(g_page - 1);
  const std::uintptr_t end = (s->end.load() + g_page - 1) & ~(g_page - 1);
  void* p = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) return false;
  std::uintptr_t seen = s->first_fault.load();
  while (page < seen && !s->first_fault.compare_exchange_weak(seen, page)) {
  }
  return true;
}

// Not ours: what would have happened without this handler.
void Chain(int sig, siginfo_t* info, void* context) {
  const struct sigaction& prev = g_previous;
  if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
    if ((prev.sa_flags & SA_SIGINFO) != 0) {
      prev.sa_sigaction(sig, info, context);
    } else {
      prev.sa_handler(sig);
    }
    return;
  }
  // The default action (a fault cannot be ignored): dies of SIGBUS once this handler returns,
  // SIGBUS being blocked until then.
  struct sigaction dfl = {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  bool handled = false;
  if (info != nullptr && info->si_code == BUS_ADRERR) {
    const auto addr = reinterpret_cast<std::uintptr_t>(info->si_addr);
    if (Slot* s = Owner(addr)) handled = ZeroFill(s, addr);
  }
  errno = saved_errno;
  if (!handled) Chain(sig, info, context);
}

bool Install() {
  static const bool installed = [] {
    g_page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    struct sigaction sa = {};
    sa.sa_sigaction = OnSigbus;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    return ::sigaction(SIGBUS, &sa, &g_previous) == 0;
  }();
  return installed;
}

}  // namespace

int GuardMapping(const void* begin, std::size_t length) {
  if (!Install()) return -1;
  for (int i = 0; i < kGuardSlots; ++i) {
    Slot& s = g_slots[i];
    bool free = false;
    if (!s.taken.compare_exchange_strong(free, true)) continue;
    s.first_fault.store(kNoFault);
    const auto b = reinterpret_cast<std::uintptr_t>(begin);
    Publish(&s, b, b + length);
    int used = g_used.load();
    while (used < i + 1 && !g_used.compare_exchange_weak(used, i + 1)) {
    }
    return i;
  }
  return -1;
}

void UnguardMapping(int slot) {
  if (slot < 0) return;
  Slot& s = g_slots[slot];
  Publish(&s, 0, 0);
  s.taken.store(false);
}

std::size_t FirstFaultOffset(int slot) {
  if (slot < 0) return std::numeric_limits<std::size_t>::max();
  const Slot& s = g_slots[slot];
  const std::uintptr_t fault = s.first_fault.load();
  if (fault == kNoFault) return std::numeric_limits<std::size_t>::max();
  return static_cast<std::size_t>(fault - s.begin.load());
}

}  // namespace denpex::engine
