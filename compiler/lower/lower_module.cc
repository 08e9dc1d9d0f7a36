// Lowerer: dispatch over the entry computation and the generic data-movement kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <functional>

#include "compiler/lower/blocking.h"
#include "compiler/lower/lowerer.h"
#include "compiler/passes/lapack_custom_calls.h"
#include "compiler/passes/loop_region.h"
#include "hlo/computation.h"
#include "hlo/gpu_gemm.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

Lowerer::Lowerer(const hlo::HloModule& module, const config::ChipConfig& config,
                 const HbmPlan& plan, isa::Program* program, int32_t core_id, int64_t num_replicas,
                 std::map<std::string, int32_t>* hlo_tags, bool double_buffer,
                 const ElementwiseGroups& groups, MegacoreRole megacore)
    : module_(module),
      config_(config),
      plan_(plan),
      program_(program),
      core_id_(core_id),
      num_replicas_(num_replicas),
      hlo_tags_(hlo_tags),
      double_buffer_(double_buffer),
      groups_(groups),
      megacore_(megacore),
      em_(&program->cores[static_cast<size_t>(core_id)], config.core.KernelVmemBytes()) {}

const std::vector<HbmBuffer>& Lowerer::Buffers(const HloInstruction* inst) const {
  auto it = plan_.values.find(inst);
  TPUSIM_CHECK(it != plan_.values.end()) << "no HBM buffer for %" << inst->name();
  return it->second;
}

const HbmBuffer& Lowerer::Buffer(const HloInstruction* inst) const {
  const auto& v = Buffers(inst);
  TPUSIM_CHECK(v.size() == 1) << "%" << inst->name() << " is not a single array";
  return v[0];
}

StatusOr<uint64_t> Lowerer::Vmem(const HloInstruction& inst, int64_t bytes, const char* what) {
  const int64_t free = em_.vmem_free();
  const int64_t a = em_.AllocVmem(bytes);
  if (a < 0) {
    return DoesNotFit(inst, fmt::format("VMEM: the {} needs {} bytes but only {} of "
                                        "core.vmem.capacity_bytes = {} are left in this kernel",
                                        what, bytes, free, em_.vmem_bytes()));
  }
  return static_cast<uint64_t>(a);
}

int32_t Lowerer::TagOf(const HloInstruction& inst) {
  auto [it, inserted] =
      hlo_tags_->try_emplace(inst.name(), static_cast<int32_t>(program_->hlo_names.size()));
  if (inserted) program_->hlo_names.push_back(inst.name());
  return it->second;
}

std::vector<HbmArray> Lowerer::KernelHbmArrays(const HloInstruction& inst) const {
  std::vector<const HloInstruction*> members = {&inst};
  if (auto g = groups_.group_of.find(&inst); g != groups_.group_of.end()) {
    const auto& group = groups_.groups[g->second];
    members.insert(members.end(), group.begin(), group.end());
  }
  if (auto e = groups_.epilogue_of_dot.find(&inst); e != groups_.epilogue_of_dot.end()) {
    members.insert(members.end(), e->second.begin(), e->second.end());
  }
  for (int operand : {0, 1}) {
    if (auto p = groups_.prologue_of_dot.find({&inst, operand});
        p != groups_.prologue_of_dot.end()) {
      members.insert(members.end(), p->second.begin(), p->second.end());
    }
  }
  std::vector<HbmArray> arrays;
  auto add = [&](const HloInstruction* v) {
    auto it = plan_.values.find(v);
    if (it == plan_.values.end()) return;
    for (const HbmBuffer& b : it->second) {
      if (b.fusion_internal) continue;
      arrays.push_back(HbmArray{b.address, b.bytes(), b.tiled_bytes});
    }
  };
  for (const HloInstruction* m : members) {
    add(m);
    for (const HloInstruction* op : m->operands()) add(op);
  }
  return arrays;
}

Status Lowerer::Run() {
  for (const auto& up : module_.entry_computation()->instructions()) {
    const HloInstruction& inst = *up;
    em_.set_tag(TagOf(inst));
    em_.ResetVmem();
    em_.set_hbm_arrays(KernelHbmArrays(inst));
    kernel_starts_.push_back(static_cast<size_t>(em_.size()));
    TPUSIM_RETURN_IF_ERROR(LowerInstruction(inst));
    TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
  }
  kernel_starts_.push_back(static_cast<size_t>(em_.size()));
  em_.set_tag(isa::kNoHloTag);
  em_.Emit(isa::op::CtrlHalt{});
  return OkStatus();
}

