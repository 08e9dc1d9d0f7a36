// The PE-level and fast MXU models give the same cycle numbers, counters and bits on random op
// sequences (DESIGN.md §4, §8), and both match a plain triple loop in the array's summation order.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sim/core/mxu_model.h"
#include "sim/core/mxu_tiles.h"
#include "tests/mxu/mxu_test_util.h"

namespace tpusim::sim {
namespace {

using testing::MxuReference;
using testing::RandomBf16s;
using testing::RandomInt8s;

constexpr int64_t kAccRows = 48;
constexpr int kCasesPerParam = 8;

struct RandomCase {
  MxuArrayConfig config;
  std::vector<MxuOp> ops;
  std::vector<uint64_t> earliest;
  std::string description;
};

int64_t Pick(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

int64_t PickArrayDim(std::mt19937_64& rng) {
  const int64_t p = Pick(rng, 0, 99);
  if (p < 65) return Pick(rng, 2, 8);
  if (p < 92) return Pick(rng, 9, 16);
  return Pick(rng, 17, 32);
}

RandomCase MakeCase(uint64_t seed) {
  std::mt19937_64 rng(seed);
  RandomCase rc;
  MxuArrayConfig& cfg = rc.config;
  cfg.rows = PickArrayDim(rng);
  cfg.cols = PickArrayDim(rng);
  if (seed % 37 == 0) cfg.rows = cfg.cols = 32;
  cfg.weight_buffers = Pick(rng, 0, 9) < 7 ? 2 : 1;
  cfg.weight_load_cycles_per_row = Pick(rng, 0, 9) < 8 ? 1 : Pick(rng, 2, 3);
  cfg.accumulator_rows = kAccRows;
  const int64_t mode = Pick(rng, 0, 9);  // 0-1 int8 only, 2-7 bf16 only, 8-9 mixed
  const bool specials = Pick(rng, 0, 9) < 3;
  const int64_t op_count = Pick(rng, 3, 20);

  // Program-order tile tracking, to give each matmul the numerics of the tile it will run on.
  bool have_shadow = false, have_active = false;
  MxuNumerics shadow_nt = MxuNumerics::kBf16, active_nt = MxuNumerics::kBf16;
  int64_t shadow_k = 0, active_k = 0;
  uint64_t horizon = 0;
  for (int64_t i = 0; i < op_count; ++i) {
    const bool must_load = cfg.weight_buffers == 2 ? !have_shadow : !have_active;
    if (must_load || Pick(rng, 0, 9) < 3) {
      MxuNumerics nt = mode < 2 ? MxuNumerics::kInt8 : MxuNumerics::kBf16;
      if (mode >= 8 && Pick(rng, 0, 1) == 1) nt = MxuNumerics::kInt8;
      const int64_t k = Pick(rng, 0, 1) ? cfg.rows : Pick(rng, 1, cfg.rows);
      const int64_t n = Pick(rng, 0, 1) ? cfg.cols : Pick(rng, 1, cfg.cols);
      rc.ops.push_back(nt == MxuNumerics::kBf16
                           ? MxuOp::LoadWeights(k, n, RandomBf16s(rng, k * n, specials))
                           : MxuOp::LoadWeightsInt8(k, n, RandomInt8s(rng, k * n)));
      if (cfg.weight_buffers == 2) {
        have_shadow = true;
        shadow_nt = nt;
        shadow_k = k;
      } else {
        have_active = true;
        active_nt = nt;
        active_k = k;
      }
    } else {
      bool swap = Pick(rng, 0, 1) == 1;
      if (cfg.weight_buffers == 2 && !have_active) swap = true;
      if (cfg.weight_buffers == 2 && swap) {
        have_active = true;
        active_nt = shadow_nt;
        active_k = shadow_k;
      }
      const int64_t m = Pick(rng, 0, 4) == 0 ? 1 : Pick(rng, 1, 40);
      const int64_t k = Pick(rng, 0, 9) < 6 ? active_k : Pick(rng, 1, cfg.rows);
      const int64_t acc_row = Pick(rng, 0, kAccRows - m);
      const bool accumulate = Pick(rng, 0, 1) == 1;
      rc.ops.push_back(
          active_nt == MxuNumerics::kBf16
              ? MxuOp::MatMul(m, k, RandomBf16s(rng, m * k, specials), swap, accumulate, acc_row)
              : MxuOp::MatMulInt8(m, k, RandomInt8s(rng, m * k), swap, accumulate, acc_row));
    }
    // Mostly "operands ready"; sometimes the op waits for its operands well into the future.
    uint64_t earliest = 0;
    if (Pick(rng, 0, 9) == 0) {
      horizon += static_cast<uint64_t>(Pick(rng, 0, 120));
      earliest = horizon;
    }
    rc.earliest.push_back(earliest);
  }
  rc.description =
      fmt::format("seed {}: {}x{} array, weight_buffers {}, wl {}, {} ops", seed, cfg.rows,
                  cfg.cols, cfg.weight_buffers, cfg.weight_load_cycles_per_row, rc.ops.size());
  return rc;
}

std::vector<MxuOpTiming> RunAll(MxuModel& model, const RandomCase& rc) {
  std::vector<MxuOpTiming> out;
  for (size_t i = 0; i < rc.ops.size(); ++i) {
    StatusOr<MxuOpTiming> t = model.Issue(rc.ops[i], Cycles(rc.earliest[i]));
    EXPECT_TRUE(t.ok()) << rc.description << " op " << i << ": " << t.status().ToString();
    if (!t.ok()) return out;
    out.push_back(*t);
  }
  return out;
}

void CheckCase(const RandomCase& rc) {
  SCOPED_TRACE(rc.description);
  auto pe = CreateMxuModel(MxuModelKind::kPe, rc.config);
  auto fast = CreateMxuModel(MxuModelKind::kFast, rc.config);
  ASSERT_TRUE(pe.ok() && fast.ok());
  const std::vector<MxuOpTiming> pe_t = RunAll(**pe, rc);
  const std::vector<MxuOpTiming> fast_t = RunAll(**fast, rc);
  ASSERT_EQ(pe_t.size(), rc.ops.size());
  ASSERT_EQ(fast_t.size(), rc.ops.size());
  uint64_t macs = 0;
  for (size_t i = 0; i < rc.ops.size(); ++i) {
    EXPECT_EQ(pe_t[i].start.value(), fast_t[i].start.value())
        << "op " << i << " " << rc.ops[i].ToString();
    EXPECT_EQ(pe_t[i].unit_free.value(), fast_t[i].unit_free.value()) << "op " << i;
    EXPECT_EQ(pe_t[i].done.value(), fast_t[i].done.value()) << "op " << i;
    EXPECT_GE(pe_t[i].start.value(), rc.earliest[i]);
    if (i > 0) {
      EXPECT_GE(pe_t[i].start, pe_t[i - 1].start) << "in-order issue, op " << i;
    }
  }

  const MxuCounters& pc = (*pe)->counters();
  const MxuCounters& fc = (*fast)->counters();
  EXPECT_EQ(pc.weight_loads, fc.weight_loads);
  EXPECT_EQ(pc.matmuls, fc.matmuls);
  EXPECT_EQ(pc.streaming_cycles, fc.streaming_cycles);
  EXPECT_EQ(pc.busy_cycles, fc.busy_cycles);
  EXPECT_EQ(pc.fill_drain_cycles, fc.fill_drain_cycles);
  EXPECT_EQ(pc.weight_shift_cycles, fc.weight_shift_cycles);
  EXPECT_EQ(pc.useful_macs, fc.useful_macs);
  EXPECT_EQ(pc.last_done, fc.last_done);

  // Values: both models bit-identical to each other and to the reference triple loop.
  MxuReference ref(rc.config, kAccRows);
  int64_t tile_n = 0, shadow_n = 0;
  for (const MxuOp& op : rc.ops) {
    ref.Apply(op);
    if (op.kind == MxuOp::Kind::kLoadWeights) {
      (rc.config.weight_buffers == 2 ? shadow_n : tile_n) = op.n;
    } else {
      if (rc.config.weight_buffers == 2 && op.swap_weights) tile_n = shadow_n;
      macs += static_cast<uint64_t>(op.m * op.k * tile_n);
    }
  }
  EXPECT_EQ(fc.useful_macs, macs);
  const MxuAccumulators& pa = (*pe)->accumulators();
  const MxuAccumulators& fa = (*fast)->accumulators();
  ASSERT_EQ(pa.rows(), kAccRows);
  ASSERT_EQ(fa.rows(), kAccRows);
  int mismatches = 0;
  for (int64_t r = 0; r < kAccRows && mismatches < 5; ++r) {
    for (int64_t c = 0; c < rc.config.cols && mismatches < 5; ++c) {
      const bool f = ref.is_f32(r, c);
      if (!testing::SameResult(pa.word(r, c), fa.word(r, c), f) ||
          !testing::SameResult(fa.word(r, c), ref.word(r, c), f)) {
        ADD_FAILURE() << "acc[" << r << "][" << c << "]: pe 0x" << std::hex << pa.word(r, c)
                      << " fast 0x" << fa.word(r, c) << " reference 0x" << ref.word(r, c);
        ++mismatches;
      }
    }
  }
}

class MxuModelsAgreeTest : public ::testing::TestWithParam<int> {};

TEST_P(MxuModelsAgreeTest, RandomSequencesSameCyclesAndBits) {
  for (int i = 0; i < kCasesPerParam; ++i) {
    CheckCase(MakeCase(static_cast<uint64_t>(GetParam() * kCasesPerParam + i)));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, MxuModelsAgreeTest, ::testing::Range(0, 40));

TEST(MxuModelsAgreeTest, Full128x128Array) {
  // A TPU v2-v5 sized array: fold sequence with partial tiles, swaps, accumulation, back-to-back.
  std::mt19937_64 rng(128);
  RandomCase rc;
  rc.config.rows = rc.config.cols = 128;
  rc.config.accumulator_rows = kAccRows;
  auto load = [&](int64_t k, int64_t n) {
    rc.ops.push_back(MxuOp::LoadWeights(k, n, RandomBf16s(rng, k * n, false)));
    rc.earliest.push_back(0);
  };
  auto matmul = [&](int64_t m, int64_t k, bool swap, bool accumulate) {
    rc.ops.push_back(MxuOp::MatMul(m, k, RandomBf16s(rng, m * k, false), swap, accumulate, 0));
    rc.earliest.push_back(0);
  };
  load(128, 128);
  matmul(40, 128, true, false);
  load(100, 128);                // overlaps the first matmul
  matmul(40, 128, false, true);  // back to back on the first tile
  matmul(40, 100, true, true);   // K = 100 on the second tile
  load(128, 70);
  matmul(1, 128, true, false);  // M = 1 on a 70-column tile
  rc.description = "128x128 fold sequence";
  CheckCase(rc);
}

TEST(MxuModelsAgreeTest, TimingOnlyGivesTheSameCycles) {
  for (uint64_t seed = 1000; seed < 1040; ++seed) {
    RandomCase rc = MakeCase(seed);
    SCOPED_TRACE(rc.description);
    auto with_values = CreateMxuModel(MxuModelKind::kFast, rc.config);
    rc.config.compute_values = false;
    auto pe = CreateMxuModel(MxuModelKind::kPe, rc.config);
    auto fast = CreateMxuModel(MxuModelKind::kFast, rc.config);
    ASSERT_TRUE(with_values.ok() && pe.ok() && fast.ok());
    const auto a = RunAll(**with_values, rc), b = RunAll(**pe, rc), c = RunAll(**fast, rc);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a, c);
    EXPECT_EQ((*with_values)->counters(), (*fast)->counters());
    EXPECT_EQ((*pe)->counters(), (*fast)->counters());
  }
}

// A timing-only MXU keeps no values: no accumulator words and no weights (issue 20 item 4: the
// 1 MiB of accumulators per tpu-v4 MXU made a slice's memory grow by 8 MB per TensorCore).
TEST(MxuModelsAgreeTest, TimingOnlyHoldsNoAccumulatorsOrWeights) {
  MxuArrayConfig cfg;
  cfg.rows = 128;
  cfg.cols = 128;
  cfg.accumulator_rows = 2048;
  auto with_values = CreateMxuModel(MxuModelKind::kFast, cfg);
  cfg.compute_values = false;
  auto timing = CreateMxuModel(MxuModelKind::kFast, cfg);
  ASSERT_TRUE(with_values.ok() && timing.ok());
  EXPECT_EQ((*with_values)->accumulators().rows(), 2048);
  EXPECT_EQ((*timing)->accumulators().rows(), 0);
  const MxuOp load = MxuOp::LoadWeights(128, 128, {});
  ASSERT_TRUE((*timing)->Issue(load, Cycles(0)).ok());
  ASSERT_TRUE((*timing)->Issue(MxuOp::MatMul(64, 128, {}, true, false, 0), Cycles(0)).ok());
  EXPECT_EQ((*timing)->accumulators().rows(), 0);
  EXPECT_GT((*timing)->counters().useful_macs, 0u);
  // A timing-only weight tile holds no values and reads as zeros; a values tile holds R x C.
  MxuTileTracker timing_tiles(cfg);
  const std::shared_ptr<const MxuTile> t = timing_tiles.Load(load);
  EXPECT_TRUE(t->f32.empty() && t->s32.empty());
  EXPECT_EQ(t->word(5), 0u);
  cfg.compute_values = true;
  MxuTileTracker value_tiles(cfg);
  EXPECT_EQ(value_tiles.Load(MxuOp::LoadWeights(2, 2, {1, 2, 3, 4}))->f32.size(), 128u * 128u);
}

}  // namespace
}  // namespace tpusim::sim
