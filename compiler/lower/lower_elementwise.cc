// Elementwise kernels on the VPU: unary, convert, binary, compare, select, clamp. The arrays are
// processed as flat element ranges in chunks that fit VMEM; an operand with one element (a scalar,
// allowed for clamp's bounds and select's predicate) is loaded once and read with bcast=scalar.
#include <fmt/format.h>

#include <algorithm>
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
    case HloOpcode::kAcos:
      return isa::UnaryOp::kAcos;
    case HloOpcode::kAcosh:
      return isa::UnaryOp::kAcosh;
    case HloOpcode::kAsin:
      return isa::UnaryOp::kAsin;
    case HloOpcode::kAsinh:
      return isa::UnaryOp::kAsinh;
    case HloOpcode::kAtan:
      return isa::UnaryOp::kAtan;
    case HloOpcode::kAtanh:
      return isa::UnaryOp::kAtanh;
    case HloOpcode::kCbrt:
      return isa::UnaryOp::kCbrt;
    case HloOpcode::kCeil:
      return isa::UnaryOp::kCeil;
    case HloOpcode::kClz:
      return isa::UnaryOp::kClz;
    case HloOpcode::kCos:
      return isa::UnaryOp::kCos;
    case HloOpcode::kCosh:
      return isa::UnaryOp::kCosh;
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
    case HloOpcode::kSinh:
      return isa::UnaryOp::kSinh;
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

std::optional<isa::BinaryOp> VpuBinaryOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAdd:
      return isa::BinaryOp::kAdd;
    case HloOpcode::kSubtract:
      return isa::BinaryOp::kSub;
    case HloOpcode::kMultiply:
      return isa::BinaryOp::kMul;
    case HloOpcode::kMulhi:
      return isa::BinaryOp::kMulhi;
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


void Lowerer::EmitVpuOp(const HloInstruction& inst, isa::DType out_dtype,
                        const std::vector<VpuOperand>& ops, uint64_t dst, uint64_t tmp,
                        uint64_t zero, uint64_t region_rows, uint64_t region_cols, uint64_t cu) {
  const HloOpcode opc = inst.opcode();
  const auto unary = UnaryFor(opc);
  auto binary = VpuBinaryOp(opc);
  // Arithmetic on pred is logic, as XLA's evaluator (and tpusim's) computes it: add is or,
  // subtract xor, multiply and (XLA's GPU pred_mul test: multiply(convert(s8), convert(s8))).
  if (binary && out_dtype == isa::DType::kPred) {
    if (*binary == isa::BinaryOp::kAdd) binary = isa::BinaryOp::kOr;
    if (*binary == isa::BinaryOp::kSub) binary = isa::BinaryOp::kXor;
    if (*binary == isa::BinaryOp::kMul) binary = isa::BinaryOp::kAnd;
  }
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
  return UnaryFor(op) || VpuBinaryOp(op) || op == HloOpcode::kCompare || op == HloOpcode::kSelect ||
         op == HloOpcode::kClamp || op == HloOpcode::kConvert || op == HloOpcode::kIsFinite;
}

int64_t StreamChunkElements(int64_t n, int64_t budget, int64_t bytes_per_element, bool by_rows,
                            int64_t cols) {
  int64_t chunk = std::min<int64_t>(n, budget / std::max<int64_t>(1, bytes_per_element));
  if (by_rows) chunk = chunk / cols * cols;                                // whole rows
  if (!by_rows && chunk < n && chunk > 1024) chunk = chunk / 1024 * 1024;  // whole 8x128 vregs
  return chunk;
}

StreamedOperand Lowerer::StreamOperand(const HloInstruction* op, int64_t n) const {
  const HbmBuffer& b = Buffer(op);
  isa::Broadcast mode = VirtualBroadcastKind(*op);
  if (mode == isa::Broadcast::kNone && b.elements() == 1 && n > 1) mode = isa::Broadcast::kScalar;
  const HloInstruction* pad = mode == isa::Broadcast::kNone ? VirtualPadOf(op) : nullptr;
  return {.buf = &b, .mode = mode, .vmem = 0, .pad = pad};
}

