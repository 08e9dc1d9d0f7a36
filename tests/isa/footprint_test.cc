// Memory footprints (isa/footprint.h): a two-level strided access keeps its rows, so the scoreboard
// sees that two MXUs' pops into interleaved columns of one result block are independent. The exact
// overlap test is compared with a byte-by-byte enumeration on random regions.
#include "isa/footprint.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "isa/instruction.h"

namespace tpusim::isa {
namespace {

std::set<uint64_t> Bytes(uint64_t addr, uint64_t rows, uint64_t width, uint64_t stride) {
  std::set<uint64_t> b;
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < std::max<uint64_t>(width, 1); ++c) b.insert(addr + r * stride + c);
  }
  return b;
}

TEST(FootprintTest, StridedOverlapMatchesEnumeration) {
  std::mt19937_64 rng(7);
  auto pick = [&](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  int overlapping = 0, disjoint = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const uint64_t stride = pick(1, 24);
    // Region a: strided; region b: the same stride, another stride, or contiguous.
    const uint64_t ra = pick(1, 6), wa = pick(1, 24), aa = pick(0, 64);
    const int kind = static_cast<int>(pick(0, 2));
    const uint64_t sb = kind == 0 ? stride : kind == 1 ? pick(1, 24) : 0;
    const uint64_t rb = kind == 2 ? 1 : pick(1, 6), wb = pick(1, 40), ab = pick(0, 64);
    const Region a = StridedRegion(MemSpace::kVmem, 0, aa, ra, wa, stride);
    const Region b = kind == 2 ? VmemRegion(0, ab, wb) : StridedRegion(MemSpace::kVmem, 0, ab, rb, wb, sb);
    const std::set<uint64_t> A = Bytes(aa, ra, wa, stride);
    const std::set<uint64_t> B = kind == 2 ? Bytes(ab, 1, wb, 1) : Bytes(ab, rb, wb, sb);
    bool truth = false;
    for (uint64_t x : A) truth = truth || B.count(x) > 0;
    // Never misses a real overlap; exact for equal strides and against contiguous regions.
    if (truth) {
      EXPECT_TRUE(a.Overlaps(b) && b.Overlaps(a)) << trial;
    }
    if (kind != 1) {
      EXPECT_EQ(a.Overlaps(b), truth) << trial;
    }
    (truth ? overlapping : disjoint)++;
  }
  EXPECT_GT(overlapping, 1000);
  EXPECT_GT(disjoint, 1000);
}

TEST(FootprintTest, PopsIntoInterleavedColumnsOfOneBlockAreIndependent) {
  // Two MXUs pop the columns [0, 128) and [128, 168) of a [1024, 168] bf16 block.
  Instruction p0 = op::MxuPop{.mxu = 0, .acc = 0, .m = 1024, .n = 128,
                                                .dst = 0x1000, .stride = 168,
                                                .dtype = DType::kBF16}
                       .ToInstruction();
  Instruction p1 = op::MxuPop{.mxu = 1, .acc = 0, .m = 1024, .n = 40,
                                                .dst = 0x1000 + 128 * 2, .stride = 168,
                                                .dtype = DType::kBF16}
                       .ToInstruction();
  const Footprint f0 = MxuFootprint(p0, 0), f1 = MxuFootprint(p1, 0);
  EXPECT_FALSE(f0.writes[0].Overlaps(f1.writes[0]));
  // A store of the whole block reads both.
  EXPECT_TRUE(VmemRegion(0, 0x1000, 1024 * 168 * 2).Overlaps(f0.writes[0]));
  EXPECT_TRUE(VmemRegion(0, 0x1000, 1024 * 168 * 2).Overlaps(f1.writes[0]));
  // The same columns of the next row block do overlap a pop of the rows below.
  Instruction p2 = op::MxuPop{.mxu = 1, .acc = 0, .m = 8, .n = 40,
                                                .dst = 0x1000 + (1023 * 168 + 128) * 2,
                                                .stride = 168, .dtype = DType::kBF16}
                       .ToInstruction();
  EXPECT_TRUE(MxuFootprint(p2, 0).writes[0].Overlaps(f1.writes[0]));
  EXPECT_FALSE(MxuFootprint(p2, 0).writes[0].Overlaps(f0.writes[0]));
}

