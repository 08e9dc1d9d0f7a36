// variadic-reduce-expander: rewrites `reduce` with several operands (argmax / argmin: values and
// indices reduced together by one reducer) into a tree of elementwise applications of the reducer,
// which the VPU lowering runs (the lowering's own reduce takes one operand and an add / max / min
// reducer).
//
// Contract. reduce(x_1..x_k, init_1..init_k), dimensions R, reducer f (2k scalar parameters, a
// k-tuple result) made only of elementwise scalar ops (see elementwise_computation.h):
//  * each x_i is transposed so the kept dimensions come first (in order) and R last, and reshaped
//    to [K, n] (K = product of kept sizes, n = product of R's sizes);
//  * while n > 1: the first floor(n/2) columns are combined with the next floor(n/2) by f
//    (element by element), an odd last column is carried: log2(n) rounds;
//  * the init values are combined once at the end: result_i = f(init, acc)_i, reshaped to the
//    kept dimensions. XLA leaves the order of a reduction unspecified; for a reducer that picks
//    (argmax, argmin, max, min) the result equals the evaluator's bit for bit.
// Reduces with one operand, or a reducer with other ops, are left to the lowering.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class VariadicReduceExpander : public HloPass {
 public:
  std::string_view name() const override { return "variadic-reduce-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
