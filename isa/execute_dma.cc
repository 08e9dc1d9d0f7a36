// The DMA opcodes' semantics (opcodes.def TPUSIM_DMA_DESCRIPTOR_ and the indirect DMAs).
#include <fmt/format.h>

#include <string>

#include "isa/execute.h"
#include "isa/indirect_dma.h"

namespace tpusim::isa {

Status DmaCopy(MachineState& state, int c, const Instruction& inst) {
  // Every DMA opcode starts with the same descriptor fields (opcodes.def TPUSIM_DMA_DESCRIPTOR_).
  auto d = [&](const char* name) { return inst.fields[FieldIndex(inst.opcode, name)]; };
  const uint64_t src = d("src"), dst = d("dst"), eb = d("elem_bytes");
  const uint64_t n0 = d("n0"), n1 = d("n1"), n2 = d("n2");
  const uint64_t ss1 = d("src_s1"), ss2 = d("src_s2"), ds1 = d("dst_s1"), ds2 = d("dst_s2");
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8) {
    return InvalidArgument(fmt::format("elem_bytes={} (must be 1, 2, 4 or 8)", eb));
  }
  if (n0 == 0 || n1 == 0 || n2 == 0) return InvalidArgument("n0, n1 and n2 must be >= 1");
  if (IsIndirectDma(inst.opcode)) {
    return ExecuteIndirectDma(inst, state.memory(MemSpace::kHbm, c), state.vmem(c));
  }
  SparseMemory* from = nullptr;
  SparseMemory* to = nullptr;
  switch (inst.opcode) {
    case Opcode::kDmaHbmToVmem:
      from = &state.memory(MemSpace::kHbm, c), to = &state.vmem(c);
      break;
    case Opcode::kDmaVmemToHbm:
      from = &state.vmem(c), to = &state.memory(MemSpace::kHbm, c);
      break;
    case Opcode::kDmaHostToHbm:
      from = &state.host, to = &state.memory(MemSpace::kHbm, c);
      break;
    case Opcode::kDmaHbmToHost:
      from = &state.memory(MemSpace::kHbm, c), to = &state.host;
      break;
    case Opcode::kDmaVmemToRemote: {
      auto r = inst.As<op::DmaVmemToRemote>();
      if (r.dst_core >= static_cast<uint64_t>(state.num_cores())) {
        return InvalidArgument(fmt::format("dst_core={} is not a core of this program ({} cores)",
                                           r.dst_core, state.num_cores()));
      }
      if (r.dst_space != MemSpace::kVmem && r.dst_space != MemSpace::kHbm) {
        return InvalidArgument("dst_space must be vmem or hbm");
      }
      from = &state.vmem(c);
      to = &state.memory(r.dst_space, static_cast<int>(r.dst_core));
      break;
    }
    default:
      TPUSIM_CHECK(false) << "DmaCopy: not a DMA: " << Mnemonic(inst.opcode);
  }
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
  std::vector<std::pair<int, uint64_t>> flags = {
      {core, inst.fields[FieldIndex(inst.opcode, "flag")]}};
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

}  // namespace tpusim::isa
