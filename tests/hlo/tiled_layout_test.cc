// TpuTile / TiledByteSize: the tiles XLA's TPU layout assignment picks and the bytes an array
// takes in them, against the layouts and byte counts of the measured TPU v3 profiles
// (../shared/calibration: its README gives bf16[300,300,3,16] -> T(4,128)(2,1)).
#include "hlo/tiled_layout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/file_util.h"
#include "hlo/computation.h"
#include "hlo/parser.h"

namespace tpusim::hlo {
namespace {

constexpr TileRule kTpu{.lanes = 128, .sublanes = 8, .min_tile_bytes = 1024};

Shape Parse(const std::string& text) {
  StatusOr<Shape> s = ParseShape(text);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? *s : Shape();
}

std::vector<int64_t> TileOf(const std::string& text) { return TpuTile(Parse(text), kTpu); }

TEST(TiledLayoutTest, SecondMinorTileGrowsToEightSublanesFromOneKibibyte) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(TileOf("f32[1,300]{1,0}"), (V{2, 128}));  // 2 x 128 x 4 B = the 1 KiB minimum
  EXPECT_EQ(TileOf("f32[2,300]{1,0}"), (V{2, 128}));
  EXPECT_EQ(TileOf("f32[3,300]{1,0}"), (V{4, 128}));
  EXPECT_EQ(TileOf("f32[5,300]{1,0}"), (V{8, 128}));
  EXPECT_EQ(TileOf("f32[4096,300]{1,0}"), (V{8, 128}));
  EXPECT_EQ(TileOf("bf16[300,300,3,16]{3,2,1,0}"), (V{4, 128}));  // the README's example
  EXPECT_EQ(TileOf("bf16[7,50]{1,0}"), (V{8, 128}));
  EXPECT_EQ(TileOf("pred[1,50]{1,0}"), (V{8, 128}));  // 8 x 128 x 1 B = 1 KiB already
  EXPECT_EQ(TileOf("s8[3,50]{1,0}"), (V{8, 128}));
}

TEST(TiledLayoutTest, TheLayoutDecidesWhichDimensionsAreMinor) {
  // b01f with f minor and b second-minor: [16,150,150,64]{3,0,2,1} -> 64 lanes, 16 sublanes.
  const Shape s = Parse("bf16[16,150,150,64]{3,0,2,1}");
  EXPECT_EQ(TpuTile(s, kTpu), (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(TiledByteSize(s, TpuTile(s, kTpu)), int64_t{150} * 150 * 16 * 128 * 2);
  // The same array with the batch minor pads 16 -> 128 lanes and 64 stays on the sublanes.
  const Shape t = Parse("bf16[16,150,150,64]{0,3,2,1}");
  EXPECT_EQ(TiledByteSize(t, TpuTile(t, kTpu)), int64_t{150} * 150 * 64 * 128 * 2);
}

// Size-1 dimensions go major, as XLA's TPU layout assignment puts them (the profiles'
// f32[4,128,1,1]{1,0,3,2:T(4,128)}), unless the dump's layout has a tile or only one dimension is
// larger than 1 (bf16[8000,1]{1,0:T(8,128)(2,1)}).
TEST(TiledLayoutTest, SizeOneDimensionsAreNotTiled) {
  const Shape s = Parse("f32[10240,1024,1,1]{3,2,1,0}");
  EXPECT_EQ(TpuTile(s, kTpu), (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(TiledByteSize(s, TpuTile(s, kTpu)), int64_t{10240} * 1024 * 4);
  const Shape p = Parse("f32[4,128,1,1]{3,2,1,0}");
  EXPECT_EQ(TpuTile(p, kTpu), (std::vector<int64_t>{4, 128}));
  EXPECT_EQ(TiledByteSize(p, TpuTile(p, kTpu)), 4 * 128 * 4);
  const Shape m = Parse("f32[6,1,300]{2,1,0}");  // a size-1 dimension in the middle
  EXPECT_EQ(TiledByteSize(m, TpuTile(m, kTpu)), 8 * 384 * 4);
  const Shape one = Parse("bf16[8000,1]{1,0}");
  EXPECT_EQ(TiledByteSize(one, TpuTile(one, kTpu)), int64_t{8000} * 128 * 2);
  const Shape kept = Parse("f32[4,128,1,1]{3,2,1,0:T(2,128)}");
  EXPECT_EQ(TiledByteSize(kept, TpuTile(kept, kTpu)), int64_t{4} * 128 * 2 * 128 * 4);
}

TEST(TiledLayoutTest, OneDimensionalArraysAndScalarsTakeOneKibibyteAtLeast) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(TileOf("f32[]"), (V{256}));
  EXPECT_EQ(TileOf("f32[200]{0}"), (V{256}));
  EXPECT_EQ(TileOf("f32[320]{0}"), (V{512}));
  EXPECT_EQ(TileOf("s32[640]{0}"), (V{1024}));
  EXPECT_EQ(TileOf("f32[100000]{0}"), (V{1024}));
  EXPECT_EQ(TileOf("bf16[3]{0}"), (V{512}));
  EXPECT_EQ(TileOf("pred[16]{0}"), (V{1024}));
  const Shape scalar = Parse("f32[]");
  EXPECT_EQ(TiledByteSize(scalar, TpuTile(scalar, kTpu)), 1024);
  const Shape v = Parse("f32[1100]{0}");
  EXPECT_EQ(TiledByteSize(v, TpuTile(v, kTpu)), 2048 * 4);
}

TEST(TiledLayoutTest, ATileInTheDumpIsKeptAndNoRuleMeansUntiled) {
  const Shape s = Parse("f32[3,5]{1,0:T(8,128)}");
  EXPECT_EQ(TpuTile(s, kTpu), (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(TiledByteSize(s, TpuTile(s, kTpu)), 8 * 128 * 4);
  const Shape u = Parse("f32[3,5]{1,0}");
  EXPECT_TRUE(TpuTile(u, TileRule{}).empty());
  EXPECT_EQ(TiledByteSize(u, {}), 60);
  EXPECT_EQ(TiledByteSize(Parse("f32[0,5]{1,0}"), {8, 128}), 0);
}

TEST(TiledLayoutTest, HugeShapesSaturateInsteadOfWrapping) {
  const Shape s = Parse("f32[3037000500,3037000500]{1,0}");
  EXPECT_EQ(TiledByteSize(s, TpuTile(s, kTpu)), std::numeric_limits<int64_t>::max());
}

// Every probe of the calibration set: the tile-padded sizes of its parameters and outputs add up
// to the bytes the profiler measured (manifest key `tiled_bytes`), with the probe's own layouts.
TEST(TiledLayoutTest, ProbesMoveTheirProfiledTiledBytes) {
  const std::filesystem::path dir =
      std::filesystem::path("..") / "shared" / "calibration" / "probes";
  if (!std::filesystem::exists(dir / "manifest.json")) {
    GTEST_SKIP() << "../shared/calibration/probes not present; calibration tiles not checked";
  }
  std::ifstream in(dir / "manifest.json");
  const nlohmann::json manifest = nlohmann::json::parse(in);
  ASSERT_GE(manifest.size(), 1u);
  int exact = 0;
  for (const nlohmann::json& probe : manifest) {
    const std::string file = (dir / probe.at("file").get<std::string>()).string();
    SCOPED_TRACE(file);
    StatusOr<std::string> text = ReadFile(file);
    ASSERT_TRUE(text.ok());
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(*text, file);
    ASSERT_TRUE(m.ok()) << m.status().message();
    const HloComputation* entry = (*m)->entry_computation();
    int64_t total = 0;
    for (const HloInstruction* p : entry->parameter_instructions()) {
      total += TiledByteSize(p->shape(), TpuTile(p->shape(), kTpu));
    }
    for (const Shape* leaf : entry->root_instruction()->shape().Leaves()) {
      total += TiledByteSize(*leaf, TpuTile(*leaf, kTpu));
    }
    const int64_t measured = probe.at("tiled_bytes").get<int64_t>();
    exact += total == measured ? 1 : 0;
    // A few probes differ by one scalar's tile (T(256) vs T(1024): < 5 KB of > 100 MB).
    EXPECT_LT(std::abs(static_cast<double>(total - measured)), 1e-5 * measured)
        << total << " bytes vs " << measured << " measured";
  }
  EXPECT_GT(exact, 0);
}

// A copy moves data only between two stated, different layouts (order or tiles); between equal
// layouts, or where one side states none (before layout assignment), it is a no-op.
TEST(TiledLayoutTest, CopyChangesLayoutOnlyBetweenTwoDifferentStatedLayouts) {
  EXPECT_TRUE(CopyChangesLayout(Parse("bf16[16,300,300,3]{3,2,1,0:T(8,128)(2,1)}"),
                                Parse("bf16[16,300,300,3]{0,3,2,1:T(4,128)(2,1)}")));
  EXPECT_TRUE(CopyChangesLayout(Parse("f32[8,256]{1,0:T(8,128)}"), Parse("f32[8,256]{1,0:T(2,128)}")));
  EXPECT_TRUE(CopyChangesLayout(Parse("f32[4,5]{0,1}"), Parse("f32[4,5]{1,0}")));
  EXPECT_FALSE(CopyChangesLayout(Parse("f32[4,5]{1,0}"), Parse("f32[4,5]{1,0}")));
  EXPECT_FALSE(CopyChangesLayout(Parse("f32[4,5]{1,0:T(8,128)}"), Parse("f32[4,5]{1,0}")));
  EXPECT_FALSE(CopyChangesLayout(Parse("f32[4,5]"), Parse("f32[4,5]{0,1}")));
  EXPECT_FALSE(CopyChangesLayout(Parse("(f32[4,5]{0,1})"), Parse("(f32[4,5]{1,0})")));
}

}  // namespace
}  // namespace tpusim::hlo
