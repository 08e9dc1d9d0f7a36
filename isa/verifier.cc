#include "isa/verifier.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/saturating.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/footprint.h"
#include "isa/indirect_dma.h"
#include "isa/loop_structure.h"
#include "isa/memory.h"
#include "isa/numerics.h"
#include "isa/shared_fields.h"

namespace tpusim::isa {
namespace {

class Verifier {
 public:
  Verifier(const Program& p, const MemorySizes& s, int max_errors)
      : p_(p), s_(s), max_errors_(max_errors) {}

  Status Run() {
    TPUSIM_RETURN_IF_ERROR(CheckProgramStructure(p_));
    if (p_.num_cores() > s_.cores) {
      Add(fmt::format("the program has {} cores but the system has {}", p_.num_cores(), s_.cores));
    }
    Tables();
    for (int c = 0; c < p_.num_cores(); ++c) Core(c);
    Flags();
    Collectives();
    if (errors_.empty()) return OkStatus();
    std::string msg;
    for (size_t i = 0; i < errors_.size(); ++i) msg += (i ? "\n" : "") + errors_[i];
    if (dropped_ > 0) msg += fmt::format("\n... and {} more", dropped_);
    return InvalidArgument(msg);
  }

 private:
  void Add(std::string msg) {
    if (static_cast<int>(errors_.size()) < max_errors_) {
      errors_.push_back(std::move(msg));
    } else {
      ++dropped_;
    }
  }
  std::string Where(int c, size_t i) const {
    std::string w = fmt::format("core {} instruction {}", c, i);
    int32_t line = p_.cores[c].source_line(i);
    if (line != kNoSourceLine) {
      w += fmt::format(" ({}:{})", p_.source_file.empty() ? "<source>" : p_.source_file, line);
    }
    return w + " " + std::string(Mnemonic(p_.cores[c].instructions[i].opcode));
  }
  void Err(std::string_view field, std::string msg) {
    Add(fmt::format("{}: field '{}': {}", Where(c_, i_), field, msg));
  }

  uint64_t Capacity(MemSpace space) const {
    switch (space) {
      case MemSpace::kHbm:
        return static_cast<uint64_t>(s_.hbm_bytes_per_core());
      case MemSpace::kVmem:
        return static_cast<uint64_t>(s_.vmem_bytes);
      case MemSpace::kSmem:
        return static_cast<uint64_t>(s_.smem_bytes);
      case MemSpace::kHost:
        return static_cast<uint64_t>(s_.host_bytes);
      case MemSpace::kAcc:
        return 0;
    }
    return 0;
  }

  // [addr, addr + bytes) inside `space`, addr aligned to `align`.
  void Range(std::string_view field, MemSpace space, uint64_t addr, uint64_t bytes,
             uint64_t align) {
    uint64_t cap = Capacity(space);
    if (addr > cap || bytes > cap - addr) {
      Err(field, fmt::format("bytes {} are outside {} ({} bytes)", ByteRangeText(addr, bytes),
                             Name(space), cap));
    } else if (align > 1 && addr % align != 0) {
      Err(field, fmt::format("address {:#x} is not aligned to {} bytes", addr, align));
    }
  }

