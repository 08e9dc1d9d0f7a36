// The MXU opcodes' semantics: mxu.load_weights, mxu.matmul, mxu.pop (opcodes.def). Every value goes
// through numerics.h.
#include <fmt/format.h>

#include <bit>

#include "isa/execute.h"
#include "isa/execute_internal.h"
#include "isa/footprint.h"
#include "isa/numerics.h"

namespace tpusim::isa {

using internal::ReadElems;
using internal::WriteBytes;

StatusOr<MxuOperand> ReadMxuWeights(const SparseMemory* vmem, const op::MxuLoadWeights& w) {
  if (w.dtype != DType::kBF16 && w.dtype != DType::kF32 && w.dtype != DType::kS8) {
    return InvalidArgument(fmt::format("dtype={} (weights are bf16, f32 or s8)", Name(w.dtype)));
  }
  if (w.dtype != DType::kF32 && w.part != PrecisionPart::kHi) {
    return InvalidArgument("part must be hi for bf16 and s8 weights");
  }
  const uint64_t rows = w.transpose ? w.n : w.k, cols = w.transpose ? w.k : w.n;
  if (w.stride < cols) {
    return InvalidArgument(
        fmt::format("stride={} is less than the {} elements of a row", w.stride, cols));
  }
  MxuOperand t;
  t.rows = static_cast<int64_t>(w.k);
  t.cols = static_cast<int64_t>(w.n);
  t.is_int = w.dtype == DType::kS8;
  if (vmem == nullptr) return t;
  if (t.is_int) {
    t.i.assign(w.k * w.n, 0);
  } else {
    t.f.assign(w.k * w.n, 0.0f);
  }
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(w.dtype));
  for (uint64_t r = 0; r < rows; ++r) {
    TPUSIM_ASSIGN_OR_RETURN(std::string row,
                            ReadElems(*vmem, w.addr + r * w.stride * eb, cols, w.dtype, "weights"));
    for (uint64_t j = 0; j < cols; ++j) {
      const uint64_t k = w.transpose ? j : r, n = w.transpose ? r : j;
      const char* p = row.data() + j * eb;
      if (t.is_int) {
        t.i[k * w.n + n] = LoadInt(p, w.dtype);
      } else {
        t.f[k * w.n + n] = Bf16Part(LoadFloat(p, w.dtype), w.part);
      }
    }
  }
  return t;
}

StatusOr<MxuOperand> ReadMxuLhs(const SparseMemory* vmem, const op::MxuMatmul& mm) {
  const bool lhs_int = mm.dtype == DType::kS8;
  if (mm.dtype != DType::kBF16 && mm.dtype != DType::kF32 && !lhs_int) {
    return InvalidArgument(fmt::format("dtype={} (the LHS is bf16, f32 or s8)", Name(mm.dtype)));
  }
  if (mm.dtype != DType::kF32 && mm.part != PrecisionPart::kHi) {
    return InvalidArgument("part must be hi for a bf16 or s8 LHS");
  }
  if (mm.stride < 1 && mm.m > 1) return InvalidArgument("stride=0 with m > 1");
  MxuOperand t;
  t.rows = static_cast<int64_t>(mm.m);
  t.cols = static_cast<int64_t>(mm.k);
  t.is_int = lhs_int;
  if (vmem == nullptr) return t;
  if (lhs_int) {
    t.i.assign(mm.m * mm.k, 0);
  } else {
    t.f.assign(mm.m * mm.k, 0.0f);
  }
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(mm.dtype));
  for (uint64_t m = 0; m < mm.m; ++m) {
    TPUSIM_ASSIGN_OR_RETURN(std::string row,
                            ReadElems(*vmem, mm.lhs + m * mm.stride * eb, mm.k, mm.dtype, "lhs"));
    for (uint64_t k = 0; k < mm.k; ++k) {
      if (lhs_int) {
        t.i[m * mm.k + k] = LoadInt(row.data() + k * eb, mm.dtype);
      } else {
        t.f[m * mm.k + k] = Bf16Part(LoadFloat(row.data() + k * eb, mm.dtype), mm.part);
      }
    }
  }
  return t;
}

