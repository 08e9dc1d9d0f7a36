// Elementwise kernels on the VPU: unary, convert, binary, compare, select, clamp. The arrays are
// processed as flat element ranges in chunks that fit VMEM; an operand with one element (a scalar,
// allowed for clamp's bounds and select's predicate) is loaded once and read with bcast=scalar.
#include <fmt/format.h>

#include <array>
#include <optional>

#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::HloOpcode;

namespace {

std::optional<isa::UnaryOp> UnaryFor(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAbs:
      return isa::UnaryOp::kAbs;
    case HloOpcode::kCbrt:
      return isa::UnaryOp::kCbrt;
    case HloOpcode::kCeil:
      return isa::UnaryOp::kCeil;
    case HloOpcode::kClz:
      return isa::UnaryOp::kClz;
    case HloOpcode::kCos:
      return isa::UnaryOp::kCos;
    case HloOpcode::kErf:
      return isa::UnaryOp::kErf;
    case HloOpcode::kExp:
      return isa::UnaryOp::kExp;
    case HloOpcode::kExpm1:
      return isa::UnaryOp::kExpm1;
    case HloOpcode::kFloor:
      return isa::UnaryOp::kFloor;
    case HloOpcode::kLog:
      return isa::UnaryOp::kLog;
    case HloOpcode::kLog1p:
      return isa::UnaryOp::kLog1p;
    case HloOpcode::kLogistic:
      return isa::UnaryOp::kLogistic;
    case HloOpcode::kNegate:
      return isa::UnaryOp::kNeg;
    case HloOpcode::kNot:
      return isa::UnaryOp::kNot;
    case HloOpcode::kPopulationCount:
      return isa::UnaryOp::kPopcnt;
    case HloOpcode::kRoundNearestAfz:
      return isa::UnaryOp::kRoundAfz;
    case HloOpcode::kRoundNearestEven:
      return isa::UnaryOp::kRoundNe;
    case HloOpcode::kRsqrt:
      return isa::UnaryOp::kRsqrt;
    case HloOpcode::kSign:
      return isa::UnaryOp::kSign;
    case HloOpcode::kSin:
      return isa::UnaryOp::kSin;
    case HloOpcode::kSqrt:
      return isa::UnaryOp::kSqrt;
    case HloOpcode::kTan:
      return isa::UnaryOp::kTan;
    case HloOpcode::kTanh:
      return isa::UnaryOp::kTanh;
    default:
      return std::nullopt;
  }
}

std::optional<isa::BinaryOp> BinaryFor(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
      return isa::BinaryOp::kAdd;
    case HloOpcode::kSubtract:
      return isa::BinaryOp::kSub;
    case HloOpcode::kMultiply:
      return isa::BinaryOp::kMul;
    case HloOpcode::kDivide:
      return isa::BinaryOp::kDiv;
    case HloOpcode::kMaximum:
      return isa::BinaryOp::kMax;
    case HloOpcode::kMinimum:
      return isa::BinaryOp::kMin;
    case HloOpcode::kPower:
      return isa::BinaryOp::kPow;
    case HloOpcode::kRemainder:
      return isa::BinaryOp::kRem;
    case HloOpcode::kAnd:
      return isa::BinaryOp::kAnd;
    case HloOpcode::kOr:
      return isa::BinaryOp::kOr;
    case HloOpcode::kXor:
      return isa::BinaryOp::kXor;
    case HloOpcode::kAtan2:
      return isa::BinaryOp::kAtan2;
    case HloOpcode::kShiftLeft:
      return isa::BinaryOp::kShl;
    case HloOpcode::kShiftRightLogical:
      return isa::BinaryOp::kShrl;
    case HloOpcode::kShiftRightArithmetic:
      return isa::BinaryOp::kShra;
    default:
      return std::nullopt;
  }
}

isa::CompareOp CompareFor(hlo::ComparisonDirection d) {
  switch (d) {
    case hlo::ComparisonDirection::kEq:
      return isa::CompareOp::kEq;
    case hlo::ComparisonDirection::kNe:
      return isa::CompareOp::kNe;
    case hlo::ComparisonDirection::kGe:
      return isa::CompareOp::kGe;
    case hlo::ComparisonDirection::kGt:
      return isa::CompareOp::kGt;
    case hlo::ComparisonDirection::kLe:
      return isa::CompareOp::kLe;
    case hlo::ComparisonDirection::kLt:
      return isa::CompareOp::kLt;
  }
  return isa::CompareOp::kEq;
}

}  // namespace