  void Positive(std::string_view field, uint64_t v) {
    if (v == 0) Err(field, "must be >= 1");
  }
  void Vmem(std::string_view field, uint64_t addr, uint64_t elems, DType t) {
    uint64_t eb = static_cast<uint64_t>(DTypeBytes(t));
    Range(field, MemSpace::kVmem, addr, SaturatingMul(elems, eb), eb);
  }
  // Rows of `cols` elements `stride` apart.
  void VmemRows(std::string_view field, uint64_t addr, uint64_t rows, uint64_t cols,
                uint64_t stride, DType t) {
    if (rows == 0) return;
    Vmem(field, addr, SaturatingAdd(SaturatingMul(rows - 1, stride), cols), t);
  }
  void Mxu(uint64_t mxu) {
    if (mxu >= static_cast<uint64_t>(s_.mxu_count)) {
      Err("mxu", fmt::format("{} but the core has {} MXU(s)", mxu, s_.mxu_count));
    }
  }
  void KN(uint64_t k, uint64_t n) {
    if (k < 1 || k > static_cast<uint64_t>(s_.mxu_rows)) {
      Err("k", fmt::format("{} is outside 1..{} (the array's rows)", k, s_.mxu_rows));
    }
    if (n < 1 || n > static_cast<uint64_t>(s_.mxu_cols)) {
      Err("n", fmt::format("{} is outside 1..{} (the array's columns)", n, s_.mxu_cols));
    }
  }
  void AccRows(uint64_t acc, uint64_t m) {
    if (SaturatingAdd(acc, m) > static_cast<uint64_t>(s_.accumulator_rows)) {
      Err("acc", fmt::format("rows [{}, {}) are outside the {} accumulator rows per MXU "
                             "(core.mxu.accumulator_rows)",
                             acc, SaturatingAdd(acc, m), s_.accumulator_rows));
    }
  }
  void MxuDtype(DType t, PrecisionPart part) {
    if (t != DType::kBF16 && t != DType::kF32 && t != DType::kS8) {
      Err("dtype", fmt::format("{} (the MXU takes bf16, f32 or s8)", Name(t)));
    } else if (t != DType::kF32 && part != PrecisionPart::kHi) {
      Err("part", fmt::format("{} is only meaningful for f32 operands; use hi", Name(part)));
    }
  }

  void Tables() {
    for (size_t g = 0; g < p_.replica_groups.size(); ++g) {
      std::set<int32_t> seen;
      for (const auto& grp : p_.replica_groups[g].groups) {
        if (grp.empty()) Add(fmt::format("replica group entry {}: an empty group", g));
        for (int32_t id : grp) {
          if (id < 0 || id >= p_.num_cores()) {
            Add(fmt::format(
                "replica group entry {}: core {} is not a core of the program ({} cores)", g, id,
                p_.num_cores()));
          }
          if (!seen.insert(id).second) {
            Add(fmt::format("replica group entry {}: core {} appears twice", g, id));
          }
        }
      }
    }
    for (size_t i = 0; i < p_.permutations.size(); ++i) {
      std::set<int32_t> sources, targets;
      for (auto [s, t] : p_.permutations[i].pairs) {
        for (int32_t id : {s, t}) {
          if (id < 0 || id >= p_.num_cores()) {
            Add(fmt::format("permutation {}: core {} is not a core of the program", i, id));
          }
        }
        if (!sources.insert(s).second) Add(fmt::format("permutation {}: source {} twice", i, s));
        if (!targets.insert(t).second) Add(fmt::format("permutation {}: target {} twice", i, t));
      }
    }
  }

  void Core(int c) {
    c_ = c;
    const auto& insts = p_.cores[c].instructions;
    int depth = 0;
    std::vector<uint64_t> loop_counts;
    for (i_ = 0; i_ < insts.size(); ++i_) {
      const Instruction& inst = insts[i_];
      switch (inst.opcode) {
        case Opcode::kCtrlLoop:
          if (Status st = CheckLoopDepth(static_cast<size_t>(depth++)); !st.ok()) {
            Err("count", st.message());
          }
          loop_counts.push_back(inst.As<op::CtrlLoop>().count);
          break;
        case Opcode::kCtrlEndLoop:
          if (depth == 0) {
            Add(fmt::format("{}: ctrl.endloop without a matching ctrl.loop", Where(c, i_)));
          } else {
            --depth;
            loop_counts.pop_back();
          }
          break;
        case Opcode::kCtrlBreakUnless: {
          auto b = inst.As<op::CtrlBreakUnless>();
          if (depth == 0) Err("addr", "ctrl.break_unless outside a loop");
          if (b.space != MemSpace::kHbm && b.space != MemSpace::kVmem &&
              b.space != MemSpace::kSmem) {
            Err("space",
                fmt::format("{} (the pred is read from hbm, vmem or smem)", Name(b.space)));
          } else {
            Range("addr", b.space, b.addr, 1, 1);
          }
          break;
        }
        case Opcode::kSyncWait:
          waits_.push_back({c, i_, inst.As<op::SyncWait>().flag});
          break;
        case Opcode::kSyncSignal:
          signalled_.insert({c, inst.As<op::SyncSignal>().flag});
          break;
        default:
          break;
      }
      Instruction_(inst);
      if (inst.opcode == Opcode::kSyncBarrier || Info(inst.opcode).unit == Unit::kIci) {
        collectives_[c].push_back({i_, inst, loop_counts});
      }
    }
    if (depth != 0) {
      Add(fmt::format("core {}: {} ctrl.loop(s) without a matching ctrl.endloop", c, depth));
    }
  }

