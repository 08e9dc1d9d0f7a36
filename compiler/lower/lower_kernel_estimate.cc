// A Pallas TPU kernel (custom_call_target="tpu_custom_call") timed from the cost it declares
// (hlo/kernel_cost_estimate.h). Its body is Mosaic MLIR, which tpusim does not run; what it
// declares — F FLOP, T transcendentals, B bytes accessed in HBM — is what XLA's TPU backend itself
// costs such a kernel by. The kernel emitted here does that much work on the units that would do
// it, overlapped, so the core's time is that of its busiest unit under each unit's own model (HBM
// bandwidth and latency, the MXU's fill and drain, the VPU's vreg rate): the kernel's roofline,
// plus what those models charge a double-buffered stream (each slot's next transfer starts one
// HBM latency after its last: 7-10 % of an HBM-bound kernel's time on tpu-v5e).
//   - HBM: B bytes, split between reads of the operands and writes of the results in proportion
//     to their sizes (assumption: the declaration does not say which share is which), moved as
//     contiguous DMAs from the largest operand and to the largest result, in the bytes declared
//     (not tile shares: bytes_accessed already counts what the kernel moves).
//   - MXU: ceil(F / (2 R C)) rows of a full R x C weight tile streamed through the core's MXUs at
//     bf16 (s8 on an MXU without a floating-point path). Assumption: a Pallas kernel's FLOP are
//     matmul FLOP — the kernels written in Pallas are attention and matmul kernels; the FLOP of an
//     elementwise kernel take a few cycles there and its bytes dominate anyway.
//   - VPU: T elements of vpu.unary exp in f32 (one element op per transcendental).
// The work is cut into P steps, each a 1/P share of all three (integer division; the remainders,
// fewer than P rows, elements and bytes, run after the steps), so that in-order issue never holds
// one unit's work behind another's: step i reads into VMEM slot i % 2 and writes from one slot to
// result chunk i % 2 while the matmuls and the exp run in VMEM regions of their own. The steps are
// a ctrl.loop over two of them, so the program's size does not grow with the declared work.
// remote_bytes_transferred is not modelled (CompiledModule::cost_estimated_kernels says so).
#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "compiler/lower/blocking.h"
#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {

using hlo::HloInstruction;

namespace {

// The largest DMA one step issues: the compiler's block size for this kernel (each step's transfer
// is long next to the DMA's issue and latency cycles), at most 1/8 of the kernel's VMEM.
constexpr int64_t kStepBytes = int64_t{512} * 1024;
// Elements of one vpu.unary exp (f32: 4 bytes each), at most 1/32 of the kernel's VMEM.
constexpr int64_t kStepTranscendentals = int64_t{128} * 1024;
// Steps at most: each signals two sync flags, which count to 2^32 - 1 before the final waits.
constexpr int64_t kMaxSteps = int64_t{1} << 30;

// The largest of `leaves` (null when empty).
const HbmBuffer* Largest(const std::vector<const HbmBuffer*>& leaves) {
  const HbmBuffer* best = nullptr;
  for (const HbmBuffer* b : leaves) {
    if (best == nullptr || b->bytes() > best->bytes()) best = b;
  }
  return best;
}

// How the declared work is cut: P steps of (read, write) bytes, MXU rows per MXU and exp elements,
// and what is left over for the tail.
struct KernelSteps {
  int64_t steps = 1;
  int64_t read = 0, write = 0;       // bytes per step
  int64_t rows = 0;                  // matmul rows per step and MXU
  int64_t transcendentals = 0;       // exp elements per step
  int64_t read_left = 0, write_left = 0, rows_left = 0, transcendentals_left = 0;
};

KernelSteps CutSteps(int64_t reads, int64_t writes, int64_t rows, int64_t transcendentals,
                     int64_t read_cap, int64_t write_cap, int64_t row_cap, int64_t mxus,
                     int64_t exp_cap) {
  KernelSteps s;
  s.steps = std::max<int64_t>({1, CeilDiv(reads, read_cap), CeilDiv(writes, write_cap),
                               CeilDiv(rows, row_cap * mxus), CeilDiv(transcendentals, exp_cap)});
  // Past the cap the caller refuses the kernel; steps * mxus below could overflow int64 (2^62
  // steps of 1 byte on 4 MXUs wrapped to 0, a division by zero).
  if (s.steps > kMaxSteps) return s;
  s.read = reads / s.steps;
  s.write = writes / s.steps;
  s.rows = rows / (s.steps * mxus);
  s.transcendentals = transcendentals / s.steps;
  s.read_left = reads - s.read * s.steps;
  s.write_left = writes - s.write * s.steps;
  s.rows_left = rows - s.rows * s.steps * mxus;
  s.transcendentals_left = transcendentals - s.transcendentals * s.steps;
  return s;
}

}  // namespace

