// Memory-space assignment: buffers kept in VMEM between kernels, as XLA's TPU backend does with its
// MemorySpaceAssignment pass (VMEM as the "alternate memory"), and as TPU v1 keeps a layer's
// activations in its Unified Buffer for the next layer. Without it every value between two kernels
// is stored to HBM by its producer and loaded back by each consumer.
//
// It runs on one core's emitted program. Kernels use VMEM below core.vmem.scoped_limit_bytes
// (ChipConfig::KernelVmemBytes); the rest, [limit, capacity), holds the kept buffers. A buffer is a
// candidate when only this core's program touches it (an intermediate value: not a parameter,
// constant or result of the module, not an operand or result of a collective or send/recv). It is
// kept when every instruction that touches its HBM bytes while it is live is a whole plain
// dma.hbm_to_vmem / dma.vmem_to_hbm inside it, the first of them a store, and it fits beside
// the buffers already kept over its live range (first to last access; an access inside a ctrl.loop
// makes it live over the whole outermost loop). Candidates are taken by the HBM bytes they save
// (bytes moved, times the trips of enclosing loops) per byte of VMEM, most first, and placed at the
// lowest free offset (first fit over time and address, as XLA's heap simulator does). Each of a
// kept buffer's DMAs becomes a dma.vmem_to_vmem at the same offset inside its VMEM copy: the same
// bytes land in the same places, so values are unchanged; the time is the VMEM copy path's, and
// no HBM byte moves.
//
// Departures from XLA (docs/codegen.md "Buffers kept in VMEM"): XLA decides before scheduling
// and can prefetch and evict a buffer part of its life; kernels there read a kept operand in
// place, here through a VMEM-to-VMEM copy into the kernel's tiles.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/lower/lowerer.h"
#include "isa/program.h"

namespace tpusim::compiler {

/// True for values whose bytes something other than the program of the core computing them
/// reads or writes: parameters (the driver writes them), constants (data segments), send/recv
/// and collectives (other cores' DMAs). Host transfers and everything else show in the core's own
/// code, where memory-space assignment checks every access.
bool ValueSharedBeyondKernels(const hlo::HloInstruction& inst);

/// A buffer's HBM bytes [address, address + bytes), and the kernels (entry-instruction positions
/// [live_from, live_to]) over which no other value uses them (HbmBuffer::live_from/live_to).
struct HbmRange {
  uint64_t address = 0;
  int64_t bytes = 0;
  int64_t live_from = 0, live_to = 0;
};

/// A buffer kept in VMEM: its HBM range, its VMEM copy, and the instruction indices it lives over.
struct KeptBuffer {
  HbmRange hbm;
  uint64_t vmem_address = 0;
  size_t first = 0, last = 0;
};

/// The buffers of `plan` that only the kernels of one core read and write: every buffer of the
/// entry computation except those of parameters, constants, the root, fusion-internal values, and
/// the operands and results of values ValueSharedBeyondKernels (lowerer.h); one entry per buffer
/// (aliases share it), and none whose bytes overlap an excluded buffer's (PlanHbm with
/// isolate_shared gives those bytes of their own).
std::vector<HbmRange> VmemResidencyCandidates(const hlo::HloModule& module, const HbmPlan& plan);

/// Keeps candidates of core `core_id`'s program in VMEM [vmem_base, vmem_base + vmem_bytes) and
/// rewrites their DMAs (header comment). `program` is the whole program (for the footprints of
/// collectives); `kernel_starts` the instruction index where each entry instruction's kernel starts
/// (Lowerer::kernel_starts), which turns a candidate's live kernels into the instructions that can
/// touch it. Returns the buffers kept, by VMEM address. Never fails: a candidate it cannot prove
/// safe stays in HBM.
std::vector<KeptBuffer> AssignVmemResidency(isa::Program& program, int core_id,
                                            const std::vector<HbmRange>& candidates,
                                            const std::vector<size_t>& kernel_starts,
                                            uint64_t vmem_base, int64_t vmem_bytes);

}  // namespace tpusim::compiler
