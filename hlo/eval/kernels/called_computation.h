// A computation called per element by reduce, reduce-window, select-and-scatter, scatter, sort and
// map: the general path evaluates it on scalar Literals through the evaluator; the fast path,
// chosen when the evaluator recognizes the computation as one binary operation of its two
// parameters, applies that operation natively with the same per-type semantics (elementwise_ops.h),
// so both give the same bits.
#pragma once

#include <functional>
#include <vector>

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/elementwise_ops.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// Evaluates the computation on rank-0 arguments; returns a rank-0 Literal or a tuple of them.
using ScalarComputation = std::function<StatusOr<Literal>(const std::vector<Literal>& args)>;

struct CalledComputation {
  enum class Fast {
    kNone,         // only `fn`
    kAdd,          // add(p0, p1), or add(p1, p0) (so also multiply, and, or)
    kMultiply,     // multiply(p0, p1)
    kMaximum,      // maximum(p0, p1)
    kMinimum,      // minimum(p0, p1)
    kAnd,          // and(p0, p1)
    kOr,           // or(p0, p1)
    kCompare,      // compare(p0, p1), direction/total_order below (a comparator or select function)
    kReturnFirst,  // ROOT = p0
    kReturnSecond  // ROOT = p1 (scatter's "assign" function)
  };
  Fast fast = Fast::kNone;
  ComparisonDirection direction = ComparisonDirection::kLt;
  bool total_order = false;
  ScalarComputation fn;
};

/// Applies the fast path of `f` to (a, b) natively; false if `f` has none for T.
template <typename T>
bool FastBinary(CalledComputation::Fast f, T a, T b, T* out) {
  switch (f) {
    case CalledComputation::Fast::kAdd:
      *out = ew::Add(a, b);
      return true;
    case CalledComputation::Fast::kMultiply:
      *out = ew::Mul(a, b);
      return true;
    case CalledComputation::Fast::kMaximum:
      *out = ew::Max(a, b);
      return true;
    case CalledComputation::Fast::kMinimum:
      *out = ew::Min(a, b);
      return true;
    case CalledComputation::Fast::kAnd:
      if constexpr (kIsFloat<T>) return false;
      *out = ew::And(a, b);
      return true;
    case CalledComputation::Fast::kOr:
      if constexpr (kIsFloat<T>) return false;
      *out = ew::Or(a, b);
      return true;
    case CalledComputation::Fast::kReturnFirst:
      *out = a;
      return true;
    case CalledComputation::Fast::kReturnSecond:
      *out = b;
      return true;
    default:
      return false;
  }
}

inline bool HasFastBinary(CalledComputation::Fast f, PrimitiveType t) {
  if (IsComplex(t)) return false;  // complex reducers run their computation (kernels/complex.h)
  switch (f) {
    case CalledComputation::Fast::kAdd:
    case CalledComputation::Fast::kMultiply:
    case CalledComputation::Fast::kMaximum:
    case CalledComputation::Fast::kMinimum:
    case CalledComputation::Fast::kReturnFirst:
    case CalledComputation::Fast::kReturnSecond:
      return true;
    case CalledComputation::Fast::kAnd:
    case CalledComputation::Fast::kOr:
      return !IsFloatingPoint(t);
    default:
      return false;
  }
}

}  // namespace tpusim::hlo
