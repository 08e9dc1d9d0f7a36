// Data-dependent addressing: gather, scatter, dynamic-slice and dynamic-update-slice, lowered onto
// the indirect DMAs (opcodes.def dma.gather / dma.scatter: one s32 index per slice, read from VMEM
// by the DMA engine, scaled by a byte stride and clamped or bounds-checked by the engine).
//
// Every kernel has the same three steps:
//  1. the start indices go HBM -> VMEM as one contiguous s32 vector per index component (a strided
//     DMA picks component k out of the indices array whatever index_vector_dim is);
//  2. LinearizeIndices makes ONE index per slice: with a single component whose semantics the DMA
//     implements itself (gather: clamp to [0, dim - size]; scatter: skip out-of-bounds windows) the
//     vector is used as is; otherwise the VPU clamps each component (or, for scatter, marks the
//     slice out of bounds with -1) and sums component * element stride in s32;
//  3. dma.gather HBM -> VMEM then a contiguous store (gather, dynamic-slice), or a copy of the
//     operand to the result, then contiguous loads of the updates and dma.scatter VMEM -> HBM
//     (scatter, dynamic-update-slice), in blocks that fit VMEM.
// Layout restrictions (row-major buffers): gather's offset_dims must be the trailing result
// dimensions and scatter's update_window_dims the trailing update dimensions (the batch dimensions
// lead, as XLA emits them for embedding lookups and KV-cache updates); operand batching dimensions
// are not lowered. Everything else is an Unsupported status saying what is and is not handled.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "compiler/lower/blocking.h"
#include "compiler/lower/device_types.h"
#include "compiler/lower/lowerer.h"
#include "hlo/computation.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

constexpr int64_t kMaxCount = (int64_t{1} << 24) - 1;  // the descriptors' 24-bit count field
constexpr int64_t kMaxBound = (int64_t{1} << 31) - 1;  // the 31-bit bound field (an s32 index)

int64_t Product(std::span<const int64_t> v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

bool IsParameter(const HloInstruction* i, int64_t n) {
  return i->opcode() == HloOpcode::kParameter && i->parameter_number() == n;
}

}  // namespace

