// Random legal programs for the simulator-vs-interpreter equivalence tests: DMAs, VPU/XLU ops, MXU
// load/matmul/pop sequences, sync flags, and (multi-core) remote DMAs, barriers and all-reduces,
// over fixed 4 KiB slots of VMEM and HBM filled with random values. Each instruction is legal on
// its own, so the interpreter runs the program to completion; hazards between instructions are
// everywhere (slots are reused), which is what the simulator's scoreboard must get right.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "isa/program.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim::testing {

inline constexpr uint64_t kSlot = 4096;
inline constexpr int kVmemSlots = 16;
inline constexpr int kHbmSlots = 8;

inline void AddRandomCoreCode(std::mt19937_64& rng, int core, int num_cores, int length,
                              isa::CoreProgram& out) {
  namespace op = isa::op;
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  auto vslot = [&]() { return static_cast<uint64_t>(pick(kVmemSlots)) * kSlot; };
  auto hslot = [&]() {
    // Each core of a chip gets its own HBM slots (the HBM is shared by the chip's cores).
    return static_cast<uint64_t>(core * kHbmSlots + pick(kHbmSlots)) * kSlot;
  };
  std::vector<int> outstanding(4, 0);
  bool loaded = false, active = false;
  uint64_t shadow_k = 8, shadow_n = 8, active_k = 8, active_n = 8;
  for (int i = 0; i < length; ++i) {
    switch (pick(12)) {
      case 0:
      case 1: {
        op::DmaHbmToVmem d{};
        d.flag = static_cast<uint64_t>(pick(4));
        d.src = hslot();
        d.dst = vslot();
        d.elem_bytes = 4;
        d.n0 = 128;
        d.n1 = 8;
        d.n2 = 1;
        d.src_s1 = 512;
        d.dst_s1 = 512;
        out.instructions.push_back(d.ToInstruction());
        ++outstanding[d.flag];
        break;
      }
      case 2: {
        op::DmaVmemToHbm d{};
        d.flag = static_cast<uint64_t>(pick(4));
        d.src = vslot();
        d.dst = hslot();
        d.elem_bytes = 4;
        d.n0 = 1024;
        d.n1 = 1;
        d.n2 = 1;
        out.instructions.push_back(d.ToInstruction());
        ++outstanding[d.flag];
        break;
      }
      case 3: {
        op::VpuBinary b{};
        const isa::BinaryOp ops[] = {isa::BinaryOp::kAdd, isa::BinaryOp::kMul, isa::BinaryOp::kMax,
                                     isa::BinaryOp::kSub};
        b.op = ops[pick(4)];
        b.dtype = isa::DType::kF32;
        b.dst = vslot();
        b.a = vslot();
        b.b = vslot();
        b.rows = 8;
        b.cols = 128;
        b.a_bcast = isa::Broadcast::kNone;
        b.b_bcast = pick(2) ? isa::Broadcast::kRow : isa::Broadcast::kNone;
        out.instructions.push_back(b.ToInstruction());
        break;
      }
      case 4: {
        op::VpuUnary u{};
        const isa::UnaryOp ops[] = {isa::UnaryOp::kTanh, isa::UnaryOp::kNeg, isa::UnaryOp::kAbs,
                                    isa::UnaryOp::kLogistic};
        u.op = ops[pick(4)];
        u.dtype = isa::DType::kF32;
        u.dst = vslot();
        u.src = vslot();
        u.count = 1024;
        out.instructions.push_back(u.ToInstruction());
        break;
      }
      case 5: {
        if (pick(2)) {
          op::VpuReduce r{};
          r.op = isa::ReduceOp::kSum;
          r.axis = pick(2) ? isa::ReduceAxis::kLanes : isa::ReduceAxis::kSublanes;
          r.dtype = isa::DType::kF32;
          r.dst = vslot();
          r.src = vslot();
          r.rows = 8;
          r.cols = 128;
          out.instructions.push_back(r.ToInstruction());
        } else {
          op::XluTranspose t{};
          t.dtype = isa::DType::kF32;
          t.src = vslot();
          do {
            t.dst = vslot();
          } while (t.dst == t.src);
          t.rows = 8;
          t.cols = 128;
          out.instructions.push_back(t.ToInstruction());
        }
        break;
      }
      case 6:
      case 7: {
        op::MxuLoadWeights l{};
        l.mxu = 0;
        l.addr = vslot();
        l.k = pick(2) ? 8 : 4;
        l.n = pick(2) ? 8 : 4;
        l.stride = 8;
        l.dtype = isa::DType::kF32;
        l.part = static_cast<isa::PrecisionPart>(pick(3));
        l.transpose = pick(2) != 0;
        out.instructions.push_back(l.ToInstruction());
        loaded = true;
        shadow_k = l.k;
        shadow_n = l.n;
        break;
      }
      case 8:
      case 9: {
        if (!loaded) break;
        op::MxuMatmul m{};
        m.latch = !active || pick(2) != 0;
        if (m.latch) {
          active = true;
          active_k = shadow_k;
          active_n = shadow_n;
        }
        m.mxu = 0;
        m.lhs = vslot();
        m.stride = 8;
        m.m = static_cast<uint64_t>(1 + pick(64));
        m.k = active_k;
        m.n = active_n;
        m.dtype = isa::DType::kF32;
        m.part = static_cast<isa::PrecisionPart>(pick(3));
        m.acc = static_cast<uint64_t>(pick(3)) * 64;
        m.accumulate = pick(2) != 0;
        out.instructions.push_back(m.ToInstruction());
        break;
      }
      case 10: {
        op::MxuPop p{};
        p.mxu = 0;
        p.acc = static_cast<uint64_t>(pick(3)) * 64;
        p.m = static_cast<uint64_t>(1 + pick(64));
        p.n = 8;
        p.acc_dtype = isa::DType::kF32;
        p.dst = vslot();
        p.stride = 8;
        p.dtype = pick(2) ? isa::DType::kF32 : isa::DType::kBF16;
        p.act = pick(2) ? isa::Activation::kRelu : isa::Activation::kNone;
        out.instructions.push_back(p.ToInstruction());
        break;
      }
      case 11: {
        int f = pick(4);
        if (outstanding[f] > 0) {
          op::SyncWait w{};
          w.flag = static_cast<uint64_t>(f);
          w.value = static_cast<uint64_t>(1 + pick(outstanding[f]));
          outstanding[f] -= static_cast<int>(w.value);
          out.instructions.push_back(w.ToInstruction());
        } else if (num_cores > 1) {
          // A remote write to the next core's VMEM (it does not wait for it: the flag just counts).
          op::DmaVmemToRemote d{};
          d.flag = 5;
          d.src = vslot();
          d.dst = static_cast<uint64_t>(kVmemSlots) * kSlot + static_cast<uint64_t>(core) * kSlot;
          d.elem_bytes = 4;
          d.n0 = 1024;
          d.n1 = 1;
          d.n2 = 1;
          d.dst_core = static_cast<uint64_t>((core + 1) % num_cores);
          d.dst_space = isa::MemSpace::kVmem;
          d.dst_flag = 6;
          out.instructions.push_back(d.ToInstruction());
        } else {
          op::SyncSignal s{};
          s.flag = static_cast<uint64_t>(f);
          s.value = 1;
          out.instructions.push_back(s.ToInstruction());
          ++outstanding[f];
        }
        break;
      }
    }
  }
}

