// PlanDot: the decisions of a dot's MXU kernel — HBM-level blocks, K split, operand and result
// buffer counts, accumulator sets, loop order and row split — as a plain struct, with no
// instruction emitted (internal to compiler/lower; the emitter is Lowerer::EmitDot in
// lower_dot.cc). Pure: the same shape, chip and VMEM budget give the same plan.
//
// Tiling. The RHS is cut into weight tiles of at most R x C (core.mxu.rows x cols): K into R-row
// slices, N into C-column slices. The LHS streams through the stationary weights M rows at a time.
// HBM-level blocks (Mc, Kc, Nc) are chosen so a block's working set fits VMEM:
//   rhs block Kc x Nc (preferably the whole [K,N], so weights are read from HBM once per batch),
//   lhs block Mc x Kc (with Kc = K the LHS block stays in VMEM across all N blocks),
//   result block Mc x Nc,
// and so each MXU's accumulator holds the [Mc, C] partial sums of every N tile it owns:
//   Mc * ceil(ceil(Nc / C) / mxu.count) <= core.mxu.accumulator_rows.
// Loop order: batch -> M block -> N block -> K block -> K tile -> N tile (round-robin over the
// MXUs, tile j on MXU j % count) -> precision pass. Partial sums over K tiles and passes accumulate
// in the accumulators (accumulate=1 after the first); each N tile is popped once, after its last K
// tile. With Kc = K and Nc = N (the common case) HBM traffic is the minimum: every operand byte is
// read once per batch and every result byte written once.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "config/chip_config.h"
#include "isa/mxu_timing.h"

namespace tpusim::compiler {

/// Most accumulator sets a dot's output blocks rotate through (DotPlan::acc_sets).
inline constexpr int64_t kMaxAccumulatorSets = 3;

/// A canonical dot's sizes: batch B, [M,K] x [K,N] (N: this core's share of the columns), element
/// bytes of LHS (le), RHS (re) and result (oe).
struct DotShape {
  int64_t B = 1, M = 0, K = 0, N = 0, le = 4, re = 4, oe = 4;
  int64_t lhs_copies = 1;  // 2 for a KM LHS: its blocks are staged before the XLU transposes them
  int64_t out_copies = 1;  // 2 when each popped block is transposed on the XLU (stationary LHS)
  // VMEM bytes per element of an LHS / weight block that the operand's prologue adds (its inputs
  // and intermediates; lower/dot_prologue.cc), held like the block in every buffer version.
  int64_t lhs_extra = 0, rhs_extra = 0;
};

/// HBM-level blocks: an LHS chunk [Mc, Kc], a weight chunk [Kc, Nc] and a result block [Mc, Nc],
/// each held `nbuf` times in VMEM; every MXU owns tiles_per_mxu of the block's ceil(Nc / C) N
/// tiles.
struct DotBlocks {
  int64_t Mc = 0, Kc = 0, Nc = 0, tiles_per_mxu = 1;
  int nbuf = 1;
};

/// Operand (LHS and weight) chunk buffers for `nbuf` result buffers: three when double buffering,
/// so the loads of step i + 1 can be issued before step i's matmuls without waiting for step
/// i - 1's matmuls (which read the buffer two steps back), and the MXU queues never run dry behind
/// a prefetch; else one.
int DotInputBuffers(int nbuf);

/// The MXU (tile j, row group g of G) of an [mc, ..] block runs on, its accumulator row offset
/// within the block's accumulator set, and its rows [r0, r1) of the block.
struct DotRowUnit {
  uint64_t mxu = 0;
  int64_t acc = 0, r0 = 0, r1 = 0;
};

/// One step of the schedule: the chunks [m0, +Mc) x [k0, +Kc) of the LHS and [k0, +Kc) x
/// [n0, +Nc) of the weights of batch b; a chunk is reloaded (load_*) only when it differs from the
/// previous step's, and version v of a chunk lives in operand buffer v % DotInputBuffers(nbuf).
struct DotStep {
  int64_t b = 0, m0 = 0, n0 = 0, k0 = 0;
  bool load_lhs = true, load_rhs = true;
  int64_t lhs_ver = 0, rhs_ver = 0;
  bool operator==(const DotStep&) const = default;
};

/// The plan of one dot on one core.
struct DotPlan {
  DotShape shape;
  isa::MxuTiming mxu;       // the MXU's timing parameters (core.mxu.*)
  int64_t mxus = 1;         // MXUs per core (core.mxu.count, at least 1)
  int64_t acc_rows = 0;     // accumulator rows per MXU (core.mxu.accumulator_rows; 0 = 2^20)
  // K split: when the whole N fits one array's columns (N <= C) but the core has several MXUs, K
  // tile t goes to MXU t % ksplit, each MXU accumulates its own partial sum, and the partials are
  // popped (f32/s32) and added on the VPU — otherwise all but one MXU would idle. 1 = no split.
  int64_t ksplit = 1;
  DotBlocks blocks;
  int input_buffers = 1;  // DotInputBuffers(blocks.nbuf)
  // Accumulator sets: with room for several AccSetRows() x C sets per MXU (at most
  // kMaxAccumulatorSets), consecutive output blocks take them in turn, so the next blocks' matmuls
  // run while the previous blocks are popped — with three, a short block's matmuls need not hide a
  // long block's pop. 1: each block's matmuls wait for the previous pop.
  int acc_sets = 1;