StatusOr<Lowerer::LinearIndex> Lowerer::LinearizeIndices(
    const HloInstruction& inst, const HbmBuffer& operand, const std::vector<int64_t>& window,
    const std::vector<IndexComponent>& components, int64_t count, IndexMode mode) {
  const int64_t eb = operand.elem_bytes();
  const std::vector<int64_t> strides = RowMajorStrides(operand.dims, eb);
  auto max_start = [&](int64_t d) {
    return operand.dims[static_cast<size_t>(d)] - window[static_cast<size_t>(d)];
  };
  auto fill = [&](uint64_t dst, int64_t n, int32_t value) {
    em_.Emit(isa::op::VpuFill{.dtype = isa::DType::kS32,
                              .dst = dst,
                              .count = static_cast<uint64_t>(n),
                              .value = static_cast<uint32_t>(value)});
  };
  if (components.empty()) {
    // Every slice starts at the origin.
    TPUSIM_ASSIGN_OR_RETURN(uint64_t zeros, Vmem(inst, count * 4, "start indices"));
    fill(zeros, count, 0);
    return LinearIndex{zeros, 0, 0};
  }
  for (const IndexComponent& c : components) {
    if (max_start(c.dim) < 0 || max_start(c.dim) > kMaxBound) {
      return Unsupported(inst, fmt::format("dimension {} of size {} with a window of {}: the "
                                           "largest start must be in [0, 2^31)",
                                           c.dim, operand.dims[static_cast<size_t>(c.dim)],
                                           window[static_cast<size_t>(c.dim)]));
    }
  }
  if (components.size() == 1 && mode != IndexMode::kScatterClamp) {
    // dma.gather clamps, dma.scatter skips an index outside [0, dim - window] itself.
    const int64_t d = components[0].dim;
    return LinearIndex{components[0].vmem, static_cast<uint64_t>(strides[static_cast<size_t>(d)]),
                       static_cast<uint64_t>(max_start(d))};
  }
  // Element-unit linearization in s32: every reachable offset must fit.
  if (operand.elements() > kMaxBound) {
    return Unsupported(inst, fmt::format("more than one start index (or a clamped scatter index) "
                                         "into an operand of {} elements: the linearized s32 "
                                         "index must stay below 2^31",
                                         operand.elements()));
  }
  TPUSIM_ASSIGN_OR_RETURN(uint64_t lin, Vmem(inst, count * 4, "linear index"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t tmp, Vmem(inst, count * 4, "index scratch"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t consts, Vmem(inst, 64, "index constants"));
  const uint64_t zero = consts, bound_c = consts + 4, mult_c = consts + 8;
  fill(zero, 1, 0);
  fill(lin, count, 0);
  auto binary = [&](isa::BinaryOp op, uint64_t dst, uint64_t a, uint64_t b) {
    em_.Emit(isa::op::VpuBinary{.op = op,
                                .dtype = isa::DType::kS32,
                                .dst = dst,
                                .a = a,
                                .b = b,
                                .rows = 1,
                                .cols = static_cast<uint64_t>(count),
                                .a_bcast = isa::Broadcast::kNone,
                                .b_bcast = isa::Broadcast::kScalar});
  };
  int64_t bound = 0;
  for (const IndexComponent& c : components) {
    const int64_t b = max_start(c.dim);
    const int64_t m = strides[static_cast<size_t>(c.dim)] / eb;
    fill(bound_c, 1, static_cast<int32_t>(b));
    fill(mult_c, 1, static_cast<int32_t>(m));
    binary(isa::BinaryOp::kMax, tmp, c.vmem, zero);         // tmp = max(i, 0)
    binary(isa::BinaryOp::kMin, tmp, tmp, bound_c);         // tmp = min(tmp, dim - window)
    binary(isa::BinaryOp::kMul, tmp, tmp, mult_c);          // tmp *= element stride
    em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kAdd,  // lin += tmp
                                .dtype = isa::DType::kS32,
                                .dst = lin,
                                .a = lin,
                                .b = tmp,
                                .rows = 1,
                                .cols = static_cast<uint64_t>(count)});
    bound += b * m;
  }
  if (mode == IndexMode::kScatterSkip) {
    // Scatter: a slice with any component outside [0, dim - window] gets index -1 (skipped).
    TPUSIM_ASSIGN_OR_RETURN(uint64_t neg, Vmem(inst, count * 4, "out-of-bounds marker"));
    TPUSIM_ASSIGN_OR_RETURN(uint64_t ok, Vmem(inst, count, "in-bounds predicate"));
    fill(neg, count, -1);
    for (const IndexComponent& c : components) {
      fill(bound_c, 1, static_cast<int32_t>(max_start(c.dim)));
      for (auto [op, rhs] :
           {std::pair{isa::CompareOp::kGe, zero}, std::pair{isa::CompareOp::kLe, bound_c}}) {
        em_.Emit(isa::op::VpuCompare{.op = op,
                                     .dtype = isa::DType::kS32,
                                     .dst = ok,
                                     .a = c.vmem,
                                     .b = rhs,
                                     .rows = 1,
                                     .cols = static_cast<uint64_t>(count),
                                     .a_bcast = isa::Broadcast::kNone,
                                     .b_bcast = isa::Broadcast::kScalar});
        em_.Emit(isa::op::VpuSelect{.dtype = isa::DType::kS32,
                                    .dst = lin,
                                    .pred = ok,
                                    .a = lin,
                                    .b = neg,
                                    .rows = 1,
                                    .cols = static_cast<uint64_t>(count)});
      }
    }
  }
  return LinearIndex{lin, static_cast<uint64_t>(eb), static_cast<uint64_t>(bound)};
}

