#include "hlo/custom_call_check.h"

#include <fmt/format.h>

#include <algorithm>
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

Status CheckKnownCustomCall(const HloInstruction& inst) {
  if (inst.opcode() != HloOpcode::kCustomCall) return OkStatus();
  if (IsMosaicKernel(inst)) {
    StatusOr<std::optional<KernelCostEstimate>> e = ReadKernelCostEstimate(inst);
    if (!e.ok()) return InvalidArgument("Pallas TPU kernel: " + e.status().message());
    return OkStatus();
  }
  if (!IsJacobiTarget(inst.custom_call_target())) return OkStatus();
  TPUSIM_RETURN_IF_ERROR(
      GetLapackCall(inst.custom_call_target(), inst.backend_config(), inst.name()).status());
  return CheckJacobiCallShapes(inst);
}

}  // namespace tpusim::hlo