StatusOr<int64_t> Lowerer::LoadOnceOperands(const HloInstruction& kernel,
                                            std::vector<StreamedOperand>& ops) {
  int64_t once_loads = 0;
  for (StreamedOperand& o : ops) {
    if (o.pad != nullptr) {
      TPUSIM_ASSIGN_OR_RETURN(o.pad_value, LoadPaddingValue(kernel, *o.pad));
      ++once_loads;
    }
    if (!o.once()) continue;
    const int64_t bytes =
        o.mode == isa::Broadcast::kScalar ? o.buf->elem_bytes() : o.buf->bytes();
    TPUSIM_ASSIGN_OR_RETURN(o.vmem,
                            Vmem(kernel, std::max<int64_t>(bytes, 64), "broadcast operand"));
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, o.buf->address, o.vmem, bytes,
                      o.buf->elem_bytes(), kLoadFlag);
    ++once_loads;
  }
  return once_loads;
}

StatusOr<int64_t> Lowerer::LoadOperandChunk(const StreamedOperand& op, int64_t off, int64_t c,
                                            int64_t cols, uint64_t dst, uint64_t flag) {
  if (op.pad != nullptr) {  // whole rows: by_rows
    return LoadPaddedRows(*op.pad, off / cols, c / cols, dst, op.pad_value, flag);
  }
  const int64_t e = op.buf->elem_bytes();
  const bool col = op.mode == isa::Broadcast::kCol;
  const int64_t first = col ? off / cols : off, count = col ? c / cols : c;
  em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, op.buf->address + static_cast<uint64_t>(first * e),
                    dst, count * e, e, flag);
  return 1;
}

// An elementwise kernel of one instruction: how it reads its operands, its chunks and its VMEM
// buffer sets (two with double buffering).
struct ElementwiseKernel {
  const HloInstruction* inst = nullptr;
  const HbmBuffer* out = nullptr;
  int64_t n = 0;  // elements
  std::vector<StreamedOperand> ops;
  // With a row/col operand the region is [rows, cols] with cols = the last dimension, processed in
  // whole rows; otherwise a flat [1, count] run.
  bool by_rows = false;
  int64_t cols = 1;
  int64_t bytes_per_elem = 0;  // VMEM bytes per element of one buffer set, the temporary's included
  int64_t tmp_bytes = 0;       // the max(x, lo) / x - x temporary's
  uint64_t zero = 0, tmp = 0;
  int64_t chunk = 0;
  bool db = false;
  std::vector<std::array<uint64_t, 2>> op_sets;  // per operand read per chunk: VMEM per set
  std::array<uint64_t, 2> dst_sets{0, 0};
};

Status Lowerer::LowerElementwise(const HloInstruction& inst) {
  const HloOpcode opc = inst.opcode();
  if (!HasVpuFunction(opc)) {
    return Unsupported(inst,
                       "elementwise op with no VPU function (supported: abs cbrt ceil cosine erf "
                       "exponential exponential-minus-one floor log log-plus-one logistic "
                       "negate not popcnt count-leading-zeros round-nearest-* rsqrt sign sine sqrt "
                       "tan tanh is-finite convert add "
                       "subtract multiply divide maximum minimum power remainder and or xor "
                       "atan2 shift-left shift-right-logical shift-right-arithmetic compare "
                       "select clamp)");
  }
  ElementwiseKernel k;
  k.inst = &inst;
  k.out = &Buffer(&inst);
  k.n = k.out->elements();
  if (k.n == 0) return OkStatus();
  k.bytes_per_elem = k.out->elem_bytes();
  for (const HloInstruction* o : inst.operands()) {
    const StreamedOperand& op = k.ops.emplace_back(StreamOperand(o, k.n));
    k.by_rows = k.by_rows || op.pad != nullptr || op.mode == isa::Broadcast::kRow ||
                op.mode == isa::Broadcast::kCol;
    if (!op.once()) k.bytes_per_elem += op.buf->elem_bytes();
  }
  k.cols = k.by_rows ? k.out->dims.back() : 1;
  const bool is_finite = opc == HloOpcode::kIsFinite;
  k.tmp_bytes = (opc == HloOpcode::kClamp || is_finite) ? 4 : 0;
  k.bytes_per_elem += k.tmp_bytes;
  if (is_finite) {
    TPUSIM_ASSIGN_OR_RETURN(k.zero, Vmem(inst, 64, "zero"));
    em_.Emit(isa::op::VpuFill{.dtype = k.ops[0].buf->dtype, .dst = k.zero, .count = 1, .value = 0});
  }
  TPUSIM_ASSIGN_OR_RETURN(const int64_t once_loads, LoadOnceOperands(inst, k.ops));
  em_.Wait(kLoadFlag, once_loads);
  TPUSIM_RETURN_IF_ERROR(AllocateElementwiseChunks(k));
  return EmitElementwiseChunks(k);
}