void Lowerer::EmitVpuOp(const HloInstruction& inst, isa::DType out_dtype,
                        const std::vector<VpuOperand>& ops, uint64_t dst, uint64_t tmp,
                        uint64_t zero, uint64_t region_rows, uint64_t region_cols, uint64_t cu) {
  const HloOpcode opc = inst.opcode();
  const auto unary = UnaryFor(opc);
  const auto binary = BinaryFor(opc);
  const bool is_compare = opc == HloOpcode::kCompare;
  const bool is_select = opc == HloOpcode::kSelect;
  const bool is_convert = opc == HloOpcode::kConvert;
  const bool is_finite = opc == HloOpcode::kIsFinite;
  const isa::DType in_dt = ops[is_select ? 1 : 0].dtype;
  if (unary) {
    em_.Emit(isa::op::VpuUnary{
        .op = *unary, .dtype = out_dtype, .dst = dst, .src = ops[0].vmem, .count = cu});
  } else if (is_convert) {
    em_.Emit(isa::op::VpuConvert{
        .src_dtype = in_dt, .dtype = out_dtype, .dst = dst, .src = ops[0].vmem, .count = cu});
  } else if (binary) {
    em_.Emit(isa::op::VpuBinary{.op = *binary,
                                .dtype = out_dtype,
                                .dst = dst,
                                .a = ops[0].vmem,
                                .b = ops[1].vmem,
                                .rows = region_rows,
                                .cols = region_cols,
                                .a_bcast = ops[0].mode,
                                .b_bcast = ops[1].mode});
  } else if (is_compare) {
    em_.Emit(isa::op::VpuCompare{.op = CompareFor(inst.comparison_direction()),
                                 .dtype = in_dt,
                                 .dst = dst,
                                 .a = ops[0].vmem,
                                 .b = ops[1].vmem,
                                 .rows = region_rows,
                                 .cols = region_cols,
                                 .a_bcast = ops[0].mode,
                                 .b_bcast = ops[1].mode});
  } else if (is_select) {
    em_.Emit(isa::op::VpuSelect{.dtype = out_dtype,
                                .dst = dst,
                                .pred = ops[0].vmem,
                                .a = ops[1].vmem,
                                .b = ops[2].vmem,
                                .rows = region_rows,
                                .cols = region_cols,
                                .pred_bcast = ops[0].mode,
                                .a_bcast = ops[1].mode,
                                .b_bcast = ops[2].mode});
  } else if (is_finite) {
    // x - x is 0 for finite x and NaN for +-inf and NaN; NaN == 0 is false.
    em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kSub,
                                .dtype = in_dt,
                                .dst = tmp,
                                .a = ops[0].vmem,
                                .b = ops[0].vmem,
                                .rows = 1,
                                .cols = cu});
    em_.Emit(isa::op::VpuCompare{.op = isa::CompareOp::kEq,
                                 .dtype = in_dt,
                                 .dst = dst,
                                 .a = tmp,
                                 .b = zero,
                                 .rows = 1,
                                 .cols = cu,
                                 .a_bcast = isa::Broadcast::kNone,
                                 .b_bcast = isa::Broadcast::kScalar});
  } else {  // clamp(lo, x, hi) = min(max(x, lo), hi)
    em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kMax,
                                .dtype = out_dtype,
                                .dst = tmp,
                                .a = ops[1].vmem,
                                .b = ops[0].vmem,
                                .rows = 1,
                                .cols = cu,
                                .a_bcast = ops[1].mode,
                                .b_bcast = ops[0].mode});
    em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kMin,
                                .dtype = out_dtype,
                                .dst = dst,
                                .a = tmp,
                                .b = ops[2].vmem,
                                .rows = 1,
                                .cols = cu,
                                .a_bcast = isa::Broadcast::kNone,
                                .b_bcast = ops[2].mode});
  }
}

bool HasVpuFunction(HloOpcode op) {
  return UnaryFor(op) || BinaryFor(op) || op == HloOpcode::kCompare || op == HloOpcode::kSelect ||
         op == HloOpcode::kClamp || op == HloOpcode::kConvert || op == HloOpcode::kIsFinite;
}