namespace {

// One VMEM staging step of an indexed copy between `count` slices of the indexed array (at indexed
// positions) and a contiguous array of the slices: `n` slices from slice j, or (n = 1) a block
// `box` of slice j at byte offset `indexed_off` in the indexed array's slice and `slice_off` in
// the contiguous slice.
struct SliceStage {
  int64_t j = 0, n = 0;
  std::span<const int64_t> box;
  int64_t indexed_off = 0, slice_off = 0;
};

// VMEM buffer names and the too-large error of one direction of indexed copy.
struct SliceStageNames {
  const char* slices;  // buffer of whole slices
  const char* block;   // buffer of one slice block
  const char* row;     // what a row of, when not even one fits
};

// The staging plan gather and scatter share: whole slices, as many per step as fit `budget` bytes
// (at most the descriptors' count field); else each slice in leading-dimension blocks of `window`
// (each block contiguous in the row-major slice). `vmem(bytes, what)` allocates the one staging
// buffer; `stage(buf, step)` moves one step through it.
template <typename Alloc, typename Stage>
Status ForEachSliceStage(const hlo::HloInstruction& inst, const std::vector<int64_t>& window,
                         const std::vector<int64_t>& indexed_strides, int64_t eb, int64_t count,
                         int64_t budget, const SliceStageNames& names, Alloc&& vmem,
                         Stage&& stage) {
  const int64_t slice_bytes = Product(window) * eb;
  if (slice_bytes <= budget) {
    const int64_t per_block = std::min({count, budget / slice_bytes, kMaxCount});
    TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, vmem(per_block * slice_bytes, names.slices));
    for (int64_t j0 = 0; j0 < count; j0 += per_block) {
      TPUSIM_RETURN_IF_ERROR(
          stage(buf, SliceStage{j0, std::min(per_block, count - j0), window, 0, 0}));
    }
    return OkStatus();
  }
  const auto blocking = ChooseBlocking(window, eb, budget);
  if (!blocking) {
    return DoesNotFit(inst, fmt::format("VMEM: not even one row of {} fits", names.row));
  }
  TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, vmem(blocking->blk * blocking->inner * eb, names.block));
  const std::vector<int64_t> win_strides = RowMajorStrides(window, eb);
  for (int64_t j = 0; j < count; ++j) {
    TPUSIM_RETURN_IF_ERROR(ForEachBlock(
        window, *blocking,
        [&](const std::vector<int64_t>& start, const std::vector<int64_t>& bdims) -> Status {
          SliceStage s{j, 1, bdims, 0, 0};
          for (size_t d = 0; d < start.size(); ++d) {
            s.indexed_off += start[d] * indexed_strides[d];
            s.slice_off += start[d] * win_strides[d];
          }
          return stage(buf, s);
        }));
  }
  return OkStatus();
}

// Emits indexed DMA `op` (dma.gather or dma.scatter, its index, count and combine fields set) for
// `n` slices of shape `box` from `src` (strides `src_strides`) to `dst` (`dst_strides`), split
// into the pieces a descriptor can describe; returns how many it issued.
template <typename Op>
StatusOr<int64_t> EmitIndexedDma(CoreEmitter& em, Op op, const std::vector<int64_t>& src_strides,
                                 const std::vector<int64_t>& dst_strides,
                                 std::span<const int64_t> box, int64_t eb, uint64_t src,
                                 uint64_t dst) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<DmaBoxPiece> pieces,
                          SplitDmaBox(src_strides, dst_strides, box, eb));
  op.slice_stride = static_cast<uint64_t>(Product(box) * eb);
  for (const DmaBoxPiece& p : pieces) {
    SetDmaPiece(op, p, src, dst, eb);
    em.Emit(op);
    if (em.size() > kMaxInstructionsPerCore) break;
  }
  return static_cast<int64_t>(pieces.size());
}

}  // namespace

Status Lowerer::IndirectGather(const HloInstruction& inst, const HbmBuffer& operand,
                               const std::vector<int64_t>& window, const LinearIndex& index,
                               int64_t count, uint64_t out_address) {
  const int64_t eb = operand.elem_bytes();
  const int64_t slice_bytes = Product(window) * eb;
  if (count == 0 || slice_bytes == 0) return OkStatus();
  const std::vector<int64_t> op_strides = RowMajorStrides(operand.dims, eb);
  return ForEachSliceStage(
      inst, window, op_strides, eb, count, em_.vmem_free() - 64,
      {"gathered slices", "slice block", "a gathered slice"},
      [&](int64_t bytes, const char* what) { return Vmem(inst, bytes, what); },
      [&](uint64_t buf, const SliceStage& s) -> Status {
        isa::op::DmaGather g{};
        g.flag = kLoadFlag;
        g.idx = index.idx + static_cast<uint64_t>(4 * s.j);
        g.count = static_cast<uint64_t>(s.n);
        g.idx_scale = index.scale;
        g.bound = index.bound;
        TPUSIM_ASSIGN_OR_RETURN(
            int64_t issued,
            EmitIndexedDma(em_, g, op_strides, RowMajorStrides(s.box, eb), s.box, eb,
                           operand.address + static_cast<uint64_t>(s.indexed_off), buf));
        em_.Wait(kLoadFlag, issued);
        em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, buf,
                          out_address + static_cast<uint64_t>(s.j * slice_bytes + s.slice_off),
                          s.n * Product(s.box) * eb, eb, kStoreFlag);
        em_.Wait(kStoreFlag, 1);
        return em_.CheckSize();
      });
}