  /// Row split (as in the convolution kernel): when an [mc, nc] block's N tiles do not divide
  /// evenly over the MXUs (3 tiles on 2 MXUs), each tile's rows are cut into G contiguous groups
  /// and the (tile, group) units go round-robin over the MXUs, so each streams about the same
  /// number of rows — at the price of G times the weight loads. G is chosen when it lowers the
  /// estimated time of the busiest MXU, units x FoldCycles(rows per unit), and the units fit the
  /// accumulator rows the block was given. 1 = no split (always with a K split).
  int64_t RowGroups(int64_t mc, int64_t nc) const;
  /// Accumulator rows one output block takes on each MXU (the span of its units' row offsets,
  /// RowUnit): tiles_per_mxu x Mc without a row split, units x ceil(Mc / G) with one. Sets of
  /// this many rows rotate (acc_sets = accumulator_rows / AccSetRows(), at most
  /// kMaxAccumulatorSets).
  int64_t AccSetRows() const;
  /// Unit (tile j, group g of G) of an [mc, ..] block.
  DotRowUnit RowUnit(int64_t j, int64_t g, int64_t G, int64_t mc) const;
};

/// Chooses the plan of a dot of `shape` on a core of `config` with `vmem` bytes of VMEM for its
/// blocks (`double_buffer`: pipeline with two result and three operand buffers when they fit).
/// The blocks minimize an estimate of the dot's time on one core:
///   max(MXU pipeline time, HBM traffic / HBM bytes per cycle) + steps * (HBM latency + R + C),
/// with the MXU pipeline time = the busiest MXU's matmuls and pops block after block (each weight
/// tile it owns costs isa::MxuTiming::FoldCycles(rows) — the simulator's closed form: a weight
/// tile cannot be used for less than its shift time, which is what bounds a GEMV with tiny M — a
/// block's matmuls wait for the pop of the block that last used their accumulator set, and its
/// pop moves one row per cycle) and traffic = the LHS read once per N block (once when
/// Kc = K) + the weights read once per M block (once when Kc = K and Nc = N) + the result written
/// once. Candidates: Nc = t * mxu.count * C for t = 1, 2, ...; Mc as large as the accumulators
/// allow with three, two or one accumulator sets (so popping a block overlaps the next blocks'
/// matmuls); Kc the largest multiple of R that fits VMEM. ResourceExhausted (the message says which
/// blocks need how many bytes) when not even [1, min(K, R)] x [min(K, R), min(N, C)] fits.
StatusOr<DotPlan> PlanDot(const DotShape& shape, const config::ChipConfig& config, int64_t vmem,
                          bool double_buffer);

/// The steps of `plan`'s schedule in loop order batch -> M block -> N block -> K chunk.
/// ResourceExhausted("too many blocks") past `max_steps` steps.
StatusOr<std::vector<DotStep>> DotSchedule(const DotPlan& plan, int64_t max_steps);

}  // namespace tpusim::compiler
