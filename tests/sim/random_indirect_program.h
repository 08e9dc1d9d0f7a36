// Random programs with indirect DMAs (dma.gather / dma.scatter) mixed into the random programs of
// random_program.h: index lists come from a region of small s32 values (in range, negative and past
// the bound) or from the random float slots (bit patterns that are huge or negative: clamped or
// skipped), and are themselves rewritten by vpu.fill / vpu.iota between uses, so the scoreboard's
// handling of an indirect DMA's index, VMEM and data-dependent HBM regions is exercised.
#pragma once

#include <random>
#include <vector>

#include "isa/instruction.h"
#include "isa/program.h"
#include "tests/sim/random_program.h"

namespace tpusim::sim::testing {

/// VMEM byte address of the index region (beyond the 16 random slots and the remote-DMA slots).
inline constexpr uint64_t kIndexRegion = 24 * kSlot;

inline isa::Instruction RandomIndirectDma(std::mt19937_64& rng, int core) {
  namespace op = isa::op;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  // A box of 2 rows x 16 f32 (64-byte runs 128 bytes apart in HBM), slices 256 bytes apart.
  const uint64_t hbm_base = static_cast<uint64_t>(core * kHbmSlots) * kSlot;
  const uint64_t vmem = static_cast<uint64_t>(pick(kVmemSlots)) * kSlot;
  const uint64_t idx = pick(3) ? kIndexRegion + static_cast<uint64_t>(pick(16)) * 64
                               : static_cast<uint64_t>(pick(kVmemSlots)) * kSlot;
  const uint64_t count = static_cast<uint64_t>(1 + pick(8));
  const uint64_t bound = static_cast<uint64_t>(1 + pick(100));  // bound*256 + 192 <= 32 KiB
  auto fill = [&](auto& d) {
    d.flag = 7;
    d.elem_bytes = 4;
    d.n0 = 16;
    d.n1 = 2;
    d.n2 = 1;
    d.idx = idx;
    d.count = count;
    d.idx_scale = 256;
    d.bound = bound;
    d.slice_stride = 128 + 64 * static_cast<uint64_t>(pick(2));
  };
  if (pick(2)) {
    op::DmaGather g{};
    fill(g);
    g.src = hbm_base;
    g.dst = vmem;
    g.src_s1 = 128;
    g.dst_s1 = 64;
    return g.ToInstruction();
  }
  op::DmaScatter s{};
  fill(s);
  s.src = vmem;
  s.dst = hbm_base;
  s.src_s1 = 64;
  s.dst_s1 = 128;
  s.combine = pick(2) != 0;
  s.op = static_cast<isa::ReduceOp>(pick(3));
  s.dtype = isa::DType::kF32;
  return s.ToInstruction();
}

/// RandomProgram(seed, num_cores, length) with about `indirect` indirect DMAs and index-list
/// rewrites inserted at random points of each core's code (before its closing
/// barrier/collective/halt).
inline isa::Program RandomIndirectProgram(uint64_t seed, int num_cores, int length, int indirect) {
  isa::Program p = RandomProgram(seed, num_cores, length);
  std::mt19937_64 rng(seed * 7919 + 1);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  for (int c = 0; c < num_cores; ++c) {
    auto& code = p.cores[static_cast<size_t>(c)].instructions;
    const int tail = num_cores > 1 ? 3 : 1;  // barrier + all-reduce + halt, or halt
    for (int k = 0; k < indirect; ++k) {
      const int body = static_cast<int>(code.size()) - tail;
      const auto at = code.begin() + pick(body + 1);
      if (pick(4) == 0) {
        const uint64_t dst = kIndexRegion + static_cast<uint64_t>(pick(16)) * 64;
        if (pick(2)) {
          code.insert(at, isa::op::VpuIota{.dtype = isa::DType::kS32,
                                           .dst = dst,
                                           .rows = 1,
                                           .cols = static_cast<uint64_t>(1 + pick(16)),
                                           .axis = isa::ReduceAxis::kLanes}
                              .ToInstruction());
        } else {
          code.insert(at, isa::op::VpuFill{.dtype = isa::DType::kS32,
                                           .dst = dst,
                                           .count = static_cast<uint64_t>(1 + pick(16)),
                                           .value = static_cast<uint32_t>(pick(120) - 10)}
                              .ToInstruction());
        }
      } else {
        code.insert(at, RandomIndirectDma(rng, c));
      }
    }
    // The index region: small s32 values, some negative and some past any bound.
    isa::DataSegment seg;
    seg.space = isa::MemSpace::kVmem;
    seg.core = c;
    seg.address = kIndexRegion;
    std::vector<int32_t> v(16 * 16 + 16);
    for (int32_t& x : v) x = pick(10) == 0 ? pick(300) - 100 : pick(60) - 4;
    seg.bytes.resize(v.size() * 4);
    std::memcpy(seg.bytes.data(), v.data(), seg.bytes.size());
    p.data.push_back(std::move(seg));
  }
  return p;
}

}  // namespace tpusim::sim::testing