namespace {

// Why a custom-call target cannot be lowered, what is known, and how to time the module anyway.
std::string UnknownCustomCallMessage(const std::string& target) {
  // JAX's host callbacks (jax.debug.print, jax.pure_callback, jax.experimental.io_callback) run
  // Python on the host: no device semantics to lower, and values only Python can compute.
  const bool host_callback = target.find("python") != std::string::npos &&
                             target.find("callback") != std::string::npos;
  const std::string cost = "give the target a cost: --custom-call-cost " + target +
                           "=CYCLES (the run is then timing-only)";
  // XLA's GPU backend writes its library calls and its own kernels as custom-calls: cuBLAS /
  // hipBLAS(Lt) GEMMs, cuDNN convolutions and fused attention, Triton kernels, its sort and top-k
  // kernels. They appear in an HLO dump taken after GPU compilation, and have no TPU meaning.
  static constexpr std::string_view kGpuPrefixes[] = {"__cublas", "__cudnn", "__hipblas",
                                                      "__triton", "__gpu$", "__cub$"};
  const bool gpu_library =
      std::any_of(std::begin(kGpuPrefixes), std::end(kGpuPrefixes), [&](std::string_view p) {
        return std::string_view(target).substr(0, p.size()) == p;
      });
  if (gpu_library) {
    const std::string gemm =
        hlo::IsGpuGemmTarget(target)
            ? " (a plain GEMM call, two operands, alpha 1, beta 0, epilogue DEFAULT and an array "
              "result, is read as its dot; this one is scaled, biased, fused or returns a "
              "workspace)"
            : "";
    return "custom_call_target=\"" + target +
           "\" is a call XLA's GPU backend writes (cuBLAS, cuDNN, Triton, its own kernels) into a "
           "module it compiled for a GPU" + gemm + ": it has no TPU lowering. Give tpusim the "
           "module before "
           "GPU compilation (XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text: the "
           "*.before_optimizations.txt file, where this is still a dot, convolution or sort), or, "
           "to time this one anyway, " + cost;
  }
  if (host_callback) {
    return "custom_call_target=\"" + target +
           "\" is a JAX host callback (jax.debug.print, pure_callback, io_callback): Python run on "
           "the host, which tpusim cannot run. Remove it from the jitted function, or, to time "
           "the module anyway, " + cost;
  }
  if (const std::string lapack = UnreadLapackCallNote(target); !lapack.empty()) {
    return "custom_call_target=\"" + target + "\": " + lapack + ". To time the module anyway, " +
           cost;
  }
  return "custom_call_target=\"" + target +
         "\" is not in the known-target table (known: AwsNeuronTransferWithStaticRing = "
         "identity; Sharding, xla.sdy.FuncResultSharding removed by sharding-remover; "
         "LayoutConstraint, MoveToHost, MoveToDevice, annotate_device_placement by "
         "annotation-custom-calls; f32/bf16/f16 AwsNeuronGelu, AwsNeuronGeluApprxTanh, "
         "AwsNeuronGeluBackward, AwsNeuronSoftmax, AwsNeuronSoftmaxBackward, AwsNeuronRmsNorm via "
         "custom-call-expander; lapack_?potrf_ffi, lapack_?trsm_ffi, lapack_?getrf_ffi, "
         "lapack_?geqrf_ffi, lapack_?orgqr_ffi, LuDecomposition, Qr, "
         "ProductOfElementaryHouseholderReflectors via lapack-custom-calls; Eigh, "
         "lapack_?syevd_ffi, lapack_?gesdd_ffi via eigh-expander; tpu_custom_call (a Pallas "
         "TPU kernel) timed from its cost_estimate). To time the module anyway, " + cost;
}

}  // namespace

