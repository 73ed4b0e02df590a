// What the training application itself prints when it fails (docs/log_formats.md §7, §8): an
// uncaught Python exception's traceback (Megatron-style trainer code), and Python faulthandler's
// dump after a segmentation fault. The texts are tables of lines with placeholders:
//   {py} the site-packages directory, {rank} global rank, {dev} local GPU, {host} hostname,
//   {tid} a thread id. Formatted once per incident: not a hot path.
#include "app_text.h"
#include "formatter.h"
#include "model/rng.h"

namespace denpex::sim {

namespace {

constexpr std::string_view kMegatron = "/workspace/megatron-lm";

// Frames shared by every traceback: pretrain -> train -> train_step -> the pipeline schedule.
constexpr std::string_view kTrainFrames[] = {
    "Traceback (most recent call last):",
    "  File \"{mg}/pretrain_gpt.py\", line 278, in <module>",
    "    pretrain(",
    "  File \"{mg}/megatron/training/training.py\", line 386, in pretrain",
    "    iteration, num_floating_point_operations_so_far = train(",
    "  File \"{mg}/megatron/training/training.py\", line 1402, in train",
    "    train_step(forward_step_func,",
    "  File \"{mg}/megatron/training/training.py\", line 754, in train_step",
    "    losses_reduced = forward_backward_func(",
    "  File \"{mg}/megatron/core/pipeline_parallel/schedules.py\", line 1380, in "
    "forward_backward_pipelining_without_interleaving",
};

// Variant 0: a data-loader worker hit an out-of-range index in the dataset's index.
constexpr std::string_view kDataLoaderTail[] = {
    "    output_tensor, num_tokens = forward_step(",
    "  File \"{mg}/megatron/core/pipeline_parallel/schedules.py\", line 264, in forward_step",
    "    output_tensor, loss_func = forward_step_func(data_iterator, model)",
    "  File \"{mg}/pretrain_gpt.py\", line 203, in forward_step",
    "    tokens, labels, loss_mask, attention_mask, position_ids = get_batch(",
    "  File \"{mg}/pretrain_gpt.py\", line 121, in get_batch",
    "    batch = get_batch_on_this_tp_rank(data_iterator)",
    "  File \"{mg}/megatron/training/utils.py\", line 297, in get_batch_on_this_tp_rank",
    "    data = next(data_iterator)",
    "  File \"{py}/torch/utils/data/dataloader.py\", line 630, in __next__",
    "    data = self._next_data()",
    "  File \"{py}/torch/utils/data/dataloader.py\", line 1344, in _next_data",
    "    return self._process_data(data)",
    "  File \"{py}/torch/utils/data/dataloader.py\", line 1370, in _process_data",
    "    data.reraise()",
    "  File \"{py}/torch/_utils.py\", line 706, in reraise",
    "    raise exception",
    "IndexError: Caught IndexError in DataLoader worker process 1.",
    "Original Traceback (most recent call last):",
    "  File \"{py}/torch/utils/data/_utils/worker.py\", line 309, in _worker_loop",
    "    data = fetcher.fetch(index)  # type: ignore[possibly-undefined]",
    "  File \"{py}/torch/utils/data/_utils/fetch.py\", line 52, in fetch",
    "    data = [self.dataset[idx] for idx in possibly_batched_index]",
    "  File \"{mg}/megatron/core/datasets/gpt_dataset.py\", line 190, in __getitem__",
    "    text, _ = self._query_document_sample_shuffle_indices(idx)",
    "  File \"{mg}/megatron/core/datasets/gpt_dataset.py\", line 289, in "
    "_query_document_sample_shuffle_indices",
    "    document_id = self.document_index[doc_index_beg]",
    "IndexError: index 48212336 is out of bounds for axis 0 with size 48212336",
};

// Variant 1: Megatron's NaN check on the local gradient norm before the DP all-reduce.
constexpr std::string_view kNanGradTail[] = {
    "    backward_step(input_tensor, output_tensor, output_tensor_grad, model_type, config)",
    "  File \"{mg}/megatron/core/pipeline_parallel/schedules.py\", line 366, in backward_step",
    "    config.finalize_model_grads_func([model])",
    "  File \"{mg}/megatron/core/distributed/finalize_model_grads.py\", line 200, in "
    "finalize_model_grads",
    "    model_chunk.finish_grad_sync()",
    "  File \"{mg}/megatron/core/distributed/distributed_data_parallel.py\", line 427, in "
    "finish_grad_sync",
    "    bucket_group.finish_grad_sync()",
    "  File \"{mg}/megatron/core/distributed/param_and_grad_buffer.py\", line 311, in "
    "finish_grad_sync",
    "    self.start_grad_sync()",
    "  File \"{mg}/megatron/core/distributed/param_and_grad_buffer.py\", line 245, in "
    "start_grad_sync",
    "    self.check_for_nan_in_grad()",
    "  File \"{mg}/megatron/core/distributed/param_and_grad_buffer.py\", line 159, in "
    "check_for_nan_in_grad",
    "    assert not norm_is_nan, (",
    "AssertionError: Rank {rank}: found NaN in local grad norm in backward pass before "
    "data-parallel communication collective. Device: {dev}, node: {host}",
};

// Variant 2: a shape bug in attention, raised by torch.
constexpr std::string_view kShapeTail[] = {
    "    output_tensor, num_tokens = forward_step(",
    "  File \"{mg}/megatron/core/pipeline_parallel/schedules.py\", line 264, in forward_step",
    "    output_tensor, loss_func = forward_step_func(data_iterator, model)",
    "  File \"{py}/torch/nn/modules/module.py\", line 1553, in _wrapped_call_impl",
    "    return self._call_impl(*args, **kwargs)",
    "  File \"{py}/torch/nn/modules/module.py\", line 1562, in _call_impl",
    "    return forward_call(*args, **kwargs)",
    "  File \"{mg}/megatron/core/transformer/attention.py\", line 332, in forward",
    "    query, key, value = self.get_query_key_value_tensors(hidden_states, key_value_states)",
    "  File \"{mg}/megatron/core/transformer/attention.py\", line 611, in "
    "get_query_key_value_tensors",
    "    mixed_qkv = mixed_qkv.view(*new_tensor_shape)",
    "RuntimeError: shape '[4096, 1, 8, 384]' is invalid for input of size 11534336",
};

// Python faulthandler (stderr, no rank prefix: it writes from the signal handler).
constexpr std::string_view kFaulthandler[] = {
    "Fatal Python error: Segmentation fault",
    "",
    "Thread 0x{tid2} (most recent call first):",
    "  File \"/usr/lib/python3.10/threading.py\", line 324 in wait",
    "  File \"/usr/lib/python3.10/threading.py\", line 607 in wait",
    "  File \"{py}/tqdm/_monitor.py\", line 60 in run",
    "  File \"/usr/lib/python3.10/threading.py\", line 1016 in _bootstrap_inner",
    "  File \"/usr/lib/python3.10/threading.py\", line 973 in _bootstrap",
    "",
    "Current thread 0x{tid} (most recent call first):",
    "  File \"{py}/torch/autograd/graph.py\", line 768 in _engine_run_backward",
    "  File \"{py}/torch/autograd/__init__.py\", line 289 in backward",
    "  File \"{py}/torch/_tensor.py\", line 521 in backward",
    "  File \"{mg}/megatron/core/pipeline_parallel/schedules.py\", line 360 in backward_step",
    "  File \"{mg}/megatron/core/pipeline_parallel/schedules.py\", line 1430 in "
    "forward_backward_pipelining_without_interleaving",
    "  File \"{mg}/megatron/training/training.py\", line 754 in train_step",
    "  File \"{mg}/megatron/training/training.py\", line 1402 in train",
    "  File \"{mg}/megatron/training/training.py\", line 386 in pretrain",
    "  File \"{mg}/pretrain_gpt.py\", line 278 in <module>",
    "",
    "Extension modules: numpy.core._multiarray_umath, numpy.core._multiarray_tests, "
    "numpy.linalg._umath_linalg, numpy.fft._pocketfft_internal, numpy.random._common, "
    "numpy.random.bit_generator, numpy.random._bounded_integers, numpy.random._mt19937, "
    "numpy.random.mtrand, torch._C, torch._C._fft, torch._C._linalg, torch._C._nested, "
    "torch._C._nn, torch._C._sparse, torch._C._special, yaml._yaml, "
    "sentencepiece._sentencepiece, regex._regex, PIL._imaging (total: 20)",
};

struct Placeholders {
  std::string_view py, host;
  int rank, dev;
  std::uint64_t tid, tid2;
  // Checkpoint loads: the DP world size that saved, the current one, the missing shard's DP
  // rank and the global step resumed from.
  int saved = 0, world = 0, shard = 0, gstep = 0;
};

// A pthread id as Python prints it: a 0x00007f... stack address.
std::uint64_t ThreadId(std::uint64_t random, std::uint64_t low) {
  return 0x7f0000000000ULL | (random & 0xfffffff000ULL) | low;
}

// "3.10" of "/usr/local/lib/python3.10/dist-packages".
std::string_view PythonVersion(std::string_view py) {
  const std::size_t at = py.find("python");
  if (at == std::string_view::npos) return "3.10";
  const std::string_view rest = py.substr(at + 6);
  return rest.substr(0, rest.find('/'));
}

// Appends `text` with its {name} placeholders replaced.
void Expand(std::string_view text, const Placeholders& p, LineBuilder& out) {
  while (!text.empty()) {
    const std::size_t open = text.find('{');
    out.Str(text.substr(0, open));
    if (open == std::string_view::npos) return;
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) {
      out.Str(text.substr(open));
      return;
    }
    const std::string_view name = text.substr(open + 1, close - open - 1);
    if (name == "py") {
      out.Str(p.py);
    } else if (name == "mg") {
      out.Str(kMegatron);
    } else if (name == "host") {
      out.Str(p.host);
    } else if (name == "rank") {
      out.Int(p.rank);
    } else if (name == "dev") {
      out.Int(p.dev);
    } else if (name == "tid") {
      out.Str("0000").Hex(ThreadId(p.tid, 0x480));
    } else if (name == "tid2") {
      out.Str("0000").Hex(ThreadId(p.tid2, 0x640));
    } else if (name == "saved") {
      out.Int(p.saved);
    } else if (name == "world") {
      out.Int(p.world);
    } else if (name == "shard") {
      out.Int(p.shard);
    } else if (name == "gstep") {
      out.Int(p.gstep);
    } else if (name == "ext") {  // torch's JIT extension root: ~/.cache/torch_extensions/py310_cu121
      out.Str("/root/.cache/torch_extensions/py");
      for (char c : PythonVersion(p.py)) {
        if (c != '.') out.Char(c);
      }
      out.Str("_cu121");
    } else if (name == "pylib") {  // the interpreter's standard library: /usr/lib/python3.10
      out.Str("/usr/lib/python").Str(PythonVersion(p.py));
    } else if (name == "obj") {  // an object's address as repr() prints it
      out.Str("0x").Hex(ThreadId(p.tid2, 0x8a0));
    } else {  // Python's own braces (a dict comprehension): not a placeholder
      out.Str(text.substr(open, 1));
      text.remove_prefix(open + 1);
      continue;
    }
    text.remove_prefix(close + 1);
  }
}

}  // namespace

