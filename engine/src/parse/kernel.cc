// Kernel log lines (../shared/reference/log-formats.md §6, §7): the NVIDIA driver's Xid
// reports and the OOM killer, in every wording listed there.
#include "parse/families.h"
#include "parse/scan.h"
#include "parse/triggers.h"

namespace denpex::engine {
namespace {

bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `N (comm)` as the OOM killer prints a victim; comm may hold spaces (`GC Thread#9`).
bool PidAndComm(Scanner* s, OomKill* out) {
  if (!s->Digits(1, 12, &out->pid) || !s->Lit(" (")) return false;
  return true;
}

bool OomKiller(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (s.Lit("Out of memory: ") || s.Lit("Memory cgroup out of memory: ")) {
    if (!(s.Lit("Killed process ") || s.Lit("Kill process "))) return false;
  } else if (!s.Lit("Killed process ")) {
    if (msg.starts_with("oom-kill:")) {  // oom-kill:constraint=...,task=python3,pid=N,uid=N
      OomKill k;
      IntAfter(msg, ",pid=", &k.pid);
      k.comm = strings->Intern(TokenAfter(msg, ",task=", ","));
      out->family = Family::kHostOom;
      out->kind = Kind::kOomInvoked;
      out->detail = k;
      return true;
    }
    const std::size_t at = msg.find(" invoked oom-killer: ");
    if (at == std::string_view::npos) return false;
    out->family = Family::kHostOom;
    out->kind = Kind::kOomInvoked;
    out->detail = OomKill{.comm = strings->Intern(msg.substr(0, at))};
    return true;
  }
  OomKill k;
  if (!PidAndComm(&s, &k)) return false;
  const std::string_view rest = s.Rest();
  const std::size_t close = rest.find(')');
  k.comm = strings->Intern(rest.substr(0, close));
  out->family = Family::kHostOom;
  out->kind = Kind::kOomKill;
  out->detail = k;
  return true;
}

// `NVRM: Xid (PCI:0000:52:00): 79, pid=1234, name=python3, GPU has fallen off the bus.`
// (pid= from the 450-era drivers, name= from 515; `pid='<unknown>', name=<unknown>`).
bool XidLine(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.Lit("NVRM: Xid (")) return false;
  const std::string_view pci = s.Token(")");
  std::int64_t code;
  if (!s.Lit("): ") || !s.Digits(1, 4, &code)) return false;
  s.Char(',');
  s.SkipSpaces();
  Xid x{.code = static_cast<std::int32_t>(code)};
  char buf[16];
  x.pci = strings->Intern(NormalisePci(pci, buf));
  if (s.Lit("pid=")) {
    if (!s.Int(&x.pid)) x.pid = -1;
    s.Token(",");
    s.Char(',');
    s.SkipSpaces();
  }
  if (s.Lit("name=")) {
    const std::string_view name = s.Token(",");
    if (name != "<unknown>") x.process = strings->Intern(name);
    s.Char(',');
    s.SkipSpaces();
  }
  x.text = InternCapped(strings, s.Rest());
  out->family = Family::kXid;
  out->kind = Kind::kXid;
  out->detail = x;
  return true;
}

// Other NVRM lines that say a GPU is gone: the multi-line `The NVIDIA GPU <pci> ... fallen off
// the bus` notice (its first line; the parser confirms it) and `RmInitAdapter failed`.
bool NvrmLine(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.Lit("NVRM: ")) return false;
  char buf[16];
  if (s.Lit("The NVIDIA GPU ")) {
    out->kind = Kind::kFallenOffBus;
    out->detail = Xid{.code = -1, .pci = strings->Intern(NormalisePci(s.Token(" "), buf)), .text = InternCapped(strings, msg)};
  } else if (s.Lit("GPU ") && msg.find("RmInitAdapter failed") != std::string_view::npos) {
    const std::string_view rest = s.Rest();
    out->kind = Kind::kRmInitFailed;
    out->detail = Xid{.code = -1, .pci = strings->Intern(NormalisePci(rest.substr(0, rest.find(": ")), buf)),
                      .text = InternCapped(strings, msg)};
  } else {
    return false;
  }
  out->family = Family::kXid;
  return true;
}

}  // namespace

std::string_view NormalisePci(std::string_view id, char (&buf)[16]) {
  if (id.starts_with("PCI:")) id.remove_prefix(4);
  if (id.starts_with("GPU")) id.remove_prefix(3);
  // domain:bus:device[.function]; the domain is 4 or 8 hex digits.
  const std::size_t c1 = id.find(':');
  const std::size_t c2 = c1 == std::string_view::npos ? c1 : id.find(':', c1 + 1);
  if (c2 == std::string_view::npos || c2 - c1 != 3 || c1 < 4 || c1 > 8 || id.size() < c2 + 3) return {};
  const std::string_view domain = id.substr(c1 - 4, 4);
  const std::string_view bus = id.substr(c1 + 1, 2);
  const std::string_view dev = id.substr(c2 + 1, 2);
  std::size_t n = 0;
  for (std::string_view part : {domain, std::string_view(":"), bus, std::string_view(":"), dev}) {
    for (char c : part) {
      if (c != ':' && !IsHex(c)) return {};
      buf[n++] = Lower(c);
    }
  }
  return {buf, n};
}

bool RecogniseKernel(std::string_view msg, StringTable* strings, Recognised* out) {
  if (msg.size() < 8) return false;
  switch (msg[0]) {
    case 'N': return XidLine(msg, strings, out) || NvrmLine(msg, strings, out);
    case 'O': case 'M': case 'K': case 'o': return OomKiller(msg, strings, out);
    default: return msg.find(" invoked oom-killer: ") != std::string_view::npos && OomKiller(msg, strings, out);
  }
}

// Lines RecogniseKernel can match (triggers.h).
namespace {
constexpr Trigger kKernelTriggers[] = {
    {"NVRM: "},        // Xid, "The NVIDIA GPU ... fallen off the bus", RmInitAdapter failed
    {"Killed process "}, {"Kill process "},  // the OOM killer's victim (also after "Out of memory: ")
    {"oom-kill"},      // `oom-kill:constraint=...`, `... invoked oom-killer: ...`
};
}  // namespace
std::span<const Trigger> KernelTriggers() { return kKernelTriggers; }

}  // namespace denpex::engine
