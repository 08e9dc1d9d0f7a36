#include "hlo/eval/literal_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace tpusim::hlo {

bool WithinTolerance(double got, double want, double atol, double rtol) {
  if (std::isnan(got) && std::isnan(want)) return true;
  if (got == want) return true;  // also equal infinities
  // Otherwise a non-finite value on either side is a mismatch: with want = inf the bound
  // atol + rtol * |want| is itself infinite and would pass any got.
  if (!std::isfinite(got) || !std::isfinite(want)) return false;
  const double abs_err = std::isfinite(got - want) ? std::abs(got - want) : INFINITY;
  return abs_err <= atol + rtol * std::abs(want);
}

double OutputTypeRelativeUlp(PrimitiveType t) {
  int mantissa_bits = 0;
  if (t == PrimitiveType::kBF16) {
    mantissa_bits = 7;
  } else if (t == PrimitiveType::kF16) {
    mantissa_bits = 10;
  } else if (const auto f8 = Float8FormatOf(t)) {
    mantissa_bits = SpecOf(*f8).mantissa_bits;
  } else {
    return 0;
  }
  return std::ldexp(1.0, -mantissa_bits);
}

Status CompareLiterals(const Literal& got, const Literal& want, double atol, double rtol,
                       const std::string& what, LiteralErrorStats& s) {
  if (got.element_count() != want.element_count()) {
    return Internal(fmt::format("{}: the simulated value has {} elements but the reference {}",
                                what, got.element_count(), want.element_count()));
  }
  if (got.component_count() != want.component_count()) {
    return Internal(fmt::format("{}: the simulated value is {} but the reference {}", what,
                                got.shape().ToString(false), want.shape().ToString(false)));
  }
  rtol = std::max(rtol, OutputTypeRelativeUlp(want.element_type()));
  // Complex values: each part compared as a real value (component index 2i: real, 2i+1: imag);
  // an element counts once however many of its parts are off.
  const int64_t parts = want.component_count() / std::max<int64_t>(want.element_count(), 1);
  int64_t last_counted = -1;
  // The components are read in blocks (each element type's case once per block).
  constexpr int64_t kBlock = 4096;
  std::vector<double> got_block(kBlock), want_block(kBlock);
  for (int64_t i = 0; i < want.component_count(); ++i) {
    if (i % kBlock == 0) {
      const int64_t n = std::min(kBlock, want.component_count() - i);
      got.ComponentsAsDouble(i, n, got_block.data());
      want.ComponentsAsDouble(i, n, want_block.data());
    }
    const double a = got_block[i % kBlock], b = want_block[i % kBlock];
    if (std::isfinite(b)) s.max_ref = std::max(s.max_ref, std::abs(b));
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;  // also equal infinities
    if (std::isfinite(a) && std::isfinite(b)) {
      const double abs_err = std::isfinite(a - b) ? std::abs(a - b) : INFINITY;
      s.max_abs = std::max(s.max_abs, abs_err);
      if (b != 0) s.max_rel = std::max(s.max_rel, abs_err / std::abs(b));
    } else {
      ++s.non_finite;  // an overflow (or NaN) on one side: counted, not a magnitude
    }
    if (!WithinTolerance(a, b, atol, rtol) && i / parts != last_counted) {
      last_counted = i / parts;
      if (s.mismatches++ == 0) {
        s.first_mismatch = fmt::format(
            "{} element {}{}: simulated {} but the evaluator gives {}", what, i / parts,
            parts == 2 ? (i % 2 == 0 ? " (real part)" : " (imaginary part)") : "", a, b);
      }
    }
  }
  return OkStatus();
}

}  // namespace tpusim::hlo