Status Lowerer::IndirectScatter(const HloInstruction& inst, const HbmBuffer& target,
                                const std::vector<int64_t>& window, const LinearIndex& index,
                                int64_t count, uint64_t updates_address, Combiner combiner) {
  const int64_t eb = target.elem_bytes();
  const int64_t slice_bytes = Product(window) * eb;
  if (count == 0 || slice_bytes == 0) return OkStatus();
  const std::vector<int64_t> op_strides = RowMajorStrides(target.dims, eb);
  return ForEachSliceStage(
      inst, window, op_strides, eb, count, em_.vmem_free() - 64,
      {"update slices", "update block", "an update slice"},
      [&](int64_t bytes, const char* what) { return Vmem(inst, bytes, what); },
      [&](uint64_t buf, const SliceStage& s) -> Status {
        em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                          updates_address + static_cast<uint64_t>(s.j * slice_bytes + s.slice_off),
                          buf, s.n * Product(s.box) * eb, eb, kLoadFlag);
        em_.Wait(kLoadFlag, 1);
        isa::op::DmaScatter sc{};
        sc.flag = kStoreFlag;
        sc.idx = index.idx + static_cast<uint64_t>(4 * s.j);
        sc.count = static_cast<uint64_t>(s.n);
        sc.idx_scale = index.scale;
        sc.bound = index.bound;
        sc.combine = combiner.combine;
        sc.op = combiner.op;
        sc.dtype = target.dtype;
        TPUSIM_ASSIGN_OR_RETURN(
            int64_t issued,
            EmitIndexedDma(em_, sc, RowMajorStrides(s.box, eb), op_strides, s.box, eb, buf,
                           target.address + static_cast<uint64_t>(s.indexed_off)));
        // The next step's load reuses the buffer, and a later slice may overlap an earlier one.
        em_.Wait(kStoreFlag, issued);
        return em_.CheckSize();
      });
}

namespace {

// The index vectors of an indices array (index_vector_dim `ivd`; ivd == rank means one implicit
// component): `components` values each, `count` of them (the product of the other dimensions).
struct IndexVectors {
  int64_t components = 1, count = 1;
};

IndexVectors CountIndexVectors(const HbmBuffer& indices, int64_t ivd) {
  const int64_t rank = static_cast<int64_t>(indices.dims.size());
  IndexVectors v;
  for (int64_t d = 0; d < rank; ++d) {
    (d == ivd ? v.components : v.count) *= indices.dims[static_cast<size_t>(d)];
  }
  return v;
}

// Loads component k of an indices array (index_vector_dim `ivd`; ivd == rank means one implicit
// component) as `count` contiguous values of the indices' type; returns the number of descriptors
// issued.
StatusOr<int64_t> LoadComponent(CoreEmitter& em, const HbmBuffer& indices, int64_t ivd, int64_t k,
                                uint64_t dst) {
  const int64_t rank = static_cast<int64_t>(indices.dims.size());
  const int64_t eb = indices.elem_bytes();
  const std::vector<int64_t> strides = RowMajorStrides(indices.dims, eb);
  std::vector<int64_t> box, ss;
  uint64_t src = indices.address;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == ivd) {
      src += static_cast<uint64_t>(k * strides[static_cast<size_t>(d)]);
    } else {
      box.push_back(indices.dims[static_cast<size_t>(d)]);
      ss.push_back(strides[static_cast<size_t>(d)]);
    }
  }
  if (box.empty()) {
    box = {1};
    ss = {eb};
  }
  return em.Dma(isa::Opcode::kDmaHbmToVmem, src, ss, dst, RowMajorStrides(box, eb), box, eb,
                kLoadFlag);
}

}  // namespace

StatusOr<uint64_t> Lowerer::IndexStage(const HloInstruction& inst, isa::DType t, uint64_t idx_buf,
                                       int64_t n) {
  if (t == isa::DType::kS32) return idx_buf;
  return Vmem(inst, std::max<int64_t>(1, n) * isa::DTypeBytes(t), "start indices as loaded");
}