Status Lowerer::LowerInstruction(const HloInstruction& inst) {
  if (IsAliasOfOperand(inst) || epilogue_done_.count(&inst) > 0) return OkStatus();
  // A dot's prologue ops run inside the dot's kernel (or, when they do not fit, just before it).
  if (groups_.dot_of_prologue.count(&inst) > 0) return OkStatus();
  // A broadcast a dot's epilogue absorbed is read by its users one value per block (fusion.h); it
  // is materialized only when the epilogue does not run (CloseEpilogue).
  if (auto d = groups_.dot_of_epilogue.find(&inst);
      d != groups_.dot_of_epilogue.end() && IsAbsorbedBroadcast(*d->second, inst)) {
    return OkStatus();
  }
  if (IsLoopBegin(inst)) return LowerLoopBegin(inst);
  if (IsLoopEnd(inst)) return LowerLoopEnd(inst);
  if (IsLoopBreak(inst)) return LowerLoopBreak(inst);
  // The other cores of a megacore device run only their shares of split dots.
  if (megacore_.rank > 0) {
    return inst.opcode() == HloOpcode::kDot && !groups_.group_of.count(&inst) ? LowerDot(inst)
                                                                              : OkStatus();
  }
  if (auto g = groups_.group_of.find(&inst); g != groups_.group_of.end()) {
    const auto& group = groups_.groups[g->second];
    return group.front() == &inst ? LowerFusedElementwise(group) : OkStatus();
  }
  if (HasNoCode(inst)) return OkStatus();
  switch (inst.opcode()) {
    case HloOpcode::kDot:
      return LowerDot(inst);
    case HloOpcode::kBroadcast:
      return LowerBroadcast(inst);
    case HloOpcode::kTranspose:
      return LowerTranspose(inst);
    case HloOpcode::kCopy:     // one that changes the layout (the others alias their operand)
    case HloOpcode::kReshape:  // one data-formatting marked (the others are views)
      return LowerCopy(inst);
    case HloOpcode::kSlice:
      return LowerSlice(inst);
    case HloOpcode::kReverse:
      return LowerReverse(inst);
    case HloOpcode::kConcatenate:
      return LowerConcatenate(inst);
    case HloOpcode::kPad:
      return LowerPad(inst);
    case HloOpcode::kIota:
      return LowerIota(inst);
    case HloOpcode::kReduce:
      return LowerReduce(inst);
    case HloOpcode::kReplicaId:
    case HloOpcode::kPartitionId:
      return LowerDeviceId(inst);
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllGather:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kCollectivePermute:
      return LowerCollective(inst);
    case HloOpcode::kGather:
      return LowerGather(inst);
    case HloOpcode::kScatter:
      return LowerScatter(inst);
    case HloOpcode::kDynamicSlice:
      return LowerDynamicSlice(inst);
    case HloOpcode::kDynamicUpdateSlice:
      return LowerDynamicUpdateSlice(inst);
    case HloOpcode::kConvolution:
      return LowerConvolution(inst);
    case HloOpcode::kRngBitGenerator:
      return LowerRngBitGenerator(inst);
    case HloOpcode::kRng:
      return Unsupported(
          inst, fmt::format("rng is expanded (rng-expander) only with two scalar operands (a, b) "
                            "and an f32, bf16 or f16 result; integer rng is not supported (this "
                            "one: {} operand(s), result {})",
                            inst.operand_count(), inst.shape().ToString(false)));
    case HloOpcode::kRngGetAndUpdateState:
      return Unsupported(inst,
                         "rng-get-and-update-state gets its state (rng-state-assignment) only in "
                         "the entry computation; in a loop that is not unrolled every trip would "
                         "draw the same state (raise --unroll-budget to unroll it)");
    case HloOpcode::kCollectiveReduce:
      return Unsupported(inst,
                         "collective-reduce (a reduction delivered to one root device) is not "
                         "lowered; the collectives that lower are all-reduce, all-gather, "
                         "reduce-scatter, all-to-all, collective-permute and collective-broadcast");
    case HloOpcode::kRaggedDot:
      return Unsupported(inst,
                         "ragged-dot reaches the lowering only in a form ragged-dot-rewriter does "
                         "not rewrite into a dense dot (compiler/passes/ragged_dot_rewriter.h)");
    case HloOpcode::kScaledDot:
      return Unsupported(inst,
                         "scaled-dot (a dot of block-scaled, typically f8/f4, operands) is not "
                         "lowered: the MXU takes bf16, f32 and s8 dots; dequantize the operands "
                         "(multiply by the broadcast scales) and write a dot");
    case HloOpcode::kStochasticConvert:
      return Unsupported(inst,
                         "stochastic-convert is lowered (stochastic-convert-decomposer) from a "
                         "float (f16, bf16, f32) with random bits of its width (u16, u16, u32) "
                         "to a signed integer, as XLA's StochasticConvertDecomposer (which "
                         "refuses a float destination too)");
    case HloOpcode::kScan:
      return Unsupported(inst,
                         "scan is not lowered (XLA's ScanExpander turns it into a while loop; "
                         "tpusim has no scan expansion yet): write the loop as a while");
    case HloOpcode::kShuffle:
      return Unsupported(inst,
                         "shuffle is not lowered (XLA's ShuffleExpander turns it into slices and a "
                         "concatenate, or a gather; tpusim has no shuffle expansion yet)");
    case HloOpcode::kWhile:
      return Unsupported(inst,
                         "a while reaches the lowering only as copies or a loop region "
                         "(while-lowering)");
    case HloOpcode::kSelectAndScatter:
      return Unsupported(inst,
                         "select-and-scatter is lowered (select-and-scatter-expander) only with a "
                         "compare(p0, p1) select, an add(p0, p1) scatter, a scalar init and an "
                         "undilated, unreversed window of at most 4096 positions");
    case HloOpcode::kSort:
      return Unsupported(inst,
                         "sort is lowered (sort-expander) only with a compare(p0, p1) LT or GT "
                         "comparator on f32, bf16 or s32 keys, every operand of the keys' "
                         "dimensions, along one dimension of at most 65536 elements");
    case HloOpcode::kConditional:
      return Unsupported(inst,
                         "a conditional reaches the lowering only if-converted (call-inliner), "
                         "which needs one parameter per branch and no token in the result");
    case HloOpcode::kCustomCall: {
      if (custom_call_cycles_ != nullptr) {
        auto it = custom_call_cycles_->find(inst.custom_call_target());
        if (it != custom_call_cycles_->end()) return LowerEstimatedCustomCall(inst, it->second);
      }
      if (!hlo::IsMosaicKernel(inst)) {
        return Unsupported(inst, UnknownCustomCallMessage(inst.custom_call_target()));
      }
      StatusOr<std::optional<hlo::KernelCostEstimate>> e = hlo::ReadKernelCostEstimate(inst);
      if (!e.ok()) return Unsupported(inst, "Pallas TPU kernel: " + e.status().message());
      return LowerKernelEstimate(inst, e->value_or(hlo::LeastKernelCost(inst)));
    }
    default:
      break;
  }
  if (hlo::IsElementwise(inst.opcode())) return LowerElementwise(inst);
  return Unsupported(inst,
                     "no lowering for this opcode: every other opcode of XLA's list either lowers "
                     "(docs/codegen.md) or is refused with a message of its own");
}

