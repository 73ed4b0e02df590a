// Kernel log lines (docs/log_formats.md): the NVIDIA driver's Xid
// reports and the OOM killer, in every wording listed there.
#include "parse/families.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

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
// the bus` notice (its first line; the parser confirms it), the older one-line `GPU at <pci> has
// fallen off the bus.`, and `RmInitAdapter failed`.
bool NvrmLine(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.Lit("NVRM: ")) return false;
  char buf[16];
  if (s.Lit("The NVIDIA GPU ") || (s.Lit("GPU at ") && msg.ends_with(" has fallen off the bus."))) {
    // (drivers before ~2015 said it on one line: `NVRM: GPU at 0000:01:00.0 has fallen off the bus.`)
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
      if (c != ':' && !IsHexDigit(c)) return {};
      buf[n++] = Lower(c);
    }
  }
  return {buf, n};
}

std::string_view NcclBusIdToPci(std::string_view id, char (&buf)[16]) {
  const std::size_t n = id.size();
  if (n < 5 || n > 13) return {};
  for (char c : id) {
    if (!IsHexDigit(c)) return {};
  }
  // domain (the digits before the last five, zero-padded to 4), bus, device; the function
  // digit is dropped as in an Xid's `PCI:dddd:bb:dd`.
  const std::string_view domain = id.substr(0, n - 5), bus = id.substr(n - 5, 2), dev = id.substr(n - 3, 2);
  if (domain.size() > 4) return {};
  std::size_t k = 0;
  for (std::size_t i = domain.size(); i < 4; ++i) buf[k++] = '0';
  for (char c : domain) buf[k++] = Lower(c);
  buf[k++] = ':';
  for (char c : bus) buf[k++] = Lower(c);
  buf[k++] = ':';
  for (char c : dev) buf[k++] = Lower(c);
  return {buf, k};
}

// `|   3  NVIDIA H100 80GB HBM3          On  | 00000000:5D:00.0 Off |   0 |` (the first row of
// a GPU in the default table) and `Unable to determine the device handle for GPU0000:5D:00.0:
// Unknown Error` (the GPU is gone).
bool RecogniseNvidiaSmi(std::string_view msg, StringTable* strings, Recognised* out) {
  char buf[16];
  if (msg.starts_with("Unable to determine the device handle for ")) {
    const std::string_view rest = msg.substr(43);
    const std::string_view pci = NormalisePci(rest.substr(0, rest.find(": ")), buf);
    if (pci.empty()) return false;
    out->family = Family::kXid;
    out->kind = Kind::kGpuUnreachable;
    out->detail = GpuSlot{.index = -1, .pci = strings->Intern(pci)};
    return true;
  }
  Scanner s(msg);
  std::int64_t index;
  if (!s.Lit("|")) return false;
  s.SkipSpaces();
  if (!s.Digits(1, 3, &index) || !s.Lit("  ")) return false;
  const std::string_view rest = s.Rest();
  const std::size_t bar = rest.find("| ");
  if (bar == std::string_view::npos) return false;
  const std::string_view after = rest.substr(bar + 2);
  const std::string_view pci = NormalisePci(after.substr(0, after.find(' ')), buf);
  if (pci.empty()) return false;
  out->family = Family::kXid;
  out->kind = Kind::kGpuSlot;
  out->error = false;
  out->detail = GpuSlot{.index = static_cast<std::int32_t>(index), .pci = strings->Intern(pci)};
  return true;
}

// kernel/hung_task.c: `INFO: task python3:12345 blocked for more than 120 seconds.` (a task in D
// state: a hung mount, a stuck driver call). Not an error of its own: what it explains is read by
// the analysis (analyze/store.h).
bool HungTask(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  if (!s.Lit("INFO: task ")) return false;
  const std::string_view rest = s.Rest();
  const std::size_t blocked = rest.find(" blocked for more than ");
  const std::size_t colon = rest.substr(0, blocked).rfind(':');
  if (blocked == std::string_view::npos || colon == std::string_view::npos) return false;
  OomKill k;
  Scanner pid(rest.substr(colon + 1, blocked - colon - 1));
  if (!pid.Digits(1, 12, &k.pid)) return false;
  k.comm = strings->Intern(rest.substr(0, colon));
  out->family = Family::kOther;
  out->kind = Kind::kHungTask;
  out->error = false;
  out->detail = k;
  return true;
}

bool RecogniseKernel(std::string_view msg, StringTable* strings, Recognised* out) {
  if (msg.size() < 8) return false;
  switch (msg[0]) {
    case 'I': return HungTask(msg, strings, out);
    case 'N': return XidLine(msg, strings, out) || NvrmLine(msg, strings, out);
    case 'O': case 'M': case 'K': case 'o': return OomKiller(msg, strings, out);
    case 'm':
      // rsyslog's repeated-message reduction: `message repeated 7 times: [ NVRM: Xid (PCI:...): 13, ...]`
      // (the repeats of one Xid line are the same burst: one more line of it).
      if (msg.starts_with("message repeated ")) {
        const std::size_t at = msg.find("NVRM: Xid (");
        if (at == std::string_view::npos) return false;
        std::string_view inner = msg.substr(at);
        if (inner.ends_with(']')) inner.remove_suffix(1);
        return XidLine(inner, strings, out);
      }
      return msg.find(" invoked oom-killer: ") != std::string_view::npos && OomKiller(msg, strings, out);
    default: return msg.find(" invoked oom-killer: ") != std::string_view::npos && OomKiller(msg, strings, out);
  }
}


}  // namespace denpex::engine