std::int64_t LineFormatter::Format(const PythonException& r, LineBuilder& out) const {
  Rng rng(job_.seed, StreamId::kRankAddresses, static_cast<std::uint64_t>(r.rank) * 4 + 2);
  Placeholders p{torch_.python_lib,
                 job_.hostnames[job_.NodeOf(r.rank)],
                 r.rank,
                 job_.LocalRank(r.rank),
                 rng.Next(),
                 rng.Next()};
  // before (no prefix), cause, head, tail (the traceback), after (no prefix)
  std::array<std::span<const std::string_view>, 5> parts{};
  if (r.source == AppError::kMegatron) {
    parts[2] = kTrainFrames;
    parts[3] = kDataLoaderTail;
    if (r.variant % 3 == 1) parts[3] = kNanGradTail;
    if (r.variant % 3 == 2) parts[3] = kShapeTail;
  } else {
    const AppTraceback t = AppTracebackOf(r.source, r.variant, torch_);
    parts = {t.before, t.cause, t.head, t.tail, t.after};
    p.world = job_.dp;
    p.saved = job_.dp * 2;
    const int v = r.variant < 0 ? -r.variant : r.variant;
    p.shard = job_.dp > 1 ? 1 + (v / 3) % (job_.dp - 1) : 0;
    p.gstep = 1000 * (1 + (v / 7) % 9);
  }
  std::int64_t cited = -1;
  for (std::size_t part = 0; part < parts.size(); ++part) {
    const bool traceback = part >= 1 && part <= 3;
    for (std::string_view line : parts[part]) {
      if (line.starts_with('!')) {
        line.remove_prefix(1);
        cited = out.lines();
      }
      if (traceback) out.Fill(torch_.traceback_prefix, {r.rank});
      Expand(line, p, out);
      out.EndLine();
    }
  }
  if (r.source == AppError::kSaveOom) {  // torch's OutOfMemoryError in the profile's wording
    out.Fill(torch_.traceback_prefix, {r.rank});
    cited = out.lines();
    OomMessage(out, r.rank, r.variant);
    out.EndLine();
  }
  return cited >= 0 ? cited : out.lines() - 1;
}

void LineFormatter::Format(const SegfaultDump& r, LineBuilder& out) const {
  Rng rng(job_.seed, StreamId::kRankAddresses, static_cast<std::uint64_t>(r.rank) * 4 + 2);
  const Placeholders p{torch_.python_lib,
                       job_.hostnames[job_.NodeOf(r.rank)],
                       r.rank,
                       job_.LocalRank(r.rank),
                       rng.Next(),
                       rng.Next()};
  for (std::string_view line : kFaulthandler) {
    Expand(line, p, out);
    out.EndLine();
  }
}

}  // namespace denpex::sim
