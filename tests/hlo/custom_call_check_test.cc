// The verifier's rules for the custom-calls tpusim knows (hlo/custom_call_check.h) and for
// ragged-dot (hlo/ragged_dot.h, InferRaggedDot). Issue 21 round six found each accepted by
// `inspect` (or by every subcommand) with a declaration its meaning does not allow: a Pallas
// kernel's cost_estimate holding NaN or a key twice, an SVD whose u is a scalar (SIGSEGV in the
// eigh-expander) or whose singular values are s32 (`run` FAILED its check), a ragged-dot whose
// contracting dimensions do not pair (exit 3 after the ragged-dot-rewriter). Each is now a located
// error for every subcommand.
#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {
namespace {

// The verifier's first message for a module of `params` (one per line) and a ROOT `op`.
std::string Verify(const std::string& params, const std::string& op) {
  const std::string text = "HloModule m\nENTRY e {\n" + params + "  ROOT r = " + op + "\n}\n";
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "v.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "parse error";
  Status s = VerifyModule(**m, text);
  return s.ok() ? "" : s.message().substr(0, s.message().find('\n'));
}

std::string Kernel(const std::string& config) {
  return "f32[128] custom-call(p), custom_call_target=\"tpu_custom_call\", backend_config=" +
         config;
}

const char kP[] = "  p = f32[128] parameter(0)\n";

TEST(CustomCallCheckTest, PallasCostEstimateIsStrictJson) {
  EXPECT_EQ(Verify(kP, Kernel(R"({"custom_call_config": {"cost_estimate": {"bytes_accessed": 8, )"
                              R"("flops": 1, "transcendentals": 0}}})")),
            "");
  EXPECT_EQ(Verify(kP, Kernel("{}")), "");  // no custom_call_config: timed as a lower bound
  const std::string nan = Verify(
      kP, Kernel(R"({"custom_call_config": {"cost_estimate": {"flops": NaN}}})"));
  EXPECT_EQ(nan.rfind("v.hlo:4:8: error: '%r' (custom-call): Pallas TPU kernel: backend_config is "
                      "not JSON: parse error at line 1, column 52",
                      0),
            0u)
      << nan;
  EXPECT_NE(Verify(kP, Kernel(R"({"custom_call_config": {"cost_estimate": {"flops": 1e400}}})"))
                .find("not JSON"),
            std::string::npos);
  EXPECT_EQ(Verify(kP, Kernel(R"({"custom_call_config": {"cost_estimate": {"bytes_accessed": 8, )"
                              R"("flops": 1, "flops": 99999999999, "transcendentals": 0}}})")),
            "v.hlo:4:8: error: '%r' (custom-call): Pallas TPU kernel: backend_config names the key "
            "\"flops\" twice in one object");
  EXPECT_EQ(Verify(kP, Kernel(R"({"custom_call_config": 5})")),
            "v.hlo:4:8: error: '%r' (custom-call): Pallas TPU kernel: custom_call_config is not a "
            "JSON object");
  EXPECT_EQ(Verify(kP, Kernel(R"({"custom_call_config": {"cost_estimate": {"bytes_accessed": 8, )"
                              R"("flops": -1, "transcendentals": 0}}})")),
            "v.hlo:4:8: error: '%r' (custom-call): Pallas TPU kernel: cost_estimate \"flops\" is "
            "-1: expected an integer >= 0");
  // The same key in two different objects is no repetition.
  EXPECT_EQ(Verify(kP, Kernel(R"({"a": {"k": 1}, "b": {"k": 2}, "custom_call_config": {}})")), "");
}

TEST(CustomCallCheckTest, EighAndSvdSignatures) {
  const std::string a = "  a = f32[6,4] parameter(0)\n";
  const std::string svd = "custom-call(a), custom_call_target=\"lapack_sgesdd_ffi\", "
                          "backend_config={mode = 65 : ui8}";
  EXPECT_EQ(Verify(a, "(f32[6,4], f32[4], f32[6,6], f32[4,4], s32[]) " + svd), "");
  EXPECT_EQ(Verify(a, "(f32[6,4], f32[4], f32[6,4], f32[4,4], s32[]) " + svd), "");
  const std::string want = "v.hlo:4:8: error: '%r' (custom-call): custom-call lapack_sgesdd_ffi "
                           "takes a real floating-point a [..., m, n] and gives";
  for (const char* bad : {"(f32[6,4], f32[4], f32[], f32[4,4], s32[])",      // u a scalar
                          "(f32[6,4], f32[4], (f32[6,6]), f32[4,4], s32[])",  // u a tuple
                          "(f32[6,4], s32[4], f32[6,6], f32[4,4], s32[])",    // s not a's type
                          "(f32[2,2], f32[4], f32[6,6], f32[4,4], s32[])",    // a of another shape
                          "(f32[6,4], f32[4], f32[6,6], f32[4,4], f32[])"}) {
    EXPECT_EQ(Verify(a, std::string(bad) + " " + svd).rfind(want, 0), 0u) << bad;
  }
  const std::string m = "  m = f32[6,6] parameter(0)\n";
  const std::string eigh = "custom-call(m), custom_call_target=\"Eigh\", backend_config=";
  EXPECT_EQ(Verify(m, "(f32[6,6], f32[6]) " + eigh + "\"1,1,100,1e-6\""), "");
  EXPECT_EQ(Verify(m, "(f64[6,6], f64[6]) " + eigh + "\"1,1,100,1e-6\"")
                .rfind("v.hlo:4:8: error: '%r' (custom-call): custom-call Eigh takes", 0),
            0u);
  EXPECT_EQ(Verify(m, "(f32[6,6], f32[5]) " + eigh + "\"1,1,100,1e-6\"")
                .rfind("v.hlo:4:8: error: '%r' (custom-call): custom-call Eigh takes", 0),
            0u);
  // The sweeps' counter is s32: a max_iter past 2^31 - 1 wrapped to no sweep at all.
  EXPECT_NE(Verify(m, "(f32[6,6], f32[6]) " + eigh + "\"1,1,9223372036854775807,0\"")
                .find("a sweep count from 0 to 2^31 - 1"),
            std::string::npos);
  EXPECT_EQ(Verify(m, "(f32[6,6], f32[6]) " + eigh + "\"1,1,2147483647,0\""), "");
}

// The fuzz finding of round six: a trsm written with another result than its b.
TEST(CustomCallCheckTest, LapackSignatures) {
  const std::string ab = "  a = f32[3,8,8] parameter(0)\n  b = f32[3,8,2] parameter(1)\n";
  const std::string trsm = " custom-call(a, b), custom_call_target=\"lapack_strsm_ffi\", "
                           "backend_config={diag = 78 : ui8, side = 76 : ui8, uplo = 76 : ui8}";
  EXPECT_EQ(Verify(ab, "f32[3,8,2]" + trsm), "");
  EXPECT_EQ(Verify(ab, "f32[3,2147483648,2]" + trsm)
                .rfind("v.hlo:5:8: error: '%r' (custom-call): custom-call lapack_strsm_ffi takes",
                       0),
            0u);
  const std::string a = "  a = f32[3,8,8] parameter(0)\n";
  const std::string potrf = " custom-call(a), custom_call_target=\"lapack_spotrf_ffi\", "
                            "backend_config={uplo = 76 : ui8}";
  EXPECT_EQ(Verify(a, "(f32[3,8,8], s32[3])" + potrf), "");
  EXPECT_NE(Verify(a, "(f32[3,8,8], f32[3])" + potrf).find("lapack_spotrf_ffi takes"),
            std::string::npos);
  const std::string w = "  a = f32[6,4] parameter(0)\n";
  EXPECT_EQ(Verify(w, "(f32[6,4], s32[4], s32[]) custom-call(a), "
                      "custom_call_target=\"lapack_sgetrf_ffi\""),
            "");
  EXPECT_NE(Verify(w, "(f32[6,4], s32[6], s32[]) custom-call(a), "
                      "custom_call_target=\"lapack_sgetrf_ffi\"")
                .find("lapack_sgetrf_ffi takes"),
            std::string::npos);
  EXPECT_EQ(Verify(w, "(f32[6,4], f32[4]) custom-call(a), custom_call_target=\"Qr\""), "");
  EXPECT_NE(Verify(w, "(f32[6,4], f32[6]) custom-call(a), custom_call_target=\"Qr\"")
                .find("custom-call Qr takes"),
            std::string::npos);
}

TEST(CustomCallCheckTest, RaggedDotShapes) {
  const std::string p =
      "  x = f32[8,4] parameter(0)\n  w = f32[3,4,5] parameter(1)\n  g = s32[3] parameter(2)\n";
  const std::string dims = ", lhs_ragged_dims={0}, rhs_group_dims={0}";
  EXPECT_EQ(Verify(p, "f32[8,5] ragged-dot(x, w, g), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={1}" + dims),
            "");
  // The fuzz finding: an rhs contracting dimension without its lhs partner.
  EXPECT_EQ(Verify(p, "f32[8,5] ragged-dot(x, w, g), lhs_contracting_dims={}, "
                      "rhs_contracting_dims={1}" + dims),
            "v.hlo:6:8: error: '%r' (ragged-dot): dot: lhs and rhs must have as many batch and as "
            "many contracting dimensions");
  EXPECT_EQ(Verify(p, "f32[8,6] ragged-dot(x, w, g), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={1}" + dims),
            "v.hlo:6:8: error: '%r' (ragged-dot): shape mismatch: the operands give f32[8,5] but "
            "the instruction is written as f32[8,6]");
  EXPECT_EQ(Verify("  x = f32[8,4] parameter(0)\n  w = f32[3,4,5] parameter(1)\n"
                   "  g = s32[7] parameter(2)\n",
                   "f32[8,5] ragged-dot(x, w, g), lhs_contracting_dims={1}, "
                   "rhs_contracting_dims={1}" + dims),
            "v.hlo:6:8: error: '%r' (ragged-dot): ragged-dot: group_sizes is s32[7]; it must be an "
            "integer [3] (G = 3 groups)");
  EXPECT_NE(Verify(p, "f32[8,5] ragged-dot(x, w, g), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={1}")
                .find("rhs_group_dims must name one free dimension"),
            std::string::npos);
  // A contracting ragged dimension (the weight-gradient form): [G, m, n], no group dimension.
  const std::string q =
      "  x = f32[8,6] parameter(0)\n  w = f32[6,5] parameter(1)\n  g = s32[3] parameter(2)\n";
  EXPECT_EQ(Verify(q, "f32[3,8,5] ragged-dot(x, w, g), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={0}, lhs_ragged_dims={1}"),
            "");
}

}  // namespace
}  // namespace tpusim::hlo
