// The DMA opcodes' semantics (opcodes.def TPUSIM_DMA_DESCRIPTOR_ and the indirect DMAs).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "common/saturating.h"
#include "isa/execute.h"
#include "isa/footprint.h"
#include "isa/indirect_dma.h"
#include "isa/shared_fields.h"

namespace tpusim::isa {

Status DmaCopy(MachineState& state, int c, const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  const uint64_t src = d.src, dst = d.dst, eb = d.elem_bytes, n0 = d.n0, n1 = d.n1, n2 = d.n2;
  const uint64_t ss1 = d.src_s1, ss2 = d.src_s2, ds1 = d.dst_s1, ds2 = d.dst_s2;
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8) {
    return InvalidArgument(fmt::format("elem_bytes={} (must be 1, 2, 4 or 8)", eb));
  }
  if (n0 == 0 || n1 == 0 || n2 == 0) return InvalidArgument("n0, n1 and n2 must be >= 1");
  if (IsIndirectDma(inst.opcode)) {
    return ExecuteIndirectDma(inst, state.memory(MemSpace::kHbm, c), state.vmem(c));
  }
  const DmaSpaces spaces = DmaSpacesOf(inst);
  int to_core = c;
  if (inst.opcode == Opcode::kDmaVmemToRemote) {
    auto r = inst.As<op::DmaVmemToRemote>();
    if (r.dst_core >= static_cast<uint64_t>(state.num_cores())) {
      return InvalidArgument(fmt::format("dst_core={} is not a core of this program ({} cores)",
                                         r.dst_core, state.num_cores()));
    }
    if (r.dst_space != MemSpace::kVmem && r.dst_space != MemSpace::kHbm) {
      return InvalidArgument("dst_space must be vmem or hbm");
    }
    to_core = static_cast<int>(r.dst_core);
  }
  SparseMemory* from = &state.memory(spaces.from, c);
  SparseMemory* to = &state.memory(spaces.to, to_core);
  // Gather everything first (the copy behaves as if buffered), then scatter.
  const uint64_t run = n0 * eb;
  if (n0 > (uint64_t{1} << 40) / eb || n1 * n2 > (uint64_t{1} << 40) / run) {
    return InvalidArgument("transfer larger than 2^40 bytes");
  }
  std::string buf(run * n1 * n2, '\0');
  size_t off = 0;
  for (uint64_t i2 = 0; i2 < n2; ++i2) {
    for (uint64_t i1 = 0; i1 < n1; ++i1, off += run) {
      Status st = from->Read(src + i2 * ss2 + i1 * ss1, buf.data() + off, run);
      if (!st.ok()) return InvalidArgument("source " + st.message());
    }
  }
  off = 0;
  for (uint64_t i2 = 0; i2 < n2; ++i2) {
    for (uint64_t i1 = 0; i1 < n1; ++i1, off += run) {
      Status st = to->Write(dst + i2 * ds2 + i1 * ds1, buf.data() + off, run);
      if (!st.ok()) return InvalidArgument("destination " + st.message());
    }
  }
  return OkStatus();
}

std::vector<std::pair<int, uint64_t>> DmaFlags(int core, const Instruction& inst) {
  std::vector<std::pair<int, uint64_t>> flags = {{core, DmaDescriptorOf(inst).flag}};
  if (inst.opcode == Opcode::kDmaVmemToRemote) {
    auto r = inst.As<op::DmaVmemToRemote>();
    flags.emplace_back(static_cast<int>(r.dst_core), r.dst_flag);
  }
  return flags;
}

Status ExecuteDma(MachineState& state, int core, const Instruction& inst) {
  TPUSIM_RETURN_IF_ERROR(DmaCopy(state, core, inst));
  for (auto [c, f] : DmaFlags(core, inst)) TPUSIM_RETURN_IF_ERROR(state.BumpFlag(c, f));
  return OkStatus();
}

DmaDescriptor DmaDescriptorOf(const Instruction& inst) {
  TPUSIM_CHECK(Info(inst.opcode).unit == Unit::kDma) << "not a DMA: " << Mnemonic(inst.opcode);
  return DmaDescriptor::FromInstruction(inst);
}

namespace {

// (n2-1)*s2 + (n1-1)*s1 + n0*elem_bytes, saturating (n0, n1, n2 >= 1 on a verified program).
uint64_t BoxExtent(const DmaDescriptor& d, uint64_t s1, uint64_t s2) {
  return SaturatingAdd(
      SaturatingAdd(SaturatingMul(d.n2 - 1, s2), SaturatingMul(d.n1 - 1, s1)),
      SaturatingMul(d.n0, d.elem_bytes));
}

}  // namespace