Status Lowerer::AllocateElementwiseChunks(ElementwiseKernel& k) {
  const HloInstruction& inst = *k.inst;
  // Chunks stream through VMEM; with double buffering chunk i+1 loads and chunk i-1 stores while
  // chunk i computes (two sets of operand and result buffers; one temporary).
  const int64_t budget = em_.vmem_free() - 64 * 12;
  const int64_t two_sets = 2 * k.bytes_per_elem - k.tmp_bytes;
  k.db = double_buffer_ && k.n > 1 && (budget / two_sets) >= std::min<int64_t>(k.n, 1024);
  k.chunk =
      StreamChunkElements(k.n, budget, k.db ? two_sets : k.bytes_per_elem, k.by_rows, k.cols);
  if (k.chunk < 1) {
    return DoesNotFit(inst, "VMEM: no room for one element (row) of every operand");
  }
  if (k.chunk >= k.n) k.db = false;  // one chunk: nothing to overlap
  const int nsets = k.db ? 2 : 1;
  k.op_sets.assign(k.ops.size(), {0, 0});
  for (size_t i = 0; i < k.ops.size(); ++i) {
    if (k.ops[i].once()) continue;
    const int64_t elems = k.ops[i].mode == isa::Broadcast::kCol ? k.chunk / k.cols : k.chunk;
    for (int set = 0; set < nsets; ++set) {
      TPUSIM_ASSIGN_OR_RETURN(k.op_sets[i][static_cast<size_t>(set)],
                              Vmem(inst, elems * k.ops[i].buf->elem_bytes(), "operand"));
    }
  }
  for (int set = 0; set < nsets; ++set) {
    TPUSIM_ASSIGN_OR_RETURN(k.dst_sets[static_cast<size_t>(set)],
                            Vmem(inst, k.chunk * k.out->elem_bytes(), "result"));
  }
  if (k.tmp_bytes > 0) {
    TPUSIM_ASSIGN_OR_RETURN(
        k.tmp, Vmem(inst, k.chunk * std::max(k.tmp_bytes, k.out->elem_bytes()), "temporary"));
  }
  return OkStatus();
}

Status Lowerer::EmitElementwiseChunks(const ElementwiseKernel& k) {
  const int64_t n = k.n, chunk = k.chunk, cols = k.cols;
  const bool db = k.db;
  // Flags: set s loads on kLoadFlag (no double buffering) or 2 + s, stores on 4 + s.
  constexpr uint64_t kSetLoadFlag0 = 2, kSetStoreFlag0 = 4;
  auto issue_loads = [&](int64_t off, int set, uint64_t flag) -> StatusOr<int64_t> {
    const int64_t c = std::min(chunk, n - off);
    int64_t loads = 0;
    for (size_t i = 0; i < k.ops.size(); ++i) {
      if (k.ops[i].once()) continue;
      TPUSIM_ASSIGN_OR_RETURN(
          const int64_t d,
          LoadOperandChunk(k.ops[i], off, c, cols, k.op_sets[i][static_cast<size_t>(set)], flag));
      loads += d;
    }
    return loads;
  };
  int64_t pending_loads[2] = {0, 0}, pending_store[2] = {0, 0};
  if (db) {
    TPUSIM_ASSIGN_OR_RETURN(pending_loads[0], issue_loads(0, 0, kSetLoadFlag0));
  }
  for (int64_t off = 0, ci = 0; off < n; off += chunk, ++ci) {
    const int64_t c = std::min(chunk, n - off);
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
    const uint64_t region_rows = static_cast<uint64_t>(k.by_rows ? c / cols : 1);
    const uint64_t region_cols = static_cast<uint64_t>(k.by_rows ? cols : c);
    const uint64_t dst = k.dst_sets[static_cast<size_t>(set)];
    em_.Wait(kSetStoreFlag0 + static_cast<uint64_t>(set), pending_store[set]);
    pending_store[set] = 0;
    std::vector<VpuOperand> vops;
    for (size_t i = 0; i < k.ops.size(); ++i) {
      const StreamedOperand& o = k.ops[i];
      vops.push_back(
          {o.once() ? o.vmem : k.op_sets[i][static_cast<size_t>(set)], o.mode, o.buf->dtype});
    }
    EmitVpuOp(*k.inst, k.out->dtype, vops, dst, k.tmp, k.zero, region_rows, region_cols,
              static_cast<uint64_t>(c));
    const int64_t e = k.out->elem_bytes();
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, dst,
                      k.out->address + static_cast<uint64_t>(off * e), c * e, e,
                      kSetStoreFlag0 + static_cast<uint64_t>(set));
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
