// The cycle cost of one VPU / XLU instruction: the one place this formula lives. It sits in the
// ISA beside the MXU's closed form (mxu_timing.h) so that the simulator's vector unit
// (sim/core/vector_unit.cc) and the compiler's cost estimates (compiler/lower/) call the same
// function; the compiler may not link the simulator.
#pragma once

#include <cstdint>

#include "common/units.h"
#include "config/chip_config.h"
#include "isa/instruction.h"

namespace tpusim::isa {

/// When a vector instruction occupies its unit and when its result is ready, relative to its start.
struct VectorCost {
  Cycles occupancy{1};   // until the unit accepts the next instruction (>= 1)
  Cycles latency{1};     // from start until the result is in VMEM (>= occupancy)
  uint64_t elements = 0;  // elements produced (for stats)
  uint64_t flop = 0;  // arithmetic operations (1 per element for arithmetic, 0 for data movement)
  Bytes vmem_bytes_read;
  Bytes vmem_bytes_written;
};

/// Cost of `inst` (a kVpu or kXlu instruction) on a VPU of `vpu.lanes` x `vpu.sublanes` with VMEM
/// port bandwidth `vmem_bytes_per_cycle` (0 = unlimited).
///
/// Derivation: the VPU works on vregs of T = lanes * sublanes 32-bit elements (8 x 128 on TPU v2+
/// [P S7, S9]) and issues `ops_per_cycle` vreg operations per cycle, each taking the latency of its
/// class (ALU 2 cycles for vadd.8x128.f32 [P S9]; transcendental, divide/sqrt and XLU transpose
/// latencies are config keys). An op over E elements is ceil(E / T) vreg ops, issued back to back:
///     occupancy = max(ceil(ceil(E / T) / ops_per_cycle), ceil(vmem_bytes / vmem_bytes_per_cycle))
///     latency   = class_latency + occupancy - 1
/// i.e. the last vreg op issues at occupancy - 1 and finishes class_latency cycles later.
/// vmem_bytes = bytes read + bytes written (the VMEM port is the other possible limit). Reductions
/// along lanes (or all) add a cross-lane tree of ceil(log2(lanes)) ALU stages to the latency
/// (assumption: Google has not published the reduction unit's timing). Data movement (copy, fill,
/// iota, broadcast, select, convert) uses the ALU class. A 64-bit integer element (s64/u64) counts as
/// 2 elements when moved (two 32-bit words) and as core.vpu.ops_per_64bit_element elements when
/// computed on (XLA's TPU backend emulates 64-bit integers with pairs of 32-bit values; the key's
/// default 2 is a lower bound, an assumption). FLOP stay 1 per element.
VectorCost VectorInstructionCost(const isa::Instruction& inst, const config::VpuConfig& vpu,
                                 int64_t vmem_bytes_per_cycle);

}  // namespace tpusim::isa
