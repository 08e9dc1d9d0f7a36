#include "isa/vpu_cost.h"

#include <algorithm>

#include "common/check.h"
#include "common/units.h"

namespace tpusim::isa {
namespace {

enum class LatencyClass { kAlu, kTranscendental, kDivide, kTranspose };

LatencyClass UnaryClass(isa::UnaryOp op) {
  using isa::UnaryOp;
  switch (op) {
    case UnaryOp::kExp:
    case UnaryOp::kLog:
    case UnaryOp::kTanh:
    case UnaryOp::kLogistic:
    case UnaryOp::kExpm1:
    case UnaryOp::kLog1p:
    case UnaryOp::kSin:
    case UnaryOp::kCos:
    case UnaryOp::kErf:
    case UnaryOp::kTan:
    case UnaryOp::kCbrt:
    case UnaryOp::kAcos:
    case UnaryOp::kAcosh:
    case UnaryOp::kAsin:
    case UnaryOp::kAsinh:
    case UnaryOp::kAtan:
    case UnaryOp::kAtanh:
    case UnaryOp::kCosh:
    case UnaryOp::kSinh:
      return LatencyClass::kTranscendental;
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt:
      return LatencyClass::kDivide;
    default:
      return LatencyClass::kAlu;
  }
}

LatencyClass BinaryClass(isa::BinaryOp op) {
  using isa::BinaryOp;
  switch (op) {
    case BinaryOp::kDiv:
    case BinaryOp::kRem:
      return LatencyClass::kDivide;
    case BinaryOp::kPow:
    case BinaryOp::kAtan2:
      return LatencyClass::kTranscendental;
    default:
      return LatencyClass::kAlu;
  }
}

// n elements of `t`.
Bytes ElementBytes(isa::DType t, uint64_t n) {
  return Bytes(n * static_cast<uint64_t>(isa::DTypeBytes(t)));
}

// VMEM bytes of a [rows, cols] operand read with broadcast mode `b`: the elements it stores (a row
// once, a column once, a scalar once: the VPU replicates them across sublanes and lanes in its
// registers, as vpu.broadcast's own cost counts its source), like the interpreter's footprint.
Bytes OperandBytes(isa::DType t, isa::Broadcast b, uint64_t rows, uint64_t cols) {
  return ElementBytes(t, isa::BroadcastOperandElements(b, rows, cols));
}

bool Is64Bit(isa::DType t) { return isa::DTypeBytes(t) == 8; }

// 32-bit VPU element ops for e elements of t. The VPU's lanes are 32 bits wide: an s64/u64/f64
// value is two 32-bit words, so moving it (copy, broadcast, select, fill, iota, transpose) takes
// two lane slots, and computing on it takes core.vpu.ops_per_64bit_element ops (s64/u64) or
// core.vpu.ops_per_f64_element ops (f64): XLA's TPU backend emulates 64-bit values with pairs of
// 32-bit values.
uint64_t LaneOps(isa::DType t, uint64_t e, bool arithmetic, const config::VpuConfig& vpu) {
  if (!Is64Bit(t)) return e;
  if (!arithmetic) return e * 2;
  const int64_t ops = t == isa::DType::kF64 ? vpu.ops_per_f64_element : vpu.ops_per_64bit_element;
  return e * static_cast<uint64_t>(std::max<int64_t>(ops, 1));
}

// What one VPU/XLU instruction does, before timing: its latency class, element ops and VMEM bytes.
struct VectorWork {
  LatencyClass cls = LatencyClass::kAlu;
  uint64_t e = 0;              // elements operated on
  bool arithmetic = false;     // each of the e elements is a FLOP
  Cycles extra_latency;        // beyond the class latency (cross-lane reduce stages)
  uint64_t produced = 0;       // elements written, when not e
  uint64_t lane_ops = 0;       // 32-bit element ops, when not e (64-bit types: LaneOps)
  Bytes vmem_bytes_read;
  Bytes vmem_bytes_written;
};

VectorWork WorkOf(const isa::Instruction& inst, const config::VpuConfig& vpu) {
  namespace op = isa::op;
  VectorWork w;
  switch (inst.opcode) {
    case isa::Opcode::kVpuUnary: {
      auto o = inst.As<op::VpuUnary>();
      w.e = o.count;
      w.cls = UnaryClass(o.op);
      w.arithmetic = true;
      w.vmem_bytes_read = ElementBytes(o.dtype, w.e);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuBinary: {
      auto o = inst.As<op::VpuBinary>();
      w.e = o.rows * o.cols;
      w.cls = BinaryClass(o.op);
      w.arithmetic = true;
      w.vmem_bytes_read = OperandBytes(o.dtype, o.a_bcast, o.rows, o.cols) +
                          OperandBytes(o.dtype, o.b_bcast, o.rows, o.cols);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuCompare: {
      auto o = inst.As<op::VpuCompare>();
      w.e = o.rows * o.cols;
      w.arithmetic = true;
      w.vmem_bytes_read = OperandBytes(o.dtype, o.a_bcast, o.rows, o.cols) +
                          OperandBytes(o.dtype, o.b_bcast, o.rows, o.cols);
      w.vmem_bytes_written = Bytes(w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuSelect: {
      auto o = inst.As<op::VpuSelect>();
      w.e = o.rows * o.cols;
      w.vmem_bytes_read = OperandBytes(o.dtype, o.a_bcast, o.rows, o.cols) +
                          OperandBytes(o.dtype, o.b_bcast, o.rows, o.cols) +
                          OperandBytes(isa::DType::kPred, o.pred_bcast, o.rows, o.cols);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuRngBits: {
      // Philox-4x32-10: 15 ALU element-ops per output word (isa/opcodes.def, assumption); integer
      // work, so no FLOP.
      auto o = inst.As<op::VpuRngBits>();
      w.e = 15 * o.count;
      w.produced = o.count;
      w.vmem_bytes_read = Bytes(16);
      w.vmem_bytes_written = Bytes(16 + 4 * o.count);
      break;
    }
    case isa::Opcode::kVpuConvert: {
      auto o = inst.As<op::VpuConvert>();
      w.e = o.count;
      w.vmem_bytes_read = ElementBytes(o.src_dtype, w.e);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      // An f64 side converts as the pair of f32 words it is emulated with (their sum or split:
      // two lane ops an element), not as f64 arithmetic.
      const isa::DType wide = Is64Bit(o.src_dtype) ? o.src_dtype : o.dtype;
      w.lane_ops = LaneOps(wide, w.e, wide != isa::DType::kF64, vpu);
      break;
    }
    case isa::Opcode::kVpuReduce: {
      auto o = inst.As<op::VpuReduce>();
      w.e = o.rows * o.cols;
      w.arithmetic = true;
      w.vmem_bytes_read = ElementBytes(o.dtype, w.e);
      uint64_t out = o.axis == isa::ReduceAxis::kLanes      ? o.rows
                     : o.axis == isa::ReduceAxis::kSublanes ? o.cols
                                                            : 1;
      w.vmem_bytes_written = ElementBytes(o.dtype, out);
      if (o.acc) w.vmem_bytes_read += ElementBytes(o.dtype, out);  // the running results
      if (o.axis != isa::ReduceAxis::kSublanes) {
        uint64_t stages = 0;
        while ((int64_t{1} << stages) < vpu.lanes) ++stages;
        w.extra_latency = Cycles(stages * static_cast<uint64_t>(vpu.alu_latency_cycles));
      }
      w.lane_ops = LaneOps(o.dtype, w.e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuBroadcast: {
      auto o = inst.As<op::VpuBroadcast>();
      w.e = o.rows * o.cols;
      w.vmem_bytes_read = ElementBytes(o.dtype, o.mode == isa::Broadcast::kRow   ? o.cols
                                                : o.mode == isa::Broadcast::kCol ? o.rows
                                                                                 : 1);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, false, vpu);
      break;
    }
    case isa::Opcode::kXluTranspose: {
      auto o = inst.As<op::XluTranspose>();
      w.e = o.rows * o.cols;
      w.cls = LatencyClass::kTranspose;
      w.vmem_bytes_read = ElementBytes(o.dtype, w.e);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuCopy: {
      auto o = inst.As<op::VpuCopy>();
      w.e = o.n0 * o.n1 * o.n2;
      w.vmem_bytes_read = ElementBytes(o.dtype, w.e);
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuFill: {
      auto o = inst.As<op::VpuFill>();
      w.e = o.count;
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuIota: {
      auto o = inst.As<op::VpuIota>();
      w.e = o.rows * o.cols;
      w.vmem_bytes_written = ElementBytes(o.dtype, w.e);
      w.lane_ops = LaneOps(o.dtype, w.e, false, vpu);
      break;
    }
    default:
      TPUSIM_CHECK(false) << "VectorInstructionCost: not a VPU/XLU opcode";
  }
  return w;
}

// The latency of one vreg op of class `cls`: the config key of the class.
Cycles ClassLatency(LatencyClass cls, const config::VpuConfig& vpu) {
  switch (cls) {
    case LatencyClass::kAlu:
      return Cycles(static_cast<uint64_t>(vpu.alu_latency_cycles));
    case LatencyClass::kTranscendental:
      return Cycles(static_cast<uint64_t>(vpu.transcendental_latency_cycles));
    case LatencyClass::kDivide:
      return Cycles(static_cast<uint64_t>(vpu.divide_latency_cycles));
    case LatencyClass::kTranspose:
      return Cycles(static_cast<uint64_t>(vpu.transpose_latency_cycles));
  }
  return Cycles(0);
}

}  // namespace

VectorCost VectorInstructionCost(const isa::Instruction& inst, const config::VpuConfig& vpu,
                                 int64_t vmem_bytes_per_cycle) {
  const VectorWork w = WorkOf(inst, vpu);
  VectorCost c;
  c.vmem_bytes_read = w.vmem_bytes_read;
  c.vmem_bytes_written = w.vmem_bytes_written;
  const Cycles class_latency = ClassLatency(w.cls, vpu);
  const uint64_t e = w.e;
  const uint64_t lane_ops = w.lane_ops;
  const uint64_t tile = static_cast<uint64_t>(std::max<int64_t>(vpu.lanes * vpu.sublanes, 1));
  const uint64_t per_cycle = static_cast<uint64_t>(std::max<int64_t>(vpu.ops_per_cycle, 1));
  const uint64_t ops = lane_ops > 0 ? lane_ops : e;
  // Vreg ops issued back to back, or the VMEM port (bytes / bytes-per-cycle), whichever is longer.
  Cycles occupancy(CeilDiv(CeilDiv(std::max<uint64_t>(ops, 1), tile), per_cycle));
  if (vmem_bytes_per_cycle > 0) {
    const Bytes vmem_bytes = c.vmem_bytes_read + c.vmem_bytes_written;
    occupancy = std::max(occupancy, Cycles(CeilDiv(vmem_bytes.value(),
                                                   static_cast<uint64_t>(vmem_bytes_per_cycle))));
  }
  c.occupancy = std::max(occupancy, Cycles(1));
  c.latency = std::max(class_latency, Cycles(1)) + w.extra_latency + c.occupancy - Cycles(1);
  c.elements = w.produced > 0 ? w.produced : e;
  c.flop = w.arithmetic ? e : 0;
  return c;
}

}  // namespace tpusim::isa
