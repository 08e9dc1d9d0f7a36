// Lowerer: emits one core's isa code for a canonicalized HLO module, kernel by kernel (one kernel
// per HLO instruction that computes something). Internal to compiler/lower; the public entry point
// is Compile() (compiler/compile.h).
//
// Each kernel follows the same shape: DMA operand blocks HBM -> VMEM, compute on the MXUs/VPU/XLU,
// DMA the result block VMEM -> HBM; blocks are sized to fit core.vmem.capacity_bytes and the MXUs'
// accumulator rows. Values live in HBM between kernels at the addresses the HBM plan assigned.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/lower/core_emitter.h"
#include "compiler/lower/fusion.h"
#include "compiler/lower/mxu_passes.h"
#include "compiler/lower/plan_dot.h"
#include "config/chip_config.h"
#include "hlo/convolution_form.h"
#include "hlo/instruction.h"
#include "hlo/kernel_cost_estimate.h"
#include "hlo/module.h"
#include "hlo/tiled_layout.h"
#include "isa/program.h"

namespace tpusim::compiler {

struct DotOutBlock;        // lower_dot.cc
struct ElementwiseKernel;  // lower_elementwise.cc
struct FusedKernel;        // lower_fused.cc

/// One array value in HBM.
struct HbmBuffer {
  uint64_t address = 0;
  /// Bytes from the start of the buffer that owns the memory: non-zero for a view (a slice of
  /// whole leading rows, IsAliasOfOperand). Already included in `address`.
  uint64_t view_offset = 0;
  isa::DType dtype = isa::DType::kF32;
  std::vector<int64_t> dims;
  /// Bytes the array takes stored in its TPU tiles (hlo/tiled_layout.h, chip.hbm.tile_min_bytes);
  /// 0 = untiled. A copy of part of the array moves that part's share of these bytes.
  int64_t tiled_bytes = 0;
  /// A value read only inside its fusion: never in HBM (its address is a placeholder).
  bool fusion_internal = false;
  /// The kernels (entry-instruction positions) from the one that writes the buffer to the last that
  /// reads it: no other value uses these bytes between them (the plan's live range).
  int64_t live_from = 0, live_to = 0;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  int64_t elem_bytes() const { return isa::DTypeBytes(dtype); }
  int64_t bytes() const { return elements() * elem_bytes(); }
};

/// The HBM plan: the leaf buffers of every instruction's value (flattened tuple order).
struct HbmPlan {
  std::map<const hlo::HloInstruction*, std::vector<HbmBuffer>> values;
  std::vector<isa::DataSegment> constants;  // core 0's copy; the driver replicates per core
  int64_t bytes_used = 0;
};

/// Builds the HBM plan for the entry computation (bump allocation, 64-byte aligned; reshape,
/// bitcast, copy, tuple, get-tuple-element, opt-barrier and identity custom-calls share their
/// operand's buffers; a scatter or dynamic-update-slice whose operand is read by nothing later and
/// not returned updates it in place, as XLA does for a donated KV cache). Errors: Unimplemented for
/// element types without a device type; ResourceExhausted when the buffers exceed `hbm_capacity`
/// bytes. Addresses start at `base` (cores sharing a chip's HBM get disjoint ranges); `capacity` is
/// the bytes this core may use from `base` on. `groups`: fused elementwise groups; all their
/// members' results are defined at the group's first member and all their operands read until its
/// last (the kernel interleaves them chunk by chunk). `tiles`: how arrays are tiled in HBM; each
/// buffer takes its tile-padded bytes of capacity (HbmBuffer::tiled_bytes). `isolate_shared`:
/// the buffers of values ValueSharedBeyondKernels (memory_space_assignment.h; and the result, and
/// those values' operands)
/// live for the whole program and share their bytes with no other value, so that memory-space
/// assignment can tell them apart by address (memory_space_assignment.h).
StatusOr<HbmPlan> PlanHbm(const hlo::HloModule& module, const ElementwiseGroups& groups,
                          uint64_t base, int64_t hbm_capacity, bool timing_only,
                          const hlo::TileRule& tiles, bool isolate_shared = false);

/// True for instructions whose value is their operand 0's buffers (reshape, bitcast, copy,
/// opt-barrier, add-dependency, domain, real of a real value, identity custom-calls, a broadcast
/// to its operand's own shape, a pad of zero widths, a reverse of no dimension longer than 1, a
/// unit-stride slice that is one contiguous run of its operand — whole trailing dimensions under
/// one partial dimension, x[1:] of a row-major array — which is its operand's buffer at an offset
/// (ContiguousSliceOffset)): no code, no allocation.
bool IsAliasOfOperand(const hlo::HloInstruction& inst);
/// True for instructions the lowering emits no code for: parameters, constants, tuples,
/// get-tuple-elements, after-alls (their values are buffers or nothing) and aliases of their
/// operand (IsAliasOfOperand).
bool HasNoCode(const hlo::HloInstruction& inst);
/// The byte offset of a slice that is one contiguous run of its operand (see IsAliasOfOperand);
/// -1 for anything else.
int64_t ContiguousSliceOffset(const hlo::HloInstruction& inst);
/// A broadcast that is never materialized (a first step of fuse-elementwise): of a 1-element value
/// (kScalar), of a [cols] vector along the last dimension (kRow, a bias) or of the leading
/// dimensions (kCol, a per-row statistic), when every user is a VPU binary op or compare (or clamp,
/// for scalars) of the broadcast's shape. The users read the source with the matching bcast mode;
/// the broadcast keeps its source's buffer. kNone for every other instruction.
isa::Broadcast VirtualBroadcastKind(const hlo::HloInstruction& inst);
bool IsVirtualBroadcast(const hlo::HloInstruction& inst);

/// A pad that is never materialized: rank 2, edge padding only, read only by elementwise VPU ops of
/// its shape (ReadOnlyByVpu). Its readers load the operand's rows into the padded positions of a
/// block filled with the padding value (Lowerer::LoadPaddedRows); the pad keeps its operand's
/// buffer (dims of the pad), and its padding value stays live as long as its readers.
bool IsVirtualPad(const hlo::HloInstruction& inst);
/// True if every user of `v` is an elementwise VPU op of v's dimensions, or an alias of v with v's
/// dimensions (an identity broadcast, a zero-width pad, a copy) whose users are, in turn; and v is
/// not the result.
bool ReadOnlyByVpu(const hlo::HloInstruction& v);
/// The virtual pad `v` is, directly or through aliases of the same dimensions; nullptr otherwise.
const hlo::HloInstruction* VirtualPadOf(const hlo::HloInstruction* v);

/// The reducer's function when a reduce's to_apply is add, maximum or minimum of its two
/// parameters; nullopt otherwise (lower_reduce.cc).
std::optional<isa::ReduceOp> ReducerOp(const hlo::HloInstruction& reduce);
/// The VPU binary op that combines two partial results of `op`.
isa::BinaryOp CombineOp(isa::ReduceOp op);
/// The one reduction order of every reduce kernel, the evaluator's (hlo/eval/kernels/reduce.h;
/// docs/codegen.md, "Reductions: one order"): each result starts at the init value and folds the
/// reduced elements in row-major order, block after block. RunningResultsFromInit emits the start:
/// `count` results of `dtype` at VMEM `dst` set to the scalar at VMEM `init`; the kernel then
/// reduces every block into them with vpu.reduce acc=1 (ReduceInto).
isa::op::VpuBroadcast RunningResultsFromInit(isa::DType dtype, uint64_t dst, uint64_t init,
                                             int64_t count);
/// vpu.reduce acc=1: the [rows, cols] region at `src` folded into the running results at `dst`
/// ([rows] along the lanes, [cols] along the sublanes).
isa::op::VpuReduce ReduceInto(isa::ReduceOp op, isa::ReduceAxis axis, isa::DType dtype,
                              uint64_t dst, uint64_t src, int64_t rows, int64_t cols);

/// The vpu.binary op of an elementwise binary opcode (add .. atan2, the shifts, mulhi); nullopt
/// for the others (lower_elementwise.cc).
std::optional<isa::BinaryOp> VpuBinaryOp(hlo::HloOpcode op);
/// True for the elementwise opcodes the VPU lowering implements (lower_elementwise.cc).
bool HasVpuFunction(hlo::HloOpcode op);

/// How an elementwise kernel (Lowerer::LowerElementwise, LowerFusedElementwise) reads one operand
/// from HBM: whole (kNone: loaded chunk by chunk), one element (kScalar: loaded once), a [cols]
/// row repeated per row (kRow: loaded once), one value per row (kCol: loaded per chunk of rows),
/// or the rows of a virtual pad (`pad` set, mode kNone: Lowerer::LoadPaddedRows).
struct StreamedOperand {
  const HbmBuffer* buf = nullptr;
  isa::Broadcast mode = isa::Broadcast::kNone;
  uint64_t vmem = 0;                           // where a once-loaded operand sits in VMEM
  const hlo::HloInstruction* pad = nullptr;    // a virtual pad (IsVirtualPad)
  uint64_t pad_value = 0;                      // its padding value in VMEM
  /// Loaded once per kernel (a scalar or a row), not per chunk.
  bool once() const { return mode == isa::Broadcast::kScalar || mode == isa::Broadcast::kRow; }
};

/// Elements per chunk of an `n`-element elementwise kernel that needs `bytes_per_element` bytes of
/// VMEM per element of a chunk out of `budget` free bytes: at most n; whole rows of `cols`
/// elements when `by_rows`; otherwise whole 8x128 vregs (a multiple of 1024 elements) when the
/// kernel takes more than one chunk of more than 1024. Below 1 when not one element (row) fits.
int64_t StreamChunkElements(int64_t n, int64_t budget, int64_t bytes_per_element, bool by_rows,
                            int64_t cols);

/// "file:line:col: error: cannot lower %name (opcode): what" as an Unimplemented Status.
Status Unsupported(const hlo::HloInstruction& inst, const std::string& what);
/// The same location prefix for a ResourceExhausted Status.
Status DoesNotFit(const hlo::HloInstruction& inst, const std::string& what);

/// This core's part in a megacore device (compile.h): core `rank` of `size` cores that share one
/// HBM plan. Rank 0 lowers every instruction; the others only their shares of split dots.
struct MegacoreRole {
  int rank = 0;
  int size = 1;
};

class Lowerer {
 public:
  Lowerer(const hlo::HloModule& module, const config::ChipConfig& config, const HbmPlan& plan,
          isa::Program* program, int32_t core_id, int64_t num_replicas,
          std::map<std::string, int32_t>* hlo_tags, bool double_buffer,
          const ElementwiseGroups& groups, MegacoreRole megacore = {});

