// Helpers for the compiler's end-to-end tests: HLO text -> Compile -> isa::Interpreter with the
// arguments written into HBM -> outputs read back as Literals, and the CPU evaluator's reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/device_literal.h"
#include "config/config_loader.h"
#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"
#include "isa/interpreter.h"
#include "isa/verifier.h"

namespace tpusim::compiler::testing {

using compiler::DeviceBytes;
using compiler::LiteralFromDevice;

struct RunResult {
  CompiledModule compiled;
  std::vector<hlo::Literal> outputs;  // result leaves of replica 0, flattened
  uint64_t executed = 0;              // instructions the interpreter executed
};

/// Compiles `module` for `config`, verifies the program, runs it on the interpreter with `args`
/// (replica r gets args[r], or args[0] when only one set is given) and reads replica 0's outputs.
inline StatusOr<RunResult> CompileAndRun(const hlo::HloModule& module,
                                         const config::ChipConfig& config,
                                         const std::vector<std::vector<hlo::Literal>>& args,
                                         CompileOptions options = {}) {
  RunResult r;
  TPUSIM_ASSIGN_OR_RETURN(r.compiled, Compile(module, config, options));
  const isa::MemorySizes sizes = isa::MemorySizes::FromChipConfig(config);
  TPUSIM_RETURN_IF_ERROR(isa::Verify(r.compiled.program, sizes));
  isa::Interpreter interp(sizes);
  TPUSIM_RETURN_IF_ERROR(interp.Load(r.compiled.program));
  for (const BufferPlacement& p : r.compiled.parameters) {
    const auto& set = args[args.size() > 1 ? static_cast<size_t>(p.core) : 0];
    const hlo::Literal* lit = &set.at(static_cast<size_t>(p.parameter_number));
    for (int64_t i : p.tuple_index) lit = &lit->element(i);
    const std::string bytes = DeviceBytes(*lit);
    TPUSIM_RETURN_IF_ERROR(interp.hbm(p.core).Write(p.hbm_address, bytes.data(), bytes.size()));
  }
  TPUSIM_RETURN_IF_ERROR(interp.Run());
  r.executed = interp.executed();
  for (const BufferPlacement& p : r.compiled.outputs) {
    if (p.core != 0) continue;
    std::string bytes(static_cast<size_t>(p.bytes), '\0');
    TPUSIM_RETURN_IF_ERROR(interp.hbm(0).Read(p.hbm_address, bytes.data(), bytes.size()));
    TPUSIM_ASSIGN_OR_RETURN(hlo::Literal lit, LiteralFromDevice(p.shape, bytes));
    r.outputs.push_back(std::move(lit));
  }
  return r;
}

/// Instructions of core 0 tagged with HLO instruction `name` (with opcode `op`, if given).
inline int InstructionsTagged(const isa::Program& p, const std::string& name,
                              std::optional<isa::Opcode> op = std::nullopt) {
  int n = 0;
  const auto& core = p.cores[0];
  for (size_t i = 0; i < core.instructions.size(); ++i) {
    const int32_t tag = core.hlo_tags[i];
    n += tag >= 0 && p.hlo_names[static_cast<size_t>(tag)] == name &&
         (!op || core.instructions[i].opcode == *op);
  }
  return n;
}

/// The counts of core 0's ctrl.loops, in program order.
inline std::vector<uint64_t> LoopCounts(const isa::Program& p) {
  std::vector<uint64_t> out;
  for (const isa::Instruction& i : p.cores[0].instructions) {
    if (i.opcode == isa::Opcode::kCtrlLoop) out.push_back(i.As<isa::op::CtrlLoop>().count);
  }
  return out;
}

/// Max |a - b| / (atol + rtol * |b|) over all elements (<= 1 means within tolerance).
inline double WorstError(const hlo::Literal& got, const hlo::Literal& want, double atol,
                         double rtol) {
  EXPECT_EQ(got.element_count(), want.element_count());
  double worst = 0;
  for (int64_t i = 0; i < std::min(got.element_count(), want.element_count()); ++i) {
    const double a = got.GetAsDouble(i), b = want.GetAsDouble(i);
    if (std::isnan(a) && std::isnan(b)) continue;
    worst = std::max(worst, std::abs(a - b) / (atol + rtol * std::abs(b)));
  }
  return worst;
}

inline std::unique_ptr<hlo::HloModule> Parse(const std::string& text) {
  auto m = hlo::ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

inline config::ChipConfig Config(const std::string& name) {
  auto c = config::LoadChipConfig(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : config::ChipConfig{};
}

/// Runs `text` on `config` with the evaluator's random arguments (seed 7) and expects every output
/// leaf to have exactly the evaluator's bytes (the evaluator sums dots in the MXU's K tiles, as
/// `tpusim run`'s check does). Returns the run for further checks (empty when it did not run).
inline RunResult ExpectSameBits(const std::string& text, const config::ChipConfig& config) {
  RunResult r;
  auto module = Parse(text);
  if (!module) return r;
  auto args = hlo::Evaluator::MakeRandomArguments(*module, 7);
  EXPECT_TRUE(args.ok()) << args.status().message();
  if (!args.ok()) return r;
  hlo::EvaluatorOptions eo;
  eo.tpu_default_precision = true;
  eo.mxu_rows = config.core.mxu.rows;
  hlo::Evaluator ev(eo);
  auto want = ev.Evaluate(*module, *args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!want.ok()) return r;
  auto run = CompileAndRun(*module, config, {*args});
  EXPECT_TRUE(run.ok()) << run.status().message();
  if (!run.ok()) return r;
  const std::vector<const hlo::Literal*> leaves = want->Leaves();
  EXPECT_EQ(leaves.size(), run->outputs.size());
  for (size_t i = 0; i < std::min(leaves.size(), run->outputs.size()); ++i) {
    const hlo::Literal& got = run->outputs[i];
    EXPECT_EQ(got.size_bytes(), leaves[i]->size_bytes()) << "leaf " << i;
    if (got.size_bytes() != leaves[i]->size_bytes()) continue;
    const int64_t eb = got.size_bytes() / std::max<int64_t>(got.element_count(), 1);
    int64_t differ = 0, first = -1;
    for (int64_t k = 0; k < got.element_count(); ++k) {
      if (std::memcmp(got.raw() + k * eb, leaves[i]->raw() + k * eb, static_cast<size_t>(eb))) {
        if (differ++ == 0) first = k;
      }
    }
    EXPECT_EQ(differ, 0) << "leaf " << i << ": " << differ << " elements differ; first " << first
                         << ": got " << got.GetAsDouble(first) << " want "
                         << leaves[i]->GetAsDouble(first);
  }
  return std::move(run).value();
}
inline RunResult ExpectSameBits(const std::string& text, const std::string& config_name = "tiny") {
  return ExpectSameBits(text, Config(config_name));
}

/// Compiles and runs `text` on `config_name` with random arguments and checks every output leaf
/// against the evaluator (f32 DEFAULT-precision dots round operands to bf16 as the MXU does) within
/// |got - want| <= atol + rtol * |want|. Returns the run for further checks.
/// With `mxu_order`, the evaluator sums dots and convolutions in the MXU's K tiles
/// (EvaluatorOptions::mxu_rows = the config's core.mxu.rows), as `tpusim run`'s check does.
inline RunResult CheckAgainstEvaluator(const std::string& text, const std::string& config_name,
                                       double atol = 1e-5, double rtol = 1e-5,
                                       CompileOptions options = {}, bool mxu_order = false) {
  RunResult r;
  auto module = Parse(text);
  if (!module) return r;
  auto args = hlo::Evaluator::MakeRandomArguments(*module, 42);
  EXPECT_TRUE(args.ok()) << args.status().message();
  if (!args.ok()) return r;
  hlo::EvaluatorOptions eo;
  eo.tpu_default_precision = true;
  if (mxu_order) eo.mxu_rows = Config(config_name).core.mxu.rows;
  hlo::Evaluator ev(eo);
  auto want = ev.Evaluate(*module, *args);
  EXPECT_TRUE(want.ok()) << want.status().message();
  if (!want.ok()) return r;
  std::vector<std::vector<hlo::Literal>> all{*args};
  auto run = CompileAndRun(*module, Config(config_name), all, options);
  EXPECT_TRUE(run.ok()) << run.status().message();
  if (!run.ok()) return r;
  std::vector<const hlo::Literal*> leaves = want->Leaves();
  EXPECT_EQ(leaves.size(), run->outputs.size());
  for (size_t i = 0; i < std::min(leaves.size(), run->outputs.size()); ++i) {
    const double worst = WorstError(run->outputs[i], *leaves[i], atol, rtol);
    if (std::getenv("TPUSIM_TEST_VERBOSE") != nullptr) {
      double max_abs = 0;
      for (int64_t k = 0; k < leaves[i]->element_count(); ++k) {
        max_abs =
            std::max(max_abs, std::abs(run->outputs[i].GetAsDouble(k) - leaves[i]->GetAsDouble(k)));
      }
      std::printf(
          "[verbose] %s leaf %zu: max abs error %.3g, tolerance ratio %.3g, %llu instructions "
          "executed\n",
          config_name.c_str(), i, max_abs, worst, static_cast<unsigned long long>(run->executed));
    }
    EXPECT_LE(worst, 1.0) << "output leaf " << i << " on " << config_name << ": got "
                          << run->outputs[i].ToString() << " want " << leaves[i]->ToString();
  }
  return std::move(run).value();
}

}  // namespace tpusim::compiler::testing
