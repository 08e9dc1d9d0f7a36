#include "hlo/linalg_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace tpusim::hlo {
namespace {

StatusOr<bool> BoolAttribute(const HloInstruction& inst, std::string_view name) {
  const std::string* v = inst.FindRawAttribute(name);
  if (v == nullptr) return false;
  if (*v == "true") return true;
  if (*v == "false") return false;
  return InvalidArgument(
      fmt::format("%{}: {}={} is not a bool (true or false)", inst.name(), name, *v));
}

}  // namespace

StatusOr<CholeskyOptions> GetCholeskyOptions(const HloInstruction& inst) {
  CholeskyOptions o;
  TPUSIM_ASSIGN_OR_RETURN(o.lower, BoolAttribute(inst, "lower"));
  return o;
}

StatusOr<TriangularSolveOptions> GetTriangularSolveOptions(const HloInstruction& inst) {
  TriangularSolveOptions o;
  TPUSIM_ASSIGN_OR_RETURN(o.left_side, BoolAttribute(inst, "left_side"));
  TPUSIM_ASSIGN_OR_RETURN(o.lower, BoolAttribute(inst, "lower"));
  TPUSIM_ASSIGN_OR_RETURN(o.unit_diagonal, BoolAttribute(inst, "unit_diagonal"));
  if (const std::string* t = inst.FindRawAttribute("transpose_a")) {
    if (*t == "NO_TRANSPOSE") {
      o.transpose_a = TriangularSolveTranspose::kNoTranspose;
    } else if (*t == "TRANSPOSE") {
      o.transpose_a = TriangularSolveTranspose::kTranspose;
    } else if (*t == "ADJOINT") {
      o.transpose_a = TriangularSolveTranspose::kAdjoint;
    } else {
      return InvalidArgument(fmt::format(
          "%{}: transpose_a={} is not one of NO_TRANSPOSE, TRANSPOSE, ADJOINT", inst.name(), *t));
    }
  }
  return o;
}

