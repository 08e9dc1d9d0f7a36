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

/// Compares `got` with `want` element by element (as doubles, in linear order) and adds the result
/// to `stats`. An element non-finite on one side only is a mismatch counted in `non_finite` and
/// kept out of max_abs / max_rel (an infinite "max abs error" says nothing about the other
/// elements). `what` names the value in first_mismatch. Internal if the element counts differ.
Status CompareLiterals(const Literal& got, const Literal& want, double atol, double rtol,
                       const std::string& what, LiteralErrorStats& stats);

}  // namespace tpusim::hlo