Status WriteMxuPop(SparseMemory& vmem, const op::MxuPop& p, const AccumulatorMemory& acc) {
  const bool from_int = p.acc_dtype == DType::kS32;
  if (!from_int && p.acc_dtype != DType::kF32) {
    return InvalidArgument("acc_dtype must be f32 or s32");
  }
  if (from_int ? (p.dtype != DType::kS32 && p.dtype != DType::kS8)
               : (p.dtype != DType::kF32 && p.dtype != DType::kBF16)) {
    return InvalidArgument(
        fmt::format("cannot pop {} accumulators as {}", Name(p.acc_dtype), Name(p.dtype)));
  }
  if (from_int && p.act != Activation::kNone && p.act != Activation::kRelu) {
    return InvalidArgument("s32 accumulators take act=none or act=relu only");
  }
  if (p.stride < p.n) return InvalidArgument(fmt::format("stride={} < n={}", p.stride, p.n));
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(p.dtype));
  std::string row(p.n * eb, '\0');
  for (uint64_t m = 0; m < p.m; ++m) {
    const uint32_t* a = acc.Row(static_cast<int64_t>(p.acc + m));
    for (uint64_t n = 0; n < p.n; ++n) {
      char* out = row.data() + n * eb;
      if (from_int) {
        const int32_t v = ActivateI(p.act, static_cast<int32_t>(a[n]));
        StoreInt(out, p.dtype, p.dtype == DType::kS8 ? SaturateToS8(v) : v);
      } else {
        StoreFloat(out, p.dtype, ActivateF(p.act, std::bit_cast<float>(a[n])));
      }
    }
    TPUSIM_RETURN_IF_ERROR(WriteBytes(vmem, p.dst + m * p.stride * eb, row, "dst"));
  }
  return OkStatus();
}

namespace {

Status CheckMxuIndex(const MemorySizes& sizes, uint64_t mxu) {
  if (mxu >= static_cast<uint64_t>(sizes.mxu_count)) {
    return InvalidArgument(fmt::format("mxu={} but the core has {} MXUs", mxu, sizes.mxu_count));
  }
  return OkStatus();
}

Status CheckAccRows(const MemorySizes& sizes, uint64_t acc, uint64_t m) {
  if (acc + m > static_cast<uint64_t>(sizes.accumulator_rows)) {
    return InvalidArgument(fmt::format("accumulator rows [{}, {}) outside the {} rows per MXU", acc,
                                       acc + m, sizes.accumulator_rows));
  }
  return OkStatus();
}

Status LoadWeights(MachineState& state, int c, const op::MxuLoadWeights& w) {
  const MemorySizes& sizes = state.sizes;
  const int64_t R = sizes.mxu_rows, C = sizes.mxu_cols;
  TPUSIM_RETURN_IF_ERROR(CheckMxuIndex(sizes, w.mxu));
  if (w.k < 1 || static_cast<int64_t>(w.k) > R || w.n < 1 || static_cast<int64_t>(w.n) > C) {
    return InvalidArgument(fmt::format("k={}, n={} outside the {}x{} array", w.k, w.n, R, C));
  }
  TPUSIM_ASSIGN_OR_RETURN(MxuOperand t, ReadMxuWeights(&state.vmem(c), w));
  MxuState::Weights& s = state.cores[c].mxus[w.mxu].shadow;
  s = MxuState::Weights{};
  s.valid = true;
  s.is_int = t.is_int;
  s.k = t.rows;
  s.n = t.cols;
  // The tile sits in the top-left corner of the [R, C] array.
  if (s.is_int) {
    s.i.assign(R * C, 0);
  } else {
    s.f.assign(R * C, 0.0f);
  }
  for (int64_t k = 0; k < t.rows; ++k) {
    for (int64_t n = 0; n < t.cols; ++n) {
      if (s.is_int) {
        s.i[k * C + n] = t.i[k * t.cols + n];
      } else {
        s.f[k * C + n] = t.f[k * t.cols + n];
      }
    }
  }
  return OkStatus();
}

Status Matmul(MachineState& state, int c, const op::MxuMatmul& mm) {
  const MemorySizes& sizes = state.sizes;
  const int64_t C = sizes.mxu_cols;
  TPUSIM_RETURN_IF_ERROR(CheckMxuIndex(sizes, mm.mxu));
  MxuState& x = state.cores[c].mxus[mm.mxu];
  if (mm.latch) {
    if (!x.shadow.valid) return InvalidArgument("latch=1 but no weights were loaded");
    x.active = x.shadow;
  }
  if (!x.active.valid) return InvalidArgument("no active weights (load_weights, then latch=1)");
  if (static_cast<int64_t>(mm.k) != x.active.k || static_cast<int64_t>(mm.n) != x.active.n) {
    return InvalidArgument(fmt::format("k={}, n={} but the active weights are {}x{}", mm.k, mm.n,
                                       x.active.k, x.active.n));
  }
  const bool lhs_int = mm.dtype == DType::kS8;
  if ((mm.dtype == DType::kBF16 || mm.dtype == DType::kF32 || lhs_int) &&
      lhs_int != x.active.is_int) {
    return InvalidArgument(
        fmt::format("{} LHS with {} weights", Name(mm.dtype), x.active.is_int ? "s8" : "bf16/f32"));
  }
  TPUSIM_RETURN_IF_ERROR(CheckAccRows(sizes, mm.acc, mm.m));
  TPUSIM_ASSIGN_OR_RETURN(MxuOperand lhs, ReadMxuLhs(&state.vmem(c), mm));
  for (uint64_t m = 0; m < mm.m; ++m) {
    uint32_t* out = x.acc.MutableRow(static_cast<int64_t>(mm.acc + m));
    for (uint64_t n = 0; n < mm.n; ++n) {
      if (lhs_int) {
        const int32_t s = MxuDotS32(&lhs.i[m * mm.k], &x.active.i[n], mm.k, C);
        const int32_t prev = static_cast<int32_t>(out[n]);
        out[n] = static_cast<uint32_t>(mm.accumulate ? WrapAdd(prev, s) : s);
      } else {
        float s = MxuDotF32(&lhs.f[m * mm.k], &x.active.f[n], mm.k, C);
        if (mm.accumulate) s = std::bit_cast<float>(out[n]) + s;
        out[n] = std::bit_cast<uint32_t>(s);
      }
    }
  }
  return OkStatus();
}

Status Pop(MachineState& state, int c, const op::MxuPop& p) {
  const MemorySizes& sizes = state.sizes;
  const int64_t C = sizes.mxu_cols;
  TPUSIM_RETURN_IF_ERROR(CheckMxuIndex(sizes, p.mxu));
  if (p.n < 1 || static_cast<int64_t>(p.n) > C) {
    return InvalidArgument(fmt::format("n={} outside 1..{}", p.n, C));
  }
  TPUSIM_RETURN_IF_ERROR(CheckAccRows(sizes, p.acc, p.m));
  return WriteMxuPop(state.vmem(c), p, state.cores[c].mxus[p.mxu].acc);
}

}  // namespace

