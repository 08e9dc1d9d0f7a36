// config::SliceForCores: a single-chip config grows into the smallest power-of-two slice of its
// generation that holds the module's devices; explicit slices and chips without ICI do not grow.
#include "config/slice.h"

#include <gtest/gtest.h>

#include "config/config_loader.h"

namespace tpusim::config {
namespace {

ChipConfig Load(const char* name) {
  auto c = LoadChipConfig(name);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return *c;
}

TEST(SliceForCores, FitsUnchanged) {
  ChipConfig v4 = Load("tpu-v4");
  std::string note = "stale";
  auto s = SliceForCores(v4, 2, &note);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->name, "tpu-v4");
  EXPECT_EQ(s->system.chips, 1);
  EXPECT_TRUE(note.empty());
}

struct SliceCase {
  const char* config;
  int64_t cores;
  int64_t chips;
  Topology topology;
  std::vector<int64_t> shape;
};

class Grows : public ::testing::TestWithParam<SliceCase> {};

TEST_P(Grows, SmallestPowerOfTwoTorus) {
  const SliceCase& p = GetParam();
  ChipConfig chip = Load(p.config);
  std::string note;
  auto s = SliceForCores(chip, p.cores, &note);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->system.chips, p.chips);
  EXPECT_EQ(s->system.topology, p.topology);
  EXPECT_EQ(s->system.shape, p.shape);
  EXPECT_GE(s->total_cores(), p.cores);
  // Everything but the system section is the chip's.
  EXPECT_EQ(s->tensorcores, chip.tensorcores);
  EXPECT_EQ(s->core.mxu.rows, chip.core.mxu.rows);
  EXPECT_EQ(s->system.ici_link_bandwidth_bytes_per_s, chip.system.ici_link_bandwidth_bytes_per_s);
  EXPECT_NE(note.find("slice of " + std::to_string(p.chips)), std::string::npos) << note;
}

INSTANTIATE_TEST_SUITE_P(
    Generations, Grows,
    ::testing::Values(
        // v4: 2 TensorCores per chip, 6 ICI links → 3D torus; 8 cores = 4 chips = v4-8's 2x2x1.
        SliceCase{"tpu-v4", 3, 2, Topology::kTorus3D, {2, 1, 1}},
        SliceCase{"tpu-v4", 8, 4, Topology::kTorus3D, {2, 2, 1}},
        SliceCase{"tpu-v4", 16, 8, Topology::kTorus3D, {2, 2, 2}},
        SliceCase{"tpu-v4", 32, 16, Topology::kTorus3D, {4, 2, 2}},
        // v5e: 1 TensorCore per chip, 4 links → 2D torus; 8 cores = v5litepod-8 (2x4).
        SliceCase{"tpu-v5e", 2, 2, Topology::kTorus2D, {2, 1}},
        SliceCase{"tpu-v5e", 5, 8, Topology::kTorus2D, {4, 2}},
        SliceCase{"tpu-v5e", 256, 256, Topology::kTorus2D, {16, 16}}));

TEST(SliceForCores, ExplicitSliceTooSmallIsAnError) {
  std::string note;
  auto s = SliceForCores(Load("tpu-v4-8"), 16, &note);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("16 devices (replicas x partitions) need 16 TensorCores but "
                                      "config 'tpu-v4-8' has 8"),
            std::string::npos)
      << s.status().message();
}

TEST(SliceForCores, ChipWithoutIciIsAnError) {
  std::string note;
  auto s = SliceForCores(Load("tpu-v1"), 2, &note);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("links_per_chip is 0"), std::string::npos)
      << s.status().message();
}

TEST(SliceForCores, LargerThanAPodIsAnError) {
  std::string note;
  auto s = SliceForCores(Load("tpu-v5e"), 4 * kMaxSliceChips + 1, &note);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("more than the largest"), std::string::npos);
}

TEST(SliceJson, SaysWhichSliceRanAndWhetherItWasDerived) {
  std::string note;
  auto one = SliceForCores(Load("tpu-v4"), 2, &note);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(SliceJson(*one, note).Dump(0),
            R"({"chips":1,"tensorcores_per_chip":2,"topology":"single","shape":[],)"
            R"("derived":false})");
  auto grown = SliceForCores(Load("tpu-v5e"), 8, &note);
  ASSERT_TRUE(grown.ok());
  const Json j = SliceJson(*grown, note);
  EXPECT_EQ(j.Find("chips")->Dump(0), "8");
  EXPECT_EQ(j.Find("shape")->Dump(0), "[4,2]");
  EXPECT_EQ(j.Find("topology")->Dump(0), "\"torus2d\"");
  EXPECT_EQ(j.Find("derived")->Dump(0), "true");
  ASSERT_NE(j.Find("note"), nullptr);
  EXPECT_EQ(j.Find("note")->Dump(0), Json(note).Dump(0));
  EXPECT_FALSE(note.empty());
}

}  // namespace
}  // namespace tpusim::config