  void Instruction_(const Instruction& inst) {
    switch (Info(inst.opcode).unit) {
      case Unit::kDma:
        return Dma(inst);
      case Unit::kMxu:
        return MxuOp(inst);
      case Unit::kVpu:
      case Unit::kXlu:
        return VpuOp(inst);
      case Unit::kIci:
        return IciOp(inst);
      case Unit::kScalar:
        if (inst.opcode == Opcode::kSyncBarrier) GroupRef(inst, inst.As<op::SyncBarrier>().group);
        return;
    }
  }

  void Dma(const Instruction& inst) {
    const DmaDescriptor d = DmaDescriptorOf(inst);
    const uint64_t eb = d.elem_bytes, n0 = d.n0, n1 = d.n1, n2 = d.n2;
    if (eb != 1 && eb != 2 && eb != 4 && eb != 8) {
      Err("elem_bytes", fmt::format("{} (must be 1, 2, 4 or 8)", eb));
      return;
    }
    Positive("n0", n0);
    Positive("n1", n1);
    Positive("n2", n2);
    if (n0 == 0 || n1 == 0 || n2 == 0) return;
    if (IsIndirectDma(inst.opcode)) return IndirectDmaOp(inst);
    const DmaSpaces spaces = DmaSpacesOf(inst);
    MemSpace to = spaces.to;
    if (inst.opcode == Opcode::kDmaVmemToRemote) {
      auto r = inst.As<op::DmaVmemToRemote>();
      if (to != MemSpace::kVmem && to != MemSpace::kHbm) {
        Err("dst_space", fmt::format("{} (must be vmem or hbm)", Name(to)));
        to = MemSpace::kVmem;
      }
      if (r.dst_core >= static_cast<uint64_t>(p_.num_cores())) {
        Err("dst_core", fmt::format("{} is not a core of the program ({} cores)", r.dst_core,
                                    p_.num_cores()));
      } else {
        signalled_.insert({static_cast<int>(r.dst_core), r.dst_flag});
      }
    }
    signalled_.insert({c_, d.flag});
    Range("src", spaces.from, d.src, DmaSourceExtent(inst), eb);
    Range("dst", to, d.dst, DmaDestinationExtent(inst), eb);
    Volume(inst, spaces.from, to);
  }

  // The bytes one DMA moves (n0 * n1 * n2 * elem_bytes, times count for dma.gather/scatter) fit in
  // the larger of its two memories. With non-zero strides the source and destination ranges above
  // already bound them; zero (or overlapping) strides repeat the same bytes, and a copy that moves
  // more than either memory holds — up to 2^83 bytes — is refused rather than run for hours.
  void Volume(const Instruction& inst, MemSpace from, MemSpace to) {
    const uint64_t bytes = DmaBytesMoved(inst), cap = std::max(Capacity(from), Capacity(to));
    if (bytes <= cap) return;
    const bool indirect = IsIndirectDma(inst.opcode);
    Err(indirect ? "count" : "n1",
        fmt::format("the copy moves {} bytes (n0 x n1 x n2 x elem_bytes{}), more than {} ({} "
                    "bytes) and {} ({} bytes) hold; zero or overlapping strides repeat the same "
                    "bytes",
                    bytes == UINT64_MAX ? std::string("2^64 or more") : fmt::format("{}", bytes),
                    indirect ? " x count" : "", Name(from), Capacity(from), Name(to),
                    Capacity(to)));
  }