Status Lowerer::IndicesToS32(const HloInstruction& inst, isa::DType t, uint64_t src, uint64_t dst,
                             int64_t n) {
  if (t == isa::DType::kS32) return OkStatus();
  const auto count = static_cast<uint64_t>(n);
  if (isa::DTypeBytes(t) >= 4) {  // u32, s64, u64: saturate to [-2^31, 2^31 - 1] in place
    TPUSIM_ASSIGN_OR_RETURN(uint64_t limit, Vmem(inst, 8, "index limit"));
    auto clamp = [&](isa::BinaryOp op, uint32_t value) {
      // vpu.fill sign-extends its 32-bit immediate into a 64-bit type: 0x80000000 is -2^31.
      em_.Emit(isa::op::VpuFill{.dtype = t, .dst = limit, .count = 1, .value = value});
      em_.Emit(isa::op::VpuBinary{.op = op,
                                  .dtype = t,
                                  .dst = src,
                                  .a = src,
                                  .b = limit,
                                  .rows = 1,
                                  .cols = count,
                                  .a_bcast = isa::Broadcast::kNone,
                                  .b_bcast = isa::Broadcast::kScalar});
    };
    clamp(isa::BinaryOp::kMin, 0x7FFFFFFFu);
    if (!isa::IsUnsigned(t)) clamp(isa::BinaryOp::kMax, 0x80000000u);
  }
  em_.Emit(isa::op::VpuConvert{
      .src_dtype = t, .dtype = isa::DType::kS32, .dst = dst, .src = src, .count = count});
  return OkStatus();
}

Status Lowerer::LowerGather(const HloInstruction& inst) {
  const hlo::GatherDimensionNumbers& dn = inst.gather_dimension_numbers();
  const HbmBuffer& operand = Buffer(inst.operand(0));
  const HbmBuffer& indices = Buffer(inst.operand(1));
  const HbmBuffer& out = Buffer(&inst);
  const std::vector<int64_t>& sizes = inst.gather_slice_sizes();
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  const int64_t out_rank = static_cast<int64_t>(out.dims.size());
  if (!dn.operand_batching_dims.empty() || !dn.start_indices_batching_dims.empty()) {
    return Unsupported(inst,
                       "gather with operand_batching_dims is not lowered (supported: "
                       "offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, "
                       "slice_sizes)");
  }
  if (!isa::IsInteger(indices.dtype)) return Unsupported(inst, "gather indices must be integers");
  if (static_cast<int64_t>(sizes.size()) != rank) {
    return Unsupported(inst, "slice_sizes must have one entry per operand dimension");
  }
  const int64_t n_off = static_cast<int64_t>(dn.offset_dims.size());
  for (int64_t k = 0; k < n_off; ++k) {
    if (dn.offset_dims[static_cast<size_t>(k)] != out_rank - n_off + k) {
      return Unsupported(inst, fmt::format("offset_dims={{{}}}: only trailing offset dimensions "
                                           "(the batch dimensions first, offset_dims = the last "
                                           "{} result dimensions) are lowered",
                                           fmt::join(dn.offset_dims, ","), n_off));
    }
  }
  const int64_t ivd = dn.index_vector_dim;
  const IndexVectors vectors = CountIndexVectors(indices, ivd);
  const int64_t ncomp = vectors.components, count = vectors.count;
  if (ncomp != static_cast<int64_t>(dn.start_index_map.size())) {
    return Unsupported(inst, "the index vector size differs from start_index_map's");
  }
  if (count > kMaxCount) {
    return Unsupported(inst,
                       fmt::format("{} gathered slices (at most 2^24 - 1 per gather)", count));
  }
  if (count == 0 || out.elements() == 0) return OkStatus();  // an empty result
  // Components whose slice spans the whole dimension always clamp to 0: no code.
  std::vector<IndexComponent> comps;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t idx_buf,
                          Vmem(inst, std::max<int64_t>(1, ncomp) * count * 4, "start indices"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t stage, IndexStage(inst, indices.dtype, idx_buf, ncomp * count));
  std::vector<uint64_t> loaded;  // where each component's values arrive (stage == idx_buf: s32)
  int64_t loads = 0;
  for (int64_t k = 0; k < ncomp; ++k) {
    const int64_t d = dn.start_index_map[static_cast<size_t>(k)];
    if (d < 0 || d >= rank) return Unsupported(inst, "start_index_map names a missing dimension");
    if (sizes[static_cast<size_t>(d)] >= operand.dims[static_cast<size_t>(d)]) continue;
    loaded.push_back(stage + static_cast<uint64_t>(k * count * indices.elem_bytes()));
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, LoadComponent(em_, indices, ivd, k, loaded.back()));
    loads += n;
    comps.push_back({idx_buf + static_cast<uint64_t>(k * count * 4), d});
  }
  em_.Wait(kLoadFlag, loads);
  for (size_t i = 0; i < comps.size(); ++i) {
    TPUSIM_RETURN_IF_ERROR(IndicesToS32(inst, indices.dtype, loaded[i], comps[i].vmem, count));
  }
  TPUSIM_ASSIGN_OR_RETURN(LinearIndex index, LinearizeIndices(inst, operand, sizes, comps, count,
                                                              IndexMode::kGatherClamp));
  return IndirectGather(inst, operand, sizes, index, count, out.address);
}

