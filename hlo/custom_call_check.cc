#include "hlo/custom_call_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "hlo/kernel_cost_estimate.h"
#include "hlo/linalg_options.h"

namespace tpusim::hlo {
namespace {

bool IsRealFloat(PrimitiveType t) {
  return IsFloatingPoint(t) && t != PrimitiveType::kC64 && t != PrimitiveType::kC128;
}

bool IsArrayOf(const Shape& s, PrimitiveType t, const std::vector<int64_t>& dims) {
  return s.IsArray() && s.element_type() == t && s.dimensions() == dims;
}

std::vector<int64_t> With(std::vector<int64_t> v, std::initializer_list<int64_t> more) {
  v.insert(v.end(), more.begin(), more.end());
  return v;
}

bool IsGesdd(std::string_view target) {
  return target == "lapack_sgesdd_ffi" || target == "lapack_dgesdd_ffi";
}

}  // namespace

Status CheckJacobiCallShapes(const HloInstruction& inst) {
  const std::string& target = inst.custom_call_target();
  const bool gesdd = IsGesdd(target);
  const bool info = target != "Eigh";
  const Shape& out = inst.shape();
  const std::string want =
      gesdd ? "a real floating-point a [..., m, n] and gives (a, s [..., min(m, n)], u [..., m, m "
              "or min(m, n)], vt [..., n or min(m, n), n], info s32[...]) of a's type"
            : fmt::format("a real floating-point a [..., n, n] and gives (v [..., n, n], w [..., "
                          "n]{}) of a's type",
                          info ? ", info s32[...]" : "");
  auto refuse = [&](const std::string& got) {
    return InvalidArgument(fmt::format("custom-call {} takes {}; got {}", target, want, got));
  };
  if (inst.operand_count() != 1) {
    return refuse(fmt::format("{} operands", inst.operand_count()));
  }
  const Shape& a = inst.operand(0)->shape();
  const int64_t r = a.IsArray() ? a.rank() : 0;
  if (!a.IsArray() || r < 2 || !IsRealFloat(a.element_type()) ||
      (!gesdd && a.dimensions(r - 1) != a.dimensions(r - 2))) {
    return refuse(fmt::format("a {}", a.ToString(false)));
  }
  const PrimitiveType t = a.element_type();
  const std::vector<int64_t> batch(a.dimensions().begin(), a.dimensions().end() - 2);
  const int64_t m = a.dimensions(r - 2), n = a.dimensions(r - 1), k = std::min(m, n);
  const size_t parts = gesdd ? 5 : info ? 3 : 2;
  bool ok = out.IsTuple() && out.tuple_shapes().size() == parts &&
            IsArrayOf(out.tuple_shapes(0), t, a.dimensions()) &&
            IsArrayOf(out.tuple_shapes(1), t, With(batch, {k})) &&
            (!info || IsArrayOf(out.tuple_shapes(parts - 1), PrimitiveType::kS32, batch));
  if (ok && gesdd) {
    const Shape& u = out.tuple_shapes(2);
    const Shape& vt = out.tuple_shapes(3);
    ok = (IsArrayOf(u, t, With(batch, {m, m})) || IsArrayOf(u, t, With(batch, {m, k}))) &&
         (IsArrayOf(vt, t, With(batch, {n, n})) || IsArrayOf(vt, t, With(batch, {k, n})));
  }
  if (ok) return OkStatus();
  return refuse(fmt::format("a {} giving {}", a.ToString(false), out.ToString(false)));
}

Status CheckLapackCallShapes(const HloInstruction& inst, const LapackCall& call) {
  using Kind = LapackCall::Kind;
  if (call.kind == Kind::kEigh || call.kind == Kind::kSyevd || call.kind == Kind::kGesdd) {
    return CheckJacobiCallShapes(inst);
  }
  const std::string& target = inst.custom_call_target();
  const Shape& out = inst.shape();
  const size_t operands = call.kind == Kind::kTrsm || call.kind == Kind::kOrgqr ? 2 : 1;
  auto refuse = [&](std::string_view want) {
    std::string got;
    for (const HloInstruction* op : inst.operands()) {
      got += (got.empty() ? "" : ", ") + op->shape().ToString(false);
    }
    return InvalidArgument(fmt::format("custom-call {} takes {}; got ({}) giving {}", target, want,
                                       got, out.ToString(false)));
  };
  const char* want = "a real floating-point a [..., m, n] and taus [..., t] of a's type, t <= "
                     "min(m, n), and gives a's shape";  // orgqr
  switch (call.kind) {
    case Kind::kPotrf:
      want = "a real floating-point a [..., n, n] and gives (a's shape, info s32[...])";
      break;
    case Kind::kTrsm:
      want = "a [..., k, k] and b [..., k, n] (side L) or [..., m, k] of a's real floating-point "
             "type and gives b's shape";
      break;
    case Kind::kGetrf:
      want = "a real floating-point a [..., m, n] and gives (a's shape, ipiv s32[..., min(m, n)], "
             "info s32[...])";
      break;
    case Kind::kLuDecomposition:
      want = "a real floating-point a [..., m, n] and gives (a's shape, pivots s32[..., min(m, "
             "n)], permutation s32[..., m])";
      break;
    case Kind::kGeqrf:
      want = "a real floating-point a [..., m, n] and gives (a's shape, taus [..., min(m, n)] of "
             "a's type)";
      break;
    default:
      break;
  }
  if (inst.operand_count() != static_cast<int64_t>(operands)) return refuse(want);
  const Shape& a = inst.operand(0)->shape();
  const int64_t r = a.IsArray() ? a.rank() : 0;
  if (!a.IsArray() || r < 2 || !IsRealFloat(a.element_type())) return refuse(want);
  const PrimitiveType t = a.element_type();
  const std::vector<int64_t> batch(a.dimensions().begin(), a.dimensions().end() - 2);
  const int64_t m = a.dimensions(r - 2), n = a.dimensions(r - 1), k = std::min(m, n);
  auto tuple_of = [&](std::initializer_list<std::pair<PrimitiveType, std::vector<int64_t>>> parts) {
    if (!out.IsTuple() || out.tuple_shapes().size() != parts.size()) return false;
    size_t i = 0;
    for (const auto& [type, dims] : parts) {
      if (!IsArrayOf(out.tuple_shapes(static_cast<int64_t>(i++)), type, dims)) return false;
    }
    return true;
  };
  const PrimitiveType s32 = PrimitiveType::kS32;
  bool ok = false;
  switch (call.kind) {
    case Kind::kPotrf:
      ok = m == n && tuple_of({{t, a.dimensions()}, {s32, batch}});
      break;
    case Kind::kTrsm: {
      const Shape& b = inst.operand(1)->shape();
      ok = m == n && b.IsArray() && b.element_type() == t && b.rank() == r &&
           std::equal(batch.begin(), batch.end(), b.dimensions().begin()) &&
           b.dimensions(r - (call.solve.left_side ? 2 : 1)) == n &&
           IsArrayOf(out, t, b.dimensions());
      break;
    }
    case Kind::kGetrf:
      ok = tuple_of({{t, a.dimensions()}, {s32, With(batch, {k})}, {s32, batch}});
      break;
    case Kind::kLuDecomposition:
      ok = tuple_of({{t, a.dimensions()}, {s32, With(batch, {k})}, {s32, With(batch, {m})}});
      break;
    case Kind::kGeqrf:
      ok = tuple_of({{t, a.dimensions()}, {t, With(batch, {k})}});
      break;
    default: {  // kOrgqr
      const Shape& taus = inst.operand(1)->shape();
      ok = taus.IsArray() && taus.element_type() == t && taus.rank() == r - 1 &&
           std::equal(batch.begin(), batch.end(), taus.dimensions().begin()) &&
           taus.dimensions(r - 2) <= k && IsArrayOf(out, t, a.dimensions());
      break;
    }
  }
  return ok ? OkStatus() : refuse(want);
}

Status CheckKnownCustomCall(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return OkStatus();
  if (IsMosaicKernel(inst)) {
    StatusOr<std::optional<KernelCostEstimate>> e = ReadKernelCostEstimate(inst);
    if (!e.ok()) return InvalidArgument("Pallas TPU kernel: " + e.status().message());
    return OkStatus();
  }
  TPUSIM_ASSIGN_OR_RETURN(
      const std::optional<LapackCall> call,
      GetLapackCall(inst.custom_call_target(), inst.backend_config(), inst.name()));
  return call ? CheckLapackCallShapes(inst, *call) : OkStatus();
}

}  // namespace tpusim::hlo