  // dma.gather / dma.scatter: every address any index in [0, bound] can reach must be in range.
  void IndirectDmaOp(const Instruction& inst) {
    const IndirectDma d = IndirectDma::From(inst);
    signalled_.insert({c_, DmaDescriptorOf(inst).flag});
    Positive("count", d.count);
    if (d.count == 0) return;
    Range("idx", MemSpace::kVmem, d.idx, d.idx_bytes(), 4);
    Range(d.scatter ? "dst" : "src", MemSpace::kHbm, d.hbm_base(), d.hbm_extent(), d.elem_bytes);
    Range(d.scatter ? "src" : "dst", MemSpace::kVmem, d.vmem_base(), d.vmem_extent(), d.elem_bytes);
    Volume(inst, MemSpace::kHbm, MemSpace::kVmem);
    if (d.combine) {
      if (d.dtype == DType::kPred) {
        Err("dtype", "pred (a scatter combiner computes on numbers, not pred)");
      } else if (static_cast<uint64_t>(DTypeBytes(d.dtype)) != d.elem_bytes) {
        Err("dtype", fmt::format("{} but elem_bytes={}", Name(d.dtype), d.elem_bytes));
      }
    }
  }

  void MxuOp(const Instruction& inst) {
    switch (inst.opcode) {
      case Opcode::kMxuLoadWeights: {
        auto w = inst.As<op::MxuLoadWeights>();
        Mxu(w.mxu);
        KN(w.k, w.n);
        MxuDtype(w.dtype, w.part);
        uint64_t rows = w.transpose ? w.n : w.k, cols = w.transpose ? w.k : w.n;
        if (w.stride < cols)
          Err("stride", fmt::format("{} < the {} elements of a row", w.stride, cols));
        VmemRows("addr", w.addr, rows, cols, w.stride, w.dtype);
        return;
      }
      case Opcode::kMxuMatmul: {
        auto m = inst.As<op::MxuMatmul>();
        Mxu(m.mxu);
        KN(m.k, m.n);
        MxuDtype(m.dtype, m.part);
        Positive("m", m.m);
        AccRows(m.acc, m.m);
        if (m.stride < 1 && m.m > 1) Err("stride", "0 with m > 1");
        VmemRows("lhs", m.lhs, m.m, m.k, m.stride, m.dtype);
        return;
      }
      case Opcode::kMxuPop: {
        auto p = inst.As<op::MxuPop>();
        Mxu(p.mxu);
        Positive("m", p.m);
        if (p.n < 1 || p.n > static_cast<uint64_t>(s_.mxu_cols)) {
          Err("n", fmt::format("{} is outside 1..{}", p.n, s_.mxu_cols));
        }
        AccRows(p.acc, p.m);
        bool from_int = p.acc_dtype == DType::kS32;
        if (!from_int && p.acc_dtype != DType::kF32) {
          Err("acc_dtype", fmt::format("{} (must be f32 or s32)", Name(p.acc_dtype)));
        } else if (from_int ? (p.dtype != DType::kS32 && p.dtype != DType::kS8)
                            : (p.dtype != DType::kF32 && p.dtype != DType::kBF16)) {
          Err("dtype",
              fmt::format("cannot pop {} accumulators as {}", Name(p.acc_dtype), Name(p.dtype)));
        }
        if (from_int && p.act != Activation::kNone && p.act != Activation::kRelu) {
          Err("act", fmt::format("{} is not defined for s32 accumulators", Name(p.act)));
        }
        if (p.stride < p.n) Err("stride", fmt::format("{} < n={}", p.stride, p.n));
        VmemRows("dst", p.dst, p.m, p.n, p.stride, p.dtype);
        return;
      }
      default:
        return;
    }
  }