uint64_t DmaSourceExtent(const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  return BoxExtent(d, d.src_s1, d.src_s2);
}

uint64_t DmaDestinationExtent(const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  return BoxExtent(d, d.dst_s1, d.dst_s2);
}

uint64_t DmaBytesMoved(const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  const uint64_t slices = IsIndirectDma(inst.opcode) ? IndirectDma::From(inst).count : 1;
  uint64_t bytes = d.elem_bytes;
  for (uint64_t n : {d.n0, d.n1, d.n2, slices}) bytes = SaturatingMul(bytes, n);
  return bytes;
}

uint64_t DmaElementsMoved(const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  const uint64_t slices = IsIndirectDma(inst.opcode) ? IndirectDma::From(inst).count : 1;
  uint64_t elements = 1;
  for (uint64_t n : {d.n0, d.n1, d.n2, slices}) elements = SaturatingMul(elements, n);
  return elements;
}

double DmaBytesMovedDouble(const Instruction& inst) {
  const DmaDescriptor d = DmaDescriptorOf(inst);
  const double box = static_cast<double>(d.elem_bytes) * static_cast<double>(d.n0) *
                     static_cast<double>(d.n1) * static_cast<double>(d.n2);
  return IsIndirectDma(inst.opcode) ? box * static_cast<double>(IndirectDma::From(inst).count)
                                    : box;
}

uint64_t DmaHbmBytes(const Instruction& inst) {
  uint64_t tiled = 0;
  switch (inst.opcode) {
    case Opcode::kDmaHbmToVmem:
      tiled = inst.As<op::DmaHbmToVmem>().hbm_bytes;
      break;
    case Opcode::kDmaVmemToHbm:
      tiled = inst.As<op::DmaVmemToHbm>().hbm_bytes;
      break;
    case Opcode::kDmaHostToHbm:
      tiled = inst.As<op::DmaHostToHbm>().hbm_bytes;
      break;
    case Opcode::kDmaHbmToHost:
      tiled = inst.As<op::DmaHbmToHost>().hbm_bytes;
      break;
    default:
      break;
  }
  return std::max(tiled, DmaBytesMoved(inst));
}

Footprint DmaFootprint(const Instruction& inst, int core) {
  Footprint f;
  if (IsIndirectDma(inst.opcode)) {
    // Indices are data: the HBM side is every byte an index in [0, bound] can reach.
    const IndirectDma d = IndirectDma::From(inst);
    f.reads.push_back(VmemRegion(core, d.idx, d.idx_bytes()));
    const Region hbm = RegionBytes(MemSpace::kHbm, core, d.hbm_base(), d.hbm_extent());
    const Region vmem = VmemRegion(core, d.vmem_base(), d.vmem_extent());
    if (d.scatter) {
      f.reads.push_back(vmem);
      if (d.combine) f.reads.push_back(hbm);
      f.writes.push_back(hbm);
    } else {
      f.reads.push_back(hbm);
      f.writes.push_back(vmem);
    }
    return f;
  }
  const uint64_t src = DmaDescriptorOf(inst).src, dst = DmaDescriptorOf(inst).dst;
  const DmaSpaces spaces = DmaSpacesOf(inst);
  if (inst.opcode == Opcode::kDmaVmemToRemote) {
    // Another core's memory is not this core's footprint; a copy to itself is.
    f.reads.push_back(RegionBytes(spaces.from, core, src, DmaSourceExtent(inst)));
    if (static_cast<int>(inst.As<op::DmaVmemToRemote>().dst_core) == core) {
      f.writes.push_back(RegionBytes(spaces.to, core, dst, DmaDestinationExtent(inst)));
    }
    return f;
  }
  // A two-level descriptor (n2 = 1) keeps its rows; deeper ones their bounding range.
  const DmaDescriptor d = DmaDescriptorOf(inst);
  const auto side = [&](MemSpace space, uint64_t addr, uint64_t s1, uint64_t extent) {
    return d.n2 == 1 ? StridedRegion(space, core, addr, d.n1, d.n0 * d.elem_bytes, s1)
                     : RegionBytes(space, core, addr, extent);
  };
  f.reads.push_back(side(spaces.from, src, d.src_s1, DmaSourceExtent(inst)));
  f.writes.push_back(side(spaces.to, dst, d.dst_s1, DmaDestinationExtent(inst)));
  return f;
}

}  // namespace tpusim::isa