Status Lowerer::WaitForOperands(const HloInstruction& inst) {
  // A one-element read of each makes the scoreboard wait for its producer (a collective, a DMA).
  TPUSIM_ASSIGN_OR_RETURN(uint64_t probe, Vmem(inst, 64, "operand probe"));
  int64_t reads = 0;
  for (const HloInstruction* op : inst.operands()) {
    for (const HbmBuffer& b : Buffers(op)) {
      if (b.elements() == 0) continue;
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, b.address, probe, b.elem_bytes(),
                        b.elem_bytes(), kLoadFlag);
      ++reads;
    }
  }
  em_.Wait(kLoadFlag, reads);
  return OkStatus();
}

Status Lowerer::LowerEstimatedCustomCall(const HloInstruction& inst, int64_t cycles) {
  if (cycles < 0 || cycles / 2 > int64_t{0xFFFFFFFF}) {
    return Unsupported(inst,
                       fmt::format("--custom-call-cost {} cycles is outside [0, 2^33)", cycles));
  }
  TPUSIM_RETURN_IF_ERROR(WaitForOperands(inst));
  if (cycles / 2 > 0) {
    em_.Emit(isa::op::CtrlLoop{.count = static_cast<uint64_t>(cycles / 2)});
    em_.Emit(isa::op::Nop{});
    em_.Emit(isa::op::CtrlEndLoop{});
  }
  if (cycles % 2 == 1) em_.Emit(isa::op::Nop{});
  return OkStatus();
}