  // The ISA's broadcast-extent rule (types.h), with rows * cols saturating.
  static uint64_t BLen(Broadcast b, uint64_t rows, uint64_t cols) {
    return b == Broadcast::kNone ? SaturatingMul(rows, cols) : BroadcastOperandElements(b, rows, cols);
  }

  // An instruction of the two-operand shape (VpuBinary, VpuCompare, VpuSelect): a [rows, cols]
  // region, operands a and b read with their broadcasts, dst written in `dst_dtype`; a select's
  // predicate operand (`select`, else null) is checked between the extent and the operands.
  template <typename Op>
  void TwoOperands(const Op& o, DType dst_dtype, const op::VpuSelect* select) {
    Positive("rows", o.rows);
    Positive("cols", o.cols);
    if (select != nullptr) {
      Vmem("pred", select->pred, BLen(select->pred_bcast, o.rows, o.cols), DType::kPred);
    }
    Vmem("a", o.a, BLen(o.a_bcast, o.rows, o.cols), o.dtype);
    Vmem("b", o.b, BLen(o.b_bcast, o.rows, o.cols), o.dtype);
    Vmem("dst", o.dst, SaturatingMul(o.rows, o.cols), dst_dtype);
  }

  void VpuOp(const Instruction& inst) {
    switch (inst.opcode) {
      case Opcode::kVpuUnary: {
        auto u = inst.As<op::VpuUnary>();
        if (!UnarySupports(u.op, u.dtype)) {
          Err("op", fmt::format("{} is not defined for {}", Name(u.op), Name(u.dtype)));
        }
        Positive("count", u.count);
        Vmem("src", u.src, u.count, u.dtype);
        Vmem("dst", u.dst, u.count, u.dtype);
        return;
      }
      case Opcode::kVpuBinary: {
        auto b = inst.As<op::VpuBinary>();
        if (!BinarySupports(b.op, b.dtype)) {
          Err("op", fmt::format("{} is not defined for {}", Name(b.op), Name(b.dtype)));
        }
        TwoOperands(b, b.dtype, nullptr);
        return;
      }
      case Opcode::kVpuCompare: {
        auto c = inst.As<op::VpuCompare>();
        TwoOperands(c, DType::kPred, nullptr);
        return;
      }
      case Opcode::kVpuSelect: {
        auto s = inst.As<op::VpuSelect>();
        TwoOperands(s, s.dtype, &s);
        return;
      }
      case Opcode::kVpuRngBits: {
        auto g = inst.As<op::VpuRngBits>();
        Positive("count", g.count);
        Vmem("state", g.state, 2, DType::kU64);
        Vmem("dst", g.dst, g.count, DType::kS32);
        return;
      }
      case Opcode::kVpuConvert: {
        auto v = inst.As<op::VpuConvert>();
        Positive("count", v.count);
        Vmem("src", v.src, v.count, v.src_dtype);
        Vmem("dst", v.dst, v.count, v.dtype);
        return;
      }
      case Opcode::kVpuReduce: {
        auto r = inst.As<op::VpuReduce>();
        Positive("rows", r.rows);
        Positive("cols", r.cols);
        Vmem("src", r.src, SaturatingMul(r.rows, r.cols), r.dtype);
        uint64_t outs = r.axis == ReduceAxis::kLanes      ? r.rows
                        : r.axis == ReduceAxis::kSublanes ? r.cols
                                                          : 1;
        Vmem("dst", r.dst, outs, r.dtype);
        return;
      }
      case Opcode::kVpuBroadcast: {
        auto b = inst.As<op::VpuBroadcast>();
        if (b.mode == Broadcast::kNone) Err("mode", "must be scalar, row or col");
        Positive("rows", b.rows);
        Positive("cols", b.cols);
        Vmem("src", b.src, BLen(b.mode, b.rows, b.cols), b.dtype);
        Vmem("dst", b.dst, SaturatingMul(b.rows, b.cols), b.dtype);
        return;
      }
      case Opcode::kXluTranspose: {
        auto t = inst.As<op::XluTranspose>();
        Positive("rows", t.rows);
        Positive("cols", t.cols);
        Vmem("src", t.src, SaturatingMul(t.rows, t.cols), t.dtype);
        Vmem("dst", t.dst, SaturatingMul(t.rows, t.cols), t.dtype);
        return;
      }
      case Opcode::kVpuCopy: {
        auto cp = inst.As<op::VpuCopy>();
        Positive("n0", cp.n0);
        Positive("n1", cp.n1);
        Positive("n2", cp.n2);
        if (cp.n0 == 0 || cp.n1 == 0 || cp.n2 == 0) return;
        const int64_t eb = DTypeBytes(cp.dtype);
        for (bool is_src : {true, false}) {
          uint64_t base = is_src ? cp.src : cp.dst;
          int64_t s0 = is_src ? cp.src_s0 : cp.dst_s0, s1 = is_src ? cp.src_s1 : cp.dst_s1,
                  s2 = is_src ? cp.src_s2 : cp.dst_s2;
          // Extremes of i2*s2 + i1*s1 + i0*s0 over the box (each term is extreme at 0 or n-1).
          int64_t lo = 0, hi = 0;
          for (auto [s, n] : {std::pair<int64_t, uint64_t>{s0, cp.n0}, {s1, cp.n1}, {s2, cp.n2}}) {
            int64_t t = s * static_cast<int64_t>(n - 1);
            (t < 0 ? lo : hi) += t;
          }
          int64_t first = static_cast<int64_t>(base) + lo * eb;
          if (first < 0) {
            Err(is_src ? "src" : "dst", "the strides reach below address 0");
            continue;
          }
          Range(is_src ? "src" : "dst", MemSpace::kVmem, static_cast<uint64_t>(first),
                static_cast<uint64_t>((hi - lo + 1) * eb), 1);
          if (base % static_cast<uint64_t>(eb) != 0) {
            Err(is_src ? "src" : "dst",
                fmt::format("address {:#x} is not aligned to {} bytes", base, eb));
          }
        }
        return;
      }
      case Opcode::kVpuFill: {
        auto f = inst.As<op::VpuFill>();
        Positive("count", f.count);
        Vmem("dst", f.dst, f.count, f.dtype);
        return;
      }
      case Opcode::kVpuIota: {
        auto io = inst.As<op::VpuIota>();
        Positive("rows", io.rows);
        Positive("cols", io.cols);
        Vmem("dst", io.dst, SaturatingMul(io.rows, io.cols), io.dtype);
        return;
      }
      default:
        return;
    }
  }