/// A random program on `num_cores` cores with random initial VMEM and HBM contents. With more than
/// one core, every core ends with a barrier, an all-reduce of one slot over all cores and a halt.
inline isa::Program RandomProgram(uint64_t seed, int num_cores, int length) {
  std::mt19937_64 rng(seed);
  isa::Program p;
  p.cores.resize(static_cast<size_t>(num_cores));
  for (int c = 0; c < num_cores; ++c) {
    AddRandomCoreCode(rng, c, num_cores, length, p.cores[c]);
    p.data.push_back(
        F32Segment(isa::MemSpace::kVmem, c, 0, RandomFloats(rng, kVmemSlots * kSlot / 4)));
  }
  for (int c = 0; c < num_cores; ++c) {
    p.data.push_back(F32Segment(isa::MemSpace::kHbm, c,
                                static_cast<uint64_t>(c) * kHbmSlots * kSlot,
                                RandomFloats(rng, kHbmSlots * kSlot / 4)));
  }
  if (num_cores > 1) {
    isa::ReplicaGroups g;
    g.groups.emplace_back();
    for (int c = 0; c < num_cores; ++c) g.groups[0].push_back(c);
    p.replica_groups.push_back(g);
    for (int c = 0; c < num_cores; ++c) {
      p.cores[c].instructions.push_back(isa::op::SyncBarrier{.group = 0}.ToInstruction());
      isa::op::IciAllReduce ar{};
      ar.op = isa::ReduceOp::kSum;
      ar.dtype = isa::DType::kF32;
      ar.space = isa::MemSpace::kVmem;
      ar.src = static_cast<uint64_t>(c % kVmemSlots) * kSlot;
      ar.dst = static_cast<uint64_t>((c + 1) % kVmemSlots) * kSlot;
      ar.count = 1024;
      ar.group = 0;
      p.cores[c].instructions.push_back(ar.ToInstruction());
    }
  }
  for (size_t c = 0; c < p.cores.size(); ++c) {
    p.cores[c].instructions.push_back(isa::op::CtrlHalt{}.ToInstruction());
  }
  return p;
}

}  // namespace tpusim::sim::testing