Status Lowerer::LowerKernelEstimate(const HloInstruction& inst, const hlo::KernelCostEstimate& e) {
  TPUSIM_RETURN_IF_ERROR(WaitForOperands(inst));
  em_.set_hbm_arrays({});  // the DMAs move the declared bytes, not tile shares
  std::vector<const HbmBuffer*> ins, outs;
  for (const HloInstruction* op : inst.operands()) {
    for (const HbmBuffer& b : Buffers(op)) {
      if (b.bytes() > 0 && !b.fusion_internal) ins.push_back(&b);
    }
  }
  for (const HbmBuffer& b : Buffers(&inst)) {
    if (b.bytes() > 0) outs.push_back(&b);
  }
  const HbmBuffer* src = Largest(ins);
  const HbmBuffer* dst = Largest(outs);
  int64_t in_bytes = 0, out_bytes = 0;
  for (const HbmBuffer* b : ins) in_bytes += b->bytes();
  for (const HbmBuffer* b : outs) out_bytes += b->bytes();
  // B split in proportion to the operands' and results' sizes (no traffic without either).
  int64_t reads = 0, writes = 0;
  if (in_bytes + out_bytes > 0) {
    const long double share =
        static_cast<long double>(in_bytes) / static_cast<long double>(in_bytes + out_bytes);
    reads = std::clamp<int64_t>(
        static_cast<int64_t>(share * static_cast<long double>(e.bytes_accessed)), 0,
        e.bytes_accessed);
    writes = e.bytes_accessed - reads;
  }
  const config::MxuConfig& mxu = config_.core.mxu;
  const int64_t R = mxu.rows, C = mxu.cols, mxus = std::max<int64_t>(1, mxu.count);
  const isa::DType dtype = mxu.bf16 ? isa::DType::kBF16 : isa::DType::kS8;
  const int64_t elem = isa::DTypeBytes(dtype);
  const int64_t rows = CeilDiv(e.flops, 2 * R * C);
  const int64_t row_cap = std::min<int64_t>(
      mxu.accumulator_rows > 0 ? mxu.accumulator_rows : int64_t{2048}, int64_t{1} << 16);
  const int64_t vmem = em_.vmem_free();
  const int64_t step_bytes = std::max<int64_t>(std::min(kStepBytes, vmem / 8), 1);
  const int64_t exp_cap = std::max<int64_t>(std::min(kStepTranscendentals, vmem / 32), 1);
  const int64_t read_cap = src ? std::min(step_bytes, src->bytes()) : 1;
  const int64_t write_cap =
      dst ? std::min(step_bytes, std::max<int64_t>(dst->bytes() / 2, 1)) : 1;
  const KernelSteps s = CutSteps(reads, writes, rows, e.transcendentals, read_cap, write_cap,
                                 row_cap, mxus, exp_cap);
  if (s.steps > kMaxSteps) {
    return Unsupported(inst, fmt::format("Pallas TPU kernel: its cost_estimate needs {} steps of at "
                                         "most {} bytes (more than 2^30)",
                                         s.steps, read_cap));
  }
  // VMEM: two read slots, a write slot, the weight tile, the LHS rows (stride 1: row r reads
  // elements r .. r + R - 1) and two exp regions (consecutive steps' exps do not wait for each
  // other, as the reads' slots do not).
  TPUSIM_ASSIGN_OR_RETURN(uint64_t read_v, Vmem(inst, 2 * read_cap, "kernel read slots"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t write_v, Vmem(inst, write_cap, "kernel write slot"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t weights_v, Vmem(inst, R * C * elem, "kernel weight tile"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t lhs_v, Vmem(inst, (row_cap + R) * elem, "kernel LHS rows"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t exp_v, Vmem(inst, 2 * 4 * exp_cap, "kernel exp regions"));
  if (rows > 0) {
    for (int64_t u = 0; u < mxus; ++u) {
      em_.Emit(isa::op::MxuLoadWeights{.mxu = static_cast<uint64_t>(u), .addr = weights_v,
                                       .k = static_cast<uint64_t>(R), .n = static_cast<uint64_t>(C),
                                       .stride = static_cast<uint64_t>(C), .dtype = dtype});
    }
  }
  const auto matmul = [&](int64_t u, int64_t m) {
    em_.Emit(isa::op::MxuMatmul{.mxu = static_cast<uint64_t>(u), .lhs = lhs_v, .stride = 1,
                                .m = static_cast<uint64_t>(m), .k = static_cast<uint64_t>(R),
                                .n = static_cast<uint64_t>(C), .dtype = dtype, .acc = 0,
                                .accumulate = true, .latch = true});
  };
  const auto exp = [&](int64_t n, int slot) {
    const uint64_t at = exp_v + static_cast<uint64_t>(slot * 4 * exp_cap);
    em_.Emit(isa::op::VpuUnary{.op = isa::UnaryOp::kExp, .dtype = isa::DType::kF32, .dst = at,
                               .src = at, .count = static_cast<uint64_t>(n)});
  };
  const uint64_t chunk1 = dst && dst->bytes() >= 2 * s.write ? static_cast<uint64_t>(s.write) : 0;
  const auto step = [&](int slot) {
    if (s.read > 0) {
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, src->address,
                        read_v + static_cast<uint64_t>(slot * read_cap), s.read, 1, kLoadFlag);
    }
    if (s.write > 0) {
      em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, write_v,
                        dst->address + static_cast<uint64_t>(slot) * chunk1, s.write, 1,
                        kStoreFlag);
    }
    for (int64_t u = 0; u < mxus && s.rows > 0; ++u) matmul(u, s.rows);
    if (s.transcendentals > 0) exp(s.transcendentals, slot);
  };
  if (s.steps >= 2) {
    em_.Emit(isa::op::CtrlLoop{.count = static_cast<uint64_t>(s.steps / 2)});
    step(0);
    step(1);
    em_.Emit(isa::op::CtrlEndLoop{});
  }
  if (s.steps % 2 == 1) step(0);
  // The tails: fewer than P rows, elements and bytes each, in pieces of at most one step's cap.
  const auto repeated = [&](int64_t total, int64_t cap, const std::function<void(int64_t)>& emit) {
    if (total / cap >= 2) em_.Emit(isa::op::CtrlLoop{.count = static_cast<uint64_t>(total / cap)});
    if (total / cap >= 1) emit(cap);
    if (total / cap >= 2) em_.Emit(isa::op::CtrlEndLoop{});
    if (total % cap > 0) emit(total % cap);
  };
  repeated(s.rows_left, row_cap, [&](int64_t m) { matmul(0, m); });
  repeated(s.transcendentals_left, exp_cap, [&](int64_t n) { exp(n, 0); });
  repeated(s.read_left, read_cap, [&](int64_t n) {
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, src->address, read_v, n, 1, kLoadFlag);
  });
  repeated(s.write_left, write_cap, [&](int64_t n) {
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, write_v, dst->address, n, 1, kStoreFlag);
  });
  // Every DMA signals its flag once per execution: the steps' and the tails' (ceil(left / cap)).
  em_.Wait(kLoadFlag, (s.read > 0 ? s.steps : 0) + CeilDiv(s.read_left, read_cap));
  em_.Wait(kStoreFlag, (s.write > 0 ? s.steps : 0) + CeilDiv(s.write_left, write_cap));
  return OkStatus();
}

}  // namespace tpusim::compiler
