// reduce on the VPU: the operand is gathered (strided DMA) into VMEM as [kept rows, reduced cols]
// and reduced along the lanes (vpu.reduce acc=1) into results that start at the init value — the
// evaluator's order (docs/codegen.md, "Reductions: one order") — then stored.
#include <fmt/format.h>

#include <algorithm>

#include "compiler/lower/blocking.h"
#include "compiler/lower/lowerer.h"
#include "hlo/computation.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The reducer's function when to_apply is `op(param0, param1)` with op add/maximum/minimum.
std::optional<isa::ReduceOp> ReducerOp(const HloInstruction& reduce) {
  const hlo::HloComputation* c = reduce.to_apply();
  if (c == nullptr || c->num_parameters() != 2) return std::nullopt;
  const HloInstruction* root = c->root_instruction();
  if (root->operand_count() != 2) return std::nullopt;
  const bool params = root->operand(0)->opcode() == HloOpcode::kParameter &&
                      root->operand(1)->opcode() == HloOpcode::kParameter &&
                      root->operand(0) != root->operand(1);
  if (!params) return std::nullopt;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return isa::ReduceOp::kSum;
    case HloOpcode::kMaximum:
      return isa::ReduceOp::kMax;
    case HloOpcode::kMinimum:
      return isa::ReduceOp::kMin;
    default:
      return std::nullopt;
  }
}

isa::BinaryOp CombineOp(isa::ReduceOp op) {
  switch (op) {
    case isa::ReduceOp::kSum:
      return isa::BinaryOp::kAdd;
    case isa::ReduceOp::kMax:
      return isa::BinaryOp::kMax;
    case isa::ReduceOp::kMin:
      return isa::BinaryOp::kMin;
  }
  return isa::BinaryOp::kAdd;
}

isa::op::VpuBroadcast RunningResultsFromInit(isa::DType dtype, uint64_t dst, uint64_t init,
                                             int64_t count) {
  return isa::op::VpuBroadcast{.mode = isa::Broadcast::kScalar,
                               .dtype = dtype,
                               .dst = dst,
                               .src = init,
                               .rows = 1,
                               .cols = static_cast<uint64_t>(count)};
}

isa::op::VpuReduce ReduceInto(isa::ReduceOp op, isa::ReduceAxis axis, isa::DType dtype,
                              uint64_t dst, uint64_t src, int64_t rows, int64_t cols) {
  return isa::op::VpuReduce{.op = op,
                            .axis = axis,
                            .dtype = dtype,
                            .dst = dst,
                            .src = src,
                            .rows = static_cast<uint64_t>(rows),
                            .cols = static_cast<uint64_t>(cols),
                            .acc = true};
}

