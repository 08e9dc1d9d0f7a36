// triangular-solve-expander (compiler/passes/triangular_solve_expander.h): every option (side,
// triangle, transpose, unit diagonal) and batch rank expands into ops whose values match the
// evaluator's f64 kernel within f32 rounding; bad operands are located errors. (Moved from
// linalg_expander_test.cc.)
#include "compiler/passes/triangular_solve_expander.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "tests/compiler/linalg_test_util.h"

namespace tpusim::compiler {
namespace {

using testing::ExpandedVsKernel;
using testing::Parse;
using testing::SolveModule;

TEST(TriangularSolveExpanderTest, EveryOptionMatchesTheKernel) {
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* t : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          for (const auto& [batch, k, other] :
               {std::tuple<std::string, int64_t, int64_t>{"", 5, 3}, {"2", 4, 1}, {"2,3", 7, 2}}) {
            const std::string text = SolveModule(batch, k, other, left, lower, t, unit);
            TriangularSolveExpander pass;
            EXPECT_LE(ExpandedVsKernel(text, pass, 1e-5, 1e-4), 1.0) << text;
          }
        }
      }
    }
  }
}

// Bad operands are located errors naming the instruction.
TEST(TriangularSolveExpanderTest, BadOperandsAreLocated) {
  auto m = Parse(R"(
HloModule bad
ENTRY e {
  a = f32[4,4] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT x = f32[3,2] triangular-solve(a, b), left_side=true, lower=true
}
)");
  ASSERT_NE(m, nullptr);
  auto r = TriangularSolveExpander().Run(*m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("test.hlo:6:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("%x"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace tpusim::compiler
