// The DeepSpeed and FSDP errors and the memory-tier tracebacks of issue #8, in the frameworks'
// real wording (docs/log_formats.md §21-§23): ZeRO stage, offload and pipeline-engine errors,
// FSDP's FlatParameter checks, checkpoint-load errors (DP world-size mismatch, a missing ZeRO
// shard, a state-dict size mismatch), the DataLoader's pin-memory thread, and an out of memory
// while gathering a full state dict for a save; and the DeepSpeed configuration errors every rank
// raises in deepspeed.initialize (the async_io op for NVMe offload, ZeRO-2/3 with the pipeline
// engine). The placeholders are formatter_app.cc's, plus
// {ds} DeepSpeed's package dir, {saved}/{world} DP world sizes, {shard} a DP rank, {gstep} the
// global step resumed from. Each table marks its cited line (the exception line the engine reads
// first) with a leading '!'; the '!' is not printed.
#include "app_text.h"

namespace denpex::sim {

namespace {

// The training loop's frames down to the DeepSpeed engine's forward.
constexpr std::string_view kDsTrainFrames[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 388, in main",
    "    loss = engine(batch)",
};

// ZeRO-2/3: a parameter's gradient hook fired twice in one backward (reentrant checkpointing
// over shared weights).
constexpr std::string_view kZeroReduced[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 391, in main",
    "    engine.backward(loss)",
    "  File \"{py}/deepspeed/utils/nvtx.py\", line 15, in wrapped_fn",
    "    ret_val = func(*args, **kwargs)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 2020, in backward",
    "    self.optimizer.backward(loss, retain_graph=retain_graph)",
    "  File \"{py}/deepspeed/runtime/zero/stage_1_and_2.py\", line 2063, in backward",
    "    self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)",
    "  File \"{py}/deepspeed/runtime/fp16/loss_scaler.py\", line 63, in backward",
    "    scaled_loss.backward(retain_graph=retain_graph)",
    "  File \"{py}/torch/_tensor.py\", line 521, in backward",
    "    torch.autograd.backward(",
    "  File \"{py}/torch/autograd/__init__.py\", line 289, in backward",
    "    _engine_run_backward(",
    "  File \"{py}/torch/autograd/graph.py\", line 768, in _engine_run_backward",
    "    return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass",
    "  File \"{py}/deepspeed/runtime/zero/stage_1_and_2.py\", line 903, in grad_handling_hook",
    "    self.process_gradients(param, i)",
    "  File \"{py}/deepspeed/runtime/zero/stage_1_and_2.py\", line 1401, in process_gradients",
    "    self.reduce_ready_partitions_and_remove_grads(param, i)",
    "  File \"{py}/deepspeed/runtime/zero/stage_1_and_2.py\", line 1405, in "
    "reduce_ready_partitions_and_remove_grads",
    "    self.reduce_independent_p_g_buckets_and_remove_grads(param, i)",
    "  File \"{py}/deepspeed/runtime/zero/stage_1_and_2.py\", line 934, in "
    "reduce_independent_p_g_buckets_and_remove_grads",
    "    assert self.params_already_reduced[param_id] == False, \\",
    "!AssertionError: The parameter 577 has already been reduced. Gradient computed twice for "
    "this partition. Multiple gradient reduction is currently not supported",
};

// ZeRO-3: a partitioned parameter was used while its all-gather had not completed.
constexpr std::string_view kZero3Fetch[] = {
    "  File \"{py}/torch/nn/modules/module.py\", line 1562, in _call_impl",
    "    return forward_call(*args, **kwargs)",
    "  File \"{py}/deepspeed/utils/nvtx.py\", line 15, in wrapped_fn",
    "    ret_val = func(*args, **kwargs)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 1846, in forward",
    "    loss = self.module(*inputs, **kwargs)",
    "  File \"{py}/torch/nn/modules/module.py\", line 1603, in _call_impl",
    "    result = forward_call(*args, **kwargs)",
    "  File \"{py}/torch/nn/modules/module.py\", line 1582, in _call_impl",
    "    args_result = hook(self, args)",
    "  File \"{py}/deepspeed/runtime/zero/parameter_offload.py\", line 285, in "
    "_pre_forward_module_hook",
    "    self.pre_sub_module_forward_function(module)",
    "  File \"{py}/deepspeed/runtime/zero/parameter_offload.py\", line 460, in "
    "pre_sub_module_forward_function",
    "    param_coordinator.fetch_sub_module(sub_module, forward=True)",
    "  File \"{py}/deepspeed/runtime/zero/partitioned_param_coordinator.py\", line 350, in "
    "fetch_sub_module",
    "    assert param.ds_status == ZeroParamStatus.AVAILABLE, param.ds_summary()",
    "!AssertionError: {'id': 163, 'status': 'INFLIGHT', 'numel': 16777216, 'ds_numel': "
    "16777216, 'shape': (4096, 4096), 'ds_shape': (4096, 4096), 'requires_grad': True, "
    "'grad_shape': None, 'persist': False, 'active_sub_modules': {371}, 'ds_tensor.shape': "
    "torch.Size([32768])}",
};

// ZeRO-Offload: DeepSpeedCPUAdam JIT-builds the cpu_adam op through torch.utils.cpp_extension.
// One process per build directory (the node's ~/.cache/torch_extensions/...) takes the build
// lock (FileBaton) and runs ninja; the node's other ranks wait for the lock to go, then import
// the .so. Here the node's link step fails (its disk is full): the builder raises `Error building
// extension` (chained from ninja's CalledProcessError), the waiters an ImportError for the .so that
// was never written. Each then reports the half-built optimizer's __del__ at teardown.
constexpr std::string_view kAdamBuildOutput[] = {
    "Using {ext} as PyTorch extensions root...",
    "Creating extension directory {ext}/cpu_adam...",
    "Emitting ninja build file {ext}/cpu_adam/build.ninja...",
    "Building extension module cpu_adam...",
    "Allowing ninja to set a default number of workers... (overridable by setting the environment variable "
    "MAX_JOBS=N)",
    "[1/3] c++ -MMD -MF cpu_adam.o.d -DTORCH_EXTENSION_NAME=cpu_adam -DTORCH_API_INCLUDE_EXTENSION_H "
    "-I{py}/deepspeed/ops/csrc/includes -isystem {py}/torch/include -isystem "
    "{py}/torch/include/torch/csrc/api/include -D_GLIBCXX_USE_CXX11_ABI=0 -fPIC -std=c++17 -O3 -std=c++17 -g "
    "-Wno-reorder -march=native -fopenmp -D__AVX512__ -D__ENABLE_CUDA__ -DBF16_AVAILABLE -c "
    "{py}/deepspeed/ops/csrc/adam/cpu_adam.cpp -o cpu_adam.o ",
    "[2/3] c++ -MMD -MF cpu_adam_impl.o.d -DTORCH_EXTENSION_NAME=cpu_adam -DTORCH_API_INCLUDE_EXTENSION_H "
    "-I{py}/deepspeed/ops/csrc/includes -isystem {py}/torch/include -isystem "
    "{py}/torch/include/torch/csrc/api/include -D_GLIBCXX_USE_CXX11_ABI=0 -fPIC -std=c++17 -O3 -std=c++17 -g "
    "-Wno-reorder -march=native -fopenmp -D__AVX512__ -D__ENABLE_CUDA__ -DBF16_AVAILABLE -c "
    "{py}/deepspeed/ops/csrc/adam/cpu_adam_impl.cpp -o cpu_adam_impl.o ",
    "[3/3] c++ cpu_adam.o cpu_adam_impl.o -shared -lcurand -L{py}/torch/lib -lc10 -ltorch_cpu -ltorch "
    "-ltorch_python -o cpu_adam.so",
    "FAILED: cpu_adam.so ",
    "c++ cpu_adam.o cpu_adam_impl.o -shared -lcurand -L{py}/torch/lib -lc10 -ltorch_cpu -ltorch -ltorch_python "
    "-o cpu_adam.so",
    "/usr/bin/ld: final link failed: No space left on device",
    "collect2: error: ld returned 1 exit status",
    "ninja: build stopped: subcommand failed.",
};

constexpr std::string_view kAdamNinjaFailed[] = {
    "Traceback (most recent call last):",
    "  File \"{py}/torch/utils/cpp_extension.py\", line 2210, in _run_ninja_build",
    "    subprocess.run(",
    "  File \"{pylib}/subprocess.py\", line 526, in run",
    "    raise CalledProcessError(retcode, process.args,",
    "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
    "",
    "The above exception was the direct cause of the following exception:",
    "",
};

constexpr std::string_view kAdamLoadFrames[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 317, in main",
    "    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model,",
    "  File \"{py}/deepspeed/__init__.py\", line 181, in initialize",
    "    engine = DeepSpeedEngine(args=args,",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 307, in __init__",
    "    self._configure_optimizer(optimizer, model_parameters)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 1230, in _configure_optimizer",
    "    basic_optimizer = self._configure_basic_optimizer(model_parameters)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 1307, in _configure_basic_optimizer",
    "    optimizer = DeepSpeedCPUAdam(model_parameters,",
    "  File \"{py}/deepspeed/ops/adam/cpu_adam.py\", line 94, in __init__",
    "    self.ds_opt_adam = CPUAdamBuilder().load()",
    "  File \"{py}/deepspeed/ops/op_builder/builder.py\", line 531, in load",
    "    return self.jit_load(verbose)",
    "  File \"{py}/deepspeed/ops/op_builder/builder.py\", line 578, in jit_load",
    "    op_module = load(name=self.name,",
    "  File \"{py}/torch/utils/cpp_extension.py\", line 1312, in load",
    "    return _jit_compile(",
};

constexpr std::string_view kAdamBuildFailed[] = {
    "  File \"{py}/torch/utils/cpp_extension.py\", line 2106, in _jit_compile",
    "    _write_ninja_file_and_build_library(",
    "  File \"{py}/torch/utils/cpp_extension.py\", line 2206, in _write_ninja_file_and_build_library",
    "    _run_ninja_build(",
    "  File \"{py}/torch/utils/cpp_extension.py\", line 2226, in _run_ninja_build",
    "    raise RuntimeError(message) from e",
    "!RuntimeError: Error building extension 'cpu_adam'",
};

// A waiter: it printed the extensions root, waited on the lock, then loads the missing .so.
constexpr std::string_view kAdamWaitOutput[] = {
    "Using {ext} as PyTorch extensions root...",
    "Loading extension module cpu_adam...",
};

constexpr std::string_view kAdamImportFailed[] = {
    "  File \"{py}/torch/utils/cpp_extension.py\", line 2121, in _jit_compile",
    "    return _import_module_from_library(name, build_directory, is_python_module)",
    "  File \"{py}/torch/utils/cpp_extension.py\", line 2245, in _import_module_from_library",
    "    module = importlib.util.module_from_spec(spec)",
    "  File \"<frozen importlib._bootstrap>\", line 571, in module_from_spec",
    "  File \"<frozen importlib._bootstrap_external>\", line 1176, in create_module",
    "  File \"<frozen importlib._bootstrap>\", line 241, in _call_with_frames_removed",
    "!ImportError: {ext}/cpu_adam/cpu_adam.so: cannot open shared object file: No such file or directory",
};

// Python's unraisable-exception report when the half-built optimizer is collected.
constexpr std::string_view kAdamDel[] = {
    "Exception ignored in: <function DeepSpeedCPUAdam.__del__ at {obj}>",
    "Traceback (most recent call last):",
    "  File \"{py}/deepspeed/ops/adam/cpu_adam.py\", line 102, in __del__",
    "    self.ds_opt_adam.destroy_adam(self.opt_id)",
    "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'",
};

// The pipeline engine: a rank-dependent path (an evaluation hook) called the engine directly.
constexpr std::string_view kPipeForward[] = {
    "  File \"{py}/torch/nn/modules/module.py\", line 1553, in _wrapped_call_impl",
    "    return self._call_impl(*args, **kwargs)",
    "  File \"{py}/torch/nn/modules/module.py\", line 1562, in _call_impl",
    "    return forward_call(*args, **kwargs)",
    "  File \"{py}/deepspeed/runtime/pipe/engine.py\", line 1319, in forward",
    "    raise PipelineError(\"Only train_batch() is accessible in pipeline mode.\")",
    "!deepspeed.runtime.pipe.engine.PipelineError: Only train_batch() is accessible in pipeline "
    "mode.",
};

// DeepSpeed configuration errors every rank raises inside deepspeed.initialize (the same config
// on every rank). ZeRO-Infinity's NVMe optimizer offload loads the async_io op in the optimizer
// swapper; OpBuilder.jit_load refuses an op whose is_compatible() fails (libaio's io_submit not
// found). Current releases append the builder's error_log (None for async_io).
constexpr std::string_view kDsInitFrames[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 317, in main",
    "    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model,",
};

constexpr std::string_view kDsAio[] = {
    "  File \"{py}/deepspeed/__init__.py\", line 181, in initialize",
    "    engine = DeepSpeedEngine(args=args,",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 307, in __init__",
    "    self._configure_optimizer(optimizer, model_parameters)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 1252, in _configure_optimizer",
    "    self.optimizer = self._configure_zero_optimizer(basic_optimizer)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 1570, in _configure_zero_optimizer",
    "    optimizer = DeepSpeedZeroOptimizer_Stage3(",
    "  File \"{py}/deepspeed/runtime/zero/stage3.py\", line 313, in __init__",
    "    self._configure_tensor_swapping(offload_optimizer_config, aio_config)",
    "  File \"{py}/deepspeed/runtime/zero/stage3.py\", line 573, in _configure_tensor_swapping",
    "    self.optimizer_swapper = swapper_type(swap_config=offload_optimizer_config,",
    "  File \"{py}/deepspeed/runtime/swap_tensor/partitioned_optimizer_swapper.py\", line 36, in "
    "__init__",
    "    aio_op = AsyncIOBuilder().load()",
    "  File \"{py}/deepspeed/ops/op_builder/builder.py\", line 531, in load",
    "    return self.jit_load(verbose)",
    "  File \"{py}/deepspeed/ops/op_builder/builder.py\", line 535, in jit_load",
    "    raise RuntimeError(",
    "!RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to "
    "hardware/software issue. None",
};

// The same before OpBuilder had an error_log (DeepSpeed 0.5-0.7: FP16_DeepSpeedZeroOptimizer_Stage3).
constexpr std::string_view kDsAioOld[] = {
    "  File \"{py}/deepspeed/__init__.py\", line 120, in initialize",
    "    engine = DeepSpeedEngine(args=args,",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 239, in __init__",
    "    self._configure_optimizer(optimizer, model_parameters)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 881, in _configure_optimizer",
    "    self.optimizer = self._configure_zero_optimizer(basic_optimizer)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 1115, in _configure_zero_optimizer",
    "    optimizer = FP16_DeepSpeedZeroOptimizer_Stage3(",
    "  File \"{py}/deepspeed/runtime/zero/stage3.py\", line 778, in __init__",
    "    self._configure_tensor_swapping(offload_optimizer_config, aio_config)",
    "  File \"{py}/deepspeed/runtime/zero/stage3.py\", line 931, in _configure_tensor_swapping",
    "    self.optimizer_swapper = swapper_type(",
    "  File \"{py}/deepspeed/runtime/swap_tensor/partitioned_optimizer_swapper.py\", line 45, in "
    "__init__",
    "    aio_op = AsyncIOBuilder().load()",
    "  File \"{py}/deepspeed/ops/op_builder/builder.py\", line 459, in load",
    "    return self.jit_load(verbose)",
    "  File \"{py}/deepspeed/ops/op_builder/builder.py\", line 463, in jit_load",
    "    raise RuntimeError(",
    "!RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to "
    "hardware/software issue.",
};

// A PipelineModule with ZeRO stage 2 or 3 in the config: PipelineEngine.__init__ asserts the
// stage (the message is the same in every release; the check compared with 2, now with
// ZeroStageEnum.gradients over a statement that spans lines).
constexpr std::string_view kDsZeroPipe[] = {
    "  File \"{py}/deepspeed/__init__.py\", line 196, in initialize",
    "    engine = PipelineEngine(args=args,",
    "  File \"{py}/deepspeed/runtime/pipe/engine.py\", line 69, in __init__",
    "    assert self.zero_optimization_stage(",
    "!AssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
};

constexpr std::string_view kDsZeroPipeOld[] = {
    "  File \"{py}/deepspeed/__init__.py\", line 139, in initialize",
    "    engine = PipelineEngine(args=args,",
    "  File \"{py}/deepspeed/runtime/pipe/engine.py\", line 58, in __init__",
    "    assert self.zero_optimization_stage() < 2, \"ZeRO-2 and ZeRO-3 are incompatible with pipeline "
    "parallelism\"",
    "!AssertionError: ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism",
};

// FSDP1 at wrap time: one FlatParameter would mix dtypes (2.1+ wording).
constexpr std::string_view kFsdpDtype[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 251, in <module>",
    "    model = FSDP(model, auto_wrap_policy=wrap_policy, device_id=torch.cuda.current_device())",
    "  File \"{py}/torch/distributed/fsdp/fully_sharded_data_parallel.py\", line 485, in __init__",
    "    _init_param_handle_from_module(",
    "  File \"{py}/torch/distributed/fsdp/_init_utils.py\", line 603, in "
    "_init_param_handle_from_module",
    "    _init_param_handle_from_params(state, managed_params, fully_sharded_module)",
    "  File \"{py}/torch/distributed/fsdp/_init_utils.py\", line 615, in "
    "_init_param_handle_from_params",
    "    handle = FlatParamHandle(",
    "  File \"{py}/torch/distributed/fsdp/_flat_param.py\", line 583, in __init__",
    "    self._init_flat_param_and_metadata(",
    "  File \"{py}/torch/distributed/fsdp/_flat_param.py\", line 633, in "
    "_init_flat_param_and_metadata",
    "    ) = self._validate_tensors_to_flatten(params)",
    "  File \"{py}/torch/distributed/fsdp/_flat_param.py\", line 769, in "
    "_validate_tensors_to_flatten",
    "    raise ValueError(",
    "!ValueError: Must flatten tensors with uniform dtype but got torch.float16 and torch.float32",
};

// FSDP1 at wrap time: frozen and trainable parameters in one FlatParameter.
constexpr std::string_view kFsdpGrad[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 251, in <module>",
    "    model = FSDP(model, auto_wrap_policy=wrap_policy, device_id=torch.cuda.current_device())",
    "  File \"{py}/torch/distributed/fsdp/fully_sharded_data_parallel.py\", line 485, in __init__",
    "    _init_param_handle_from_module(",
    "  File \"{py}/torch/distributed/fsdp/_init_utils.py\", line 603, in "
    "_init_param_handle_from_module",
    "    _init_param_handle_from_params(state, managed_params, fully_sharded_module)",
    "  File \"{py}/torch/distributed/fsdp/_init_utils.py\", line 615, in "
    "_init_param_handle_from_params",
    "    handle = FlatParamHandle(",
    "  File \"{py}/torch/distributed/fsdp/_flat_param.py\", line 583, in __init__",
    "    self._init_flat_param_and_metadata(",
    "  File \"{py}/torch/distributed/fsdp/_flat_param.py\", line 633, in "
    "_init_flat_param_and_metadata",
    "    ) = self._validate_tensors_to_flatten(params)",
    "  File \"{py}/torch/distributed/fsdp/_flat_param.py\", line 777, in "
    "_validate_tensors_to_flatten",
    "    raise ValueError(",
    "!ValueError: Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`",
};

// FSDP1 of torch 1.13-2.0: the wrapper flattens the managed parameters in flat_param.py's
// _init_flat_param, which checks dtype and requires_grad itself.
constexpr std::string_view kFsdpWrap113[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 251, in <module>",
    "    model = FSDP(model, auto_wrap_policy=wrap_policy, device_id=torch.cuda.current_device())",
    "  File \"{py}/torch/distributed/fsdp/fully_sharded_data_parallel.py\", line 1054, in __init__",
    "    self._fsdp_wrapped_module = FlattenParamsWrapper(",
    "  File \"{py}/torch/distributed/fsdp/flatten_params_wrapper.py\", line 103, in __init__",
    "    self._flat_param_handle = FlatParamHandle(params, module, device, config)",
    "  File \"{py}/torch/distributed/fsdp/flat_param.py\", line 367, in __init__",
    "    self._init_flat_param(params, module, use_orig_params)",
    "  File \"{py}/torch/distributed/fsdp/flat_param.py\", line 437, in _init_flat_param",
};

constexpr std::string_view kFsdpDtype113[] = {
    "    raise ValueError(",
    "!ValueError: `FlatParameter` requires uniform dtype but got torch.float16 and torch.float32",
};

constexpr std::string_view kFsdpGrad113[] = {
    "    raise ValueError(\"`FlatParameter` requires uniform `requires_grad`\")",
    "!ValueError: `FlatParameter` requires uniform `requires_grad`",
};

// A resume: DeepSpeed's engine compares the checkpoint's dp_world_size with its own in
// _load_zero_checkpoint and raises there; the message is one line (DeepSpeed #2898, #6441).
constexpr std::string_view kDsLoadWorld[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 362, in main",
    "    _, client_state = engine.load_checkpoint(args.load_dir, tag=args.load_tag)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 2769, in load_checkpoint",
    "    success = self._load_zero_checkpoint(",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 2950, in _load_zero_checkpoint",
    "    raise ZeRORuntimeException(\"The checkpoint being loaded used a DP \" \\",
    "!deepspeed.runtime.zero.utils.ZeRORuntimeException: The checkpoint being loaded used a DP "
    "world size of {saved} but the current world size is {world}. Automatic adjustment of ZeRO's "
    "optimizer state partitioning with a new world size is not currently supported.",
};

// A ZeRO shard of the tag is missing: every rank reads every shard (frames as in
// HuangLK/transpeeder #37).
constexpr std::string_view kDsLoadShard[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 362, in main",
    "    _, client_state = engine.load_checkpoint(args.load_dir, tag=args.load_tag)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 2769, in load_checkpoint",
    "    success = self._load_zero_checkpoint(",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 2948, in _load_zero_checkpoint",
    "    zero_sd_list = self._get_all_zero_checkpoints(load_dir, tag)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 3042, in _get_all_zero_checkpoints",
    "    return self._get_all_zero_checkpoint_state_dicts(zero_ckpt_names)",
    "  File \"{py}/deepspeed/runtime/engine.py\", line 3014, in "
    "_get_all_zero_checkpoint_state_dicts",
    "    _state = self.checkpoint_engine.load(",
    "  File \"{py}/deepspeed/runtime/checkpoint_engine/torch_checkpoint_engine.py\", line 22, in "
    "load",
    "    partition = torch.load(path, map_location=map_location)",
    "  File \"{py}/torch/serialization.py\", line 1065, in load",
    "    with _open_file_like(f, 'rb') as opened_file:",
    "  File \"{py}/torch/serialization.py\", line 468, in _open_file_like",
    "    return _open_file(name_or_buffer, mode)",
    "  File \"{py}/torch/serialization.py\", line 449, in __init__",
    "    super().__init__(open(name, mode))",
    "!FileNotFoundError: [Errno 2] No such file or directory: "
    "'/checkpoints/run-7b/global_step{gstep}/zero_pp_rank_{shard}_mp_rank_00_optim_states.pt'",
};

constexpr std::string_view kFsdpLoadSize[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 251, in <module>",
    "    load_checkpoint(model, optimizer, args.resume)",
    "  File \"/workspace/checkpointing.py\", line 88, in load_checkpoint",
    "    model.load_state_dict(state[\"model\"])",
    "  File \"{py}/torch/nn/modules/module.py\", line 2215, in load_state_dict",
    "    raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(",
    "!RuntimeError: Error(s) in loading state_dict for FullyShardedDataParallel:",
    "\tsize mismatch for _fsdp_wrapped_module.model.embed_tokens.weight: copying a param with "
    "shape torch.Size([32000, 4096]) from checkpoint, the shape in current model is "
    "torch.Size([32064, 4096]).",
    "\tsize mismatch for _fsdp_wrapped_module.lm_head.weight: copying a param with shape "
    "torch.Size([32000, 4096]) from checkpoint, the shape in current model is "
    "torch.Size([32064, 4096]).",
};

// The DataLoader's pin-memory thread re-raises in the main thread; the original error is the
// CUDA driver refusing the page-locked allocation (cudaHostAlloc).
constexpr std::string_view kPinned[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 380, in main",
    "    batch = next(train_iter)",
    "  File \"{py}/torch/utils/data/dataloader.py\", line 630, in __next__",
    "    data = self._next_data()",
    "  File \"{py}/torch/utils/data/dataloader.py\", line 1344, in _next_data",
    "    return self._process_data(data)",
    "  File \"{py}/torch/utils/data/dataloader.py\", line 1370, in _process_data",
    "    data.reraise()",
    "  File \"{py}/torch/_utils.py\", line 706, in reraise",
    "    raise exception",
    "!RuntimeError: Caught RuntimeError in pin memory thread for device {dev}.",
    "Original Traceback (most recent call last):",
    "  File \"{py}/torch/utils/data/_utils/pin_memory.py\", line 37, in do_one_step",
    "    data = pin_memory(data, device)",
    "  File \"{py}/torch/utils/data/_utils/pin_memory.py\", line 79, in pin_memory",
    "    return type(data)({k: pin_memory(sample, device) for k, sample in data.items()})  # type: ignore[call-arg]",
    "  File \"{py}/torch/utils/data/_utils/pin_memory.py\", line 64, in pin_memory",
    "    return data.pin_memory(device)",
    "RuntimeError: CUDA error: out of memory",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "",
};

// A direct page-locked allocation outside the DataLoader (torch's CachingHostAllocator calls
// cudaHostAlloc, and its failure is a plain CUDA error): the training loop pins a batch itself,
// or a checkpoint stager allocates a pinned host buffer. The innermost frame is the pin call.
constexpr std::string_view kPinnedDirect[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 383, in main",
    "    batch = to_device(batch, device)",
    "  File \"/workspace/train.py\", line 97, in to_device",
    "    return {k: v.pin_memory().to(device, non_blocking=True) for k, v in batch.items()}",
    "  File \"/workspace/train.py\", line 97, in <dictcomp>",
    "    return {k: v.pin_memory().to(device, non_blocking=True) for k, v in batch.items()}",
    "!RuntimeError: CUDA error: out of memory",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "",
};

constexpr std::string_view kPinnedStaging[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 401, in main",
    "    stager.stage(model.state_dict(), step)",
    "  File \"/workspace/ckpt/async_stager.py\", line 58, in stage",
    "    self._buffers = [self._alloc(t) for t in tensors]",
    "  File \"/workspace/ckpt/async_stager.py\", line 58, in <listcomp>",
    "    self._buffers = [self._alloc(t) for t in tensors]",
    "  File \"/workspace/ckpt/async_stager.py\", line 41, in _alloc",
    "    return torch.empty(t.shape, dtype=t.dtype, device=\"cpu\", pin_memory=True)",
    "!RuntimeError: CUDA error: out of memory",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "",
};

// Gathering FSDP's FULL_STATE_DICT for torch.save: the all-gathered parameters do not fit.
// The last line (torch's OutOfMemoryError) is the profile's wording (formatter_gpu.cc).
constexpr std::string_view kSaveGather[] = {
    "Traceback (most recent call last):",
    "  File \"/workspace/train.py\", line 412, in <module>",
    "    main()",
    "  File \"/workspace/train.py\", line 402, in main",
    "    save_checkpoint(model, optimizer, step)",
    "  File \"/workspace/checkpointing.py\", line 41, in save_checkpoint",
    "    state = model.state_dict()",
    "  File \"{py}/torch/nn/modules/module.py\", line 1939, in state_dict",
    "    hook_result = hook(self, destination, prefix, local_metadata)",
    "  File \"{py}/torch/distributed/fsdp/_state_dict_utils.py\", line 715, in "
    "_post_state_dict_hook",
    "    processed_state_dict = _post_state_dict_hook_fn[fsdp_state._state_dict_type](",
    "  File \"{py}/torch/distributed/fsdp/_state_dict_utils.py\", line 356, in "
    "_full_post_state_dict_hook",
    "    return _common_unshard_post_state_dict_hook(",
    "  File \"{py}/torch/distributed/fsdp/_state_dict_utils.py\", line 205, in "
    "_common_unshard_post_state_dict_hook",
    "    param_hook(state_dict, prefix, fqn)",
    "  File \"{py}/torch/distributed/fsdp/_state_dict_utils.py\", line 349, in param_hook",
    "    state_dict[fqn] = state_dict[fqn].clone().detach()",
};

template <std::size_t N>
std::span<const std::string_view> S(const std::string_view (&a)[N]) {
  return {a, N};
}

}  // namespace

AppTraceback AppTracebackOf(AppError source, int variant, const TorchProfile& torch) {
  const int v = variant < 0 ? -variant : variant;
  switch (source) {
    case AppError::kDeepSpeed:
      switch (v % 4) {
        case 0: return {S(kZeroReduced), {}};
        case 1: return {S(kDsTrainFrames), S(kZero3Fetch)};
        case 2: return {S(kAdamLoadFrames), S(kAdamBuildFailed), S(kAdamBuildOutput), S(kAdamNinjaFailed), S(kAdamDel)};
        default: return {S(kDsTrainFrames), S(kPipeForward)};
      }
    case AppError::kFsdp:
      if (torch.fsdp_flat_param_wording) return {S(kFsdpWrap113), v % 2 == 0 ? S(kFsdpDtype113) : S(kFsdpGrad113)};
      return {v % 2 == 0 ? S(kFsdpDtype) : S(kFsdpGrad), {}};
    case AppError::kCheckpointLoad:
      switch (v % 3) {
        case 0: return {S(kDsLoadWorld), {}};
        case 1: return {S(kDsLoadShard), {}};
        default: return {S(kFsdpLoadSize), {}};
      }
    case AppError::kPinnedMemory:  // even: the DataLoader's pin-memory thread; odd: a direct pin
      switch (v % 4) {
        case 1: return {S(kPinnedDirect), {}};
        case 3: return {S(kPinnedStaging), {}};
        default: return {S(kPinned), {}};
      }
    case AppError::kSaveOom:
      return {S(kSaveGather), {}};
    case AppError::kDeepSpeedAio:  // even: a current release's wording; odd: before error_log
      return {S(kDsInitFrames), v % 2 == 0 ? S(kDsAio) : S(kDsAioOld)};
    case AppError::kZeroPipeline:
      return {S(kDsInitFrames), v % 2 == 0 ? S(kDsZeroPipe) : S(kDsZeroPipeOld)};
    case AppError::kExtensionImport:
      return {S(kAdamLoadFrames), S(kAdamImportFailed), S(kAdamWaitOutput), {}, S(kAdamDel)};
    case AppError::kMegatron:
      break;
  }
  return {};
}

}  // namespace denpex::sim
