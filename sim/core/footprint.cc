#include "sim/core/footprint.h"

#include <algorithm>

#include "isa/indirect_dma.h"

namespace tpusim::sim {
namespace {

uint64_t Size(isa::DType t) { return static_cast<uint64_t>(isa::DTypeBytes(t)); }

Region Bytes(isa::MemSpace space, int core, uint64_t addr, uint64_t bytes) {
  Region r;
  r.space = space;
  r.core = space == isa::MemSpace::kHost ? 0 : core;
  r.lo = addr;
  r.hi = addr + std::max<uint64_t>(bytes, 1);
  return r;
}

Region Vmem(int core, uint64_t addr, uint64_t bytes) {
  return Bytes(isa::MemSpace::kVmem, core, addr, bytes);
}

Region AccRows(int core, uint64_t mxu, uint64_t row, uint64_t rows, bool chain) {
  Region r;
  r.space = isa::MemSpace::kAcc;
  r.core = core;
  r.mxu = static_cast<int32_t>(mxu);
  r.lo = row;
  r.hi = row + std::max<uint64_t>(rows, 1);
  r.in_order_chain = chain;
  return r;
}

// Bytes spanned by a DMA side: (n2-1)*s2 + (n1-1)*s1 + n0*elem.
template <typename D>
uint64_t SrcExtent(const D& d) {
  return (d.n2 - 1) * d.src_s2 + (d.n1 - 1) * d.src_s1 + d.n0 * d.elem_bytes;
}
template <typename D>
uint64_t DstExtent(const D& d) {
  return (d.n2 - 1) * d.dst_s2 + (d.n1 - 1) * d.dst_s1 + d.n0 * d.elem_bytes;
}

// Element rows*cols region of a broadcast operand.
uint64_t OperandElements(isa::Broadcast b, uint64_t rows, uint64_t cols) {
  switch (b) {
    case isa::Broadcast::kNone:
      return rows * cols;
    case isa::Broadcast::kScalar:
      return 1;
    case isa::Broadcast::kRow:
      return cols;
    case isa::Broadcast::kCol:
      return rows;
  }
  return rows * cols;
}

// [lo, hi) element offsets of a strided 3-D walk with signed strides.
std::pair<int64_t, int64_t> StridedRange(int64_t n0, int64_t n1, int64_t n2, int64_t s0, int64_t s1,
                                         int64_t s2) {
  int64_t lo = 0, hi = 0;
  for (auto [n, s] : {std::pair{n0, s0}, std::pair{n1, s1}, std::pair{n2, s2}}) {
    int64_t far = (std::max<int64_t>(n, 1) - 1) * s;
    if (far < 0) lo += far;
    if (far > 0) hi += far;
  }
  return {lo, hi + 1};
}

}  // namespace

std::vector<int32_t> GroupMembers(const isa::Program& program, uint64_t group, int core) {
  if (group >= program.replica_groups.size()) return {};
  for (const auto& g : program.replica_groups[group].groups) {
    if (std::find(g.begin(), g.end(), core) != g.end()) return g;
  }
  return {};
}

Footprint InstructionFootprint(const isa::Instruction& inst, int core,
                               const isa::Program& program) {
  namespace op = isa::op;
  using isa::MemSpace;
  Footprint f;
  switch (inst.opcode) {
    case isa::Opcode::kDmaHbmToVmem: {
      auto d = inst.As<op::DmaHbmToVmem>();
      f.reads.push_back(Bytes(MemSpace::kHbm, core, d.src, SrcExtent(d)));
      f.writes.push_back(Bytes(MemSpace::kVmem, core, d.dst, DstExtent(d)));
      break;
    }
    case isa::Opcode::kDmaVmemToHbm: {
      auto d = inst.As<op::DmaVmemToHbm>();
      f.reads.push_back(Bytes(MemSpace::kVmem, core, d.src, SrcExtent(d)));
      f.writes.push_back(Bytes(MemSpace::kHbm, core, d.dst, DstExtent(d)));
      break;
    }
    case isa::Opcode::kDmaHostToHbm: {
      auto d = inst.As<op::DmaHostToHbm>();
      f.reads.push_back(Bytes(MemSpace::kHost, core, d.src, SrcExtent(d)));
      f.writes.push_back(Bytes(MemSpace::kHbm, core, d.dst, DstExtent(d)));
      break;
    }
    case isa::Opcode::kDmaHbmToHost: {
      auto d = inst.As<op::DmaHbmToHost>();
      f.reads.push_back(Bytes(MemSpace::kHbm, core, d.src, SrcExtent(d)));
      f.writes.push_back(Bytes(MemSpace::kHost, core, d.dst, DstExtent(d)));
      break;
    }
    case isa::Opcode::kDmaVmemToRemote: {
      auto d = inst.As<op::DmaVmemToRemote>();
      f.reads.push_back(Bytes(MemSpace::kVmem, core, d.src, SrcExtent(d)));
      if (static_cast<int>(d.dst_core) == core) {
        f.writes.push_back(Bytes(d.dst_space, core, d.dst, DstExtent(d)));
      }
      break;
    }
    case isa::Opcode::kDmaGather:
    case isa::Opcode::kDmaScatter: {
      // Indices are data: the HBM side is every byte an index in [0, bound] can reach.
      const isa::IndirectDma d = isa::IndirectDma::From(inst);
      f.reads.push_back(Vmem(core, d.idx, d.idx_bytes()));
      const Region hbm = Bytes(MemSpace::kHbm, core, d.hbm_base(), d.hbm_extent());
      const Region vmem = Vmem(core, d.vmem_base(), d.vmem_extent());
      if (d.scatter) {
        f.reads.push_back(vmem);
        if (d.combine) f.reads.push_back(hbm);
        f.writes.push_back(hbm);
      } else {
        f.reads.push_back(hbm);
        f.writes.push_back(vmem);
      }
      break;
    }
    case isa::Opcode::kMxuLoadWeights: {
      auto o = inst.As<op::MxuLoadWeights>();
      uint64_t rows = o.transpose ? o.n : o.k, cols = o.transpose ? o.k : o.n;
      f.reads.push_back(Vmem(core, o.addr, ((rows - 1) * o.stride + cols) * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kMxuMatmul: {
      auto o = inst.As<op::MxuMatmul>();
      f.reads.push_back(Vmem(core, o.lhs, ((o.m - 1) * o.stride + o.k) * Size(o.dtype)));
      f.writes.push_back(AccRows(core, o.mxu, o.acc, o.m, /*chain=*/true));
      break;
    }
    case isa::Opcode::kMxuPop: {
      auto o = inst.As<op::MxuPop>();
      f.reads.push_back(AccRows(core, o.mxu, o.acc, o.m, /*chain=*/false));
      f.writes.push_back(Vmem(core, o.dst, ((o.m - 1) * o.stride + o.n) * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuUnary: {
      auto o = inst.As<op::VpuUnary>();
      f.reads.push_back(Vmem(core, o.src, o.count * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuBinary: {
      auto o = inst.As<op::VpuBinary>();
      f.reads.push_back(
          Vmem(core, o.a, OperandElements(o.a_bcast, o.rows, o.cols) * Size(o.dtype)));
      f.reads.push_back(
          Vmem(core, o.b, OperandElements(o.b_bcast, o.rows, o.cols) * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.rows * o.cols * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuCompare: {
      auto o = inst.As<op::VpuCompare>();
      f.reads.push_back(
          Vmem(core, o.a, OperandElements(o.a_bcast, o.rows, o.cols) * Size(o.dtype)));
      f.reads.push_back(
          Vmem(core, o.b, OperandElements(o.b_bcast, o.rows, o.cols) * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.rows * o.cols * Size(isa::DType::kPred)));
      break;
    }
    case isa::Opcode::kVpuSelect: {
      auto o = inst.As<op::VpuSelect>();
      f.reads.push_back(Vmem(core, o.pred, o.count * Size(isa::DType::kPred)));
      f.reads.push_back(Vmem(core, o.a, o.count * Size(o.dtype)));
      f.reads.push_back(Vmem(core, o.b, o.count * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuRngBits: {
      auto o = inst.As<op::VpuRngBits>();
      f.reads.push_back(Vmem(core, o.state, 8));
      f.writes.push_back(Vmem(core, o.state, 8));
      f.writes.push_back(Vmem(core, o.dst, o.count * 4));
      break;
    }
    case isa::Opcode::kVpuConvert: {
      auto o = inst.As<op::VpuConvert>();
      f.reads.push_back(Vmem(core, o.src, o.count * Size(o.src_dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuReduce: {
      auto o = inst.As<op::VpuReduce>();
      uint64_t out = o.axis == isa::ReduceAxis::kLanes      ? o.rows
                     : o.axis == isa::ReduceAxis::kSublanes ? o.cols
                                                            : 1;
      f.reads.push_back(Vmem(core, o.src, o.rows * o.cols * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, out * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuBroadcast: {
      auto o = inst.As<op::VpuBroadcast>();
      f.reads.push_back(Vmem(core, o.src, OperandElements(o.mode, o.rows, o.cols) * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.rows * o.cols * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kXluTranspose: {
      auto o = inst.As<op::XluTranspose>();
      f.reads.push_back(Vmem(core, o.src, o.rows * o.cols * Size(o.dtype)));
      f.writes.push_back(Vmem(core, o.dst, o.rows * o.cols * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuCopy: {
      auto o = inst.As<op::VpuCopy>();
      const int64_t n0 = static_cast<int64_t>(o.n0), n1 = static_cast<int64_t>(o.n1),
                    n2 = static_cast<int64_t>(o.n2), size = static_cast<int64_t>(Size(o.dtype));
      auto [slo, shi] = StridedRange(n0, n1, n2, o.src_s0, o.src_s1, o.src_s2);
      auto [dlo, dhi] = StridedRange(n0, n1, n2, o.dst_s0, o.dst_s1, o.dst_s2);
      // Negative offsets would be out of bounds (the data path reports it); clamp the region at 0.
      auto region = [&](uint64_t base, int64_t lo, int64_t hi) {
        int64_t a = static_cast<int64_t>(base) + lo * size;
        int64_t b = static_cast<int64_t>(base) + hi * size;
        a = std::max<int64_t>(a, 0);
        b = std::max<int64_t>(b, a + 1);
        return Vmem(core, static_cast<uint64_t>(a), static_cast<uint64_t>(b - a));
      };
      f.reads.push_back(region(o.src, slo, shi));
      f.writes.push_back(region(o.dst, dlo, dhi));
      break;
    }
    case isa::Opcode::kVpuFill: {
      auto o = inst.As<op::VpuFill>();
      f.writes.push_back(Vmem(core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kVpuIota: {
      auto o = inst.As<op::VpuIota>();
      f.writes.push_back(Vmem(core, o.dst, o.rows * o.cols * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kIciAllReduce: {
      auto o = inst.As<op::IciAllReduce>();
      f.reads.push_back(Bytes(o.space, core, o.src, o.count * Size(o.dtype)));
      f.writes.push_back(Bytes(o.space, core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kIciAllGather: {
      auto o = inst.As<op::IciAllGather>();
      uint64_t n = GroupMembers(program, o.group, core).size();
      f.reads.push_back(Bytes(o.space, core, o.src, o.count * Size(o.dtype)));
      f.writes.push_back(Bytes(o.space, core, o.dst, n * o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kIciReduceScatter: {
      auto o = inst.As<op::IciReduceScatter>();
      uint64_t n = GroupMembers(program, o.group, core).size();
      f.reads.push_back(Bytes(o.space, core, o.src, n * o.count * Size(o.dtype)));
      f.writes.push_back(Bytes(o.space, core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kIciAllToAll: {
      auto o = inst.As<op::IciAllToAll>();
      uint64_t n = GroupMembers(program, o.group, core).size();
      f.reads.push_back(Bytes(o.space, core, o.src, n * o.count * Size(o.dtype)));
      f.writes.push_back(Bytes(o.space, core, o.dst, n * o.count * Size(o.dtype)));
      break;
    }
    case isa::Opcode::kIciCollectivePermute: {
      auto o = inst.As<op::IciCollectivePermute>();
      f.reads.push_back(Bytes(o.space, core, o.src, o.count * Size(o.dtype)));
      f.writes.push_back(Bytes(o.space, core, o.dst, o.count * Size(o.dtype)));
      break;
    }
    default:
      break;  // scalar instructions touch no memory
  }
  return f;
}

}  // namespace tpusim::sim
