// Exceptions and NCCL debug lines (docs/log_formats.md): what a
// rank's own process printed about the error that ended it.
#include <algorithm>

#include "denpex/common/json_reader.h"
#include "parse/families.h"
#include "parse/lines.h"
#include "parse/scan.h"

namespace denpex::engine {
namespace {

// `... (GPU 0; 79.15 GiB total capacity ...` (≤ 2.0) and `... GPU 0 has a total capacity ...`.
std::int32_t OomGpu(std::string_view msg) {
  std::int64_t gpu = -1;
  if (!IntAfter(msg, "(GPU ", &gpu)) IntAfter(msg, ". GPU ", &gpu);
  return gpu >= 0 && gpu < 1024 ? static_cast<std::int32_t>(gpu) : -1;
}

Kind GlooKind(std::string_view msg) {
  if (Has(msg, "Connection closed by peer")) return Kind::kGlooConnectionClosed;
  if (Has(msg, "Read error") || Has(msg, "Connection reset by peer")) return Kind::kGlooReadError;
  if (Has(msg, "Timed out waiting")) return Kind::kGlooTimeout;
  if (Has(msg, "connectFullMesh")) return Kind::kGlooConnectFailed;
  return Kind::kGlooIoException;
}

// A checkpoint that cannot be loaded (docs/log_formats.md §10-§11): DeepSpeed's DP world-size
// check, a missing ZeRO / DCP shard, a state dict whose shapes differ from the model's.
bool IsCheckpointLoad(std::string_view type, std::string_view msg) {
  if (Has(msg, "The checkpoint being loaded used a DP world size of")) return true;
  if (Has(msg, "Error(s) in loading state_dict") || Has(msg, "size mismatch for ") ||
      Has(msg, "Size mismatch between saved")) {
    return true;
  }
  return type.ends_with("FileNotFoundError") &&
         (Has(msg, "_optim_states.pt") || Has(msg, "_model_states.pt") || Has(msg, ".distcp"));
}

// FSDP's `_p_assert` prints its message alone before the stack (then raises AssertionError with
// it): `Non-root FSDP instance's `_is_root` should not have been set yet ...`, `Expects storage to be allocated`.
bool IsFsdpAssertMessage(std::string_view msg) {
  return msg.starts_with("Non-root FSDP instance") || msg.starts_with("Expects storage to be allocated");
}

// DeepSpeed's and FSDP's own errors; false for anything else.
bool ClassifyFramework(std::string_view type, std::string_view msg, Recognised* out) {
  auto set = [&](Family f, Kind k) {
    out->family = f;
    out->kind = k;
    return true;
  };
  const bool deepspeed = type.starts_with("deepspeed.");
  if (IsCheckpointLoad(type, msg)) {
    if (deepspeed || Has(msg, "zero_pp_rank_") || Has(msg, "mp_rank_")) return set(Family::kDeepSpeed, Kind::kCheckpointLoad);
    if (Has(msg, "FullyShardedDataParallel") || Has(msg, "_fsdp_wrapped_module")) return set(Family::kFsdp, Kind::kCheckpointLoad);
    return set(Family::kPython, Kind::kCheckpointLoad);
  }
  if (Has(type, "PipelineError") || Has(msg, "accessible in pipeline mode") ||
      Has(msg, "incompatible with pipeline parallelism")) {
    return set(Family::kDeepSpeed, Kind::kPipelineError);
  }
  // (ZeRO-2 pads its message's continuation lines with the source's indentation: `reduced.      Gradient`.)
  // (DeepSpeed 0.16's engine refuses `no_sync()` under ZeRO 2/3: `... gradient partitioning logic of ZeRO stage 3`.)
  if ((Has(msg, "has already been reduced.") && Has(msg, "Gradient computed twice")) || Has(msg, "'ds_shape'") ||
      Has(msg, "ds_summary") || Has(type, "ZeRORuntimeException") || Has(msg, "partitioning logic of ZeRO stage")) {
    return set(Family::kDeepSpeed, Kind::kZeroError);
  }
  // The cpu_adam build, and the async_io op NVMe offload needs (OpBuilder.jit_load: "Unable to JIT
  // load the async_io op due to it not being compatible ..."; its build: "... extension 'async_io'").
  if (Has(msg, "'cpu_adam'") || Has(msg, "DeepSpeedCPUAdam") || Has(msg, "'async_io'") || Has(msg, "aio_handle") ||
      Has(msg, "the async_io op")) {
    return set(Family::kDeepSpeed, Kind::kOffloadError);
  }
  if (deepspeed) return set(Family::kDeepSpeed, Kind::kException);
  // FSDP's state check (`expected to be in states [<TrainingState.FORWARD_BACKWARD: 2>] ...`: FSDP1,
  // FSDP2 and fairscale word it alike; torch 1.13-2.0 named the enum `TrainingState_`), FSDP1's
  // write-back of a resized original parameter, FSDP1's device check (`_get_compute_device`), and
  // DTensor (FSDP2's and TP's sharded tensor).
  if (Has(msg, "FlatParameter") || Has(msg, "Must flatten tensors") || Has(msg, "FSDP") ||
      Has(msg, "FullyShardedDataParallel") || Has(msg, "[<TrainingState") ||
      Has(msg, "Cannot writeback when the parameter") || Has(msg, "Inconsistent compute device and `device_id`") ||
      IsFsdpAssertMessage(msg) ||
      Has(msg, "DTensor")) {
    return set(Family::kFsdp, Kind::kFsdpError);
  }
  return false;
}

// NCCL's result names (`ncclRemoteError`, `ncclSystemError`, `ncclInvalidUsage`, ...) head the
// second line of a DistBackendError's message (torch's detail of the result, then `Last
// error:`): NCCL's word on the failed call, never an exception of the application.
bool IsNcclResult(std::string_view type) {
  return type.size() > 4 && type.starts_with("nccl") && type[4] >= 'A' && type[4] <= 'Z';
}

// Family and kind of an exception from its type and message.
void Classify(std::string_view type, std::string_view msg, Recognised* out) {
  auto set = [&](Family f, Kind k) {
    out->family = f;
    out->kind = k;
  };
  if (type.ends_with("OutOfMemoryError") && type.starts_with("ray.")) {
    set(Family::kRay, Kind::kRayOom);
  } else if (type.ends_with("OutOfMemoryError") || msg.starts_with("CUDA out of memory")) {
    set(Family::kCudaOom, Kind::kCudaOom);
  } else if (type.starts_with("ray.")) {
    set(Family::kRay, Kind::kActorDied);
  } else if (Has(msg, "Watchdog caught collective operation timeout") || Has(msg, "watchdog thread terminated")) {
    set(Family::kNcclWatchdog, Kind::kWatchdogTerminated);
  } else if (Has(msg, "NCCL error") || Has(msg, "NCCL Error ") || Has(msg, "NCCL communicator was aborted") ||
             IsNcclResult(type)) {  // `NCCL Error 5: invalid usage`: vLLM's own NCCL binding
    set(Family::kNccl, Kind::kNcclError);
  } else if (Has(msg, "in pin memory thread")) {  // the DataLoader re-raises its pinning thread's error
    set(Family::kCuda, Kind::kPinMemory);
  } else if (Has(msg, "CUDA error: ") || msg.starts_with("CUDA error") || msg.starts_with("cuda runtime error (")) {  // THC's, torch < 1.5
    set(Family::kCuda, Kind::kCudaError);
  } else if (Has(msg, "gloo/") || Has(msg, "Connection closed by peer") || type.starts_with("gloo::") ||
             (msg.starts_with("Timed out waiting ") && (Has(msg, "ms for recv") || Has(msg, "ms for send")))) {  // ProcessGroupGloo's wait
    set(Family::kGloo, GlooKind(msg));
  } else if ((msg.starts_with("back-off ") || msg.starts_with("Back-off ")) && Has(msg, " restarting failed container")) {
    set(Family::kKubernetes, Kind::kCrashLoop);  // the kubelet's waiting message under a tool's `Error: ` label
  } else if (Has(msg, "DataLoader worker (pid") && Has(msg, "killed by signal")) {
    set(Family::kHostOom, Kind::kDataLoaderKilled);
  } else if (Has(msg, "DefaultCPUAllocator: can't allocate memory")) {
    set(Family::kHostOom, Kind::kCpuAllocFailed);
  } else if (ClassifyFramework(type, msg, out)) {
    return;
  } else if (Has(type, "elastic.rendezvous") || Has(type, "Rendezvous")) {
    set(Family::kTorchrun, Kind::kRendezvousError);
  } else {
    set(Family::kPython, Kind::kException);
  }
}

}  // namespace

StrId InternCapped(StringTable* strings, std::string_view text) {
  return strings->Intern(text.substr(0, kMaxKeptText));
}

StrId InternShownCapped(StringTable* strings, std::string_view text) {
  return strings->InternShown(text.substr(0, kMaxKeptText));
}

namespace {

// The message an error keeps (capped). A watchdog's error (its timeout or termination quoted by
// `what():` or an exception) is a peer's failure to every analysis, which never reads its text,
// and is unique per rank: only shown.
StrId ErrorMessage(StringTable* strings, std::string_view text, const Recognised& out) {
  return out.family == Family::kNcclWatchdog ? InternShownCapped(strings, text)
                                             : InternCapped(strings, text);
}

}  // namespace

bool RecogniseException(std::string_view msg, StringTable* strings, Recognised* out) {
  std::string_view type;
  if (msg.empty() || !IsAlpha(msg[0])) return false;
  // A C++ library's error printed with its own name: gloo's exception (`gloo::EnforceNotMet: [enforce
  // fail at ...`), NCCL's result (`ncclInvalidUsage: This usually reflects invalid usage of NCCL
  // library.`, a DistBackendError's second line; the names ending in `Error` are Python-like).
  bool cpp_type = false;
  if (msg[0] == 'g' || msg[0] == 'n') {
    const std::size_t colon = msg.find(": ");
    const std::string_view name = msg.substr(0, colon);
    cpp_type = colon != std::string_view::npos && (name.starts_with("gloo::") || IsNcclResult(name));
    if (cpp_type) type = name;
  }
  // torch's own CUDA, NCCL, FSDP and DTensor messages also stand without their exception type (a
  // logger printing `str(e)`, a title), and so does gloo's enforce message cut of its head (a
  // title: `gloo/transport/ibverbs/pair.cc:462] ...`): the message names its kind.
  if (!cpp_type && !ParsePythonErrorLine(msg, &type) && !msg.starts_with("CUDA error: ") &&
      !msg.starts_with("CUDA out of memory. Tried to allocate ") && !msg.starts_with("expected to be in states [<TrainingState") &&
      !msg.starts_with("NCCL error in: ") && !msg.starts_with("got mixed torch.Tensor and DTensor") &&
      !msg.starts_with("gloo/transport/") && !IsFsdpAssertMessage(msg)) {
    return false;
  }
  std::string_view text = msg.substr(type.size());
  if (text.starts_with(":")) text.remove_prefix(1);
  while (text.starts_with(" ")) text.remove_prefix(1);
  Classify(type, text, out);
  out->detail = PythonError{.type = strings->Intern(type),
                            .message = ErrorMessage(strings, text, *out),
                            .gpu = out->kind == Kind::kCudaOom ? OomGpu(text) : -1};
  return true;
}

bool RecogniseWhat(std::string_view msg, StringTable* strings, Recognised* out) {
  Scanner s(msg);
  s.SkipSpaces();
  if (!s.Lit("what():")) return false;
  s.SkipSpaces();
  const std::string_view text = s.Rest();
  Classify("what()", text, out);
  out->detail =
      PythonError{.type = strings->Intern("what()"), .message = ErrorMessage(strings, text, *out)};
  return true;
}

bool RecogniseQuotedError(std::string_view msg, StringTable* strings, Recognised* out) {
  Classify({}, msg, out);
  if (out->family == Family::kPython || out->family == Family::kOther) return false;
  out->detail = PythonError{.message = ErrorMessage(strings, msg, *out)};
  return true;
}

namespace {
// A NCCL WARN's text, read for what it reports (an IB completion, a socket, a duplicate GPU, a CUDA failure).
bool NcclWarnText(std::string_view text, std::int64_t pid, std::int64_t dev, StringTable* strings, Recognised* out);
}  // namespace

bool RecogniseNccl(std::string_view msg, StringTable* strings, Recognised* out) {
  // The IB transport's completion error without NCCL's head (a title; a net plugin's own line:
  // `NET/IBP:Got completion from peer <ip><port> with status=12 opcode=... (Send)`).
  if (msg.starts_with("NET/") && Has(msg, "Got completion from peer")) return NcclWarnText(msg, 0, -1, strings, out);
  Scanner s(msg);
  // `host:pid:tid [dev] `; NCCL_DEBUG_FILE and custom prefixes also leave `host [dev] ` or `[dev] `.
  std::string_view host;
  std::int64_t pid = 0, tid, dev = -1;
  if (!s.Char('[')) {
    host = s.Token(": [");
    if (host.empty()) return false;
    if (s.Char(':') && (!s.Digits(1, 12, &pid) || !s.Char(':') || !s.Digits(1, 12, &tid))) return false;
    if (!s.Lit(" [")) return false;
  }
  s.Digits(1, 4, &dev);
  // In the short form `[dev] ` the bracket holds the device alone (`[0m ip-...`: a colour code whose
  // ESC byte a paste lost, the `host:pid:tid [dev] ` head after it).
  if (!s.Token("]").empty() && host.empty()) return false;
  if (!s.Lit("] ")) return false;
  if (pid == 0 && !Has(s.Rest().substr(0, 48), "NCCL WARN ")) return false;  // a short form: its WARN lines only
  out->host = host;
  if (s.Lit("NCCL INFO ")) {
    if (s.Rest().starts_with("NET/Socket : Using ")) {  // the socket transport's interfaces (§4b)
      out->family = Family::kNccl;
      out->kind = Kind::kSocketInterface;
      out->error = false;
      out->detail = Note{strings->Intern(msg)};  // the whole line: its host is a name peers print
      return true;
    }
    CommInitFields f;
    if (!PastCommCall(s.Rest()).starts_with("comm 0x") || ParseCommInit(msg, &f) != Match::kYes)
      return false;
    out->family = Family::kNccl;
    out->kind = Kind::kCommInit;
    out->error = false;
    char buf[16];
    out->detail = CommInit{strings->Intern(f.comm_id), f.comm_rank, f.nranks, f.cuda_dev,
                           strings->Intern(NcclBusIdToPci(f.bus_id, buf)), pid};
    return true;
  }
  if (!s.SkipPast("NCCL WARN ")) return false;
  return NcclWarnText(s.Rest(), pid, dev, strings, out);
}

namespace {
bool NcclWarnText(std::string_view text, std::int64_t pid, std::int64_t dev, StringTable* strings, Recognised* out) {
  NcclWarn w{.pid = pid, .cuda_dev = static_cast<std::int32_t>(dev), .text = InternCapped(strings, text)};
  out->family = Family::kNccl;
  out->kind = Kind::kNcclWarn;
  if (Has(text, "Got completion")) {
    out->kind = Kind::kIbCompletionError;
    std::int64_t status = -1;
    // `status=12`, `with error 12,` (NCCL <= 2.18), or the IB plugin's later `status=IBV_WC_RETRY_EXC_ERR(12)`.
    if (!IntAfter(text, "status=", &status) && !IntAfter(TokenAfter(text, "status=", " "), "(", &status)) {
      IntAfter(text, "with error ", &status);
    }
    w.status = static_cast<std::int32_t>(status);
    w.peer = strings->Intern(TokenAfter(text, "from peer ", " "));
  } else if (Has(text, "Connection closed by remote peer") || Has(text, "Connection reset by peer") ||
             Has(text, "socket") || Has(text, "Connect to ")) {
    out->kind = Kind::kSocketError;
    std::string_view peer = TokenAfter(text, "remote peer ", " ");
    if (peer.empty()) peer = TokenAfter(text, " from ", " ");
    if (peer.empty()) peer = TokenAfter(text, "Connect to ", " ");
    if (peer.empty()) peer = TokenAfter(text, " send to ", " ");  // 2.2x `socketProgressOpt: Call to send to <peer> failed`
    w.peer = strings->Intern(peer);
  } else if (Has(text, "Duplicate GPU detected")) {
    out->kind = Kind::kDuplicateGpu;
  } else if (Has(text, "Cuda failure") && Has(text, "out of memory")) {
    out->family = Family::kCudaOom;
    out->kind = Kind::kCudaOom;
  } else if (Has(text, "Cuda failure")) {
    out->family = Family::kCuda;
    out->kind = Kind::kCudaError;
  }
  out->detail = w;
  return true;
}
}  // namespace

bool RecogniseFatalSignal(std::string_view msg, StringTable* strings, Recognised* out) {
  if (!msg.starts_with("Fatal Python error: ")) return false;
  out->family = Family::kPython;
  out->kind = Kind::kFatalSignal;
  out->detail = PythonError{.type = strings->Intern("Fatal Python error"), .message = InternCapped(strings, msg.substr(20))};
  return true;
}

bool RecogniseDeviceAssert(std::string_view msg, StringTable* strings, Recognised* out) {
  if (!Has(msg, "Assertion `")) return false;
  // A kernel's assert names its block and thread; a terminal may wrap its closing ` failed.` onto
  // the next line, leaving the assertion's closing backtick at the end.
  std::string_view trimmed = msg;
  while (trimmed.ends_with(' ')) trimmed.remove_suffix(1);
  const bool wrapped = trimmed.ends_with('`') && Has(msg, "block: [") && Has(msg, "thread: [");
  if (!msg.ends_with(" failed.") && !wrapped) return false;
  out->family = Family::kCuda;
  out->kind = Kind::kDeviceAssert;
  out->detail = Note{InternCapped(strings, msg)};
  return true;
}


// ---- torchrun's error file ---------------------------------------------------------------

namespace {

// `"timestamp": "1764667216"`: unix seconds as a string; 0 when it is not one.
std::int64_t Seconds(JsonReader* json) {
  if (json->Peek() != '"') return json->Skip(), 0;
  const std::optional<std::string> t = json->String();
  if (!t || t->empty() || t->size() > 12 || !std::all_of(t->begin(), t->end(), [](char c) { return IsDigit(c); })) return 0;
  return std::stoll(*t);
}

// One object of the file: `message` (a string, or the object holding it), `extraInfo`'s
// `timestamp` (or a `timestamp` of its own); other keys, and objects deeper than the format's
// two levels, are skipped.
bool ReadErrorObject(JsonReader* json, ErrorRecord* out, bool* found, int depth = 0) {
  if (!json->BeginObject()) return false;
  while (const std::optional<std::string> key = json->NextKey()) {
    const bool nested = json->Peek() == '{';
    if (*key == "message" && !nested) {
      std::optional<std::string> m = json->String();
      if (!m) return false;
      out->message = std::move(*m);
      *found = true;
    } else if ((*key == "message" || *key == "extraInfo") && nested && depth < 2) {
      if (!ReadErrorObject(json, out, found, depth + 1)) return false;
    } else if (*key == "timestamp") {
      out->timestamp = Seconds(json);
    } else if (!json->Skip()) {
      return false;
    }
  }
  return json->ok();
}

}  // namespace

bool ReadErrorFile(std::string_view line, ErrorRecord* out) {
  if (!line.starts_with("{\"message\": ")) return false;
  JsonReader json(line);
  *out = {};
  bool found = false;
  return ReadErrorObject(&json, out, &found) && found;
}

}  // namespace denpex::engine