Status Lowerer::LowerScatter(const HloInstruction& inst) {
  const hlo::ScatterDimensionNumbers& dn = inst.scatter_dimension_numbers();
  if (inst.operand_count() != 3 || !inst.shape().IsArray()) {
    return Unsupported(inst,
                       "a variadic scatter whose combiner mixes its operands (a result reads "
                       "another operand's value or update) is not lowered; supported: one "
                       "operand, or several whose combiner computes each result from its own "
                       "operand and update only (split by variadic-scatter-splitter), or "
                       "unique_indices=true with an elementwise combiner "
                       "(unique-scatter-expander)");
  }
  if (!dn.input_batching_dims.empty() || !dn.scatter_indices_batching_dims.empty()) {
    return Unsupported(inst,
                       "scatter with input_batching_dims is not lowered (supported: "
                       "update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, "
                       "index_vector_dim)");
  }
  // The combiner: to_apply's root is parameter 1 (assign) or add/maximum/minimum of the two.
  Combiner combiner;
  const hlo::HloComputation* fn = inst.to_apply();
  const HloInstruction* root = fn ? fn->root_instruction() : nullptr;
  if (root != nullptr && IsParameter(root, 1)) {
    combiner.combine = false;
  } else if (root != nullptr && root->operand_count() == 2 &&
             ((IsParameter(root->operand(0), 0) && IsParameter(root->operand(1), 1)) ||
              (IsParameter(root->operand(0), 1) && IsParameter(root->operand(1), 0))) &&
             (root->opcode() == HloOpcode::kAdd || root->opcode() == HloOpcode::kMaximum ||
              root->opcode() == HloOpcode::kMinimum)) {
    combiner.combine = true;
    combiner.op = root->opcode() == HloOpcode::kAdd       ? isa::ReduceOp::kSum
                  : root->opcode() == HloOpcode::kMaximum ? isa::ReduceOp::kMax
                                                          : isa::ReduceOp::kMin;
  } else {
    return Unsupported(inst, fmt::format("scatter to_apply={}: only assignment (ROOT = parameter "
                                         "1) and add / maximum / minimum of the two parameters "
                                         "are lowered (any elementwise combiner with "
                                         "unique_indices=true)",
                                         fn ? "%" + fn->name() : "<none>"));
  }
  const HbmBuffer& operand = Buffer(inst.operand(0));
  const HbmBuffer& indices = Buffer(inst.operand(1));
  const HbmBuffer& updates = Buffer(inst.operand(2));
  const HbmBuffer& out = Buffer(&inst);
  if (combiner.combine && operand.dtype == isa::DType::kPred) {
    return Unsupported(inst,
                       "a combining scatter on pred (the DMA combines numbers: bf16, f16, "
                       "f32 and the integers)");
  }
  if (!isa::IsInteger(indices.dtype)) return Unsupported(inst, "scatter indices must be integers");
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  const int64_t urank = static_cast<int64_t>(updates.dims.size());
  const int64_t n_win = static_cast<int64_t>(dn.update_window_dims.size());
  for (int64_t k = 0; k < n_win; ++k) {
    if (dn.update_window_dims[static_cast<size_t>(k)] != urank - n_win + k) {
      return Unsupported(inst, fmt::format("update_window_dims={{{}}}: only trailing window "
                                           "dimensions (the scatter dimensions first, window = the "
                                           "last {} update dimensions) are lowered",
                                           fmt::join(dn.update_window_dims, ","), n_win));
    }
  }
  // Window size per operand dimension: 1 for inserted dims, else the next window dimension.
  std::vector<int64_t> window(static_cast<size_t>(rank), 1);
  int64_t w = urank - n_win;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dn.inserted_window_dims.begin(), dn.inserted_window_dims.end(), d) !=
        dn.inserted_window_dims.end()) {
      continue;
    }
    if (w >= urank) return Unsupported(inst, "window dimensions do not match the operand rank");
    window[static_cast<size_t>(d)] = updates.dims[static_cast<size_t>(w++)];
  }
  const int64_t ivd = dn.index_vector_dim;
  const IndexVectors vectors = CountIndexVectors(indices, ivd);
  const int64_t ncomp = vectors.components, count = vectors.count;
  if (ncomp != static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size())) {
    return Unsupported(inst, "the index vector size differs from scatter_dims_to_operand_dims'");
  }
  if (count > kMaxCount) {
    return Unsupported(inst, fmt::format("{} scatter updates (at most 2^24 - 1)", count));
  }
  int64_t update_slices = 1;
  for (int64_t d = 0; d < urank - n_win; ++d) update_slices *= updates.dims[static_cast<size_t>(d)];
  if (update_slices != count) {
    return Unsupported(inst,
                       fmt::format("{} update slices for {} start indices", update_slices, count));
  }
  if (count == 0 || updates.elements() == 0) return LowerCopyValue(inst, operand, out);
  for (int64_t d = 0; d < rank; ++d) {
    if (window[static_cast<size_t>(d)] > operand.dims[static_cast<size_t>(d)]) {
      return Unsupported(inst, "an update window is larger than the operand");
    }
  }
  // Indices first (small), then the copy of the operand into the result (it takes the VMEM that is
  // left, and finishes before the updates are written), then the updates.
  TPUSIM_ASSIGN_OR_RETURN(uint64_t idx_buf,
                          Vmem(inst, std::max<int64_t>(1, ncomp) * count * 4, "scatter indices"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t stage, IndexStage(inst, indices.dtype, idx_buf, ncomp * count));
  std::vector<IndexComponent> comps;
  int64_t loads = 0;
  for (int64_t k = 0; k < ncomp; ++k) {
    const int64_t d = dn.scatter_dims_to_operand_dims[static_cast<size_t>(k)];
    if (d < 0 || d >= rank) {
      return Unsupported(inst, "scatter_dims_to_operand_dims names a missing dimension");
    }
    const uint64_t src = stage + static_cast<uint64_t>(k * count * indices.elem_bytes());
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, LoadComponent(em_, indices, ivd, k, src));
    loads += n;
    comps.push_back({idx_buf + static_cast<uint64_t>(k * count * 4), d});
  }
  em_.Wait(kLoadFlag, loads);
  for (size_t k = 0; k < comps.size(); ++k) {
    const uint64_t src = stage + k * static_cast<uint64_t>(count * indices.elem_bytes());
    TPUSIM_RETURN_IF_ERROR(IndicesToS32(inst, indices.dtype, src, comps[k].vmem, count));
  }
  TPUSIM_ASSIGN_OR_RETURN(LinearIndex index, LinearizeIndices(inst, operand, window, comps, count,
                                                              IndexMode::kScatterSkip));
  const int64_t free_before_copy = em_.vmem_free();
  if (out.address != operand.address) {
    // The copy's block buffer is scoped to the copy: reuse its VMEM for the updates afterwards.
    const int64_t vmem_top = em_.vmem_bytes() - free_before_copy;
    TPUSIM_RETURN_IF_ERROR(LowerCopyValue(inst, operand, out));
    em_.ResetVmem();
    TPUSIM_CHECK(em_.AllocVmem(vmem_top) == 0);
  }
  return IndirectScatter(inst, out, window, index, count, updates.address, combiner);
}

