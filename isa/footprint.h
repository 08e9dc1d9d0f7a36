// An instruction's memory footprint — the regions it reads and writes — as a static fact of its
// opcode, defined beside its semantics (execute_*.cc) and used by the simulator's scoreboard
// (sim/core/scoreboard.h), the final-state check, the trace and the report.
//
// Regions are byte ranges of one memory space of one core (an accumulator region is a row range of
// one MXU). A two-level strided access — rows of `width` bytes, `stride` bytes apart, e.g. an MXU
// pop writing its n columns into a wider [m, stride] block — keeps its row structure: two accesses
// to interleaved columns of one block do not conflict (each MXU's pop writes its own columns, and a
// real TensorCore's compiler knows they are disjoint). Deeper strides are covered by their bounding
// range (conservative: it may add a false dependence, never miss one). An empty access still covers
// one byte.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "isa/instruction.h"
#include "isa/opcode.h"
#include "isa/program.h"
#include "isa/types.h"

namespace tpusim::isa {

struct Region {
  MemSpace space = MemSpace::kVmem;
  int32_t core = 0;  // global core id (host memory: 0)
  int32_t mxu = 0;   // accumulator regions: the MXU index; else 0
  uint64_t lo = 0;   // [lo, hi): bytes, or accumulator rows (the bounding range)
  uint64_t hi = 0;
  // Strided: rows of `width` bytes starting every `stride` bytes from lo (the last row ends at
  // hi); 0 = every byte of [lo, hi).
  uint64_t stride = 0, width = 0;
  // Matmuls accumulating into the same rows of one MXU are applied in order by the array (TPU v1's
  // accumulate flag): two such regions never conflict (sim/core/scoreboard.h).
  bool in_order_chain = false;
  // An mxu.pop's read of accumulator rows: the results stream out of the array row by row, so the
  // pop need not wait for the matmuls writing those rows (in_order_chain) to complete; the MXU's
  // result path times each row (sim/core/mxu_unit.h). A later matmul overwriting the rows still
  // waits for the pop (WAR).
  bool result_stream = false;

  bool Overlaps(const Region& o) const {
    return space == o.space && core == o.core && mxu == o.mxu && lo < o.hi && o.lo < hi &&
           !(in_order_chain && o.in_order_chain) && RowsOverlap(o);
  }

 private:
  // Exact for a strided region against a contiguous one or one of the same stride; otherwise the
  // bounding ranges decide (they already overlap when this is called).
  bool RowsOverlap(const Region& o) const;
};

struct Footprint {
  std::vector<Region> reads;
  std::vector<Region> writes;
};

/// [addr, addr + bytes) of `space` of `core` (host memory is core 0's).
inline Region RegionBytes(MemSpace space, int core, uint64_t addr, uint64_t bytes) {
  Region r;
  r.space = space;
  r.core = space == MemSpace::kHost ? 0 : core;
  r.lo = addr;
  r.hi = addr + std::max<uint64_t>(bytes, 1);
  return r;
}
inline Region VmemRegion(int core, uint64_t addr, uint64_t bytes) {
  return RegionBytes(MemSpace::kVmem, core, addr, bytes);
}
/// `rows` rows of `width` bytes, `stride` bytes apart, from `addr` of `space` of `core`; a
/// contiguous region when the rows touch (stride <= width) or there is one row.
Region StridedRegion(MemSpace space, int core, uint64_t addr, uint64_t rows, uint64_t width,
                     uint64_t stride);
/// Accumulator rows [row, row + rows) of MXU `mxu` of `core`.
inline Region AccRegion(int core, uint64_t mxu, uint64_t row, uint64_t rows, bool in_order_chain,
                        bool result_stream = false) {
  Region r;
  r.space = MemSpace::kAcc;
  r.core = core;
  r.mxu = static_cast<int32_t>(mxu);
  r.lo = row;
  r.hi = row + std::max<uint64_t>(rows, 1);
  r.in_order_chain = in_order_chain;
  r.result_stream = result_stream;
  return r;
}
inline uint64_t ElemBytes(DType t) { return static_cast<uint64_t>(DTypeBytes(t)); }

/// The regions `inst`, executed by global core `core`, reads and writes on that core (plus the
/// host). A remote DMA's destination on another core is not included (the remote core
/// synchronizes on its dst_flag): RemoteDmaDestination gives it.
Footprint InstructionFootprint(const Instruction& inst, int core, const Program& program);

// Per unit, beside each unit's semantics (execute_*.cc).
Footprint DmaFootprint(const Instruction& inst, int core);
Footprint MxuFootprint(const Instruction& inst, int core);
Footprint VectorFootprint(const Instruction& inst, int core);
Footprint CollectiveFootprint(const Instruction& inst, int core, const Program& program);

/// The strided descriptor every DMA opcode starts with (opcodes.def TPUSIM_DMA_DESCRIPTOR_), typed:
/// op::DmaHbmToVmem's fields are exactly the descriptor, read by position from any DMA opcode.
using DmaDescriptor = op::DmaHbmToVmem;
/// `inst`'s descriptor; TPUSIM_CHECKs that `inst` is a DMA.
DmaDescriptor DmaDescriptorOf(const Instruction& inst);

/// Bytes a strided DMA descriptor spans on its source / destination side:
/// (n2-1)*s2 + (n1-1)*s1 + n0*elem_bytes (any DMA opcode but the indirect ones); UINT64_MAX when
/// that does not fit in 64 bits (common/saturating.h: the verifier rejects such a descriptor).
uint64_t DmaSourceExtent(const Instruction& inst);
uint64_t DmaDestinationExtent(const Instruction& inst);
/// Bytes one execution of a DMA moves: n0 * n1 * n2 * elem_bytes (times `count` slices for
/// dma.gather / dma.scatter); UINT64_MAX when the product does not fit in 64 bits (a descriptor
/// with zero strides may repeat a small box that often), never a wrapped small number.
uint64_t DmaBytesMoved(const Instruction& inst);
/// Elements one execution of a DMA moves: n0 * n1 * n2 (times `count` for dma.gather /
/// dma.scatter), saturating at UINT64_MAX; the interpreter's work budget charges a DMA this many
/// units (isa/work_units.h).
uint64_t DmaElementsMoved(const Instruction& inst);
/// DmaBytesMoved in double arithmetic, elem_bytes * n0 * n1 * n2 (* count): never wraps, exact
/// below 2^53 (for totals over a program, isa/program_traffic.h).
double DmaBytesMovedDouble(const Instruction& inst);
/// Bytes the HBM side of a DMA moves: its `hbm_bytes` field (whole tiles of a tiled HBM array,
/// TPUSIM_DMA_HBM_TILES_ in opcodes.def) when that is larger, else DmaBytesMoved.
uint64_t DmaHbmBytes(const Instruction& inst);

/// The members of replica-group table entry `group` that contain `core` (empty if none).
std::vector<int32_t> GroupMembers(const Program& program, uint64_t group, int core);

}  // namespace tpusim::isa