  /// Emits the whole entry computation into program->cores[core_id].
  Status Run();
  /// User-given costs of custom-call targets (CompileOptions::custom_call_cycles); may be null.
  void set_custom_call_cycles(const std::map<std::string, int64_t>* c) { custom_call_cycles_ = c; }
  int64_t peak_vmem() const { return em_.peak_vmem(); }
  /// Per entry-instruction position, the index of the first instruction its kernel emitted; one
  /// more entry at the end (the program's size before ctrl.halt).
  const std::vector<size_t>& kernel_starts() const { return kernel_starts_; }

 private:
  Status LowerInstruction(const hlo::HloInstruction& inst);
  std::vector<size_t> kernel_starts_;
  const std::vector<HbmBuffer>& Buffers(const hlo::HloInstruction* inst) const;
  const HbmBuffer& Buffer(const hlo::HloInstruction* inst) const;
  /// VMEM allocation within the current kernel; DoesNotFit naming `inst` on failure.
  StatusOr<uint64_t> Vmem(const hlo::HloInstruction& inst, int64_t bytes, const char* what);

  // Kernels (lower_*.cc).
  Status LowerDot(const hlo::HloInstruction& inst);
  /// A dot's kernel between planning and emission (lower_dot.cc).
  struct DotKernel;
  /// Decides a dot's fusions, plans it (PlanDot on `shape` of this core's share; the result's and
  /// the prologues' element bytes are filled in here) and allocates its VMEM; false when its
  /// operand prologues do not fit beside its blocks.
  StatusOr<bool> PlanDotKernel(DotKernel& k, DotShape shape, int parts);
  Status AllocateDotBuffers(DotKernel& k);
  /// Writes the planned dot's software pipeline (loads, matmuls, pops, epilogue, stores).
  Status EmitDot(DotKernel& k);
  StatusOr<int64_t> EmitDotLoads(const DotKernel& k, const DotStep& st);
  void EmitDotMatmuls(const DotKernel& k, const DotStep& st, int64_t acc0);
  void EmitDotPop(DotKernel& k, const DotOutBlock& pp);
  void EmitDotPopInto(DotKernel& k, const DotOutBlock& pp, uint64_t out);
  /// Whether a dot of M x N results runs with its LHS as the MXU's weights (lower_dot.cc).
  bool StationaryLhs(const hlo::HloInstruction& inst, int64_t M, int64_t N) const;
  Status EmitDotStore(DotKernel& k, const DotOutBlock& pp);
  /// A canonical convolution in its direct, VPU or filter-gradient form (lower_convolution.cc).
  Status LowerConvolution(const hlo::HloInstruction& inst);
  /// A convolution in the filter-gradient form (lower_convolution.cc), with the prologues of its
  /// operands (AddConvPrologues) run as their bands are loaded when they fit VMEM beside it.
  Status LowerFilterGradConvolution(const hlo::HloInstruction& inst,
                                    const hlo::FilterGradientConvolution& p,
                                    std::vector<PassParts> passes, bool int_path);
  Status LowerDirectConvolution(const hlo::HloInstruction& inst, hlo::DirectConvolution p);
  /// A grouped convolution with few features per group (a depthwise one) on the VPU
  /// (lower_vpu_convolution.cc).
  Status LowerVpuConvolution(const hlo::HloInstruction& inst, const hlo::VpuConvolution& p);
  /// The megacore share of a dot with N output columns: this core's columns [begin, end), and how
  /// many cores split it (1 = not split: rank 0 does it all).
  struct ColumnShare {
    int64_t begin = 0, end = 0;
    int parts = 1;
  };
  ColumnShare DotColumnShare(int64_t n) const;
  /// A dot's epilogue (fusion.h, AddDotEpilogues) in VMEM: per op, where each operand comes from
  /// (kEpilogueDotBlock: the popped result block; >= 0: an earlier op's result block; -2 - k:
  /// external k), the external operands' VMEM (a scalar, an [Nc] row, an [Mc] column or an
  /// [Mc, Nc] block), each op's [Mc, Nc] result block, and what is stored.
  ///
  /// Blocks run in sequence (0, 1, ...); with two buffer sets (`sets` = 2, when they fit) block s
  /// uses set s % 2, as XLA's emitters double-buffer a fusion's tiles: block s + 1's operands load
  /// (LoadEpilogueBlock, issued by the kernel ahead of time) and block s - 1's results store while
  /// block s computes. Set i's loads signal kEpilogueLoadFlag0 + i, its stores
  /// kEpilogueStoreFlag0 + i.
  static constexpr int64_t kEpilogueDotBlock = -1;
  static constexpr uint64_t kEpilogueLoadFlag0 = 8, kEpilogueStoreFlag0 = 10;
  struct Epilogue {
    struct External {
      const HbmBuffer* buf;
      isa::Broadcast mode;
      uint64_t vmem;
      // > 0: a broadcast the epilogue absorbed (IsEpilogueBatchBroadcast): each value of `buf`
      // covers `repeat` consecutive result elements, read as a scalar by each block. With `whole`
      // the whole of `buf` is loaded once and each block reads its value in place; otherwise one
      // value is loaded per block.
      int64_t repeat = 0;
      bool whole = false;
      // Bytes between the buffer sets' copies; 0: one copy (loaded once, read by every block).
      uint64_t set_bytes = 0;
      uint64_t At(int set) const { return vmem + static_cast<uint64_t>(set) * set_bytes; }
      // Loaded once before the first block: a scalar, or an absorbed broadcast's whole operand.
      bool LoadedOnce() const { return mode == isa::Broadcast::kScalar && (repeat == 0 || whole); }
    };
    std::vector<const hlo::HloInstruction*> ops;
    std::vector<External> ext;
    std::vector<std::vector<int64_t>> source;
    std::vector<uint64_t> result;
    std::vector<uint64_t> result_set_bytes;
    std::vector<bool> stored;
    uint64_t tmp = 0, zero = 0;
    bool store_dot = true;
    int sets = 1;
    int64_t pending_loads[2] = {0, 0};   // per set: descriptors of loads in flight
    bool loaded[2] = {false, false};     // per set: the next block's loads are issued
    int64_t pending_stores[2] = {0, 0};  // per set: descriptors of result stores in flight
    int64_t next_block = 0;              // sequence number of the next block to run
    int Set(int64_t block) const { return static_cast<int>(block % sets); }
    /// A reduce of the result or of an op (an output fusion's reduction, fusion.h): per op index,
    /// whether it reduces every dimension but the last ("column": a [N] result, e.g. batch-norm
    /// sums over a convolution's [N*OH*OW, O]) or only the last ("row": one value per result
    /// row), its running result in VMEM ([N] or [Mc]; it starts at the init value and each block
    /// is reduced into it: the reduce order of lower_reduce.cc), and its init.
    struct Reduction {
      bool column = true;
      isa::ReduceOp op = isa::ReduceOp::kSum;
      uint64_t running = 0, init = 0;
    };
    std::map<size_t, Reduction> reductions;
  };
  /// True for a broadcast member of `dot`'s epilogue (fusion.h, IsEpilogueBatchBroadcast): it runs
  /// no op, its readers load one value of its operand per block.
  static bool IsAbsorbedBroadcast(const hlo::HloInstruction& dot, const hlo::HloInstruction& m) {
    return m.opcode() == hlo::HloOpcode::kBroadcast && IsEpilogueBatchBroadcast(m, dot);
  }
  /// Allocates an epilogue's VMEM for [Mc, Nc] blocks and loads its scalars; nullopt (nothing
  /// allocated that matters: the kernel's VMEM is reset after it) when it does not fit.
  /// Within `budget` bytes of VMEM: two buffer sets when they fit, else one; absorbed
  /// broadcasts' operands whole when they fit beside them.
  StatusOr<std::optional<Epilogue>> PlanEpilogue(const hlo::HloInstruction& dot,
                                                 const std::vector<const hlo::HloInstruction*>& ops,
                                                 int64_t Mc, int64_t Nc, int64_t budget);
  /// PlanEpilogue's VMEM: decides `ep.sets` and which absorbed operands are loaded whole, and
  /// allocates the externals, results, running reductions and the temporary (`tmp_bytes` per
  /// element, and a zero when `needs_zero`); false when they do not fit `budget` bytes.
  bool AllocateEpilogue(const hlo::HloInstruction& dot, Epilogue& ep, int64_t Mc, int64_t Nc,
                        int64_t budget, int64_t tmp_bytes, bool needs_zero);
  /// TPU v1's Activate, which later TPUs keep on the MXU result path: an epilogue that is only an
  /// activation of the result — maximum(D, 0), tanh(D) or logistic(D), optionally followed by a
  /// convert of f32 to bf16; or, for an s32 result, clamp(0, D, 127) or maximum(D, 0) followed by
  /// a convert to s8 (requantization: the pop saturates to [-128, 127]) — runs in mxu.pop itself
  /// (`act`, `dtype`) and stores straight into `last`'s buffer. nullopt for any other epilogue.
  struct PopActivation {
    isa::Activation act = isa::Activation::kNone;
    isa::DType dtype = isa::DType::kF32;
    const hlo::HloInstruction* last = nullptr;
  };
  std::optional<PopActivation> FoldPopActivation(
      const hlo::HloInstruction& dot, const std::vector<const hlo::HloInstruction*>& ops) const;
  /// After a dot's or convolution's kernel: marks its epilogue ops done (their own kernels are
  /// skipped) — all of them when they were folded into the pops — and finishes `ep` (may be null).
  Status CloseEpilogue(const hlo::HloInstruction& dot, bool folded_into_pops, Epilogue* ep);
  /// After a kernel's last block: folds the init value into the column reductions' running
  /// results and stores them.
  Status FinishEpilogue(const hlo::HloInstruction& dot, Epilogue& ep);
  /// One reduction of the epilogue on the [mc, nc] block `src` (see Epilogue::Reduction).
  Status ReduceEpilogueBlock(const hlo::HloInstruction& reduce, Epilogue::Reduction& r,
                             uint64_t src, int64_t b, int64_t M, int64_t m0, int64_t mc, int64_t n0,
                             int64_t nc, int64_t N, uint64_t store_flag, int64_t* stores);
  /// Issues the loads of the epilogue's operands for block `seq` (its sequence number), the
  /// [mc, nc] block of rows m0.. of batch b of an [.., M, N] result, columns n0..: a kernel calls
  /// it ahead of RunEpilogue (when the block's matmuls are issued) so the loads overlap the MXU
  /// work — only with two buffer sets and once block seq - 2 has run (the set's operands are
  /// read). RunEpilogue issues them itself when they were not.
  Status LoadEpilogueBlock(Epilogue& ep, int64_t seq, int64_t b, int64_t M, int64_t m0, int64_t mc,
                           int64_t n0, int64_t nc, int64_t N);
  /// Runs the epilogue on the popped [mc, nc] block at VMEM `block` (rows m0.. of batch b of an
  /// [.., M, N] result, columns n0..) and stores the results read elsewhere.
  Status RunEpilogue(const hlo::HloInstruction& dot, Epilogue& ep, uint64_t block,
                     isa::DType block_dtype, int64_t b, int64_t M, int64_t m0, int64_t mc,
                     int64_t n0, int64_t nc, int64_t N);
  /// A dot operand's prologue (fusion.h, AddDotPrologues; lower/dot_prologue.cc) in VMEM: per op,
  /// where each operand comes from (>= 0: an earlier op's block; -2 - k: external k), each
  /// external's VMEM (a scalar, loaded once; else `nin` versions, ext_stride bytes apart, of an
  /// [Rc] column, a [Cc] row or an [Rc, Cc] block) and each op's block but the last's, which is
  /// written into the dot's operand buffer.
  struct Prologue {
    std::vector<const hlo::HloInstruction*> ops;
    std::vector<Epilogue::External> ext;
    std::vector<int64_t> ext_stride;
    std::vector<std::vector<int64_t>> source;
    std::vector<uint64_t> result;
    uint64_t tmp = 0, zero = 0;
  };
  /// What a prologue takes in VMEM, for the dot's block choice: bytes per operand element of its
  /// blocks (external arrays, intermediates, scratch), its row/column vectors (count and the
  /// widest element), and how many allocations it makes (each rounded up to 64 bytes).
  struct PrologueFootprint {
    int64_t per_element = 0, vectors = 0, vector_bytes_per_element = 0, allocations = 0;
    bool needs_tmp = false;
  };
  PrologueFootprint MeasurePrologue(const std::vector<const hlo::HloInstruction*>& ops) const;
  /// Allocates a prologue for [Rc, Cc] operand blocks held in `nin` versions and loads its
  /// scalars; nullopt when it does not fit.
  std::optional<Prologue> PlanPrologue(const std::vector<const hlo::HloInstruction*>& ops,
                                       int64_t Rc, int64_t Cc, int nin);
  /// An operand block: rows r0 .. r0 + rc and columns c0 .. c0 + cc of batch b of a [B, R, C]
  /// operand (elements).
  struct OperandBlock {
    int64_t b = 0, R = 0, C = 0, r0 = 0, rc = 0, c0 = 0, cc = 0;
  };
  /// DMAs the block `blk` of the row-major [B, R, C] HBM operand at `base` (elements of `eb`
  /// bytes) into VMEM `dst` as a dense [rc, cc] block, signalling `flag` once per descriptor;
  /// returns the number of descriptors.
  StatusOr<int64_t> LoadOperandBlock(uint64_t base, const OperandBlock& blk, int64_t eb,
                                     uint64_t dst, uint64_t flag);
  /// Loads the part of a prologue's or epilogue's external operand `x` that the block `blk` of
  /// the [B, R, C] operation reads into VMEM `dst`, by x's broadcast mode: kRow columns
  /// c0 .. c0 + cc, kCol rows r0 .. r0 + rc of batch b, kNone the [rc, cc] block, kScalar nothing
  /// (its one value is loaded elsewhere); signalling `flag` once per descriptor. Returns the
  /// number of descriptors.
  StatusOr<int64_t> LoadExternalBlock(const Epilogue::External& x, const OperandBlock& blk,
                                      uint64_t dst, uint64_t flag);
  /// Loads the inputs of one operand block into version `version` (signalling `flag` once per
  /// descriptor); returns the number of descriptors.
  StatusOr<int64_t> LoadPrologueBlock(const Prologue& pro, int64_t version, const OperandBlock& blk,
                                      uint64_t flag);
  /// Computes the [rc, cc] operand block from the inputs of version `version` into VMEM `dst`.
  void RunPrologueBlock(const Prologue& pro, int64_t version, int64_t rc, int64_t cc, uint64_t dst);
  /// The fallback when a dot's prologues do not fit VMEM: their ops run as kernels of their own,
  /// now (before the dot), and the dot is lowered without them.
  Status LowerPrologueKernels(const hlo::HloInstruction& dot);
  /// sync.barrier over the cores of this megacore device.
  void MegacoreBarrier();
  Status LowerElementwise(const hlo::HloInstruction& inst);
  /// How an elementwise kernel of `n` elements reads `op` (StreamedOperand; vmem unset).
  StreamedOperand StreamOperand(const hlo::HloInstruction* op, int64_t n) const;
  /// Loads the padding value of every virtual-pad operand and every once-read operand (into VMEM
  /// allocated in `kernel`'s kernel, setting `vmem`); returns the DMAs issued on kLoadFlag.
  StatusOr<int64_t> LoadOnceOperands(const hlo::HloInstruction& kernel,
                                     std::vector<StreamedOperand>& ops);
  /// Loads elements [off, off + c) of a per-chunk operand (rows of `cols` elements for a kCol
  /// operand or a virtual pad; c is then whole rows) into VMEM `dst`, signalling `flag`; returns
  /// the DMAs issued.
  StatusOr<int64_t> LoadOperandChunk(const StreamedOperand& op, int64_t off, int64_t c,
                                     int64_t cols, uint64_t dst, uint64_t flag);
  /// An elementwise kernel's chunk size, double buffering and VMEM buffer sets.
  Status AllocateElementwiseChunks(ElementwiseKernel& k);
  /// The chunk loop of an elementwise kernel (double-buffered when k.db).
  Status EmitElementwiseChunks(const ElementwiseKernel& k);
  /// A chain of elementwise ops (an ElementwiseGroup) as one kernel: per chunk, the external
  /// operands are loaded once, every member computes into VMEM, and only the members used outside
  /// the group are stored.
  Status LowerFusedElementwise(const std::vector<const hlo::HloInstruction*>& group);
  /// A fused group's operands (`n` elements in its common shape): each member's sources (a member
  /// or an external operand), the external operands deduplicated, and the members stored to HBM.
  FusedKernel PlanFusedOperands(const std::vector<const hlo::HloInstruction*>& group,
                                int64_t n) const;
  /// A fused kernel's once-read operands loaded, its chunk size and VMEM buffers.
  Status AllocateFusedChunks(FusedKernel& k);
  /// One chunk of a fused kernel ([off, off + c) of the common shape): loads, every member, stores.
  Status EmitFusedChunk(const FusedKernel& k, int64_t off, int64_t c);
  struct VpuOperand {
    uint64_t vmem = 0;
    isa::Broadcast mode = isa::Broadcast::kNone;
    isa::DType dtype = isa::DType::kF32;
  };
  /// Emits `inst`'s VPU function on a [rows, cols] region (cu = rows * cols elements) of VMEM
  /// operands; `tmp` (cu elements) is scratch for clamp / is-finite, `zero` a VMEM 0 for is-finite.
  void EmitVpuOp(const hlo::HloInstruction& inst, isa::DType out_dtype,
                 const std::vector<VpuOperand>& ops, uint64_t dst, uint64_t tmp, uint64_t zero,
                 uint64_t region_rows, uint64_t region_cols, uint64_t cu);
  Status LowerBroadcast(const hlo::HloInstruction& inst);
  Status LowerTranspose(const hlo::HloInstruction& inst);
  Status LowerCopy(const hlo::HloInstruction& inst);
  Status LowerSlice(const hlo::HloInstruction& inst);
  /// reverse: a GatherKernel whose reversed dimensions have negative strides.
  Status LowerReverse(const hlo::HloInstruction& inst);
  Status LowerConcatenate(const hlo::HloInstruction& inst);
  Status LowerPad(const hlo::HloInstruction& inst);
  Status LowerIota(const hlo::HloInstruction& inst);
  Status LowerReduce(const hlo::HloInstruction& inst);
  /// A reduce whose reduced row does not fit VMEM, reduced chunk by chunk into a running result
  /// that starts at the init value (at VMEM `init_v`) (lower_reduce.cc).
  Status ReduceLongRows(const hlo::HloInstruction& inst, isa::ReduceOp op, uint64_t init_v,
                        const std::vector<int64_t>& kept, const std::vector<int64_t>& kept_strides,
                        const std::vector<int64_t>& red, const std::vector<int64_t>& red_strides);
  /// A reduce that keeps the operand's minor dimension: down the sublanes, blocks of the kept
  /// elements on the lanes (lower_reduce.cc). False when a block of min(kept, 128) columns of the
  /// reduced rows does not fit VMEM (nothing emitted).
  StatusOr<bool> ReduceColumns(const hlo::HloInstruction& inst, isa::ReduceOp op, uint64_t init_v);
  Status LowerCollective(const hlo::HloInstruction& inst);
  /// rng-bit-generator (lower_rng.cc): u64[n] state (stored narrowed to 32 bits), u32/s32 bits.
  Status LowerRngBitGenerator(const hlo::HloInstruction& inst);
  /// A custom-call with a user-given cost: once a one-element read of each operand has arrived (so
  /// it starts after its producers), the sequencer spins `cycles` cycles (ctrl.loop of nops, 2
  /// cycles per iteration, plus one nop when odd); nothing is computed.
  Status LowerEstimatedCustomCall(const hlo::HloInstruction& inst, int64_t cycles);
  /// Waits until a one-element read of each operand leaf has arrived: the kernel that follows
  /// starts after the operands' producers, as any kernel's operand loads would make it.
  Status WaitForOperands(const hlo::HloInstruction& inst);
  /// A Pallas TPU kernel (tpu_custom_call) timed from its declared cost (lower_kernel_estimate.cc):
  /// its bytes_accessed through HBM, its FLOP on the MXUs and its transcendentals on the VPU, in
  /// steps that overlap the three; nothing is computed.
  Status LowerKernelEstimate(const hlo::HloInstruction& inst, const hlo::KernelCostEstimate& e);
  /// A tuple all-reduce: per element type, the leaves staged contiguously in VMEM and reduced by
  /// one ring (one ring per leaf in HBM when they do not fit).
  Status LowerTupleAllReduce(const hlo::HloInstruction& inst,
                             const std::vector<const HbmBuffer*>& ins,
                             const std::vector<HbmBuffer>& outs, uint64_t group);
  /// replica-id / partition-id: this core's device id split as replica d / P, partition d % P.
  Status LowerDeviceId(const hlo::HloInstruction& inst);
  Status LowerCopyValue(const hlo::HloInstruction& inst, const HbmBuffer& src,
                        const HbmBuffer& dst);
  /// Loop regions (lower_loop.cc, compiler/passes/loop_region.h). loop_begin: copies the initial
  /// state into the state buffers, then ctrl.loop; loop_end: copies the body's results into the
  /// state buffers where the HBM plan did not put them there, then ctrl.endloop. Other megacore
  /// cores only open and close the loop.
  Status LowerLoopBegin(const hlo::HloInstruction& inst);
  Status LowerLoopEnd(const hlo::HloInstruction& inst);
  /// A branch loop's loop_break: ctrl.break_unless on the condition's pred in HBM (the trips its
  /// backend_config carries are what a timing-only simulation assumes); with megacore, a barrier
  /// first, so the other cores read the pred the first core computed.
  Status LowerLoopBreak(const hlo::HloInstruction& inst);

