// Each generation's config reproduces its published per-chip peak within 2 % (DESIGN.md §2, issue
// 2). Published figures: ../shared/reference/tpu-specs.md §1.0.
#include "config/derived.h"

#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace tpusim::config {
namespace {

struct PeakCase {
  const char* config;
  double published_per_chip;  // bf16 FLOP/s, or int8 OP/s for TPU v1
  bool int8;
};

class PublishedPeak : public ::testing::TestWithParam<PeakCase> {};

TEST_P(PublishedPeak, WithinTwoPercent) {
  const PeakCase& p = GetParam();
  auto c = LoadChipConfig(p.config);
  ASSERT_TRUE(c.ok()) << c.status().message();
  DerivedFigures d = Derive(*c);
  double got = p.int8 ? d.peak_int8_ops_per_s_per_chip : d.peak_bf16_flops_per_s_per_chip;
  EXPECT_NEAR(got / p.published_per_chip, 1.0, 0.02) << p.config << ": " << got;
}

INSTANTIATE_TEST_SUITE_P(Generations, PublishedPeak,
                         ::testing::Values(PeakCase{"tpu-v1", 92e12, true},     // S1 Table 2
                                           PeakCase{"tpu-v2", 46e12, false},    // S6 4.6e13
                                           PeakCase{"tpu-v3", 123e12, false},   // S5
                                           PeakCase{"tpu-v4", 275e12, false},   // S5
                                           PeakCase{"tpu-v4", 275e12, true},    // S5 "bf16 or int8"
                                           PeakCase{"tpu-v5e", 197e12, false},  // S5
                                           PeakCase{"tpu-v5e", 393e12, true},   // S5
                                           PeakCase{"tpu-v5p", 459e12, false},  // S5
                                           PeakCase{"tpu-v5p", 918e12, true},   // S6, S9
                                           PeakCase{"tpu-v6e", 918e12, false},  // S5
                                           PeakCase{"tpu-v6e", 1836e12, true}));  // S5

TEST(Derived, V4FiguresByHand) {
  auto c = LoadChipConfig("tpu-v4-8");
  ASSERT_TRUE(c.ok()) << c.status().message();
  DerivedFigures d = Derive(*c);
  // 4 MXUs * 128 * 128 * 2 FLOP * 1.05e9 Hz = 137.6256e12 per core; x2 cores; x4 chips.
  EXPECT_DOUBLE_EQ(d.peak_bf16_flops_per_s_per_core, 137.6256e12);
  EXPECT_DOUBLE_EQ(d.peak_bf16_flops_per_s_per_chip, 275.2512e12);
  EXPECT_DOUBLE_EQ(d.peak_bf16_flops_per_s, 4 * 275.2512e12);
  // 1.2e12 B/s / 1.05e9 Hz = 1142.857 bytes/cycle; ridge 275.2512e12 / 1.2e12 = 229.376 FLOP/byte.
  EXPECT_NEAR(d.hbm_bytes_per_cycle_per_chip, 1142.857, 1e-3);
  EXPECT_NEAR(d.ridge_flops_per_byte, 229.376, 1e-9);
  // 6 links * 45 GB/s * 2 directions.
  EXPECT_DOUBLE_EQ(d.ici_bandwidth_bytes_per_s_per_chip, 540e9);
  EXPECT_EQ(d.total_cores, 8);
}

TEST(Derived, JsonHasTheDocumentedKeys) {
  auto c = LoadChipConfig("tpu-v1");
  ASSERT_TRUE(c.ok());
  Json j = DerivedToJson(*c, Derive(*c));
  for (const char* key :
       {"name", "chips", "tensorcores_per_chip", "clock_hz", "peak_flops_per_s_per_chip",
        "peak_flops_per_s", "hbm_bandwidth_bytes_per_s_per_chip", "ridge_flops_per_byte"}) {
    EXPECT_NE(j.Find(key), nullptr) << key;
  }
  // TPU v1 has no bf16 path: its headline peak is int8, 65536 * 2 * 700e6 = 91.75e12.
  EXPECT_EQ(j.Find("peak_dtype")->Dump(0), "\"int8\"");
  EXPECT_EQ(j.Find("peak_flops_per_s_per_chip")->Dump(0), "91750400000000");
}

}  // namespace
}  // namespace tpusim::config