namespace {
// vpu.broadcast's cols field is 24 bits wide.
constexpr int64_t kMaxVpuBroadcastElements = (int64_t{1} << 24) - 1;

// Every block of a ForEachBlock walk: (start offsets, block dims).
StatusOr<std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>> Blocks(
    const std::vector<int64_t>& dims, const Blocking& blocking) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> out;
  TPUSIM_RETURN_IF_ERROR(ForEachBlock(
      dims, blocking,
      [&](const std::vector<int64_t>& start, const std::vector<int64_t>& bdims) -> Status {
        out.emplace_back(start, bdims);
        return OkStatus();
      }));
  return out;
}

}  // namespace

Status Lowerer::PipelineBlocks(
    int64_t blocks, bool db, const std::function<StatusOr<int64_t>(int64_t, int, uint64_t)>& load,
    const std::function<StatusOr<int64_t>(int64_t, int, uint64_t)>& store) {
  // Flags as in LowerElementwise: set s loads on 2 + s, stores on 4 + s; one set without double
  // buffering (loads on kLoadFlag, stores on kStoreFlag, each waited at once).
  constexpr uint64_t kSetLoadFlag0 = 2, kSetStoreFlag0 = 4;
  int64_t pending_load[2] = {0, 0}, pending_store[2] = {0, 0};
  if (db && blocks > 0) {
    TPUSIM_ASSIGN_OR_RETURN(pending_load[0], load(0, 0, kSetLoadFlag0));
  }
  for (int64_t i = 0; i < blocks; ++i) {
    if (!db) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t n, load(i, 0, kLoadFlag));
      em_.Wait(kLoadFlag, n);
      TPUSIM_ASSIGN_OR_RETURN(int64_t m, store(i, 0, kStoreFlag));
      em_.Wait(kStoreFlag, m);
      continue;
    }
    const int set = static_cast<int>(i % 2);
    const int other = 1 - set;
    em_.Wait(kSetLoadFlag0 + static_cast<uint64_t>(set), pending_load[set]);
    pending_load[set] = 0;
    if (i + 1 < blocks) {
      // The other set's buffers are free once its last store is done.
      em_.Wait(kSetStoreFlag0 + static_cast<uint64_t>(other), pending_store[other]);
      pending_store[other] = 0;
      TPUSIM_ASSIGN_OR_RETURN(pending_load[other],
                              load(i + 1, other, kSetLoadFlag0 + static_cast<uint64_t>(other)));
    }
    TPUSIM_ASSIGN_OR_RETURN(pending_store[set],
                            store(i, set, kSetStoreFlag0 + static_cast<uint64_t>(set)));
  }
  em_.Wait(kSetStoreFlag0, pending_store[0]);
  em_.Wait(kSetStoreFlag0 + 1, pending_store[1]);
  return OkStatus();
}