namespace {

// The start-index operands of a dynamic-slice / dynamic-update-slice from operand `first` on: one
// scalar per dimension, or (old HLO) one rank-1 array of them.
struct StartIndices {
  std::vector<const HloInstruction*> scalars;  // one per dimension, or
  const HloInstruction* vector = nullptr;      // one s32[rank]
};

StatusOr<StartIndices> GetStartIndices(const HloInstruction& inst, int64_t first, int64_t rank) {
  StartIndices s;
  const int64_t n = inst.operand_count() - first;
  if (n == rank) {
    for (int64_t i = 0; i < n; ++i) {
      const HloInstruction* op = inst.operand(first + i);
      if (op->shape().dimensions().size() != 0) break;
      s.scalars.push_back(op);
    }
    if (static_cast<int64_t>(s.scalars.size()) == rank) return s;
  }
  if (n == 1 && inst.operand(first)->shape().dimensions().size() == 1 &&
      inst.operand(first)->shape().dimensions()[0] == rank) {
    s.vector = inst.operand(first);
    return s;
  }
  return Unsupported(
      inst, fmt::format("expected {} scalar start indices (or one s32[{}] array)", rank, rank));
}

// The staging type of dynamic-slice start indices: s32 when every start is s32 (loaded in place),
// else s64 (8-byte slots, one per dimension, that hold any index type).
isa::DType StartsType(const StartIndices& starts) {
  auto t = [](const HloInstruction* i) { return DeviceType(i->shape().element_type()); };
  if (starts.vector) {
    return t(starts.vector) == isa::DType::kS32 ? isa::DType::kS32 : isa::DType::kS64;
  }
  for (const HloInstruction* i : starts.scalars) {
    if (t(i) != isa::DType::kS32) return isa::DType::kS64;
  }
  return isa::DType::kS32;
}

}  // namespace

