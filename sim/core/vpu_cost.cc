#include "sim/core/vpu_cost.h"

#include <algorithm>

#include "common/check.h"
#include "common/units.h"

namespace tpusim::sim {
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

bool Is64Bit(isa::DType t) { return isa::DTypeBytes(t) == 8; }

// 32-bit VPU element ops for e elements of t. The VPU's lanes are 32 bits wide: an s64/u64 value
// is two 32-bit words, so moving it (copy, broadcast, select, fill, iota, transpose) takes two
// lane slots, and computing on it takes core.vpu.ops_per_64bit_element ops (XLA's TPU backend
// emulates 64-bit integers with pairs of 32-bit values).
uint64_t LaneOps(isa::DType t, uint64_t e, bool arithmetic, const config::VpuConfig& vpu) {
  if (!Is64Bit(t)) return e;
  return e * (arithmetic ? static_cast<uint64_t>(std::max<int64_t>(vpu.ops_per_64bit_element, 1))
                         : 2);
}

}  // namespace

VectorCost VectorInstructionCost(const isa::Instruction& inst, const config::VpuConfig& vpu,
                                 int64_t vmem_bytes_per_cycle) {
  namespace op = isa::op;
  VectorCost c;
  LatencyClass cls = LatencyClass::kAlu;
  uint64_t e = 0;
  bool arithmetic = false;
  uint64_t extra_latency = 0;
  uint64_t produced = 0;  // elements written, when not e
  uint64_t lane_ops = 0;  // 32-bit element ops, when not e (64-bit types: LaneOps)
  switch (inst.opcode) {
    case isa::Opcode::kVpuUnary: {
      auto o = inst.As<op::VpuUnary>();
      e = o.count;
      cls = UnaryClass(o.op);
      arithmetic = true;
      c.vmem_bytes_read = ElementBytes(o.dtype, e);
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuBinary: {
      auto o = inst.As<op::VpuBinary>();
      e = o.rows * o.cols;
      cls = BinaryClass(o.op);
      arithmetic = true;
      c.vmem_bytes_read = ElementBytes(o.dtype, e) * 2;
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuCompare: {
      auto o = inst.As<op::VpuCompare>();
      e = o.rows * o.cols;
      arithmetic = true;
      c.vmem_bytes_read = ElementBytes(o.dtype, e) * 2;
      c.vmem_bytes_written = Bytes(e);
      lane_ops = LaneOps(o.dtype, e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuSelect: {
      auto o = inst.As<op::VpuSelect>();
      e = o.rows * o.cols;
      c.vmem_bytes_read = ElementBytes(o.dtype, e) * 2 + Bytes(e);
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuRngBits: {
      // Philox-4x32-10: 15 ALU element-ops per output word (isa/opcodes.def, assumption); integer
      // work, so no FLOP.
      auto o = inst.As<op::VpuRngBits>();
      e = 15 * o.count;
      produced = o.count;
      c.vmem_bytes_read = Bytes(16);
      c.vmem_bytes_written = Bytes(16 + 4 * o.count);
      break;
    }
    case isa::Opcode::kVpuConvert: {
      auto o = inst.As<op::VpuConvert>();
      e = o.count;
      c.vmem_bytes_read = ElementBytes(o.src_dtype, e);
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(Is64Bit(o.src_dtype) ? o.src_dtype : o.dtype, e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuReduce: {
      auto o = inst.As<op::VpuReduce>();
      e = o.rows * o.cols;
      arithmetic = true;
      c.vmem_bytes_read = ElementBytes(o.dtype, e);
      uint64_t out = o.axis == isa::ReduceAxis::kLanes      ? o.rows
                     : o.axis == isa::ReduceAxis::kSublanes ? o.cols
                                                            : 1;
      c.vmem_bytes_written = ElementBytes(o.dtype, out);
      if (o.acc) c.vmem_bytes_read += ElementBytes(o.dtype, out);  // the running results
      if (o.axis != isa::ReduceAxis::kSublanes) {
        uint64_t stages = 0;
        while ((int64_t{1} << stages) < vpu.lanes) ++stages;
        extra_latency = stages * static_cast<uint64_t>(vpu.alu_latency_cycles);
      }
      lane_ops = LaneOps(o.dtype, e, true, vpu);
      break;
    }
    case isa::Opcode::kVpuBroadcast: {
      auto o = inst.As<op::VpuBroadcast>();
      e = o.rows * o.cols;
      c.vmem_bytes_read = ElementBytes(o.dtype, o.mode == isa::Broadcast::kRow   ? o.cols
                                                : o.mode == isa::Broadcast::kCol ? o.rows
                                                                                 : 1);
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, false, vpu);
      break;
    }
    case isa::Opcode::kXluTranspose: {
      auto o = inst.As<op::XluTranspose>();
      e = o.rows * o.cols;
      cls = LatencyClass::kTranspose;
      c.vmem_bytes_read = ElementBytes(o.dtype, e);
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuCopy: {
      auto o = inst.As<op::VpuCopy>();
      e = o.n0 * o.n1 * o.n2;
      c.vmem_bytes_read = ElementBytes(o.dtype, e);
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuFill: {
      auto o = inst.As<op::VpuFill>();
      e = o.count;
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, false, vpu);
      break;
    }
    case isa::Opcode::kVpuIota: {
      auto o = inst.As<op::VpuIota>();
      e = o.rows * o.cols;
      c.vmem_bytes_written = ElementBytes(o.dtype, e);
      lane_ops = LaneOps(o.dtype, e, false, vpu);
      break;
    }
    default:
      TPUSIM_CHECK(false) << "VectorInstructionCost: not a VPU/XLU opcode";
  }
  uint64_t class_latency = 0;
  switch (cls) {
    case LatencyClass::kAlu:
      class_latency = static_cast<uint64_t>(vpu.alu_latency_cycles);
      break;
    case LatencyClass::kTranscendental:
      class_latency = static_cast<uint64_t>(vpu.transcendental_latency_cycles);
      break;
    case LatencyClass::kDivide:
      class_latency = static_cast<uint64_t>(vpu.divide_latency_cycles);
      break;
    case LatencyClass::kTranspose:
      class_latency = static_cast<uint64_t>(vpu.transpose_latency_cycles);
      break;
  }
  const uint64_t tile = static_cast<uint64_t>(std::max<int64_t>(vpu.lanes * vpu.sublanes, 1));
  const uint64_t per_cycle = static_cast<uint64_t>(std::max<int64_t>(vpu.ops_per_cycle, 1));
  const uint64_t ops = lane_ops > 0 ? lane_ops : e;
  uint64_t occupancy = CeilDiv(CeilDiv(std::max<uint64_t>(ops, 1), tile), per_cycle);
  if (vmem_bytes_per_cycle > 0) {
    occupancy = std::max(occupancy, CeilDiv((c.vmem_bytes_read + c.vmem_bytes_written).value(),
                                            static_cast<uint64_t>(vmem_bytes_per_cycle)));
  }
  occupancy = std::max<uint64_t>(occupancy, 1);
  c.occupancy = Cycles(occupancy);
  c.latency = Cycles(std::max<uint64_t>(class_latency, 1) + extra_latency + occupancy - 1);
  c.elements = produced > 0 ? produced : e;
  c.flop = arithmetic ? e : 0;
  return c;
}

}  // namespace tpusim::sim