Status Lowerer::GatherKernel(const HloInstruction& inst, uint64_t src_base,
                             const std::vector<int64_t>& src_strides, const HbmBuffer& out) {
  std::vector<int64_t> dims = out.dims;
  std::vector<int64_t> ss = src_strides;
  if (dims.empty()) {
    dims = {1};
    ss = {0};
  }
  const int64_t e = out.elem_bytes();
  // Trailing dimensions the source repeats (stride 0, a broadcast along the minor dimensions): each
  // block loads its distinct source elements once and vpu.broadcast replicates them in VMEM,
  // instead of one HBM access per repeated element.
  size_t keep = dims.size();
  while (keep > 0 && ss[keep - 1] == 0) --keep;
  int64_t rep = 1;
  for (size_t j = keep; j < dims.size(); ++j) rep *= dims[j];
  const bool replicate = rep > 1;
  // Dimensions read backwards (a negative stride, a reverse): the DMA, whose strides are unsigned,
  // loads each block's source box in address order into a staging buffer, and vpu.copy with
  // negative strides writes it in the result's order (ReverseInVmem).
  std::vector<bool> flip(dims.size());
  bool any_flip = false;
  for (size_t k = 0; k < dims.size(); ++k) {
    flip[k] = ss[k] < 0 && dims[k] > 1;
    any_flip = any_flip || flip[k];
  }
  int64_t total = 1;
  for (int64_t x : dims) total *= x;
  // Double buffering: two sets of buffers, each within half of VMEM, when there are two blocks
  // (a little VMEM is kept back for the 64-byte rounding of the buffers).
  int64_t budget = em_.vmem_free() - 512;
  const bool db = double_buffer_ && total * e > budget;
  if (db) budget /= 2;
  // With replication the block shares its set with its compressed source (at most half its size);
  // with flipping, with the staging buffer of what it loads (its size, or its compressed source's
  // and that source). vpu.broadcast's and vpu.copy's counts are 24-bit fields: blocks stay under
  // 2^24 elements.
  if (any_flip) {
    budget = std::min(budget / 2, kMaxVpuBroadcastElements * e);
  } else if (replicate) {
    budget = std::min(budget * 2 / 3, kMaxVpuBroadcastElements * e);
  }
  const auto blocking = ChooseBlocking(dims, e, budget);
  if (!blocking) return DoesNotFit(inst, "VMEM: not even one row of the result fits");
  const int64_t block_elems = blocking->blk * blocking->inner;
  uint64_t buf[2] = {0, 0}, cbuf[2] = {0, 0}, stage[2] = {0, 0};
  for (int set = 0; set < (db ? 2 : 1); ++set) {
    TPUSIM_ASSIGN_OR_RETURN(buf[set], Vmem(inst, block_elems * e, "block"));
    int64_t loaded = block_elems;
    if (replicate) {
      const int64_t rep_in_block = blocking->d >= keep ? block_elems : rep;
      loaded = block_elems / rep_in_block + 1;
      TPUSIM_ASSIGN_OR_RETURN(cbuf[set], Vmem(inst, loaded * e, "block's source elements"));
    }
    if (any_flip) {
      TPUSIM_ASSIGN_OR_RETURN(stage[set], Vmem(inst, loaded * e, "reversed source elements"));
    }
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(dims, e);
  TPUSIM_ASSIGN_OR_RETURN(auto blocks, Blocks(dims, *blocking));
  const size_t d = blocking->d;
  // The block's distinct source elements when replicating: dims [d, keep) (none when the whole
  // block repeats one element).
  const size_t kept = replicate ? (keep > d ? keep - d : 0) : dims.size() - d;
  const std::vector<bool> block_flip(flip.begin() + static_cast<std::ptrdiff_t>(d),
                                     flip.begin() + static_cast<std::ptrdiff_t>(d + kept));
  auto load = [&](int64_t i, int set, uint64_t flag) -> StatusOr<int64_t> {
    const auto& [start, bdims] = blocks[static_cast<size_t>(i)];
    // The box's origin is its lowest address: the last index of a dimension read backwards.
    int64_t src_off = 0;
    for (size_t k = 0; k < start.size(); ++k) {
      const int64_t last = k >= d ? start[k] + bdims[k - d] - 1 : start[k];
      src_off += (ss[k] < 0 ? last : start[k]) * ss[k];
    }
    const uint64_t src = src_base + static_cast<uint64_t>(src_off);
    const uint64_t dst = any_flip ? stage[set] : replicate ? cbuf[set] : buf[set];
    std::vector<int64_t> cdims(bdims.begin(), bdims.begin() + static_cast<std::ptrdiff_t>(kept));
    std::vector<int64_t> css;
    for (size_t k = d; k < d + kept; ++k) css.push_back(std::abs(ss[k]));
    if (cdims.empty()) {
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, src, dst, e, e, flag);
      return int64_t{1};
    }
    return em_.Dma(isa::Opcode::kDmaHbmToVmem, src, css, dst, RowMajorStrides(cdims, e), cdims, e,
                   flag);
  };
  auto store = [&](int64_t i, int set, uint64_t flag) -> StatusOr<int64_t> {
    const auto& [start, bdims] = blocks[static_cast<size_t>(i)];
    int64_t dst_off = 0, count = 1;
    for (size_t k = 0; k < start.size(); ++k) dst_off += start[k] * out_strides[k];
    for (int64_t x : bdims) count *= x;
    if (any_flip && count > 0) {
      const std::vector<int64_t> cdims(bdims.begin(),
                                       bdims.begin() + static_cast<std::ptrdiff_t>(kept));
      ReverseInVmem(out.dtype, stage[set], replicate ? cbuf[set] : buf[set], cdims, block_flip);
    }
    if (replicate) {
      int64_t distinct = 1;
      for (size_t k = 0; k < kept; ++k) distinct *= bdims[k];
      em_.Emit(isa::op::VpuBroadcast{
          .mode = distinct == 1 ? isa::Broadcast::kScalar : isa::Broadcast::kCol,
          .dtype = out.dtype,
          .dst = buf[set],
          .src = cbuf[set],
          .rows = static_cast<uint64_t>(distinct),
          .cols = static_cast<uint64_t>(count / distinct)});
    }
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, buf[set],
                      out.address + static_cast<uint64_t>(dst_off), count * e, e, flag);
    return int64_t{1};
  };
  return PipelineBlocks(static_cast<int64_t>(blocks.size()), db, load, store);
}

