// Operand fusion of a dot (fusion.h, AddDotPrologues): the elementwise ops that compute a dot's LHS
// or weights run on each operand block right after its inputs are loaded into VMEM, and write the
// block straight into the dot's operand buffer — XLA's kOutput fusion of a dot with its operands'
// producers (a scale and a bias applied to the weights as they are loaded), so the operand never
// goes through HBM.
//
// A block is rows r0 .. r0 + rc of an [R, C] operand matrix (batch b of a [B, R, C] operand),
// columns c0 .. c0 + cc: for the weights R = K and C = N, for the LHS R = M and C = K. Its inputs:
// arrays of the operand's dimensions ([rc, cc] blocks), row vectors ([cc]: a broadcast along the
// columns), column vectors ([rc]: one value per row) and scalars (loaded once). Blocks are loaded
// into `nin` versions, like the dot's own operand buffers, so a block's inputs are prefetched while
// the previous block is computed and multiplied.
#include <algorithm>

#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {

using hlo::HloInstruction;

Lowerer::PrologueFootprint Lowerer::MeasurePrologue(
    const std::vector<const HloInstruction*>& ops) const {
  PrologueFootprint f;
  std::set<std::pair<uint64_t, isa::Broadcast>> seen;
  for (size_t m = 0; m < ops.size(); ++m) {
    const HloInstruction& op_inst = *ops[m];
    if (m + 1 < ops.size()) f.per_element += Buffer(&op_inst).elem_bytes();
    if (op_inst.opcode() == hlo::HloOpcode::kClamp ||
        op_inst.opcode() == hlo::HloOpcode::kIsFinite) {
      f.needs_tmp = true;
    }
    for (const HloInstruction* op : op_inst.operands()) {
      if (std::find(ops.begin(), ops.end(), op) != ops.end()) continue;
      const HbmBuffer& b = Buffer(op);
      isa::Broadcast mode = VirtualBroadcastKind(*op);
      if (mode == isa::Broadcast::kNone && b.elements() == 1) mode = isa::Broadcast::kScalar;
      if (!seen.insert({b.address, mode}).second) continue;
      ++f.allocations;
      if (mode == isa::Broadcast::kNone) f.per_element += b.elem_bytes();
      if (mode == isa::Broadcast::kRow || mode == isa::Broadcast::kCol) {
        f.vector_bytes_per_element = std::max(f.vector_bytes_per_element, b.elem_bytes());
        ++f.vectors;
      }
    }
  }
  f.per_element += f.needs_tmp ? 4 : 0;
  f.allocations += static_cast<int64_t>(ops.size()) + 2;
  return f;
}

std::optional<Lowerer::Prologue> Lowerer::PlanPrologue(
    const std::vector<const HloInstruction*>& ops, int64_t Rc, int64_t Cc, int nin) {
  Prologue pro;
  pro.ops = ops;
  auto member_index = [&](const HloInstruction* i) -> int64_t {
    auto it = std::find(ops.begin(), ops.end(), i);
    return it == ops.end() ? -1 : static_cast<int64_t>(it - ops.begin());
  };
  auto alloc = [&](int64_t bytes, uint64_t* at) {
    const int64_t a = em_.AllocVmem(std::max<int64_t>(bytes, 64));
    if (a < 0) return false;
    *at = static_cast<uint64_t>(a);
    return true;
  };
  std::map<std::pair<uint64_t, isa::Broadcast>, size_t> ext_index;
  pro.source.resize(ops.size());
  for (size_t m = 0; m < ops.size(); ++m) {
    for (const HloInstruction* op : ops[m]->operands()) {
      if (const int64_t mi = member_index(op); mi >= 0) {
        pro.source[m].push_back(mi);
        continue;
      }
      const HbmBuffer& b = Buffer(op);
      isa::Broadcast mode = VirtualBroadcastKind(*op);
      if (mode == isa::Broadcast::kNone && b.elements() == 1) mode = isa::Broadcast::kScalar;
      auto [it, inserted] = ext_index.try_emplace({b.address, mode}, pro.ext.size());
      if (inserted) pro.ext.push_back({&b, mode, 0});
      pro.source[m].push_back(-2 - static_cast<int64_t>(it->second));
    }
  }
  for (Epilogue::External& x : pro.ext) {
    const int64_t elems = x.mode == isa::Broadcast::kScalar ? 1
                          : x.mode == isa::Broadcast::kRow  ? Cc
                          : x.mode == isa::Broadcast::kCol  ? Rc
                                                            : Rc * Cc;
    const int64_t bytes = std::max<int64_t>(64, elems * x.buf->elem_bytes());
    const int versions = x.mode == isa::Broadcast::kScalar ? 1 : nin;
    pro.ext_stride.push_back(x.mode == isa::Broadcast::kScalar ? 0 : bytes);
    if (!alloc(bytes * versions, &x.vmem)) return std::nullopt;
  }
  pro.result.assign(ops.size(), 0);
  for (size_t m = 0; m + 1 < ops.size(); ++m) {
    if (!alloc(Rc * Cc * Buffer(ops[m]).elem_bytes(), &pro.result[m])) return std::nullopt;
  }
  const PrologueFootprint f = MeasurePrologue(ops);
  const int64_t tmp_bytes = f.needs_tmp ? 4 : 0;
  if (tmp_bytes > 0 && !alloc(Rc * Cc * tmp_bytes, &pro.tmp)) return std::nullopt;
  if (!alloc(64, &pro.zero)) return std::nullopt;
  // Scalars are loaded once.
  int64_t loads = 0;
  for (const Epilogue::External& x : pro.ext) {
    if (x.mode != isa::Broadcast::kScalar) continue;
    em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, x.buf->address, x.vmem, x.buf->elem_bytes(),
                      x.buf->elem_bytes(), kLoadFlag);
    ++loads;
  }
  em_.Wait(kLoadFlag, loads);
  return pro;
}

