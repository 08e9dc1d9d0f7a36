// Comparing computed values with a reference within a tolerance: the rule of `tpusim run`'s
// functional check (driver/run_module.h, DESIGN.md §8) and of the SPMD partitioner's check
// (compiler/passes/spmd_check.h).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// True when `got` matches `want`: both NaN, equal (also equal infinities), or both finite and
/// |got - want| <= atol + rtol * |want| (a difference that overflows never passes).
bool WithinTolerance(double got, double want, double atol, double rtol);

/// Errors of computed values against a reference, accumulated over literals (CompareLiterals).
struct LiteralErrorStats {
  double max_abs = 0;      // largest |got - want| over elements finite on both sides
  double max_rel = 0;      // largest |got - want| / |want| over those with want != 0
  int64_t mismatches = 0;  // elements that are not WithinTolerance
  double max_ref = 0;      // largest finite |want|
  int64_t non_finite = 0;  // elements non-finite (inf, NaN) on one side only: not in max_abs/rel
  std::string first_mismatch;  // "<what> element <i>: simulated <got> but the evaluator gives ..."
};

/// The relative spacing of `t`'s values, 2^-mantissa_bits, for floating-point types narrower than
/// f32 (bf16 2^-7, f16 2^-10, f8e4m3 2^-3, ...); 0 for f32, f64, complex and integer types. Two
/// sums of the same terms in f32 taken in different orders can round to neighbouring values of
/// such a type, one unit in the last place apart: a device that tiles a contraction differently
/// from the reference evaluator does that, and it is no simulation error.
double OutputTypeRelativeUlp(PrimitiveType t);

/// Compares `got` with `want` element by element (as doubles, in linear order) and adds the result
/// to `stats`. The relative tolerance is max(rtol, OutputTypeRelativeUlp(want's element type)).
/// An element non-finite on one side only is a mismatch counted in `non_finite` and
/// kept out of max_abs / max_rel (an infinite "max abs error" says nothing about the other
/// elements). `what` names the value in first_mismatch. Internal if the element counts differ.
Status CompareLiterals(const Literal& got, const Literal& want, double atol, double rtol,
                       const std::string& what, LiteralErrorStats& stats);

}  // namespace tpusim::hlo