StatusOr<std::vector<Lowerer::IndexComponent>> Lowerer::LoadStartIndices(
    const HloInstruction& inst, int64_t first, const HbmBuffer& operand,
    const std::vector<int64_t>& window) {
  const int64_t rank = static_cast<int64_t>(operand.dims.size());
  TPUSIM_ASSIGN_OR_RETURN(StartIndices starts, GetStartIndices(inst, first, rank));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t idx_buf,
                          Vmem(inst, std::max<int64_t>(1, rank) * 4, "start indices"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t stage, IndexStage(inst, StartsType(starts), idx_buf, rank));
  std::vector<IndexComponent> comps;
  std::vector<isa::DType> types;
  int64_t loads = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (window[static_cast<size_t>(d)] >= operand.dims[static_cast<size_t>(d)]) continue;
    const HbmBuffer& b =
        starts.vector ? Buffer(starts.vector) : Buffer(starts.scalars[static_cast<size_t>(d)]);
    if (!isa::IsInteger(b.dtype)) return Unsupported(inst, "start indices must be integers");
    const int64_t eb = b.elem_bytes();
    const uint64_t dst = idx_buf + static_cast<uint64_t>(4 * d);
    const uint64_t src = b.dtype == isa::DType::kS32 ? dst : stage + static_cast<uint64_t>(8 * d);
    if (b.dtype != isa::DType::kS32 && stage == idx_buf) return Internal("no index staging area");
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                      b.address + static_cast<uint64_t>(starts.vector ? eb * d : 0), src, eb, eb,
                      kLoadFlag);
    ++loads;
    comps.push_back({dst, d});
    types.push_back(b.dtype);
  }
  em_.Wait(kLoadFlag, loads);
  for (size_t k = 0; k < comps.size(); ++k) {
    const uint64_t src = types[k] == isa::DType::kS32
                             ? comps[k].vmem
                             : stage + static_cast<uint64_t>(8 * comps[k].dim);
    TPUSIM_RETURN_IF_ERROR(IndicesToS32(inst, types[k], src, comps[k].vmem, 1));
  }
  return comps;
}

Status Lowerer::LowerDynamicSlice(const HloInstruction& inst) {
  const HbmBuffer& operand = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  std::vector<int64_t> sizes = inst.dynamic_slice_sizes();
  if (sizes.size() != operand.dims.size()) sizes = out.dims;
  TPUSIM_ASSIGN_OR_RETURN(std::vector<IndexComponent> comps,
                          LoadStartIndices(inst, 1, operand, sizes));
  TPUSIM_ASSIGN_OR_RETURN(
      LinearIndex index, LinearizeIndices(inst, operand, sizes, comps, 1, IndexMode::kGatherClamp));
  return IndirectGather(inst, operand, sizes, index, 1, out.address);
}

Status Lowerer::LowerDynamicUpdateSlice(const HloInstruction& inst) {
  const HbmBuffer& operand = Buffer(inst.operand(0));
  const HbmBuffer& update = Buffer(inst.operand(1));
  const HbmBuffer& out = Buffer(&inst);
  if (update.dims.size() != operand.dims.size()) {
    return Unsupported(inst, "the update's rank differs from the operand's");
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<IndexComponent> comps,
                          LoadStartIndices(inst, 2, operand, update.dims));
  // dynamic-update-slice clamps its start (unlike scatter, which skips): linearize with clamping.
  TPUSIM_ASSIGN_OR_RETURN(LinearIndex index, LinearizeIndices(inst, operand, update.dims, comps, 1,
                                                              IndexMode::kScatterClamp));
  const int64_t free_before_copy = em_.vmem_free();
  if (out.address != operand.address) {
    const int64_t vmem_top = em_.vmem_bytes() - free_before_copy;
    TPUSIM_RETURN_IF_ERROR(LowerCopyValue(inst, operand, out));
    em_.ResetVmem();
    TPUSIM_CHECK(em_.AllocVmem(vmem_top) == 0);
  }
  return IndirectScatter(inst, out, update.dims, index, 1, update.address, Combiner{});
}

}  // namespace tpusim::compiler
