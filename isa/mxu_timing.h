// The MXU's closed-form timing: the one formula the simulator's fast MXU model
// (sim/core/mxu_fast_model.cc, which derives it; tests/mxu pins it against the register-level PE
// model) and the compiler's cost estimates (compiler/lower/plan_dot.cc) both use; likewise the
// pop's time (MxuPopCycles) for the simulator's MXU unit and the compiler.
//
// A weight-stationary R x C systolic array (DESIGN.md §4 "MXU (weight-stationary)"):
//  * load_weights shifts a tile in, R rows at `weight_load_cycles_per_row` (wl) cycles each:
//    WL = R * wl cycles on the weight-shift path, whatever the tile's K (the chain is R deep).
//  * matmul streams M LHS rows, one per cycle; from the first row entering PE(0,0) to the last
//    result (M-1, N-1) readable: M + R + N - 2 cycles (skew R - 1, N - 1 columns to cross, and the
//    M rows); with N = C that is also how long the array's PEs stay busy.
#pragma once

#include <algorithm>
#include <cstdint>

#include "config/chip_config.h"

namespace tpusim::isa {

/// The timing parameters of one MXU (`core.mxu.rows`, `cols`, `weight_buffers`,
/// `weight_load_cycles_per_row`; validated by the config schema).
struct MxuTiming {
  int64_t rows = 128;                     // R (PE rows)
  int64_t cols = 128;                     // C (PE columns)
  int64_t weight_buffers = 2;             // 1: no shadow tile; 2: shadow tile
  int64_t weight_load_cycles_per_row = 1; // wl, cycles

  static constexpr MxuTiming FromConfig(const config::MxuConfig& mxu) {
    return MxuTiming{mxu.rows, mxu.cols, mxu.weight_buffers, mxu.weight_load_cycles_per_row};
  }

  /// WL: cycles one load_weights occupies the weight-shift path, R * wl (TPU v1: 256 cycles for a
  /// 256-row tile, tpu-specs.md §1.1, ISCA 2017 §2).
  constexpr int64_t WeightLoadCycles() const { return rows * weight_load_cycles_per_row; }

  /// Cycles from a matmul's first LHS row entering PE(0,0) to its last result (m-1, n-1) being
  /// readable in the accumulators, for m LHS rows on a tile of n columns: m + R + n - 2
  /// (mxu_fast_model.cc §1). With n = C: how long the PEs stay busy.
  constexpr int64_t MatmulCycles(int64_t m, int64_t n) const { return m + DrainCycles(n); }

  /// The part of MatmulCycles after the last LHS row has entered: R + n - 2 cycles until result
  /// (m-1, n-1) is readable (the skew down R - 1 rows and across n - 1 columns).
  constexpr int64_t DrainCycles(int64_t n) const { return rows + n - 2; }

  /// Steady-state cycles per fold — one load_weights followed by a swapping matmul of m rows —
  /// of a long run of folds on one MXU (mxu_fast_model.cc §5): with a shadow tile the next load
  /// hides under the stream, so the LHS port or the shift port limits, max(m, WL) (§5c, §5d);
  /// without one every fold loads, streams and drains in turn, WL + m + R + C - 2 (§5b,
  /// SCALE-Sim's model).
  constexpr int64_t FoldCycles(int64_t m) const {
    return weight_buffers == 1 ? WeightLoadCycles() + MatmulCycles(m, cols)
                               : std::max(m, WeightLoadCycles());
  }
};

/// Cycles from an mxu.pop of m accumulator rows starting on the result path to its last row in
/// VMEM: one row per cycle, then `pop_latency_cycles` (core.mxu.pop_latency_cycles; the simulator's
/// MXU unit, sim/core/mxu_unit.h, and the compiler's dot pipeline estimate).
constexpr int64_t MxuPopCycles(int64_t m, int64_t pop_latency_cycles) {
  return m + pop_latency_cycles;
}

}  // namespace tpusim::isa
