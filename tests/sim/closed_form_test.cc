// The simulator against closed forms (issue 4 "must show" 7): exact GEMM cycles on a
// weight-stationary array, an HBM stream at >= 90% of the configured bandwidth, a back-to-back
// matmul stream at >= 95% MXU utilization, and the ring all-reduce formula within 5%.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "common/json.h"
#include "sim/report/report.h"
#include "sim/run_and_check.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

using testing::Asm;
using testing::TinyChip;

class GemmTest : public ::testing::TestWithParam<MxuModelKind> {};

// Runs `p` with random bf16 weights at VMEM 0 ([8,8]) and LHS rows at 1024 ([64,8]) on `model`,
// values checked against the interpreter.
auto RunGemm(const config::ChipConfig& chip, isa::Program p, MxuModelKind model, uint64_t seed) {
  std::mt19937_64 rng(seed);
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kVmem, 0, 0, testing::RandomFloats(rng, 64)));
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kVmem, 0, 1024, testing::RandomFloats(rng, 64 * 8)));
  SimOptions o;
  o.mxu_model = model;
  return RunAndCheck(chip, p, o);
}

TEST_P(GemmTest, OneGemmMatchesTheWeightStationaryFormulaExactly) {
  const config::ChipConfig chip = TinyChip();
  const uint64_t R = 8, N = 8, M = 64, kPopLatency = 2;
  isa::Program p = Asm(R"(
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=64, k=8, n=8, dtype=bf16, acc=0, latch=1
    mxu.pop mxu=0, acc=0, m=64, n=8, acc_dtype=f32, dst=8192, stride=8, dtype=f32
    ctrl.halt
  )");
  auto r = RunGemm(chip, p, GetParam(), 1);  // values identical to the interpreter's
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Derivation (weight-stationary R x C array, DESIGN.md §4; mxu_fast_model.cc):
  //   cycle 0: the sequencer issues load_weights; it reaches the MXU after the 1-cycle port: L = 1.
  //   The tile shifts in one row per cycle: the latching matmul can start at S = L + R = 9.
  //   Its last result (M-1, N-1) is in the accumulators at D = S + M + R + N - 2 = 87 (fill +
  //   stream + drain), row i of the M rows one cycle after row i-1. The pop does not wait for D:
  //   results stream out as rows finish (mxu_unit.h), so it is issued behind the matmul, taken by
  //   the MXU when the matmul starts (9), and moves row i at D - (M - 1) + i, the last at D; it
  //   is done after its last row plus the pop latency: D + 1 + 2 = 90 = the core's last
  //   completion.
  const uint64_t expected = 1 + R + (M + R + N - 2) + 1 + kPopLatency;
  EXPECT_EQ(expected, 90u);
  EXPECT_EQ(r->cycles.value(), expected);
  // The MXU streamed for exactly M cycles and shifted weights for R.
  EXPECT_EQ(*r->stats->Get("chip0.core0.mxu0", "array_active_cycles"), M);
  EXPECT_EQ(*r->stats->Get("chip0.core0.mxu0", "weight_shift_cycles"), R);
  EXPECT_EQ(r->cores[0].stalls[static_cast<int>(StallCategory::kArrayActive)], M);
  uint64_t sum = 0;
  for (uint64_t s : r->cores[0].stalls) sum += s;
  EXPECT_EQ(sum, expected);  // the stall categories partition the core's cycles
}

// A pop waits for the result path in its own queue: the matmul behind it streams meanwhile
// (mxu_unit.h; TPU v2+ push and pop from separate VLIW slots).
TEST_P(GemmTest, AMatmulBehindAQueuedPopDoesNotWaitForThePopToStart) {
  const config::ChipConfig chip = TinyChip();
  isa::Program p = Asm(R"(
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=64, k=8, n=8, dtype=bf16, acc=0, latch=1
    mxu.matmul mxu=0, lhs=1024, stride=8, m=8, k=8, n=8, dtype=bf16, acc=64, latch=0
    mxu.pop mxu=0, acc=0, m=64, n=8, acc_dtype=f32, dst=8192, stride=8, dtype=f32
    mxu.pop mxu=0, acc=64, m=8, n=8, acc_dtype=f32, dst=12288, stride=8, dtype=f32
    mxu.matmul mxu=0, lhs=1024, stride=8, m=64, k=8, n=8, dtype=bf16, acc=128, latch=0
    mxu.pop mxu=0, acc=128, m=64, n=8, acc_dtype=f32, dst=16384, stride=8, dtype=f32
    ctrl.halt
  )");
  auto r = RunGemm(chip, p, GetParam(), 2);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Each command is taken once the one before it has started in the array: the first matmul
  // streams 9..73 (done 87), the 8-row matmul 73..81 (done 95). The first pop is taken at 73 and
  // may move its rows from then on (row i is final at 24 + i): it holds the result path 73..137.
  // The second pop (taken at 73, rows final from 88) queues behind it: 137..145. The third matmul
  // is taken at once behind the queued pop and streams 81..145 (done 81 + 64 + 8 + 8 - 2 = 159);
  // its pop waits for the result path (145) and its first row (159 - 63 = 96): 145..209, done at
  // 209 + 2. Had the matmul waited for the queued pop to start (137), the run would end at 218.
  const uint64_t kPopLatency = 2, M = 64;
  EXPECT_EQ(r->cycles.value(), (145 + M) + kPopLatency);
  EXPECT_EQ(r->cycles.value(), 211u);
}