Status ExecuteMxu(MachineState& state, int core, const Instruction& inst) {
  switch (inst.opcode) {
    case Opcode::kMxuLoadWeights:
      return LoadWeights(state, core, inst.As<op::MxuLoadWeights>());
    case Opcode::kMxuMatmul:
      return Matmul(state, core, inst.As<op::MxuMatmul>());
    case Opcode::kMxuPop:
      return Pop(state, core, inst.As<op::MxuPop>());
    default:
      break;
  }
  TPUSIM_CHECK(false) << "ExecuteMxu: not an MXU instruction: " << Mnemonic(inst.opcode);
  return OkStatus();
}

Footprint MxuFootprint(const Instruction& inst, int core) {
  Footprint f;
  switch (inst.opcode) {
    case Opcode::kMxuLoadWeights: {
      auto o = inst.As<op::MxuLoadWeights>();
      uint64_t rows = o.transpose ? o.n : o.k, cols = o.transpose ? o.k : o.n;
      const uint64_t e = ElemBytes(o.dtype);
      f.reads.push_back(StridedRegion(MemSpace::kVmem, core, o.addr, rows, cols * e, o.stride * e));
      break;
    }
    case Opcode::kMxuMatmul: {
      auto o = inst.As<op::MxuMatmul>();
      const uint64_t e = ElemBytes(o.dtype);
      f.reads.push_back(StridedRegion(MemSpace::kVmem, core, o.lhs, o.m, o.k * e, o.stride * e));
      f.writes.push_back(AccRegion(core, o.mxu, o.acc, o.m, /*chain=*/true));
      break;
    }
    case Opcode::kMxuPop: {
      auto o = inst.As<op::MxuPop>();
      f.reads.push_back(AccRegion(core, o.mxu, o.acc, o.m, /*chain=*/false, /*stream=*/true));
      const uint64_t e = ElemBytes(o.dtype);
      f.writes.push_back(StridedRegion(MemSpace::kVmem, core, o.dst, o.m, o.n * e, o.stride * e));
      break;
    }
    default:
      TPUSIM_CHECK(false) << "MxuFootprint: " << Mnemonic(inst.opcode);
  }
  return f;
}

}  // namespace tpusim::isa