// Reduced rows longer than VMEM (item "reductions of any size"): each kept row is reduced in
// chunks of whole inner reduced dimensions (the leading reduced dimension cut into blocks; when
// even one of its indices does not fit, the next one is cut too), each chunk folded in order into
// the row's running result, which starts at the init value (vpu.reduce acc=1): the order of one long
// row. A bf16 sum is widened to f32 chunk by chunk and rounded once at the end, as the evaluator
// accumulates it. Chunk loads are double-buffered.
Status Lowerer::ReduceLongRows(const HloInstruction& inst, isa::ReduceOp op, uint64_t init_v,
                               const std::vector<int64_t>& kept,
                               const std::vector<int64_t>& kept_strides,
                               const std::vector<int64_t>& red,
                               const std::vector<int64_t>& red_strides) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  const int64_t e = in.elem_bytes();
  const bool widen = op == isa::ReduceOp::kSum && in.dtype == isa::DType::kBF16;
  const isa::DType acc_dtype = widen ? isa::DType::kF32 : in.dtype;
  // Cut the reduced box: dims [0, d) one index at a time, dim d in blocks of blk, the rest whole.
  // Per chunk element: two load buffers, and its f32 copy when widened.
  const int64_t budget = em_.vmem_free() - 8 * 64;
  const auto blocking = ChooseBlocking(red, 2 * e + (widen ? 4 : 0), budget);
  if (!blocking) {
    return DoesNotFit(inst, fmt::format("VMEM: not even one element of the reduced dimensions "
                                        "fits core.vmem.capacity_bytes = {}",
                                        em_.vmem_bytes()));
  }
  const int64_t chunk = blocking->blk * blocking->inner;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t bufs, Vmem(inst, 2 * chunk * e, "reduced chunks"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t acc, Vmem(inst, 64, "running result"));
  uint64_t wide = 0, init_acc = init_v, res = acc;
  if (widen) {
    TPUSIM_ASSIGN_OR_RETURN(wide, Vmem(inst, chunk * 4, "chunk in f32"));
    TPUSIM_ASSIGN_OR_RETURN(init_acc, Vmem(inst, 64, "init value in f32"));
    TPUSIM_ASSIGN_OR_RETURN(res, Vmem(inst, 64, "result"));
    em_.Emit(isa::op::VpuConvert{
        .src_dtype = in.dtype, .dtype = acc_dtype, .dst = init_acc, .src = init_v, .count = 1});
  }
  const std::vector<int64_t> kept_out_strides = RowMajorStrides(kept, 1);
  int64_t rows = 1;
  for (int64_t k : kept) rows *= k;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t row_off = 0, out_index = 0;
    for (size_t i = 0, r = row; i < kept.size(); ++i) {
      const size_t d = kept.size() - 1 - i;
      const int64_t idx = static_cast<int64_t>(r) % kept[d];
      r /= static_cast<size_t>(kept[d]);
      row_off += idx * kept_strides[d];
      out_index += idx * kept_out_strides[d];
    }
    // The chunks of this row, in order; chunk c is loaded into buffer c % 2 one chunk ahead.
    struct Chunk {
      int64_t off, elems;
      std::vector<int64_t> box;
    };
    std::vector<Chunk> chunks;
    TPUSIM_RETURN_IF_ERROR(ForEachBlock(
        red, *blocking,
        [&](const std::vector<int64_t>& start, const std::vector<int64_t>& bdims) -> Status {
          int64_t off = row_off, elems = 1;
          for (size_t i = 0; i < start.size(); ++i) off += start[i] * red_strides[i];
          for (int64_t b : bdims) elems *= b;
          chunks.push_back(Chunk{off, elems, bdims});
          return OkStatus();
        }));
    auto load = [&](size_t c) -> StatusOr<int64_t> {
      const std::vector<int64_t> ss(red_strides.begin() + static_cast<std::ptrdiff_t>(blocking->d),
                                    red_strides.end());
      return em_.Dma(isa::Opcode::kDmaHbmToVmem, in.address + static_cast<uint64_t>(chunks[c].off),
                     ss, bufs + static_cast<uint64_t>((c % 2) * chunk * e),
                     RowMajorStrides(chunks[c].box, e), chunks[c].box, e, kLoadFlag);
    };
    em_.Emit(RunningResultsFromInit(acc_dtype, acc, init_acc, 1));
    TPUSIM_ASSIGN_OR_RETURN(int64_t pending, load(0));
    for (size_t c = 0; c < chunks.size(); ++c) {
      em_.Wait(kLoadFlag, pending);
      pending = 0;
      if (c + 1 < chunks.size()) {
        TPUSIM_ASSIGN_OR_RETURN(pending, load(c + 1));
      }
      uint64_t src = bufs + static_cast<uint64_t>((c % 2) * chunk * e);
      if (widen) {
        em_.Emit(isa::op::VpuConvert{.src_dtype = in.dtype,
                                     .dtype = acc_dtype,
                                     .dst = wide,
                                     .src = src,
                                     .count = static_cast<uint64_t>(chunks[c].elems)});
        src = wide;
      }
      em_.Emit(ReduceInto(op, isa::ReduceAxis::kLanes, acc_dtype, acc, src, 1, chunks[c].elems));
      TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
    }
    if (widen) {
      em_.Emit(isa::op::VpuConvert{
          .src_dtype = acc_dtype, .dtype = out.dtype, .dst = res, .src = acc, .count = 1});
    }
    const int64_t oe = out.elem_bytes();
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, res,
                      out.address + static_cast<uint64_t>(out_index * oe), oe, oe, kStoreFlag);
    em_.Wait(kStoreFlag, 1);
  }
  return OkStatus();
}

