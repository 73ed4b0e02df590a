// Line headers: the stamp, severity and source a logging library puts before the message.
// One recogniser per shape, all versions of docs/log_formats.md:
//   c10 (torch ≥ 2.4)     [E0302 09:27:14.123456789 ProcessGroupNCCL.cpp:607] msg
//   c10 (torch ≤ 2.3)     [E ProcessGroupNCCL.cpp:737] msg                     (no time)
//   glog Python / klog    W0801 12:06:43.813000 18684 torch/.../api.py:900] msg
//   Python logging        WARNING:torch.distributed.elastic.multiprocessing.api:msg
//                         [INFO] 2021-09-13 22:17:26,651 run: msg
//                         [2024-03-18 17:38:50,208] torch.distributed.elastic...: [ERROR] msg
//   DeepSpeed             [2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] msg
//   bracketed ISO         [2025-05-12 17:31:38] msg (NCCL WARN), [2020-12-14T09:43:55.500] msg (slurmd)
//   Ray core              [2021-09-14 10:11:21,947 I 2122527 2122927] actor_manager.cc:153: msg
//   kernel                [  518.050606] msg, [Wed Sep 29 07:12:20 2021] msg, [  +0.000316] msg
//   syslog / journal      May 15 23:09:30 host kernel: msg
//   ISO                   2024-04-29T14:55:41,678628+02:00 host kernel: msg
#pragma once

#include <string_view>

#include "denpex/common/time.h"
#include "parse/event.h"
#include "parse/scan.h"

namespace denpex::engine {

enum class HeaderKind : std::uint8_t {
  kNone,       // the whole line is the message
  kC10,        // torch c10 (timed or not)
  kGlog,       // glog-style Python (torch ≥ 2.2) and Kubernetes klog
  kPython,     // Python logging shapes of torch ≤ 2.2
  kDeepSpeed,
  kBracketTime,
  kRay,
  kKernel,     // dmesg stamps (uptime, -T, relative)
  kSyslog,     // syslog / journal: month day time host ident:
};

struct Header {
  HeaderKind kind = HeaderKind::kNone;
  TimeNs time = 0;
  Clock clock = Clock::kNone;
  char severity = 0;         // I W E F, or 0
  std::string_view source;   // ProcessGroupNCCL.cpp, torch/distributed/..., launch.py, kernel
  std::string_view message;  // the rest
  std::string_view host;     // syslog's host field (`May 15 23:09:30 <host> kernel: `): the line's node
};

// Always fills `out` (kind kNone and message = line when no header is recognised). Returns
// kMalformed when a header's shape is clear but a field does not parse.
Match ParseHeader(std::string_view line, Header* out);

}  // namespace denpex::engine