TEST(FootprintTest, DmaBytesMovedSaturatesInsteadOfWrapping) {
  // Every count at its field's largest value (opcodes.def: n0 32 bits, n1 and n2 24, count 24,
  // strides 40): the products and extents reach past 2^64.
  constexpr uint64_t kN0 = (uint64_t{1} << 32) - 1, kN12 = (uint64_t{1} << 24) - 1;
  constexpr uint64_t kStride = (uint64_t{1} << 40) - 1;
  auto dma = [](uint64_t elem_bytes, uint64_t n0, uint64_t n1, uint64_t n2) {
    return op::DmaHbmToVmem{.flag = 0, .src = 0, .dst = 0, .elem_bytes = elem_bytes, .n0 = n0,
                            .n1 = n1, .n2 = n2}
        .ToInstruction();
  };
  // Exact while the product fits in 64 bits.
  EXPECT_EQ(DmaBytesMoved(dma(4, 3, 5, 7)), uint64_t{420});
  EXPECT_EQ(DmaBytesMoved(dma(8, kN0, kN12, 1)), 8 * kN0 * kN12);
  // 4 * 2^32 * 2^24 * 2^8 is 2^66: plain uint64 arithmetic wraps it to a small number (a
  // descriptor with zero strides may ask for it and still pass the verifier's range checks).
  EXPECT_EQ(DmaBytesMoved(dma(4, kN0, kN12, 256)), UINT64_MAX);
  EXPECT_EQ(DmaBytesMoved(dma(8, kN0, kN12, kN12)), UINT64_MAX);
  EXPECT_EQ(DmaHbmBytes(dma(8, kN0, kN12, kN12)), UINT64_MAX);
  // dma.gather's `count` slices multiply too.
  auto gather = [](uint64_t n1, uint64_t count) {
    return op::DmaGather{.flag = 0, .src = 0, .dst = 0, .elem_bytes = 4, .n0 = uint64_t{1} << 31,
                         .n1 = n1, .n2 = 1, .count = count}
        .ToInstruction();
  };
  EXPECT_EQ(DmaBytesMoved(gather(1, uint64_t{1} << 23)), uint64_t{1} << 56);
  EXPECT_EQ(DmaBytesMoved(gather(uint64_t{1} << 20, uint64_t{1} << 23)), UINT64_MAX);
  // Elements (the interpreter's work budget): the same products without elem_bytes.
  EXPECT_EQ(DmaElementsMoved(dma(4, 3, 5, 7)), uint64_t{105});
  EXPECT_EQ(DmaElementsMoved(gather(1, uint64_t{1} << 23)), uint64_t{1} << 54);
  EXPECT_EQ(DmaElementsMoved(dma(8, kN0, kN12, kN12)), UINT64_MAX);
  // The extents: (n2-1)*s2 + (n1-1)*s1 past 2^64 saturates as well.
  const Instruction wide = op::DmaHbmToVmem{.flag = 0, .src = 0, .dst = 0, .elem_bytes = 4,
                                            .n0 = 1, .n1 = kN12, .n2 = kN12, .src_s1 = kStride,
                                            .src_s2 = kStride, .dst_s1 = 4, .dst_s2 = 4 * kN12}
                               .ToInstruction();
  EXPECT_EQ(DmaSourceExtent(wide), UINT64_MAX);
  EXPECT_EQ(DmaDestinationExtent(wide), (kN12 - 1) * 4 * kN12 + (kN12 - 1) * 4 + 4);
}

}  // namespace
}  // namespace tpusim::isa
