// Helpers for simulator tests: tiny chip configs built in code, assembling programs, data segments.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "config/chip_config.h"
#include "isa/assembler.h"
#include "isa/numerics.h"
#include "isa/program.h"

namespace tpusim::sim::testing {

/// configs/tiny.yaml as a struct: 1 GHz, one core with one 8x8 MXU (double-buffered weights, 1
/// cycle per weight row, pop latency 2, 256 accumulator rows), VPU 8x128 (ALU 2 cycles), 1 MiB VMEM
/// at 512 B/cycle, 2 DMA engines (issue 1 cycle), HBM 64 B/cycle with 20 cycles latency, ICI 16
/// B/cycle per link direction with 50 cycles per hop. `chips` > 1 puts the chips on a ring.
inline config::ChipConfig TinyChip(int chips = 1, int cores_per_chip = 1) {
  config::ChipConfig c;
  c.name = "tiny";
  c.tensorcores = cores_per_chip;
  c.clock_hz = 1e9;
  c.host_bandwidth_bytes_per_s = 8e9;
  c.hbm.capacity_bytes = 64 << 20;
  c.hbm.bandwidth_bytes_per_s = 64e9;
  c.hbm.latency_cycles = 20;
  c.hbm.shared_by_cores = true;
  c.core.mxu.count = 1;
  c.core.mxu.rows = 8;
  c.core.mxu.cols = 8;
  c.core.mxu.bf16 = true;
  c.core.mxu.int8_rate = 1;
  c.core.mxu.weight_buffers = 2;
  c.core.mxu.weight_load_cycles_per_row = 1;
  c.core.mxu.pop_latency_cycles = 2;
  c.core.mxu.accumulator_rows = 256;
  c.core.vmem_bytes = 1 << 20;
  c.core.vmem_bytes_per_cycle = 512;
  c.core.smem_bytes = 16 << 10;
  c.core.dma_engines = 2;
  c.core.dma_issue_cycles = 1;
  c.system.chips = chips;
  c.system.topology = chips > 1 ? config::Topology::kRing : config::Topology::kSingle;
  if (chips > 1) c.system.shape = {chips};
  c.system.ici_links_per_chip = 2;
  c.system.ici_link_bandwidth_bytes_per_s = 16e9;
  c.system.ici_hop_latency_cycles = 50;
  return c;
}

inline isa::Program Asm(const std::string& text) {
  auto p = isa::Assemble(text, "test.tasm");
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *p : isa::Program{};
}

/// A data segment of f32 values (bf16-exact when `bf16_exact`).
inline isa::DataSegment F32Segment(isa::MemSpace space, int core, uint64_t addr,
                                   const std::vector<float>& v) {
  isa::DataSegment d;
  d.space = space;
  d.core = core;
  d.address = addr;
  d.bytes.resize(v.size() * 4);
  std::memcpy(d.bytes.data(), v.data(), d.bytes.size());
  return d;
}

inline isa::DataSegment Bf16Segment(isa::MemSpace space, int core, uint64_t addr,
                                    const std::vector<float>& v) {
  isa::DataSegment d;
  d.space = space;
  d.core = core;
  d.address = addr;
  d.bytes.resize(v.size() * 2);
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t b = isa::F32ToBf16Bits(v[i]);
    std::memcpy(d.bytes.data() + 2 * i, &b, 2);
  }
  return d;
}

inline std::vector<float> RandomFloats(std::mt19937_64& rng, size_t n, float lo = -2,
                                       float hi = 2) {
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace tpusim::sim::testing
