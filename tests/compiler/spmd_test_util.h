// Helpers for the SPMD tests (spmd_tiling_test.cc, spmd_check_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "hlo/parser.h"
#include "hlo/sharding.h"

namespace tpusim::compiler::testing {

/// The sharding of a parameter of `shape` written with `sharding` (parsed by the real parser).
inline hlo::HloSharding ParseSharding(const std::string& sharding,
                                      const std::string& shape = "f32[8,16]") {
  const std::string text = "HloModule m\nENTRY %e (p: " + shape + ") -> " + shape +
                           " {\n  ROOT %p = " + shape + " parameter(0), sharding=" + sharding +
                           "\n}\n";
  auto m = hlo::ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  return *(*m)->entry_computation()->root_instruction()->sharding();
}

}  // namespace tpusim::compiler::testing