// A reduce that keeps the operand's minor dimension, as XLA's TPU backend reduces it: the kept
// elements stay on the lanes and the reduced ones are folded down the sublanes. The kept dimensions
// before the last reduced one ("outer") and the run of kept dimensions after it (contiguous in HBM,
// `run` elements) form the kept box [outer..., run], blocked like any row-major box; each block is
// loaded with the reduced dimensions slowest, so VMEM holds [reduced, block] and one vpu.reduce
// down the sublanes gives the block's results in the result's order, starting at the init value
// (the evaluator's order). Loads are double-buffered: the next block's load runs under this
// block's reduce and store. Returns false (nothing emitted) when a block of min(kept elements, 128)
// columns of the reduced rows does not fit VMEM; the caller then reduces along the lanes.
StatusOr<bool> Lowerer::ReduceColumns(const HloInstruction& inst, isa::ReduceOp op,
                                      uint64_t init_v) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  const int64_t e = in.elem_bytes(), oe = out.elem_bytes();
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dims, e);
  const auto reduced = [&](size_t i) {
    return std::find(inst.dimensions().begin(), inst.dimensions().end(),
                     static_cast<int64_t>(i)) != inst.dimensions().end();
  };
  size_t last_red = 0;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (reduced(i)) last_red = i;
  }
  std::vector<int64_t> box, box_strides, red, red_strides;  // box: kept [outer..., run]
  int64_t run = 1, rn = 1;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    if (reduced(i)) {
      red.push_back(in.dims[i]);
      red_strides.push_back(in_strides[i]);
      rn *= in.dims[i];
    } else if (i < last_red) {
      box.push_back(in.dims[i]);
      box_strides.push_back(in_strides[i]);
    } else {
      run *= in.dims[i];
    }
  }
  box.push_back(run);
  box_strides.push_back(e);
  // Per kept element: its reduced column in each of two load buffers, and its result.
  const int64_t budget = em_.vmem_free() - 2 * 64;
  const auto blocking = ChooseBlocking(box, 2 * rn * e + oe, budget);
  if (!blocking || blocking->blk * blocking->inner < std::min<int64_t>(out.elements(), 128)) {
    return false;
  }
  const int64_t max_cols = blocking->blk * blocking->inner;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t bufs, Vmem(inst, 2 * rn * max_cols * e, "operand blocks"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t res, Vmem(inst, max_cols * oe, "result"));
  struct Block {
    int64_t src_off, out_index, cols;
    std::vector<int64_t> dims;
  };
  std::vector<Block> blocks;
  const std::vector<int64_t> out_strides = RowMajorStrides(box, 1);
  TPUSIM_RETURN_IF_ERROR(ForEachBlock(
      box, *blocking,
      [&](const std::vector<int64_t>& start, const std::vector<int64_t>& bdims) -> Status {
        Block b{0, 0, 1, bdims};
        for (size_t i = 0; i < start.size(); ++i) {
          b.src_off += start[i] * box_strides[i];
          b.out_index += start[i] * out_strides[i];
        }
        for (int64_t d : bdims) b.cols *= d;
        blocks.push_back(std::move(b));
        return OkStatus();
      }));
  auto load = [&](size_t i) -> StatusOr<int64_t> {
    const Block& b = blocks[i];
    std::vector<int64_t> dims = red, ss = red_strides;
    dims.insert(dims.end(), b.dims.begin(), b.dims.end());
    ss.insert(ss.end(), box_strides.begin() + static_cast<std::ptrdiff_t>(blocking->d),
              box_strides.end());
    return em_.Dma(isa::Opcode::kDmaHbmToVmem, in.address + static_cast<uint64_t>(b.src_off), ss,
                   bufs + static_cast<uint64_t>((i % 2) * rn * max_cols * e),
                   RowMajorStrides(dims, e), dims, e, kLoadFlag);
  };
  TPUSIM_ASSIGN_OR_RETURN(int64_t pending, load(0));
  em_.Emit(RunningResultsFromInit(in.dtype, res, init_v, blocks[0].cols));
  for (size_t i = 0; i < blocks.size(); ++i) {
    em_.Wait(kLoadFlag, pending);
    pending = 0;
    if (i + 1 < blocks.size()) {
      TPUSIM_ASSIGN_OR_RETURN(pending, load(i + 1));
    }
    const Block& b = blocks[i];
    if (i > 0) {
      em_.Wait(kStoreFlag, 1);  // the previous block's results have left `res`
      em_.Emit(RunningResultsFromInit(in.dtype, res, init_v, b.cols));
    }
    em_.Emit(ReduceInto(op, isa::ReduceAxis::kSublanes, in.dtype, res,
                        bufs + static_cast<uint64_t>((i % 2) * rn * max_cols * e), rn, b.cols));
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, res,
                      out.address + static_cast<uint64_t>(b.out_index * oe), b.cols * oe, oe,
                      kStoreFlag);
    TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
  }
  em_.Wait(kStoreFlag, 1);
  return true;
}

