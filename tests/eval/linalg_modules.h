// HLO modules of JAX's linear-algebra custom-calls (its TPU and CPU lowerings), shared by the
// evaluator's tests (tests/eval/eigh_test.cc, householder_qr_test.cc) and the expanders' tests
// (tests/compiler/eigh_expander_test.cc, householder_qr_expansion_test.cc).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace tpusim::testing {

// eigh of a [batch..., n, n] as JAX's TPU lowering writes it (`config`: lower,sort,max_iter,eps),
// or as its CPU lowering does (lapack_ssyevd_ffi, with `uplo`).
inline std::string EighModule(const std::string& batch, int64_t n, const std::string& source,
                       const std::string& config = "1,1,100,1e-6", char uplo = 0,
                       const std::string& type = "f32") {
  if (uplo != 0) {
    std::string info = batch.empty() ? "s32[]" : "s32[" + batch.substr(0, batch.size() - 1) + "]";
    return fmt::format(R"(HloModule eigh
ENTRY e {{
  a = {4}[{0}{1},{1}] {2}
  g = ({4}[{0}{1},{1}]{{{5}}}, {4}[{0}{1}], {6}) custom-call(a), custom_call_target="lapack_ssyevd_ffi", backend_config={{mode = 86 : ui8, uplo = {3} : ui8}}
  v = {4}[{0}{1},{1}] get-tuple-element(g), index=0
  w = {4}[{0}{1}] get-tuple-element(g), index=1
  ROOT r = ({4}[{0}{1}], {4}[{0}{1},{1}]) tuple(w, v)
}}
)",
                       batch, n, source, static_cast<int>(uplo), type,
                       batch.empty() ? "0,1" : "1,2,0", info);
  }
  return fmt::format(R"(HloModule eigh
ENTRY e {{
  a = {4}[{0}{1},{1}] {2}
  g = ({4}[{0}{1},{1}], {4}[{0}{1}]) custom-call(a), custom_call_target="Eigh", backend_config="{3}"
  v = {4}[{0}{1},{1}] get-tuple-element(g), index=0
  w = {4}[{0}{1}] get-tuple-element(g), index=1
  ROOT r = ({4}[{0}{1}], {4}[{0}{1},{1}]) tuple(w, v)
}}
)",
                     batch, n, source, config, type);
}

// jnp.linalg.svd as JAX's CPU lowering writes it (lapack_sgesdd_ffi), u [m, um], vt [vn, n].
inline std::string SvdModule(const std::string& batch, int64_t m, int64_t n, char mode, int64_t um,
                      int64_t vn) {
  const std::string info =
      batch.empty() ? "s32[]" : "s32[" + batch.substr(0, batch.size() - 1) + "]";
  return fmt::format(R"(HloModule svd
ENTRY e {{
  a = f32[{0}{1},{2}] parameter(0)
  g = (f32[{0}{1},{2}], f32[{0}{3}], f32[{0}{1},{4}], f32[{0}{5},{2}], {7}) custom-call(a), custom_call_target="lapack_sgesdd_ffi", backend_config={{mode = {6} : ui8}}
  s = f32[{0}{3}] get-tuple-element(g), index=1
  u = f32[{0}{1},{4}] get-tuple-element(g), index=2
  vt = f32[{0}{5},{2}] get-tuple-element(g), index=3
  ROOT r = (f32[{0}{3}], f32[{0}{1},{4}], f32[{0}{5},{2}]) tuple(s, u, vt)
}}
)",
                     batch, m, n, std::min(m, n), um, vn, static_cast<int>(mode), info);
}

// q and r of jnp.linalg.qr as JAX's TPU lowering writes it (r: the upper triangle of geqrf's a).
inline std::string QrModule(const std::string& batch, int64_t m, int64_t n, const std::string& source,
                     const char* geqrf = "Qr",
                     const char* orgqr = "ProductOfElementaryHouseholderReflectors") {
  const int64_t k = std::min(m, n);
  return fmt::format(R"(HloModule qr
ENTRY e {{
  a = f32[{0}{1},{2}] {4}
  g = (f32[{0}{1},{2}], f32[{0}{3}]) custom-call(a), custom_call_target="{5}"
  f = f32[{0}{1},{2}] get-tuple-element(g), index=0
  t = f32[{0}{3}] get-tuple-element(g), index=1
  q = f32[{0}{1},{2}] custom-call(f, t), custom_call_target="{6}"
  ROOT r = (f32[{0}{1},{2}], f32[{0}{1},{2}], f32[{0}{3}]) tuple(q, f, t)
}}
)",
                     batch, m, n, k, source, geqrf, orgqr);
}

}  // namespace tpusim::testing
