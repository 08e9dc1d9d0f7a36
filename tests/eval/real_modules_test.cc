// Every real module in ../shared/hlo/real/ (and tests/data/hlo/ when present) whose values fit
// under a size limit: evaluates it on deterministic inputs twice (threads 1 and 2) and requires
// identical bits; float outputs must be finite unless the module has an op that can make inf/NaN
// from inputs in [-1, 1) (MayBeNonFinite). Modules over the size limit are skipped with a message.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "hlo/eval/evaluator.h"
#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

constexpr int64_t kMaxModuleBytes = int64_t{96} << 20;  // per value and for all parameters
constexpr int64_t kMaxWhileIterations = 4;
constexpr int64_t kMaxWhileStateBytes = int64_t{4} << 20;

std::vector<std::string> RealModules() {
  std::vector<std::string> files;
  std::set<std::string> names;  // tests/data/hlo holds copies of some shared modules: evaluate once
  for (const char* dir : {"../shared/hlo/real", "tests/data/hlo"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    std::vector<std::filesystem::path> here;
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".hlo") here.push_back(e.path());
    }
    std::sort(here.begin(), here.end());
    for (const auto& p : here) {
      if (names.insert(p.filename().string()).second) files.push_back(p.string());
    }
  }
  return files;
}

// Devices a module needs: the largest id in its replica groups / permute pairs + 1.
int64_t DevicesFor(const HloModule& m) {
  int64_t n = std::max<int64_t>(1, m.replica_count() * m.num_partitions());
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      for (const auto& g : i->replica_groups().groups) {
        for (int64_t d : g) n = std::max(n, d + 1);
      }
      if (i->replica_groups().iota_form) {
        int64_t p = 1;
        for (int64_t d : i->replica_groups().iota.dims) p *= d;
        n = std::max(n, p);
      }
      for (auto [a, b] : i->source_target_pairs()) n = std::max({n, a + 1, b + 1});
    }
  }
  return n;
}

// True if the module applies an op that yields inf/NaN for some inputs in [-1, 1) (sqrt or log of a
// negative number, division by ~0, ...): its outputs may be non-finite on random inputs.
bool MayBeNonFinite(const HloModule& m) {
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      switch (i->opcode()) {
        case HloOpcode::kSqrt:
        case HloOpcode::kRsqrt:
        case HloOpcode::kLog:
        case HloOpcode::kLog1p:
        case HloOpcode::kDivide:
        case HloOpcode::kPower:
        case HloOpcode::kExp:
          return true;
        default:
          break;
      }
    }
  }
  return false;
}

// Bytes carried around the largest while loop (shape of its operand).
int64_t LargestWhileState(const HloModule& m) {
  int64_t b = 0;
  for (const auto& c : m.computations()) {
    for (const auto& i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) b = std::max(b, i->shape().ByteSize());
    }
  }
  return b;
}

bool AllFinite(const Literal& l) {
  for (const Literal* leaf : l.Leaves()) {
    if (!IsFloatingPoint(leaf->element_type())) continue;
    for (int64_t i = 0; i < leaf->element_count(); ++i) {
      if (!std::isfinite(leaf->GetAsDouble(i))) return false;
    }
  }
  return true;
}

TEST(RealModulesTest, DeterministicAcrossRunsAndThreadCounts) {
  std::vector<std::string> files = RealModules();
  if (files.empty()) GTEST_SKIP() << "no real modules: ../shared/hlo/real/ is absent";
  int evaluated = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    auto module = ParseHloModuleFile(file);
    ASSERT_TRUE(module.ok()) << module.status().message();
    ModuleFootprint fp = ComputeFootprint(**module);
    const int64_t devices = DevicesFor(**module);
    if (fp.largest_value_bytes > kMaxModuleBytes ||
        fp.parameter_bytes * devices > kMaxModuleBytes) {
      std::cout << "[ skipped  ] " << file << ": largest value '" << fp.largest_value_name
                << "' has " << fp.largest_value_bytes << " bytes, parameters " << fp.parameter_bytes
                << " bytes x " << devices << " device(s) (limit " << kMaxModuleBytes << ")\n";
      continue;
    }
    if (LargestWhileState(**module) * devices > kMaxWhileStateBytes) {
      std::cout << "[ skipped  ] " << file << ": a while loop carries "
                << LargestWhileState(**module) << " bytes x " << devices
                << " device(s) (too slow for a unit test)\n";
      continue;
    }
    std::vector<std::vector<Literal>> args;
    for (int64_t d = 0; d < devices; ++d) {
      auto a = Evaluator::MakeRandomArguments(**module, /*seed=*/7, d);
      ASSERT_TRUE(a.ok()) << a.status().message();
      args.push_back(std::move(a).value());
    }
    EvaluatorOptions o1;
    o1.seed = 7;
    o1.threads = 1;
    o1.max_bytes = kMaxModuleBytes;
    // The JAX wave-equation module scans 8192 steps of a stencil over 8 x f32[1032,1024]: hours on
    // a CPU. A small loop bound keeps the test fast; a module stopped by it is reported as skipped.
    o1.max_while_iterations = kMaxWhileIterations;
    EvaluatorOptions o2 = o1;
    o2.threads = 2;
    Evaluator e1(o1), e2(o2);
    auto t0 = std::chrono::steady_clock::now();
    auto r1 = e1.EvaluateReplicated(**module, devices, 1, args);
    std::cout << "[ eval     ] " << file << ": " << devices << " device(s), "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()
              << " s\n";
    if (!r1.ok() && r1.status().code() == StatusCode::kUnimplemented) {
      // Only the tiny modern-syntax module calls an unknown target ("my_custom_call1").
      EXPECT_NE(r1.status().message().find("my_custom_call1"), std::string::npos)
          << r1.status().message();
      std::cout << "[ skipped  ] " << file << ": " << r1.status().message() << "\n";
      continue;
    }
    if (!r1.ok() && r1.status().code() == StatusCode::kResourceExhausted &&
        r1.status().message().find("max_while_iterations") != std::string::npos) {
      std::cout << "[ skipped  ] " << file << ": a while loop runs more than "
                << kMaxWhileIterations << " iterations\n";
      continue;
    }
    ASSERT_TRUE(r1.ok()) << r1.status().message();
    auto r2 = e2.EvaluateReplicated(**module, devices, 1, args);
    ASSERT_TRUE(r2.ok()) << r2.status().message();
    for (int64_t d = 0; d < devices; ++d) {
      EXPECT_TRUE((*r1)[d].BitwiseEqual((*r2)[d]))
          << "device " << d << " differs between 1 and 2 threads";
      if (!MayBeNonFinite(**module)) {
        EXPECT_TRUE(AllFinite((*r1)[d])) << "device " << d << " has a non-finite output";
      }
    }
    ++evaluated;
  }
  EXPECT_GE(evaluated, 10) << "too few real modules evaluated";
}

}  // namespace
}  // namespace tpusim::hlo