void Lowerer::ReverseInVmem(isa::DType dtype, uint64_t src, uint64_t dst,
                            const std::vector<int64_t>& dims, const std::vector<bool>& flip) {
  // Runs of dimensions that are all reversed or all kept merge into one (reversing a row-major
  // [a, b] reverses its a * b elements); dimensions of size 1 drop out.
  struct Level {
    int64_t n;
    bool flip;
  };
  std::vector<Level> lv;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    if (!lv.empty() && lv.back().flip == flip[k]) {
      lv.back().n *= dims[k];
    } else {
      lv.push_back({dims[k], flip[k]});
    }
  }
  while (lv.size() < 3) lv.insert(lv.begin(), Level{1, false});
  std::vector<int64_t> n, stride(lv.size());
  for (const Level& l : lv) n.push_back(l.n);
  int64_t s = 1;
  for (size_t k = lv.size(); k-- > 0;) {
    stride[k] = s;
    s *= lv[k].n;
  }
  // Element offsets of level k's index i on the source (from its last index when reversed) and
  // the destination side.
  auto src_at = [&](size_t k, int64_t i) { return (lv[k].flip ? lv[k].n - 1 - i : i) * stride[k]; };
  auto src_s = [&](size_t k) { return lv[k].flip ? -stride[k] : stride[k]; };
  const int64_t e = isa::DTypeBytes(dtype);
  const size_t outer = lv.size() - 3;  // levels beyond vpu.copy's three: one copy per index
  std::vector<int64_t> idx(outer, 0);
  while (true) {
    int64_t so = src_at(outer, 0) + src_at(outer + 1, 0) + src_at(outer + 2, 0), d_off = 0;
    for (size_t k = 0; k < outer; ++k) {
      so += src_at(k, idx[k]);
      d_off += idx[k] * stride[k];
    }
    em_.Emit(isa::op::VpuCopy{.dtype = dtype,
                              .dst = dst + static_cast<uint64_t>(d_off * e),
                              .src = src + static_cast<uint64_t>(so * e),
                              .n0 = static_cast<uint64_t>(n[outer + 2]),
                              .n1 = static_cast<uint64_t>(n[outer + 1]),
                              .n2 = static_cast<uint64_t>(n[outer]),
                              .src_s0 = src_s(outer + 2),
                              .src_s1 = src_s(outer + 1),
                              .src_s2 = src_s(outer),
                              .dst_s0 = stride[outer + 2],
                              .dst_s1 = stride[outer + 1],
                              .dst_s2 = stride[outer]});
    size_t k = outer;
    while (k > 0 && ++idx[k - 1] == n[k - 1]) idx[--k] = 0;
    if (k == 0) return;
  }
}

Status Lowerer::FillBox(const HloInstruction& inst, const HbmBuffer& value, uint64_t dst_base,
                        const std::vector<int64_t>& box, const std::vector<int64_t>& dst_strides) {
  int64_t total = 1;
  for (int64_t x : box) total *= x;
  if (total == 0) return OkStatus();
  const int64_t e = value.elem_bytes();
  const auto blocking =
      ChooseBlocking(box, e, std::min(em_.vmem_free() - 64, kMaxVpuBroadcastElements * e));
  if (!blocking) return DoesNotFit(inst, "VMEM: not even one row of the fill fits");
  const int64_t block_elems = blocking->blk * blocking->inner;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t one, Vmem(inst, e, "fill value"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, Vmem(inst, block_elems * e, "fill block"));
  em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, value.address, one, e, e, kLoadFlag);
  em_.Wait(kLoadFlag, 1);
  em_.Emit(isa::op::VpuBroadcast{.mode = isa::Broadcast::kScalar,
                                 .dtype = value.dtype,
                                 .dst = buf,
                                 .src = one,
                                 .rows = 1,
                                 .cols = static_cast<uint64_t>(block_elems)});
  // Every block stores from the same VMEM block of copies of the value.
  return ForEachBlock(
      box, *blocking,
      [&](const std::vector<int64_t>& start, const std::vector<int64_t>& bdims) -> Status {
        int64_t dst_off = 0;
        for (size_t i = 0; i < start.size(); ++i) dst_off += start[i] * dst_strides[i];
        std::vector<int64_t> bds(dst_strides.begin() + static_cast<std::ptrdiff_t>(blocking->d),
                                 dst_strides.end());
        TPUSIM_ASSIGN_OR_RETURN(
            int64_t n,
            em_.Dma(isa::Opcode::kDmaVmemToHbm, buf, RowMajorStrides(bdims, e),
                    dst_base + static_cast<uint64_t>(dst_off), bds, bdims, e, kStoreFlag));
        em_.Wait(kStoreFlag, n);
        return OkStatus();
      });
}