Status Lowerer::LowerReduce(const HloInstruction& inst) {
  if (!inst.shape().IsArray() || inst.operand_count() != 2) {
    return Unsupported(inst, "variadic (tuple-shaped) reduce is not supported");
  }
  const auto op = ReducerOp(inst);
  if (!op) {
    return Unsupported(inst,
                       "reducer computation must be add, maximum or minimum of its two "
                       "parameters");
  }
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& init = Buffer(inst.operand(1));
  const HbmBuffer& out = Buffer(&inst);
  if (in.dtype == isa::DType::kPred) return Unsupported(inst, "reduce over pred");
  const int64_t e = in.elem_bytes();
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dims, e);
  std::vector<int64_t> kept, kept_strides, red, red_strides;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    const bool reduced = std::find(inst.dimensions().begin(), inst.dimensions().end(),
                                   static_cast<int64_t>(i)) != inst.dimensions().end();
    (reduced ? red : kept).push_back(in.dims[i]);
    (reduced ? red_strides : kept_strides).push_back(in_strides[i]);
  }
  int64_t rn = 1;
  for (int64_t d : red) rn *= d;
  if (out.elements() == 0) return OkStatus();
  if (rn == 0) return Unsupported(inst, "reduce over an empty dimension");
  if (kept.empty()) {
    kept = {1};
    kept_strides = {0};
  }
  TPUSIM_ASSIGN_OR_RETURN(uint64_t init_v, Vmem(inst, 64, "init value"));
  em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, init.address, init_v, e, e, kLoadFlag);
  em_.Wait(kLoadFlag, 1);
  const int64_t oe = out.elem_bytes();
  // Stores `count` results at VMEM `res` at result index `out_index`.
  auto store = [&](uint64_t res, int64_t count, int64_t out_index) {
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, res,
                      out.address + static_cast<uint64_t>(out_index * oe), count * oe, oe,
                      kStoreFlag);
    em_.Wait(kStoreFlag, 1);
  };

  // The minor dimension kept (a bias gradient, a max pool written as reshape + reduce): down the
  // sublanes, the kept minor elements on the lanes.
  if (out.elements() > 1 && !inst.dimensions().empty() &&
      std::find(inst.dimensions().begin(), inst.dimensions().end(),
                static_cast<int64_t>(in.dims.size()) - 1) == inst.dimensions().end()) {
    TPUSIM_ASSIGN_OR_RETURN(bool done, ReduceColumns(inst, *op, init_v));
    if (done) return OkStatus();
  }
  // One kept row costs rn input elements plus the result.
  const int64_t row_bytes = rn * e + oe;
  const auto blocking = ChooseBlocking(kept, row_bytes, em_.vmem_free() - 2 * 64);
  if (!blocking) return ReduceLongRows(inst, *op, init_v, kept, kept_strides, red, red_strides);
  const int64_t max_rows = blocking->blk * blocking->inner;
  TPUSIM_ASSIGN_OR_RETURN(uint64_t src, Vmem(inst, max_rows * rn * e, "operand block"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t res, Vmem(inst, max_rows * oe, "result"));
  const std::vector<int64_t> kept_out_strides = RowMajorStrides(kept, 1);
  return ForEachBlock(
      kept, *blocking,
      [&](const std::vector<int64_t>& start, const std::vector<int64_t>& bdims) -> Status {
        int64_t src_off = 0, out_index = 0, rows = 1;
        for (size_t i = 0; i < start.size(); ++i) {
          src_off += start[i] * kept_strides[i];
          out_index += start[i] * kept_out_strides[i];
        }
        for (int64_t b : bdims) rows *= b;
        std::vector<int64_t> box = bdims;
        std::vector<int64_t> ss(kept_strides.begin() + static_cast<std::ptrdiff_t>(blocking->d),
                                kept_strides.end());
        box.insert(box.end(), red.begin(), red.end());
        ss.insert(ss.end(), red_strides.begin(), red_strides.end());
        TPUSIM_ASSIGN_OR_RETURN(
            int64_t n,
            em_.Dma(isa::Opcode::kDmaHbmToVmem, in.address + static_cast<uint64_t>(src_off), ss,
                    src, RowMajorStrides(box, e), box, e, kLoadFlag));
        em_.Emit(RunningResultsFromInit(in.dtype, res, init_v, rows));
        em_.Wait(kLoadFlag, n);
        em_.Emit(ReduceInto(*op, isa::ReduceAxis::kLanes, in.dtype, res, src, rows, rn));
        store(res, rows, out_index);
        return OkStatus();
      });
}

}  // namespace tpusim::compiler
