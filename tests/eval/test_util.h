// Helpers for the evaluator tests: parse HLO text and evaluate it.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"

namespace tpusim::hlo::testing {

/// Parses `text` and evaluates its entry on `args` (single device); fails the test on an error.
inline Literal EvalHlo(const std::string& text, const std::vector<Literal>& args = {},
                       EvaluatorOptions options = {}) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return Literal();
  Evaluator ev(options);
  auto r = ev.Evaluate(**module, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return Literal();
  return std::move(r).value();
}

/// The evaluation status only (for error tests).
inline Status EvalHloStatus(const std::string& text, const std::vector<Literal>& args = {},
                            EvaluatorOptions options = {}) {
  auto module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  Evaluator ev(options);
  auto r = ev.Evaluate(**module, args);
  return r.ok() ? OkStatus() : r.status();
}

/// Element values as doubles, row-major.
inline std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetAsDouble(i));
  return v;
}

}  // namespace tpusim::hlo::testing