Status Lowerer::ScatterKernel(const HloInstruction& inst, const HbmBuffer& src, uint64_t dst_base,
                              const std::vector<int64_t>& dst_strides) {
  std::vector<int64_t> dims = src.dims;
  std::vector<int64_t> ds = dst_strides;
  if (dims.empty()) {
    dims = {1};
    ds = {0};
  }
  const int64_t e = src.elem_bytes();
  int64_t budget = em_.vmem_free() - 512;
  const bool db = double_buffer_ && src.bytes() > budget;
  if (db) budget /= 2;
  const auto blocking = ChooseBlocking(dims, e, budget);
  if (!blocking) return DoesNotFit(inst, "VMEM: not even one row of the operand fits");
  uint64_t buf[2] = {0, 0};
  for (int set = 0; set < (db ? 2 : 1); ++set) {
    TPUSIM_ASSIGN_OR_RETURN(buf[set], Vmem(inst, blocking->blk * blocking->inner * e, "block"));
  }
  const std::vector<int64_t> src_strides = RowMajorStrides(dims, e);
  TPUSIM_ASSIGN_OR_RETURN(auto blocks, Blocks(dims, *blocking));
  auto load = [&](int64_t i, int set, uint64_t flag) -> StatusOr<int64_t> {
    const auto& [start, bdims] = blocks[static_cast<size_t>(i)];
    int64_t src_off = 0, count = 1;
    for (size_t k = 0; k < start.size(); ++k) src_off += start[k] * src_strides[k];
    for (int64_t x : bdims) count *= x;
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, src.address + static_cast<uint64_t>(src_off),
                      buf[set], count * e, e, flag);
    return int64_t{1};
  };
  auto store = [&](int64_t i, int set, uint64_t flag) -> StatusOr<int64_t> {
    const auto& [start, bdims] = blocks[static_cast<size_t>(i)];
    int64_t dst_off = 0;
    for (size_t k = 0; k < start.size(); ++k) dst_off += start[k] * ds[k];
    std::vector<int64_t> bds(ds.begin() + static_cast<std::ptrdiff_t>(blocking->d), ds.end());
    return em_.Dma(isa::Opcode::kDmaVmemToHbm, buf[set], RowMajorStrides(bdims, e),
                   dst_base + static_cast<uint64_t>(dst_off), bds, bdims, e, flag);
  };
  return PipelineBlocks(static_cast<int64_t>(blocks.size()), db, load, store);
}

Status Lowerer::LowerDeviceId(const HloInstruction& inst) {
  const HbmBuffer& out = Buffer(&inst);
  const int64_t partitions = std::max<int64_t>(1, module_.num_partitions());
  const int64_t id =
      inst.opcode() == HloOpcode::kReplicaId ? core_id_ / partitions : core_id_ % partitions;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, Vmem(inst, 64, "id"));
  em_.Emit(isa::op::VpuFill{
      .dtype = out.dtype, .dst = buf, .count = 1, .value = static_cast<uint32_t>(id)});
  em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, buf, out.address, out.elem_bytes(),
                    out.elem_bytes(), kStoreFlag);
  em_.Wait(kStoreFlag, 1);
  return OkStatus();
}

Status Lowerer::LowerCopyValue(const HloInstruction& inst, const HbmBuffer& src,
                               const HbmBuffer& dst) {
  if (src.address == dst.address) return OkStatus();  // updated in place (hbm_plan.cc)
  return GatherKernel(inst, src.address, RowMajorStrides(src.dims, src.elem_bytes()), dst);
}

}  // namespace tpusim::compiler