  /// out[i...] = src[base + sum_d i_d * src_strides[d]] for the row-major `out` buffer, in blocks
  /// that fit VMEM (leading-dimension split), double-buffered (PipelineBlocks). Minor dimensions
  /// with source stride 0 are loaded once per block and replicated by vpu.broadcast. Used by
  /// broadcast, transpose, slice, copies.
  /// A negative stride reads its dimension backwards (reverse): `src_base` is then the address of
  /// the element out[0...] reads, each block's box is loaded in address order and reversed in VMEM
  /// (ReverseInVmem) before it is stored.
  Status GatherKernel(const hlo::HloInstruction& inst, uint64_t src_base,
                      const std::vector<int64_t>& src_strides, const HbmBuffer& out);
  /// dst[i...] = src[i with the dimensions `flip` reversed] for a row-major [dims] block of `dtype`
  /// at VMEM `src` (disjoint from `dst`): vpu.copy with negative element strides, one per index of
  /// the levels beyond its three (runs of reversed or of kept dimensions merge into one level).
  void ReverseInVmem(isa::DType dtype, uint64_t src, uint64_t dst, const std::vector<int64_t>& dims,
                     const std::vector<bool>& flip);
  /// Runs `blocks` blocks through VMEM: load(i, set, flag) issues block i's loads into buffer set
  /// `set` signalling `flag` and returns how many; store(i, set, flag) computes on and stores it.
  /// With `db` (double buffering) block i + 1's loads are issued before block i is stored, on two
  /// buffer sets; without, every load and store is waited for at once.
  Status PipelineBlocks(int64_t blocks, bool db,
                        const std::function<StatusOr<int64_t>(int64_t, int, uint64_t)>& load,
                        const std::function<StatusOr<int64_t>(int64_t, int, uint64_t)>& store);
  /// Rows [row0, row0 + rows) of the virtual pad `pad` (IsVirtualPad) into VMEM `dst` (row-major,
  /// the pad's row length): vpu.broadcast of the padding value (one element at VMEM `value`), then
  /// one strided DMA of the operand rows that fall inside, signalling `flag`. Returns the DMAs
  /// issued.
  /// Allocates 64 bytes of VMEM in `reader`'s kernel and loads the virtual pad `pad`'s padding
  /// value there (one DMA signalling kLoadFlag, for the caller to wait on); returns its VMEM
  /// address.
  StatusOr<uint64_t> LoadPaddingValue(const hlo::HloInstruction& reader,
                                      const hlo::HloInstruction& pad);
  StatusOr<int64_t> LoadPaddedRows(const hlo::HloInstruction& pad, int64_t row0, int64_t rows,
                                   uint64_t dst, uint64_t value, uint64_t flag);
  /// dst[base + sum_d i_d * dst_strides[d]] = value (a one-element buffer) for every index of `box`
  /// (pad's padding): the value is loaded once, replicated into one VMEM block by vpu.broadcast,
  /// and that block is stored block by block with strided DMAs.
  Status FillBox(const hlo::HloInstruction& inst, const HbmBuffer& value, uint64_t dst_base,
                 const std::vector<int64_t>& box, const std::vector<int64_t>& dst_strides);
  /// dst[base + sum_d i_d * dst_strides[d]] = src[i...] for the row-major `src` buffer
  /// (concatenate, pad's interior).
  Status ScatterKernel(const hlo::HloInstruction& inst, const HbmBuffer& src, uint64_t dst_base,
                       const std::vector<int64_t>& dst_strides);
  // Data-dependent addressing (lower_gather.cc): gather, scatter, dynamic-slice and
  // dynamic-update-slice on the indirect DMAs dma.gather / dma.scatter.
  Status LowerGather(const hlo::HloInstruction& inst);
  Status LowerScatter(const hlo::HloInstruction& inst);
  Status LowerDynamicSlice(const hlo::HloInstruction& inst);
  Status LowerDynamicUpdateSlice(const hlo::HloInstruction& inst);
  /// One index component: `count` s32 start indices, contiguous at VMEM `vmem`, for operand
  /// dimension `dim`.
  struct IndexComponent {
    uint64_t vmem = 0;
    int64_t dim = 0;
  };
  /// Converts `n` start indices of integer type `t` at VMEM `src` into s32 at VMEM `dst` (t = s32:
  /// nothing to do, src == dst). Values outside the s32 range saturate to it first (u32/s64/u64),
  /// which keeps their clamping and out-of-bounds meaning: no valid start is >= 2^31 - 1. Any
  /// integer type is a valid index type in XLA.
  Status IndicesToS32(const hlo::HloInstruction& inst, isa::DType t, uint64_t src, uint64_t dst,
                      int64_t n);
  /// Loads a dynamic-slice's (dynamic-update-slice's) start indices, operands `first` on, as s32
  /// in VMEM: one component for each dimension d of `operand` where window[d] < operand.dims[d]
  /// (a full dimension's start is 0 after clamping and needs none). Errors: start operands that are
  /// neither one scalar per dimension nor one rank-1 array; non-integer starts.
  StatusOr<std::vector<IndexComponent>> LoadStartIndices(const hlo::HloInstruction& inst,
                                                         int64_t first, const HbmBuffer& operand,
                                                         const std::vector<int64_t>& window);
  /// Where `n` start indices of type t are loaded before IndicesToS32: `idx_buf` itself for s32,
  /// else a VMEM staging area of n elements of t.
  StatusOr<uint64_t> IndexStage(const hlo::HloInstruction& inst, isa::DType t, uint64_t idx_buf,
                                int64_t n);
  /// What an indirect DMA needs: one s32 index per slice at VMEM `idx`, HBM bytes per index unit,
  /// and the largest valid index.
  struct LinearIndex {
    uint64_t idx = 0;
    uint64_t scale = 0;
    uint64_t bound = 0;
  };
  /// How start indices outside [0, dim - window] behave, and which DMA consumes them.
  enum class IndexMode {
    kGatherClamp,   // gather, dynamic-slice: clamped (dma.gather clamps one index itself)
    kScatterSkip,   // scatter: the whole window is skipped (dma.scatter skips one index itself)
    kScatterClamp,  // dynamic-update-slice: clamped, written with dma.scatter
  };
  /// Turns per-dimension start indices into one index per slice for a box of `window[d]` elements
  /// per dimension of the row-major `operand`. One component in the DMA's own mode costs nothing;
  /// otherwise the VPU clamps each component (kScatterSkip: sets the slice's index to -1 when a
  /// component is out of range) and linearizes in s32 element units.
  StatusOr<LinearIndex> LinearizeIndices(const hlo::HloInstruction& inst, const HbmBuffer& operand,
                                         const std::vector<int64_t>& window,
                                         const std::vector<IndexComponent>& components,
                                         int64_t count, IndexMode mode);
  /// out (count row-major slices of `window`) = the slices of `operand` the indices select.
  Status IndirectGather(const hlo::HloInstruction& inst, const HbmBuffer& operand,
                        const std::vector<int64_t>& window, const LinearIndex& index, int64_t count,
                        uint64_t out_address);
  /// A scatter's to_apply: assignment (combine = false) or a read-modify-write `op`.
  struct Combiner {
    bool combine = false;
    isa::ReduceOp op = isa::ReduceOp::kSum;
  };
  /// Writes (or combines) `count` row-major update slices of `window`, contiguous in HBM at
  /// `updates_address`, into the row-major `target` at the slices the indices select.
  Status IndirectScatter(const hlo::HloInstruction& inst, const HbmBuffer& target,
                         const std::vector<int64_t>& window, const LinearIndex& index,
                         int64_t count, uint64_t updates_address, Combiner combiner);

