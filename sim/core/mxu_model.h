// MxuModel: the weight-stationary systolic array (MXU) of one TensorCore, as a timing and value
// model behind one interface with two implementations (DESIGN.md §4 "MXU (weight-stationary)"):
//  * MxuPeModel (mxu_pe_model.h): every PE's registers advanced every cycle. The reference:
//    slow, for small arrays and tests.
//  * MxuFastModel (mxu_fast_model.h): closed-form timing, values computed tile by tile in the
//    array's own summation order. What the simulator uses for real programs.
// tests/mxu/ shows the two agree on every cycle number and every bit.
//
// The array has R rows (the contracting K extent of a weight tile) and C columns (the output N
// extent). PE(r, c) holds weight w[r, c]. LHS row m enters array row r from the left in cycle
// S + m + r (skewed one cycle per row) and moves right one PE per cycle; partial sums move down
// one PE per cycle. So PE(r, c) computes row m in cycle S + m + r + c, and the result (m, n)
// leaves the bottom of column n into the accumulators at the end of cycle S + m + (R - 1) + n.
//
// Ops, issued strictly in program order (the simulator's MXU unit calls Issue per instruction):
//  * load_weights(W [K, N]): shifts the tile, zero-padded to R x C, into the shadow weight buffer,
//    one row per `weight_load_cycles_per_row` cycles. A tile with K < R still takes R row shifts
//    (the shift chain is R deep; TPU v1: 256 cycles for a 256-row tile, tpu-specs.md §1.1, ISCA
//    2017 §2). With weight_buffers = 2 this overlaps the matmul running on the active weights;
//    with weight_buffers = 1 the rows are shifted straight into the active weights, and only once
//    the array has drained (SCALE-Sim's no-overlap model, reference/scalesim.md).
//  * matmul(A [M, K]): streams M LHS rows through the active weights, one row per cycle, into
//    accumulator rows [acc_row, acc_row + M), overwriting or accumulating. With `swap_weights` the
//    shadow tile becomes the active one as the first row's wavefront reaches each PE (TPU v1:
//    preloaded weights "take effect with the advancing wave alongside the first data of a new
//    block", tpu-specs.md §3.1). It writes N columns, N being that of the tile it runs on.
// The exact timing rules and their derivation are at the top of mxu_fast_model.cc.
//
// Numerics (the contract shared with isa::Interpreter, isa/numerics.h MxuDotF32/MxuDotS32):
//  * kBf16: LHS and weights are floats holding bf16-representable values; every product is exact
//    in f32. For each (m, n): s = +0.0f; for k = 0..K-1: s = fl32(s + a[m,k] * w[k,n]), rounding
//    to nearest even after every product and every addition (never fused); then
//    acc = accumulate ? fl32(acc + s) : s. NaN and inf propagate as IEEE. Which NaN comes out
//    (payload, sign) is not part of the contract: IEEE 754 leaves it open, x86 returns 0xffc00000
//    for inf * 0 and inf - inf and otherwise the first NaN operand, and a compiler may swap the
//    operands of + and *. Compare NaNs as NaNs.
//  * kInt8: int8 x int8 -> int32 products; sums and accumulation in int32 two's complement
//    wrap-around.
//  * K is the matmul's LHS width. Weight rows K..R-1 are not used (their LHS lanes carry no data).
//    If the matmul's K exceeds the loaded tile's K, the tile's zero-padding rows take part (their
//    products are a * 0, which is NaN for an infinite a, as in hardware).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/units.h"
#include "config/chip_config.h"
#include "isa/accumulator_memory.h"
#include "isa/mxu_timing.h"
#include "sim/engine/snapshot.h"

namespace tpusim::sim {

/// What the array multiplies: bf16 x bf16 -> f32, or int8 x int8 -> int32.
enum class MxuNumerics { kBf16, kInt8 };

/// The geometry and timing parameters of one MXU (a subset of config::MxuConfig, `core.mxu.*`).
struct MxuArrayConfig {
  int64_t rows = 128;          // R: PE rows = the K extent of a weight tile
  int64_t cols = 128;          // C: PE columns = the N extent of a weight tile
  int64_t weight_buffers = 2;  // 1: no shadow tile (load only when drained); 2: shadow tile
  int64_t weight_load_cycles_per_row = 1;  // cycles to shift one weight row in (TPU v1: 1)
  int64_t accumulator_rows = 0;            // rows of C 32-bit accumulators; 0 = unbounded (grows)
  bool compute_values = true;              // false: timing only, op value vectors are ignored