INSTANTIATE_TEST_SUITE_P(BothModels, GemmTest,
                         ::testing::Values(MxuModelKind::kFast, MxuModelKind::kPe),
                         [](const auto& info) {
                           return info.param == MxuModelKind::kFast ? "fast" : "pe";
                         });

TEST(ClosedFormTest, HbmStreamRunsAtConfiguredBandwidth) {
  // A GEMV's weight stream: 16 DMAs of 64 KiB from HBM into distinct VMEM buffers over 2 engines.
  const config::ChipConfig chip = TinyChip();
  std::string text;
  const int kDmas = 16;
  const uint64_t kBytes = 64 << 10;
  for (int i = 0; i < kDmas; ++i) {
    text += "dma.hbm_to_vmem flag=0, src=" + std::to_string(i * kBytes) +
            ", dst=" + std::to_string(i * kBytes) +
            ", elem_bytes=4, n0=" + std::to_string(kBytes / 4) + "\n";
  }
  text += "sync.wait flag=0, value=16\nctrl.halt\n";
  isa::Program p = Asm(text);
  auto r = RunAndCheck(chip, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Ideal: 1 MiB at 64 B/cycle = 16384 cycles; overheads: issue, 20 cycles latency, the wait.
  const double ideal = static_cast<double>(kDmas * kBytes) / 64.0;
  Json report = BuildReportJson(*r, p);
  const double bw = static_cast<double>(kDmas * kBytes) / r->seconds();
  EXPECT_GE(bw / chip.hbm.bandwidth_bytes_per_s, 0.90) << r->cycles.value() << " cycles";
  EXPECT_GE(ideal / static_cast<double>(r->cycles.value()), 0.99);
  std::printf("hbm stream: %lu cycles, %.4f of bandwidth\n", r->cycles.value(),
              bw / chip.hbm.bandwidth_bytes_per_s);
  EXPECT_EQ(*r->stats->Get("chip0.hbm", "bytes_read"), kDmas * kBytes);
  EXPECT_GT(r->cores[0].stalls[static_cast<int>(StallCategory::kHbmBound)],
            r->cycles.value() * 9 / 10);
}

TEST(ClosedFormTest, VmemToVmemCopiesRunAtTheVmemPortRateWithoutHbm) {
  // A buffer kept in VMEM between kernels is read through dma.vmem_to_vmem: 16 copies of 16 KiB on
  // the core's VMEM copy path (core.vmem.bytes_per_cycle = 512 on TinyChip), none through HBM.
  const config::ChipConfig chip = TinyChip();
  std::string text;
  const int kDmas = 16;
  const uint64_t kBytes = 16 << 10;
  for (int i = 0; i < kDmas; ++i) {
    text += "dma.vmem_to_vmem flag=0, src=" + std::to_string(i * kBytes) +
            ", dst=" + std::to_string((512 << 10) + i * kBytes) +
            ", elem_bytes=4, n0=" + std::to_string(kBytes / 4) + "\n";
  }
  text += "sync.wait flag=0, value=16\nctrl.halt\n";
  isa::Program p = Asm(text);
  auto r = RunAndCheck(chip, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // 256 KiB at 512 B/cycle = 512 cycles, plus issue and the 1-cycle copy latency per transfer.
  const double ideal = static_cast<double>(kDmas * kBytes) / 512.0;
  EXPECT_GE(ideal / static_cast<double>(r->cycles.value()), 0.9) << r->cycles.value();
  EXPECT_LE(ideal, static_cast<double>(r->cycles.value()));
  EXPECT_EQ(*r->stats->Get("chip0.hbm", "bytes_read"), 0u);
  EXPECT_EQ(*r->stats->Get("chip0.hbm", "bytes_written"), 0u);
  EXPECT_EQ(r->cores[0].stalls[static_cast<int>(StallCategory::kHbmBound)], 0u);
}

TEST(ClosedFormTest, BackToBackMatmulsKeepTheArrayBusy) {
  const config::ChipConfig chip = TinyChip();
  isa::Program p = Asm(R"(
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=256, k=8, n=8, dtype=bf16, acc=0, latch=1
    ctrl.loop count=63
    mxu.matmul mxu=0, lhs=1024, stride=8, m=256, k=8, n=8, dtype=bf16, acc=0, accumulate=1
    ctrl.endloop
    ctrl.halt
  )");
  std::mt19937_64 rng(2);
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kVmem, 0, 0, testing::RandomFloats(rng, 64)));
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kVmem, 0, 1024, testing::RandomFloats(rng, 256 * 8)));
  auto r = RunAndCheck(chip, p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // 64 matmuls x 256 rows stream back to back: 16384 cycles of the array plus one fill/drain.
  Json report = BuildReportJson(*r, p);
  const double util =
      static_cast<double>(64 * 256 * 8 * 8) / (8.0 * 8.0 * static_cast<double>(r->cycles.value()));
  EXPECT_GE(util, 0.95);
  std::printf("matmul stream: %lu cycles, utilization %.4f\n", r->cycles.value(), util);
  EXPECT_GE(r->cycles.value(), 64u * 256u);
  EXPECT_EQ(*r->stats->Get("chip0.core0.mxu0", "array_active_cycles"), 64u * 256u);
}