  /// Replica-group table index for a collective (deduplicated in program->replica_groups).
  StatusOr<uint64_t> GroupIndex(const hlo::HloInstruction& inst);

  const hlo::HloModule& module_;
  const config::ChipConfig& config_;
  const HbmPlan& plan_;
  isa::Program* program_;
  int32_t core_id_;
  int64_t num_replicas_;
  std::map<std::string, int32_t>* hlo_tags_;
  bool double_buffer_;
  const ElementwiseGroups& groups_;
  MegacoreRole megacore_;
  const std::map<std::string, int64_t>* custom_call_cycles_ = nullptr;
  CoreEmitter em_;
  int loop_depth_ = 0;  // open loop regions
  /// Elementwise ops already run as a dot's epilogue (their own kernels are skipped).
  std::set<const hlo::HloInstruction*> epilogue_done_;
  /// Dots lowered without their prologues (their ops got kernels of their own).
  std::set<const hlo::HloInstruction*> prologue_disabled_;
  /// Index of `inst` in Program::hlo_names (added on first use).
  int32_t TagOf(const hlo::HloInstruction& inst);
  /// The HBM arrays the kernel of `inst` may copy from or to (CoreEmitter::set_hbm_arrays): its
  /// own and its operands' buffers, and those of the ops fused into the same kernel (its
  /// elementwise group, a dot's or convolution's prologue and epilogue ops).
  std::vector<HbmArray> KernelHbmArrays(const hlo::HloInstruction& inst) const;
};

}  // namespace tpusim::compiler