  static MxuArrayConfig FromConfig(const config::MxuConfig& mxu) {
    MxuArrayConfig c;
    c.rows = mxu.rows;
    c.cols = mxu.cols;
    c.weight_buffers = mxu.weight_buffers;
    c.weight_load_cycles_per_row = mxu.weight_load_cycles_per_row;
    c.accumulator_rows = mxu.accumulator_rows;
    return c;
  }
  /// InvalidArgument naming the `core.mxu.*` key when a field is outside the schema's range of
  /// that key (config::CheckConfigRange; accumulator_rows may also be 0, unbounded).
  Status Validate() const;
  /// The closed-form timing formula of these parameters (isa/mxu_timing.h, shared with the
  /// compiler's cost estimates).
  isa::MxuTiming Timing() const {
    return isa::MxuTiming{rows, cols, weight_buffers, weight_load_cycles_per_row};
  }
  /// Cycles one load_weights occupies the weight-shift path: rows * weight_load_cycles_per_row.
  Cycles WeightLoadCycles() const {
    return Cycles(static_cast<uint64_t>(Timing().WeightLoadCycles()));
  }
  /// Cycles from a matmul's start until its `m` x `n` results are in the accumulators
  /// (isa::MxuTiming::MatmulCycles: m + rows + n - 2).
  Cycles MatmulCycles(int64_t m, int64_t n) const {
    return Cycles(static_cast<uint64_t>(Timing().MatmulCycles(m, n)));
  }
};

/// One MXU instruction. Build with MxuOp::LoadWeights / MxuOp::MatMul.
struct MxuOp {
  enum class Kind { kLoadWeights, kMatMul };
  Kind kind = Kind::kMatMul;
  MxuNumerics numerics = MxuNumerics::kBf16;
  int64_t m = 0;  // matmul: LHS rows streamed (>= 1)
  int64_t k = 0;  // load: tile rows (1..R); matmul: LHS columns (1..R)
  int64_t n = 0;  // load: tile columns (1..C); matmul: unused (the active tile's N)
  // Values, row-major: load [K, N] weights, matmul [M, K] LHS. kBf16 uses f32 (bf16-representable
  // floats), kInt8 uses s8. Ignored (may be empty) when the model is timing-only.
  std::vector<float> f32;
  std::vector<int8_t> s8;
  // matmul: make the shadow tile active first (ignored with weight_buffers = 1).
  bool swap_weights = false;
  bool accumulate = false;  // matmul: acc += result (else acc = result)
  int64_t acc_row = 0;      // matmul: first accumulator row written; rows [acc_row, acc_row + M)

  static MxuOp LoadWeights(int64_t k, int64_t n, std::vector<float> w);
  static MxuOp LoadWeightsInt8(int64_t k, int64_t n, std::vector<int8_t> w);
  static MxuOp MatMul(int64_t m, int64_t k, std::vector<float> lhs, bool swap_weights,
                      bool accumulate, int64_t acc_row);
  static MxuOp MatMulInt8(int64_t m, int64_t k, std::vector<int8_t> lhs, bool swap_weights,
                          bool accumulate, int64_t acc_row);
  std::string ToString() const;  // "matmul m=8 k=128 swap acc_row=0 accumulate" (for messages)
};

/// When one op ran, in core-clock cycles (absolute, from the model's cycle 0).
struct MxuOpTiming {
  // load_weights: the cycle the first weight row is shifted in.
  // matmul: the cycle LHS row 0 enters PE(0,0).
  Cycles start;
  // The first cycle the next op of the same kind may start (ignoring everything else):
  // load_weights: start + R * wl; matmul: start + M (one LHS row per cycle).
  Cycles unit_free;
  // load_weights: the first cycle a matmul may start on (swap in) the new tile: start + R * wl.
  // matmul: the first cycle in which all M x N results are in the accumulators (the last one,
  // (M-1, N-1), is written at the end of cycle done - 1): start + M + R + N - 2. Scoreboard the
  // accumulator rows [acc_row, acc_row + M) on it.
  Cycles done;
  bool operator==(const MxuOpTiming&) const = default;
};

/// Activity counters (TPU v1's performance counters, ISCA 2017 §7, DESIGN.md §4 stall accounting).
struct MxuCounters {
  uint64_t weight_loads = 0;
  uint64_t matmuls = 0;
  // "Array active": cycles in which an LHS row enters the array (sum of M).
  Cycles streaming_cycles;
  Cycles busy_cycles;  // cycles in which any PE computes a valid row
  // busy_cycles - streaming_cycles: the pipeline's fill and drain bubbles.
  Cycles fill_drain_cycles;
  Cycles weight_shift_cycles;  // cycles the weight-shift path shifts (sum R * wl)
  uint64_t useful_macs = 0;    // sum M * K * N; utilization = useful_macs / (R * C * cycles)
  Cycles last_done;            // max over ops of `done` (an absolute cycle)
  bool operator==(const MxuCounters&) const = default;