// One ici.all_reduce of `count` f32 elements per core over all `n` cores of `chip` (group listed
// in core-id order), run on the simulator and checked against the interpreter.
StatusOr<SimResult> RingAllReduce(const config::ChipConfig& chip, int n, uint64_t count,
                                  uint64_t seed) {
  std::string text = ".replica_groups 0 {";
  for (int c = 0; c < n; ++c) text += (c ? "," : "") + std::to_string(c);
  text += "}\n";
  for (int c = 0; c < n; ++c) {
    text += ".core " + std::to_string(c) +
            "\nici.all_reduce op=sum, dtype=f32, space=vmem, src=0, " +
            "dst=0, count=" + std::to_string(count) + ", group=0\nctrl.halt\n";
  }
  isa::Program p = Asm(text);
  std::mt19937_64 rng(seed);
  for (int c = 0; c < n; ++c) {
    p.data.push_back(
        testing::F32Segment(isa::MemSpace::kVmem, c, 0, testing::RandomFloats(rng, count)));
  }
  return RunAndCheck(chip, p);
}

// 2(n-1)/n * S / B + 2(n-1) * hop latency (issue 6): TinyChip's ICI has 16 B/cycle per link
// direction and 50 cycles per hop; the bidirectional ring sends half the data each way, so its
// bandwidth B is 2 x 16 B/cycle.
double RingFormula(int n, uint64_t S) {
  return 2.0 * (n - 1) / n * static_cast<double>(S) / 32.0 + 2.0 * (n - 1) * 50;
}

TEST(ClosedFormTest, RingAllReduceMatchesTheFormula) {
  const int n = 4;
  const uint64_t count = 64 << 10;  // f32 elements: S = 256 KiB per core
  const uint64_t S = count * 4;
  auto r = RingAllReduce(TinyChip(n), n, count, 3);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double formula = RingFormula(n, S);
  const double got = static_cast<double>(r->cycles.value());
  EXPECT_NEAR(got / formula, 1.0, 0.05) << got << " vs " << formula;
  std::printf("all-reduce: %.0f cycles, formula %.0f\n", got, formula);
  // Both directions of every link carried 2(n-1) chunks of (S/2)/n bytes: one half each way.
  EXPECT_EQ(*r->stats->Get("chip0.ici.x+", "bytes"), 2 * (n - 1) * (S / 2) / n);
  EXPECT_EQ(*r->stats->Get("chip0.ici.x-", "bytes"), 2 * (n - 1) * (S / 2) / n);
}