  void GroupRef(const Instruction& inst, uint64_t g) {
    (void)inst;
    if (g >= p_.replica_groups.size()) {
      Err("group", fmt::format("{} is not in the replica-group table ({} entries)", g,
                               p_.replica_groups.size()));
      return;
    }
    bool found = false;
    for (const auto& grp : p_.replica_groups[g].groups) {
      for (int32_t id : grp) found |= id == c_;
    }
    if (!found) Err("group", fmt::format("core {} is in no group of entry {}", c_, g));
  }

  void IciOp(const Instruction& inst) {
    const CollectiveOperands c = CollectiveOperandsOf(inst);
    Positive("count", c.count);
    if (c.space != MemSpace::kHbm && c.space != MemSpace::kVmem) {
      Err("space", fmt::format("{} (must be hbm or vmem)", Name(c.space)));
      return;
    }
    uint64_t n = 1;
    if (inst.opcode == Opcode::kIciCollectivePermute) {
      uint64_t idx = inst.As<op::IciCollectivePermute>().pairs;
      if (idx >= p_.permutations.size()) {
        Err("pairs", fmt::format("{} is not in the permutation table ({} entries)", idx,
                                 p_.permutations.size()));
      } else {
        bool found = false;
        for (auto [s, t] : p_.permutations[idx].pairs) found |= s == c_ || t == c_;
        if (!found) Err("pairs", fmt::format("core {} is named in no pair of entry {}", c_, idx));
      }
    } else {
      const uint64_t g = *ReplicaGroupOf(inst);
      GroupRef(inst, g);
      if (g < p_.replica_groups.size()) {
        for (const auto& grp : p_.replica_groups[g].groups) {
          for (int32_t id : grp) {
            if (id == c_) n = grp.size();
          }
        }
      }
    }
    const uint64_t eb = static_cast<uint64_t>(DTypeBytes(c.dtype));
    Range("src", c.space, c.src, SaturatingMul(c.InputElements(n), eb), eb);
    Range("dst", c.space, c.dst, SaturatingMul(c.OutputElements(n), eb), eb);
  }

