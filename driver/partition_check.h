// Checking a module tpusim's SPMD partitioner split, when the simulated values differ from the
// unpartitioned module's (driver/run_module.cc, CheckOutputs).
//
// The check compares every core's simulated outputs with its shard of the unpartitioned module
// evaluated with the TPU's numerics. The partitioned program sums over a sharded dimension in
// another order (partial sums, then an all-reduce), and in a deep network at DEFAULT precision a
// last-bit difference flips bf16 roundings of later dot/convolution operands and grows past any
// tolerance (docs/python.md, the JAX corpus' SPMD ResNets). So when that comparison fails, two
// questions are asked separately:
//   1. is the simulation right? Its outputs against the partitioned program itself, evaluated
//      with the same numerics and the same (sharded) inputs: the same sums in the same order;
//   2. is the partitioning right? The partitioned program against the unpartitioned module, both
//      evaluated with every floating-point value widened to f64 (WidenFloatsToF64), within the
//      check's own tolerance: in f64 reordered sums differ by about 1e-16 relative and stay far
//      below it even amplified a million-fold (resnet18_spmd of the JAX corpus: 3.2e-9 at most),
//      while a partitioning error (a missing all-reduce, a wrong halo, a shard off by one)
//      changes values at full size.
// Both holding, the check passes with a note saying so.
#pragma once

#include <memory>
#include <vector>

#include "common/status.h"
#include "hlo/eval/literal.h"
#include "hlo/module.h"

namespace tpusim::driver {

/// A copy of `module` in which every f32, bf16 and f16 value (instruction shapes, tuple leaves,
/// constants, every computation) is f64; a bitcast-convert keeps its own types, between converts
/// from and to f64. Unimplemented for what has no f64 meaning: a custom-call, f8 or complex values.
StatusOr<std::unique_ptr<hlo::HloModule>> WidenFloatsToF64(const hlo::HloModule& module);

/// `literal` with every f32, bf16 and f16 leaf converted (exactly) to f64.
StatusOr<hlo::Literal> WidenLiteralToF64(const hlo::Literal& literal);

/// WidenLiteralToF64 of every argument of every device ([devices][parameters]).
StatusOr<std::vector<std::vector<hlo::Literal>>> WidenArgumentsToF64(
    const std::vector<std::vector<hlo::Literal>>& args);

}  // namespace tpusim::driver