Status Lowerer::LowerElementwise(const HloInstruction& inst) {
  const HloOpcode opc = inst.opcode();
  const auto unary = UnaryFor(opc);
  const auto binary = BinaryFor(opc);
  const bool is_compare = opc == HloOpcode::kCompare;
  const bool is_select = opc == HloOpcode::kSelect;
  const bool is_clamp = opc == HloOpcode::kClamp;
  const bool is_convert = opc == HloOpcode::kConvert;
  const bool is_finite = opc == HloOpcode::kIsFinite;
  if (!unary && !binary && !is_compare && !is_select && !is_clamp && !is_convert && !is_finite) {
    return Unsupported(inst,
                       "elementwise op with no VPU function (supported: abs cbrt ceil cosine erf "
                       "exponential exponential-minus-one floor log log-plus-one logistic "
                       "negate not popcnt count-leading-zeros round-nearest-* rsqrt sign sine sqrt "
                       "tan tanh is-finite convert add "
                       "subtract multiply divide maximum minimum power remainder and or xor "
                       "atan2 shift-left shift-right-logical shift-right-arithmetic compare "
                       "select clamp)");
  }
  const HbmBuffer& out = Buffer(&inst);
  const int64_t n = out.elements();
  if (n == 0) return OkStatus();

  // How each operand is read: whole (kNone), one element (kScalar: loaded once), a [cols] row
  // repeated per row (kRow: loaded once) or one value per row (kCol: loaded per chunk of rows).
  struct Operand {
    const HbmBuffer* buf;
    isa::Broadcast mode;
    uint64_t vmem = 0;
    const HloInstruction* pad = nullptr;  // a virtual pad (IsVirtualPad), read by LoadPaddedRows
    uint64_t pad_value = 0;               // its padding value in VMEM
    bool scalar() const { return mode == isa::Broadcast::kScalar; }
    bool once() const { return mode == isa::Broadcast::kScalar || mode == isa::Broadcast::kRow; }
  };
  std::vector<Operand> ops;
  int64_t bytes_per_elem = out.elem_bytes();
  bool by_rows = false;
  for (const HloInstruction* o : inst.operands()) {
    const HbmBuffer& b = Buffer(o);
    isa::Broadcast mode = VirtualBroadcastKind(*o);
    if (mode == isa::Broadcast::kNone && b.elements() == 1 && n > 1) mode = isa::Broadcast::kScalar;
    const HloInstruction* pad = mode == isa::Broadcast::kNone ? VirtualPadOf(o) : nullptr;
    by_rows =
        by_rows || pad != nullptr || mode == isa::Broadcast::kRow || mode == isa::Broadcast::kCol;
    ops.push_back({&b, mode, 0, pad});
    if (!ops.back().once()) bytes_per_elem += b.elem_bytes();
  }
  // With a row/col operand the region is [rows, cols] with cols = the last dimension, processed in
  // whole rows; otherwise a flat [1, count] run.
  const int64_t cols = by_rows ? out.dims.back() : 1;
  // The max(x, lo) / x - x temporary.
  const int64_t tmp_bytes = (is_clamp || is_finite) ? 4 : 0;
  bytes_per_elem += tmp_bytes;
  uint64_t zero = 0;
  if (is_finite) {
    TPUSIM_ASSIGN_OR_RETURN(zero, Vmem(inst, 64, "zero"));
    em_.Emit(isa::op::VpuFill{.dtype = ops[0].buf->dtype, .dst = zero, .count = 1, .value = 0});
  }
  int64_t once_loads = 0;
  for (Operand& o : ops) {
    if (o.pad != nullptr) {
      TPUSIM_ASSIGN_OR_RETURN(o.pad_value, LoadPaddingValue(inst, *o.pad));
      ++once_loads;
    }
    if (!o.once()) continue;
    const int64_t bytes = o.scalar() ? o.buf->elem_bytes() : o.buf->bytes();
    TPUSIM_ASSIGN_OR_RETURN(o.vmem, Vmem(inst, std::max<int64_t>(bytes, 64), "broadcast operand"));
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, o.buf->address, o.vmem, bytes,
                      o.buf->elem_bytes(), kLoadFlag);
    ++once_loads;
  }
  em_.Wait(kLoadFlag, once_loads);
  // Chunks stream through VMEM; with double buffering chunk i+1 loads and chunk i-1 stores while
  // chunk i computes (two sets of operand and result buffers).
  const int64_t budget = em_.vmem_free() - 64 * 12;
  bool db = double_buffer_ && n > 1 &&
            (budget / (2 * bytes_per_elem - tmp_bytes)) >= std::min<int64_t>(n, 1024);
  int64_t chunk =
      std::min<int64_t>(n, budget / (db ? 2 * bytes_per_elem - tmp_bytes : bytes_per_elem));
  if (by_rows) chunk = chunk / cols * cols;  // whole rows
  if (chunk < 1) return DoesNotFit(inst, "VMEM: no room for one element (row) of every operand");
  if (!by_rows && chunk < n && chunk > 1024) chunk = chunk / 1024 * 1024;  // whole 8x128 vregs
  if (chunk >= n) db = false;  // one chunk: nothing to overlap
  const int nsets = db ? 2 : 1;
  std::vector<std::array<uint64_t, 2>> op_sets(ops.size(), {0, 0});
  for (size_t k = 0; k < ops.size(); ++k) {
    if (ops[k].once()) continue;
    const int64_t elems = ops[k].mode == isa::Broadcast::kCol ? chunk / cols : chunk;
    for (int set = 0; set < nsets; ++set) {
      TPUSIM_ASSIGN_OR_RETURN(op_sets[k][static_cast<size_t>(set)],
                              Vmem(inst, elems * ops[k].buf->elem_bytes(), "operand"));
    }
  }
  std::array<uint64_t, 2> dst_sets{0, 0};
  for (int set = 0; set < nsets; ++set) {
    TPUSIM_ASSIGN_OR_RETURN(dst_sets[static_cast<size_t>(set)],
                            Vmem(inst, chunk * out.elem_bytes(), "result"));
  }
  uint64_t tmp = 0;
  if (tmp_bytes > 0) {
    TPUSIM_ASSIGN_OR_RETURN(tmp,
                            Vmem(inst, chunk * std::max(tmp_bytes, out.elem_bytes()), "temporary"));
  }
  // Flags: set s loads on kLoadFlag (no double buffering) or 2 + s, stores on 4 + s.
  constexpr uint64_t kSetLoadFlag0 = 2, kSetStoreFlag0 = 4;
  auto issue_loads = [&](int64_t off, int set, uint64_t flag) -> StatusOr<int64_t> {
    const int64_t c = std::min(chunk, n - off);
    int64_t loads = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
      if (ops[k].once()) continue;
      if (ops[k].pad != nullptr) {  // whole rows: by_rows
        TPUSIM_ASSIGN_OR_RETURN(int64_t d, LoadPaddedRows(*ops[k].pad, off / cols, c / cols,
                                                          op_sets[k][static_cast<size_t>(set)],
                                                          ops[k].pad_value, flag));
        loads += d;
        continue;
      }
      const int64_t e = ops[k].buf->elem_bytes();
      const bool col = ops[k].mode == isa::Broadcast::kCol;
      const int64_t first = col ? off / cols : off, count = col ? c / cols : c;
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                        ops[k].buf->address + static_cast<uint64_t>(first * e),
                        op_sets[k][static_cast<size_t>(set)], count * e, e, flag);
      ++loads;
    }
    return loads;
  };
  int64_t pending_loads[2] = {0, 0}, pending_store[2] = {0, 0};
  if (db) {
    TPUSIM_ASSIGN_OR_RETURN(pending_loads[0], issue_loads(0, 0, kSetLoadFlag0));
  }
  uint64_t dst = 0;

  for (int64_t off = 0, ci = 0; off < n; off += chunk, ++ci) {
    const int64_t c = std::min(chunk, n - off);
    const uint64_t cu = static_cast<uint64_t>(c);
    const int set = db ? static_cast<int>(ci % 2) : 0;
    if (db) {
      em_.Wait(kSetLoadFlag0 + static_cast<uint64_t>(set), pending_loads[set]);
      pending_loads[set] = 0;
      if (off + chunk < n) {
        TPUSIM_ASSIGN_OR_RETURN(
            pending_loads[1 - set],
            issue_loads(off + chunk, 1 - set, kSetLoadFlag0 + static_cast<uint64_t>(1 - set)));
      }
    } else {
      TPUSIM_ASSIGN_OR_RETURN(int64_t loads, issue_loads(off, 0, kLoadFlag));
      em_.Wait(kLoadFlag, loads);
    }
    for (size_t k = 0; k < ops.size(); ++k) {
      if (!ops[k].once()) ops[k].vmem = op_sets[k][static_cast<size_t>(set)];
    }
    const uint64_t region_rows = static_cast<uint64_t>(by_rows ? c / cols : 1);
    const uint64_t region_cols = static_cast<uint64_t>(by_rows ? cols : c);
    dst = dst_sets[static_cast<size_t>(set)];
    em_.Wait(kSetStoreFlag0 + static_cast<uint64_t>(set), pending_store[set]);
    pending_store[set] = 0;
    std::vector<VpuOperand> vops;
    for (const Operand& o : ops) vops.push_back({o.vmem, o.mode, o.buf->dtype});
    EmitVpuOp(inst, out.dtype, vops, dst, tmp, zero, region_rows, region_cols, cu);
    const int64_t e = out.elem_bytes();
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, dst, out.address + static_cast<uint64_t>(off * e),
                      c * e, e, kSetStoreFlag0 + static_cast<uint64_t>(set));
    pending_store[set] = 1;
    if (!db) {
      em_.Wait(kSetStoreFlag0, 1);
      pending_store[0] = 0;
    }
  }
  em_.Wait(kSetStoreFlag0, pending_store[0]);
  em_.Wait(kSetStoreFlag0 + 1, pending_store[1]);
  return OkStatus();
}

}  // namespace tpusim::compiler