StatusOr<int64_t> Lowerer::LoadPrologueBlock(const Prologue& pro, int64_t version,
                                             const OperandBlock& blk, uint64_t flag) {
  int64_t n = 0;
  for (size_t k = 0; k < pro.ext.size(); ++k) {
    const Epilogue::External& x = pro.ext[k];
    const uint64_t dst = x.vmem + static_cast<uint64_t>(version * pro.ext_stride[k]);
    TPUSIM_ASSIGN_OR_RETURN(int64_t d, LoadExternalBlock(x, blk, dst, flag));
    n += d;
  }
  return n;
}

StatusOr<int64_t> Lowerer::LoadExternalBlock(const Epilogue::External& x, const OperandBlock& blk,
                                             uint64_t dst, uint64_t flag) {
  const int64_t e = x.buf->elem_bytes();
  switch (x.mode) {
    case isa::Broadcast::kScalar:
      return int64_t{0};
    case isa::Broadcast::kRow:
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                        x.buf->address + static_cast<uint64_t>(blk.c0 * e), dst, blk.cc * e, e,
                        flag);
      return int64_t{1};
    case isa::Broadcast::kCol:
      em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem,
                        x.buf->address + static_cast<uint64_t>((blk.b * blk.R + blk.r0) * e), dst,
                        blk.rc * e, e, flag);
      return int64_t{1};
    case isa::Broadcast::kNone:
      return LoadOperandBlock(x.buf->address, blk, e, dst, flag);
  }
  return int64_t{0};
}

void Lowerer::RunPrologueBlock(const Prologue& pro, int64_t version, int64_t rc, int64_t cc,
                               uint64_t dst) {
  const int32_t tag = em_.tag();
  for (size_t m = 0; m < pro.ops.size(); ++m) {
    const HloInstruction& op_inst = *pro.ops[m];
    em_.set_tag(TagOf(op_inst));
    std::vector<VpuOperand> vops;
    for (int64_t src : pro.source[m]) {
      if (src >= 0) {
        const size_t s = static_cast<size_t>(src);
        vops.push_back({pro.result[s], isa::Broadcast::kNone, Buffer(pro.ops[s]).dtype});
      } else {
        const size_t k = static_cast<size_t>(-2 - src);
        const Epilogue::External& x = pro.ext[k];
        vops.push_back(
            {x.vmem + static_cast<uint64_t>(version * pro.ext_stride[k]), x.mode, x.buf->dtype});
      }
    }
    if (op_inst.opcode() == hlo::HloOpcode::kIsFinite) {
      em_.Emit(isa::op::VpuFill{.dtype = vops[0].dtype, .dst = pro.zero, .count = 1, .value = 0});
    }
    const uint64_t out = m + 1 == pro.ops.size() ? dst : pro.result[m];
    EmitVpuOp(op_inst, Buffer(&op_inst).dtype, vops, out, pro.tmp, pro.zero,
              static_cast<uint64_t>(rc), static_cast<uint64_t>(cc), static_cast<uint64_t>(rc * cc));
  }
  em_.set_tag(tag);
}

Status Lowerer::LowerPrologueKernels(const HloInstruction& dot) {
  prologue_disabled_.insert(&dot);
  for (int index = 0; index < 2; ++index) {
    auto it = groups_.prologue_of_dot.find({&dot, index});
    if (it == groups_.prologue_of_dot.end()) continue;
    for (const HloInstruction* m : it->second) {
      em_.set_tag(TagOf(*m));
      em_.ResetVmem();
      if (auto g = groups_.group_of.find(m); g != groups_.group_of.end()) {
        const auto& group = groups_.groups[g->second];
        if (group.front() == m) TPUSIM_RETURN_IF_ERROR(LowerFusedElementwise(group));
        continue;
      }
      TPUSIM_RETURN_IF_ERROR(LowerElementwise(*m));
    }
  }
  em_.ResetVmem();
  em_.set_tag(TagOf(dot));
  return OkStatus();
}

}  // namespace tpusim::compiler