  /// The counters as statistics (fast-forward, sim/fast_forward.h: everything but last_done, a
  /// time), in a fixed order; AdvanceStats adds `times` x `delta` (that order) to them.
  static constexpr size_t kNumStats = 7;
  std::array<uint64_t, kNumStats> Stats() const {
    return {weight_loads,      matmuls, streaming_cycles.value(), busy_cycles.value(),
            fill_drain_cycles.value(), weight_shift_cycles.value(), useful_macs};
  }
  void AdvanceStats(const uint64_t* delta, uint64_t times) {
    weight_loads += delta[0] * times;
    matmuls += delta[1] * times;
    streaming_cycles += Cycles(delta[2] * times);
    busy_cycles += Cycles(delta[3] * times);
    fill_drain_cycles += Cycles(delta[4] * times);
    weight_shift_cycles += Cycles(delta[5] * times);
    useful_macs += delta[6] * times;
  }
};

/// The MXU's accumulator memory: rows of C 32-bit words, holding f32 (kBf16) or int32 (kInt8) bits;
/// pages are allocated as rows are written (isa/accumulator_memory.h), so memory follows the rows a
/// program touches, not core.mxu.accumulator_rows.
using MxuAccumulators = isa::AccumulatorMemory;

/// One MXU: issue ops in program order; each returns when it ran. Not thread-safe.
class MxuModel {
 public:
  virtual ~MxuModel() = default;
  MxuModel(const MxuModel&) = delete;
  MxuModel& operator=(const MxuModel&) = delete;

  /// Issues `op` at the earliest cycle >= `earliest` (its operands are ready) and >= the start of
  /// the previously issued op (in-order issue) at which the array can take it (see
  /// mxu_fast_model.cc for the derivation). Errors (InvalidArgument, nothing changes): K/N
  /// outside 1..R/1..C, M < 1, value vectors of the wrong size, numerics differing from the active
  /// tile's, a matmul before any load_weights, accumulator rows beyond accumulator_rows.
  virtual StatusOr<MxuOpTiming> Issue(const MxuOp& op, Cycles earliest) = 0;

  /// The accumulators after every issued op has completed (the PE model simulates to the end on a
  /// copy; issuing more ops afterwards is fine).
  virtual const MxuAccumulators& accumulators() = 0;
  /// accumulators() moved out, not copied (the end of a run: the final state takes them); the
  /// model's are empty afterwards.
  virtual MxuAccumulators TakeAccumulators() = 0;
  /// The counters after every issued op has completed (same remark).
  virtual const MxuCounters& counters() = 0;
  const MxuArrayConfig& config() const { return config_; }

  /// Fast-forward (sim/engine/snapshot.h): writes the array's timing state and returns true, or
  /// false if the model cannot be fast-forwarded (the PE model). ShiftState advances its cycles.
  /// mutable_counters: the counters as statistics, advanced by the skipped periods.
  virtual bool SaveState(StateWriter& /*w*/) const { return false; }
  virtual void ShiftState(Cycles /*delta*/) {}
  virtual MxuCounters* mutable_counters() { return nullptr; }

  /// Issues every op with earliest cycle 0 (ops[i] waits only for the array); stops at the first
  /// error.
  StatusOr<std::vector<MxuOpTiming>> Run(const std::vector<MxuOp>& ops);

 protected:
  explicit MxuModel(const MxuArrayConfig& config) : config_(config) {}
  MxuArrayConfig config_;
};

enum class MxuModelKind { kPe, kFast };

/// Creates a model; InvalidArgument if `config` does not validate.
StatusOr<std::unique_ptr<MxuModel>> CreateMxuModel(MxuModelKind kind, const MxuArrayConfig& config);

}  // namespace tpusim::sim