// On a torus the one ring (system.ici.dimension_rings: false) follows a snake through the chips
// (Interconnect::RingPosition), so every step is one hop and the same formula holds: rank order
// 0..7 would send chip 1 (1,0,0) -> chip 2 (0,1,0) over two hops.
TEST(ClosedFormTest, RingAllReduceOnA3DTorusIsOneHopPerStep) {
  const int n = 8;
  config::ChipConfig chip = TinyChip(n);
  chip.system.topology = config::Topology::kTorus3D;
  chip.system.shape = {2, 2, 2};
  chip.system.ici_dimension_rings = false;
  const uint64_t count = 64 << 10;
  const uint64_t S = count * 4;
  auto r = RingAllReduce(chip, n, count, 5);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double formula = RingFormula(n, S);
  const double got = static_cast<double>(r->cycles.value());
  EXPECT_NEAR(got / formula, 1.0, 0.05) << got << " vs " << formula;
  // The snake 0,1,3,2,6,7,5,4 uses 8 links in both directions (16 link directions), each
  // direction carrying 2(n-1) chunks of (S/2)/n.
  uint64_t total = 0;
  int used = 0;
  for (int c = 0; c < n; ++c) {
    for (const char* d : {"x+", "x-", "y+", "y-", "z+", "z-"}) {
      const uint64_t b =
          r->stats->Get("chip" + std::to_string(c) + ".ici." + d, "bytes").value_or(0);
      total += b;
      used += b > 0 ? 1 : 0;
    }
  }
  EXPECT_EQ(used, 2 * n);
  EXPECT_EQ(total, static_cast<uint64_t>(2 * n) * 2 * (n - 1) * (S / 2) / n);
}

// With dimension rings (the default) the same all-reduce runs one dimension at a time: reduce-
// scatter along x, then y (on the half x left), then z (a quarter), then all-gather back. Each
// phase is the ring formula of its own ring and volume: sum over d of 2(n_d-1)/n_d * V_d / B +
// 2(n_d-1) * hop, V_d = S / (n_0 ... n_{d-1}); the bytes are the one ring's (2(1 - 1/n) S per
// core), the hops 2 x 3 instead of 2 x 7.
TEST(ClosedFormTest, DimensionRingsAllReduceOnA3DTorusRunsEachDimensionInTurn) {
  const int n = 8;
  config::ChipConfig chip = TinyChip(n);
  chip.system.topology = config::Topology::kTorus3D;
  chip.system.shape = {2, 2, 2};
  const uint64_t count = 64 << 10;
  const uint64_t S = count * 4;
  auto r = RingAllReduce(chip, n, count, 5);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double formula = RingFormula(2, S) + RingFormula(2, S / 2) + RingFormula(2, S / 4);
  const double got = static_cast<double>(r->cycles.value());
  EXPECT_NEAR(got / formula, 1.0, 0.05) << got << " vs " << formula;
  EXPECT_LT(got, RingFormula(n, S));
  uint64_t total = 0;
  for (int c = 0; c < n; ++c) {
    for (const char* d : {"x+", "x-", "y+", "y-", "z+", "z-"}) {
      total += r->stats->Get("chip" + std::to_string(c) + ".ici." + d, "bytes").value_or(0);
    }
  }
  EXPECT_EQ(total, static_cast<uint64_t>(n) * 2 * (n - 1) * S / n);
}

// The cores of a chip ride the first dimension's ring: 2 cores on each chip of a 2 x 2 torus run
// a 4-core ring along x (on-chip, ICI, on-chip, ICI; V = S), then 2-rings along y on the quarter
// each core holds (V = S / 4), with the interpreter's values (checked by RunAndCheck). Along y both
// cores of a chip run a ring over the same links, so that phase sees half a link's bandwidth: with
// few chips and short hops the one 8-core ring (14 steps) is as fast or faster; the dimension rings
// win on hops (8 steps here; 2 x 45 instead of 2 x 4095 at 4,096 cores).
TEST(ClosedFormTest, DimensionRingsCarryTheCoresOfAChipOnTheFirstRing) {
  config::ChipConfig chip = TinyChip(4, 2);
  chip.system.topology = config::Topology::kTorus2D;
  chip.system.shape = {2, 2};
  const uint64_t count = 16 << 10;
  const uint64_t S = count * 4;
  auto r = RingAllReduce(chip, 8, count, 9);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double y_phase = 2.0 * 1 / 2 * static_cast<double>(S / 4) / 16.0 + 2.0 * 50;
  const double formula = RingFormula(4, S) + y_phase;
  const double got = static_cast<double>(r->cycles.value());
  EXPECT_NEAR(got / formula, 1.0, 0.05) << got << " vs " << formula;
  auto odd = RingAllReduce(chip, 8, count + 3, 9);  // chunks of unequal sizes
  ASSERT_TRUE(odd.ok()) << odd.status().message();
}

}  // namespace
}  // namespace tpusim::sim
