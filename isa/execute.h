// The semantics of each instruction of opcodes.def, written once, on MachineState
// (machine_state.h). The interpreter (interpreter.h) calls these in its untimed step loop; the
// simulator (sim/) calls the same functions at the cycle a unit completes an instruction and keeps
// only timing state. An engine that needs an instruction in two halves (a DMA's copy at completion
// and its flag later; an MXU op whose values the array model computes) uses the pieces declared
// here.
//
// Errors are InvalidArgument with the problem only ("dst: VMEM of core 0: ..."); the caller adds
// the core, instruction index and mnemonic.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/machine_state.h"
#include "isa/program.h"

namespace tpusim::isa {

// ---- DMA (execute_dma.cc) ----------------------------------------------------------------------

/// The data effect of any DMA opcode issued by core `core` (the strided copy of opcodes.def's
/// descriptor, gathered then scattered; dma.gather / dma.scatter through indirect_dma.h). Flags are
/// not touched: see DmaFlags.
Status DmaCopy(MachineState& state, int core, const Instruction& inst);
/// The flags a completed DMA of `core` increments: (core, flag) of the issuer, then for
/// dma.vmem_to_remote (dst_core, dst_flag).
std::vector<std::pair<int, uint64_t>> DmaFlags(int core, const Instruction& inst);
/// A whole DMA as the untimed interpreter runs it: DmaCopy, then +1 on each of DmaFlags.
Status ExecuteDma(MachineState& state, int core, const Instruction& inst);

// ---- MXU (execute_mxu.cc) ----------------------------------------------------------------------

/// An MXU operand as the array takes it: [rows, cols] row-major, bf16-exact floats (float path,
/// after the precision part's split of an f32) or s8 values (int path).
struct MxuOperand {
  int64_t rows = 0, cols = 0;
  bool is_int = false;
  std::vector<float> f;
  std::vector<int32_t> i;
};
/// mxu.load_weights' tile [K, N] read from `vmem` (transposed on the way if asked). Checks dtype,
/// part and stride. `vmem` null (timing-only runs): the checks and the shape, no values.
StatusOr<MxuOperand> ReadMxuWeights(const SparseMemory* vmem, const op::MxuLoadWeights& w);
/// mxu.matmul's LHS [M, K] read from `vmem`. Checks dtype, part and stride; `vmem` as above.
StatusOr<MxuOperand> ReadMxuLhs(const SparseMemory* vmem, const op::MxuMatmul& mm);
/// mxu.pop's data effect: accumulator rows [acc, acc + m) of `acc` (raw f32 or s32 words; rows
/// never written read zero and stay unallocated) through the activation and the output conversion
/// into `vmem`. Checks acc_dtype/dtype/act and stride; the caller checks the row range and n.
Status WriteMxuPop(SparseMemory& vmem, const op::MxuPop& p, const AccumulatorMemory& acc);
/// The three MXU instructions on the MXU state of `core` (the interpreter's untimed MXU).
Status ExecuteMxu(MachineState& state, int core, const Instruction& inst);

// ---- VPU and XLU (execute_vpu.cc) --------------------------------------------------------------

/// Any VPU or XLU instruction of `core`, on its VMEM.
Status ExecuteVector(MachineState& state, int core, const Instruction& inst);

// ---- Collectives and barriers (execute_collective.cc) ------------------------------------------

/// The cores that rendezvous with `core` at `inst` (sync.barrier or an ici.* collective), in rank
/// order: its replica group in group order, or for ici.collective_permute the sorted cores of the
/// permutation (a core named by no pair takes part alone). InvalidArgument if a table index is out
/// of range, `core` is not a member, or a member is not a core of the program.
StatusOr<std::vector<int>> RendezvousMembers(const Program& program, const Instruction& inst,
                                             int core);
/// Whether every member (`members[r]`, waiting at `insts[r]`) waits for this same rendezvous: its
/// own RendezvousMembers are `members`. A member waiting at a collective of another group (replica
/// groups {0,1},{2,3} and {0,2},{1,3} interleave) is not there yet; the rendezvous waits for it
/// rather than compare its instruction (a group that never gathers ends as a deadlock).
bool SameRendezvous(const Program& program, const std::vector<int>& members,
                    const std::vector<Instruction>& insts);
/// InvalidArgument "collective mismatch across the group: ..." unless every member's instruction
/// (`insts[r]` of member `members[r]`) has `core`'s opcode and fields apart from src and dst.
Status CheckRendezvous(const std::vector<int>& members, const std::vector<Instruction>& insts,
                       int core, const Instruction& inst);
/// The data effect of a collective: member r (`members[r]`, rank r) runs `insts[r]`.
Status ExecuteCollective(MachineState& state, const Program& program,
                         const std::vector<int>& members, const std::vector<Instruction>& insts);

}  // namespace tpusim::isa