namespace {

// The ui8 value of `flag` in an MLIR attribute dictionary such as "{diag = 78 : ui8, ...}".
std::optional<int> LapackFlag(std::string_view config, std::string_view flag) {
  size_t at = 0;
  while ((at = config.find(flag, at)) != std::string_view::npos) {
    const bool starts = at == 0 || config[at - 1] == '{' || config[at - 1] == ' ' ||
                        config[at - 1] == ',';
    size_t i = at + flag.size();
    at = i;
    if (!starts) continue;
    while (i < config.size() && config[i] == ' ') ++i;
    if (i >= config.size() || config[i] != '=') continue;
    ++i;
    while (i < config.size() && config[i] == ' ') ++i;
    int v = 0;
    size_t digits = 0;
    while (i < config.size() && config[i] >= '0' && config[i] <= '9' && digits < 4) {
      v = v * 10 + (config[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0) return v;
  }
  return std::nullopt;
}

}  // namespace

bool IsJacobiTarget(std::string_view target) {
  return target == "Eigh" || target == "lapack_ssyevd_ffi" || target == "lapack_dsyevd_ffi" ||
         target == "lapack_sgesdd_ffi" || target == "lapack_dgesdd_ffi";
}

std::vector<std::string> LapackTargets() {
  return {"Eigh",
          "LuDecomposition",   "ProductOfElementaryHouseholderReflectors",
          "Qr",                "lapack_dgeqrf_ffi",
          "lapack_dgesdd_ffi", "lapack_dgetrf_ffi",
          "lapack_dorgqr_ffi", "lapack_dpotrf_ffi",
          "lapack_dsyevd_ffi", "lapack_dtrsm_ffi",
          "lapack_sgeqrf_ffi", "lapack_sgesdd_ffi",
          "lapack_sgetrf_ffi", "lapack_sorgqr_ffi",
          "lapack_spotrf_ffi", "lapack_ssyevd_ffi",
          "lapack_strsm_ffi"};
}

namespace {

// The Eigh call's options from its backend_config "lower,sort_eigenvalues,max_iter,epsilon".
StatusOr<LapackCall> EighCall(std::string_view config, std::string_view instruction) {
  std::vector<std::string> parts(1);
  for (char c : config) {
    if (c == ',') {
      parts.emplace_back();
    } else if (c != ' ') {
      parts.back().push_back(c);
    }
  }
  auto integer = [](const std::string& s, int64_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size();
  };
  int64_t lower = 0, sort = 0;
  LapackCall call;
  call.kind = LapackCall::Kind::kEigh;
  char* end = nullptr;
  const bool ok = parts.size() == 4 && integer(parts[0], lower) && integer(parts[1], sort) &&
                  integer(parts[2], call.eigh.max_iter) && call.eigh.max_iter >= 0 &&
                  call.eigh.max_iter <= INT32_MAX &&
                  !parts[3].empty() &&
                  ((call.eigh.epsilon = std::strtod(parts[3].c_str(), &end)), true) &&
                  end == parts[3].c_str() + parts[3].size() && std::isfinite(call.eigh.epsilon) &&
                  call.eigh.epsilon >= 0;
  if (!ok) {
    return InvalidArgument(fmt::format(
        "%{}: custom-call Eigh: backend_config \"{}\" is not \"lower,sort_eigenvalues,max_iter,"
        "epsilon\" (two integers, a sweep count from 0 to 2^31 - 1 (the sweeps' counter is s32) "
        "and a finite epsilon >= 0, e.g. \"1,1,100,1e-6\")",
        instruction, config));
  }
  call.eigh.lower = lower != 0;
  call.eigh.sort_eigenvalues = sort != 0;
  return call;
}

}  // namespace


StatusOr<std::optional<LapackCall>> GetLapackCall(std::string_view target,
                                                  std::string_view backend_config,
                                                  std::string_view instruction) {
  const bool potrf = target == "lapack_spotrf_ffi" || target == "lapack_dpotrf_ffi";
  const bool trsm = target == "lapack_strsm_ffi" || target == "lapack_dtrsm_ffi";
  const bool getrf = target == "lapack_sgetrf_ffi" || target == "lapack_dgetrf_ffi";
  const bool geqrf =
      target == "Qr" || target == "lapack_sgeqrf_ffi" || target == "lapack_dgeqrf_ffi";
  const bool orgqr = target == "ProductOfElementaryHouseholderReflectors" ||
                     target == "lapack_sorgqr_ffi" || target == "lapack_dorgqr_ffi";
  if (geqrf || orgqr) {
    LapackCall call;
    call.kind = geqrf ? LapackCall::Kind::kGeqrf : LapackCall::Kind::kOrgqr;
    return std::optional<LapackCall>(call);
  }
  if (getrf || target == "LuDecomposition") {
    LapackCall call;
    call.kind = getrf ? LapackCall::Kind::kGetrf : LapackCall::Kind::kLuDecomposition;
    return std::optional<LapackCall>(call);
  }
  if (target == "Eigh") {
    TPUSIM_ASSIGN_OR_RETURN(LapackCall call, EighCall(backend_config, instruction));
    return std::optional<LapackCall>(call);
  }
  const bool syevd = target == "lapack_ssyevd_ffi" || target == "lapack_dsyevd_ffi";
  const bool gesdd = target == "lapack_sgesdd_ffi" || target == "lapack_dgesdd_ffi";
  if (!potrf && !trsm && !syevd && !gesdd) return std::optional<LapackCall>();
  // One flag, one of `allowed` (characters); `fallback` when the flag is absent (0: required).
  auto flag = [&](std::string_view name, std::string_view allowed,
                  char fallback) -> StatusOr<char> {
    const std::optional<int> v = LapackFlag(backend_config, name);
    if (!v) {
      if (fallback != 0) return fallback;
      return InvalidArgument(fmt::format("%{}: custom-call {} has no `{}` in backend_config {}",
                                         instruction, target, name, backend_config));
    }
    if (*v < 0 || *v > 127 || allowed.find(static_cast<char>(*v)) == std::string_view::npos) {
      return InvalidArgument(fmt::format(
          "%{}: custom-call {}: {} = {} is not one of the LAPACK flags '{}'", instruction, target,
          name, *v, fmt::join(allowed, "', '")));
    }
    return static_cast<char>(*v);
  };
  LapackCall call;
  if (gesdd) {
    TPUSIM_ASSIGN_OR_RETURN(const char mode, flag("mode", "ASN", 'A'));
    call.kind = LapackCall::Kind::kGesdd;
    call.eigh = EighOptions{true, true, kSyevdMaxSweeps, kSyevdEpsilon};
    call.full_matrices = mode == 'A';
    call.compute_uv = mode != 'N';
    return std::optional<LapackCall>(call);
  }
  TPUSIM_ASSIGN_OR_RETURN(const char uplo, flag("uplo", "LU", 0));
  if (syevd) {
    TPUSIM_RETURN_IF_ERROR(flag("mode", "VN", 'V').status());
    call.kind = LapackCall::Kind::kSyevd;
    call.eigh = EighOptions{uplo == 'L', true, kSyevdMaxSweeps, kSyevdEpsilon};
    return std::optional<LapackCall>(call);
  }
  if (potrf) {
    call.kind = LapackCall::Kind::kPotrf;
    call.cholesky.lower = uplo == 'L';
    return std::optional<LapackCall>(call);
  }
  call.kind = LapackCall::Kind::kTrsm;
  TPUSIM_ASSIGN_OR_RETURN(const char side, flag("side", "LR", 0));
  TPUSIM_ASSIGN_OR_RETURN(const char trans, flag("trans_x", "NTC", 'N'));
  TPUSIM_ASSIGN_OR_RETURN(const char diag, flag("diag", "NU", 'N'));
  call.solve.left_side = side == 'L';
  call.solve.lower = uplo == 'L';
  call.solve.unit_diagonal = diag == 'U';
  call.solve.transpose_a = trans == 'N'   ? TriangularSolveTranspose::kNoTranspose
                           : trans == 'T' ? TriangularSolveTranspose::kTranspose
                                          : TriangularSolveTranspose::kAdjoint;
  return std::optional<LapackCall>(call);
}

Status CheckLinalgShapes(const HloInstruction& inst) {
  auto square = [&](const Shape& s, const char* what) -> Status {
    if (!s.IsArray() || s.rank() < 2 || s.dimensions(s.rank() - 1) != s.dimensions(s.rank() - 2) ||
        !IsFloatingPoint(s.element_type())) {
      return InvalidArgument(fmt::format(
          "%{}: {} is {}; it must be floating point of shape [..., n, n] (batched square "
          "matrices)",
          inst.name(), what, s.ToString(false)));
    }
    return OkStatus();
  };
  if (inst.opcode() == HloOpcode::kCholesky) {
    if (inst.operand_count() != 1) {
      return InvalidArgument(fmt::format("%{}: cholesky takes 1 operand", inst.name()));
    }
    return square(inst.operand(0)->shape(), "the operand");
  }
  if (inst.operand_count() != 2) {
    return InvalidArgument(fmt::format("%{}: triangular-solve takes 2 operands", inst.name()));
  }
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  TPUSIM_RETURN_IF_ERROR(square(a, "a (operand 0)"));
  TPUSIM_ASSIGN_OR_RETURN(TriangularSolveOptions o, GetTriangularSolveOptions(inst));
  bool ok = b.IsArray() && b.rank() == a.rank() && b.element_type() == a.element_type();
  for (int64_t d = 0; ok && d + 2 < a.rank(); ++d) ok = a.dimensions(d) == b.dimensions(d);
  const int64_t k = a.dimensions(a.rank() - 1);
  ok = ok && b.dimensions(b.rank() - (o.left_side ? 2 : 1)) == k;
  if (!ok) {
    return InvalidArgument(fmt::format(
        "%{}: b (operand 1) is {}; with a {} and left_side={} it must be {}{} with a's batch "
        "dimensions",
        inst.name(), b.ToString(false), a.ToString(false), o.left_side,
        PrimitiveTypeName(a.element_type()),
        o.left_side ? fmt::format("[..., {}, n]", k) : fmt::format("[..., m, {}]", k)));
  }
  return OkStatus();
}

}  // namespace tpusim::hlo