  void Flags() {
    for (const auto& w : waits_) {
      if (!signalled_.count({w.core, w.flag})) {
        Add(
            fmt::format("{}: field 'flag': flag {} is waited on but nothing signals it (no "
                        "sync.signal or DMA with that flag on core {}, no remote DMA with "
                        "dst_flag={} to it)",
                        Where(w.core, w.index), w.flag, w.core, w.flag));
      }
    }
  }

  // Static sequences of barriers/collectives per core must agree within each group.
  void Collectives() {
    for (size_t g = 0; g < p_.replica_groups.size(); ++g) {
      for (const auto& grp : p_.replica_groups[g].groups) {
        if (grp.size() < 2) continue;
        auto seq = [&](int core) {
          std::vector<const CollectiveUse*> out;
          if (core < 0 || core >= p_.num_cores()) return out;
          for (const auto& u : collectives_[core]) {
            if (ReplicaGroupOf(u.inst) == std::optional<uint64_t>(g)) {
              out.push_back(&u);
            }
          }
          return out;
        };
        auto ref = seq(grp[0]);
        for (size_t k = 1; k < grp.size(); ++k) {
          auto other = seq(grp[k]);
          if (other.size() != ref.size()) {
            Add(fmt::format(
                "replica group entry {}: core {} runs {} collective(s)/barrier(s) on it "
                "but core {} runs {}",
                g, grp[0], ref.size(), grp[k], other.size()));
            continue;
          }
          for (size_t j = 0; j < ref.size(); ++j) {
            std::string why = Mismatch(*ref[j], *other[j]);
            if (!why.empty()) {
              Add(fmt::format("{}: does not match core {} instruction {} of the same group: {}",
                              Where(grp[k], other[j]->index), grp[0], ref[j]->index, why));
              break;
            }
          }
        }
      }
    }
  }

  struct CollectiveUse {
    size_t index;
    Instruction inst;
    std::vector<uint64_t> loops;  // enclosing loop counts, outermost first
  };

  std::string Mismatch(const CollectiveUse& a, const CollectiveUse& b) const {
    if (a.inst.opcode != b.inst.opcode) {
      return fmt::format("{} vs {}", Mnemonic(a.inst.opcode), Mnemonic(b.inst.opcode));
    }
    const auto& fields = Info(a.inst.opcode).fields;
    for (size_t i = 0; i < fields.size(); ++i) {
      if (fields[i].name == "src" || fields[i].name == "dst") continue;
      if (a.inst.fields[i] != b.inst.fields[i]) {
        return fmt::format("field '{}' differs ({} vs {})", fields[i].name, a.inst.fields[i],
                           b.inst.fields[i]);
      }
    }
    if (a.loops != b.loops) return "it sits in different loops";
    return "";
  }

  struct Wait {
    int core;
    size_t index;
    uint64_t flag;
  };

  const Program& p_;
  const MemorySizes& s_;
  int max_errors_;
  std::vector<std::string> errors_;
  int dropped_ = 0;
  int c_ = 0;
  size_t i_ = 0;
  std::vector<Wait> waits_;
  std::set<std::pair<int, uint64_t>> signalled_;
  std::map<int, std::vector<CollectiveUse>> collectives_;
};

}  // namespace

Status Verify(const Program& program, const MemorySizes& sizes, int max_errors) {
  return Verifier(program, sizes, max_errors).Run();
}

}  // namespace tpusim::isa
