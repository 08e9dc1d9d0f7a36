// Helpers for the tests of one HLO pass (tests/compiler/<pass>_test.cc): run the pass on a module
// written in the test, expect it to change the module once and then nothing (idempotence), the
// result to verify, and the reference evaluator to give the same bits before and after; count what
// is left; expect a refused module's error to be located.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compiler/pass/hlo_pass.h"
#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::compiler::testing {

/// The evaluator `tpusim run`'s check uses on a 128-row MXU: TPU DEFAULT precision, dots in the
/// MXU's K-tile order.
inline hlo::EvaluatorOptions TpuEvaluatorOptions() {
  hlo::EvaluatorOptions eo;
  eo.tpu_default_precision = true;
  eo.mxu_rows = 128;
  return eo;
}

/// Instructions with opcode `op` in every computation of `m`.
inline int CountOpcode(const hlo::HloModule& m, hlo::HloOpcode op) {
  int n = 0;
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) n += i->opcode() == op;
  }
  return n;
}

/// Instructions with opcode `op` in the entry computation of `m`.
inline int CountInEntry(const hlo::HloModule& m, hlo::HloOpcode op) {
  int n = 0;
  for (const auto& i : m.entry_computation()->instructions()) n += i->opcode() == op;
  return n;
}

/// Elements of `got` and `want` whose bytes differ (reported with the first difference).
inline int64_t BitDifferences(const hlo::Literal& got, const hlo::Literal& want,
                              const std::string& what) {
  EXPECT_EQ(got.shape().ToString(), want.shape().ToString()) << what;
  if (got.size_bytes() != want.size_bytes()) return -1;
  const int64_t n = want.element_count();
  const int64_t eb = n > 0 ? want.size_bytes() / n : 0;
  int64_t differ = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (std::memcmp(got.raw() + k * eb, want.raw() + k * eb, static_cast<size_t>(eb)) != 0 &&
        differ++ == 0) {
      ADD_FAILURE() << what << ": element " << k << ": got " << got.GetAsDouble(k) << ", want "
                    << want.GetAsDouble(k);
    }
  }
  return differ;
}

/// Every device's root value of `m` (replica_count x num_partitions devices in lockstep; device d
/// gets MakeRandomArguments(m, seed, d)).
inline StatusOr<std::vector<hlo::Literal>> EvaluateAllDevices(const hlo::HloModule& m,
                                                              const hlo::EvaluatorOptions& eo,
                                                              uint64_t seed) {
  const int64_t replicas = m.replica_count(), partitions = m.num_partitions();
  std::vector<std::vector<hlo::Literal>> args;
  for (int64_t d = 0; d < replicas * partitions; ++d) {
    TPUSIM_ASSIGN_OR_RETURN(std::vector<hlo::Literal> a,
                            hlo::Evaluator::MakeRandomArguments(m, seed, d));
    args.push_back(std::move(a));
  }
  hlo::Evaluator ev(eo);
  return ev.EvaluateReplicated(m, replicas, partitions, args);
}

/// Parses `text`, evaluates it on random arguments (seed `seed`, every device), runs `pass` and
/// expects: it reports a change, the module verifies, a second run reports none, and the evaluator
/// gives the same bits for every output leaf of every device. Returns the rewritten module
/// (nullptr on a failed step).
inline std::unique_ptr<hlo::HloModule> ExpectRewriteKeepsBits(
    HloPass& pass, const std::string& text, hlo::EvaluatorOptions eo = TpuEvaluatorOptions(),
    uint64_t seed = 7) {
  auto parsed = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  if (!parsed.ok()) return nullptr;
  std::unique_ptr<hlo::HloModule> m = std::move(parsed).value();
  auto before = EvaluateAllDevices(*m, eo, seed);
  EXPECT_TRUE(before.ok()) << before.status().message();
  auto changed = pass.Run(*m);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  if (!before.ok() || !changed.ok()) return nullptr;
  EXPECT_TRUE(*changed) << pass.name() << " changed nothing";
  const Status verified = hlo::VerifyModule(*m);
  EXPECT_TRUE(verified.ok()) << verified.message();
  auto again = pass.Run(*m);
  EXPECT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again.ok() && *again) << pass.name() << " is not idempotent";
  auto after = EvaluateAllDevices(*m, eo, seed);
  EXPECT_TRUE(after.ok()) << after.status().message();
  if (!after.ok()) return nullptr;
  for (size_t d = 0; d < before->size(); ++d) {
    const std::vector<const hlo::Literal*> want = (*before)[d].Leaves(), got = (*after)[d].Leaves();
    EXPECT_EQ(got.size(), want.size());
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
      const std::string what = "device " + std::to_string(d) + " leaf " + std::to_string(i);
      EXPECT_EQ(BitDifferences(*got[i], *want[i], what), 0);
    }
  }
  return m;
}

/// Parses `text`, runs `pass` and expects it to change nothing.
inline void ExpectUnchanged(HloPass& pass, const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const int64_t count = (*m)->instruction_count();
  auto changed = pass.Run(**m);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
  EXPECT_EQ((*m)->instruction_count(), count);
}

/// Parses `text`, runs `pass` and expects an error located in test.hlo (line:column) whose
/// message contains `what`. Returns the message.
inline std::string ExpectRefused(HloPass& pass, const std::string& text, const std::string& what) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  auto changed = pass.Run(**m);
  EXPECT_FALSE(changed.ok()) << pass.name() << " accepted the module";
  if (changed.ok()) return "";
  const std::string& msg = changed.status().message();
  EXPECT_NE(msg.find("test.hlo:"), std::string::npos) << msg;
  EXPECT_NE(msg.find(what), std::string::npos) << msg;
  return msg;
}

}  // namespace tpusim::compiler::testing
