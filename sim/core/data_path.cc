#include "sim/core/data_path.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "isa/indirect_dma.h"
#include "isa/numerics.h"
#include "sim/core/footprint.h"

namespace tpusim::sim {

DataPath::DataPath(MachineState& state, const isa::Program& program, bool values)
    : state_(state), program_(program), scratch_(state.sizes), values_(values) {}

Status DataPath::Dma(int core, const isa::Instruction& inst) {
  if (!values_) return OkStatus();
  auto d = [&](const char* name) { return inst.fields[isa::FieldIndex(inst.opcode, name)]; };
  uint64_t src = d("src"), dst = d("dst"), eb = d("elem_bytes");
  uint64_t n0 = d("n0"), n1 = d("n1"), n2 = d("n2");
  uint64_t ss1 = d("src_s1"), ss2 = d("src_s2"), ds1 = d("dst_s1"), ds2 = d("dst_s2");
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8) {
    return InvalidArgument(fmt::format("elem_bytes={} (must be 1, 2, 4 or 8)", eb));
  }
  if (n0 == 0 || n1 == 0 || n2 == 0) return InvalidArgument("n0, n1 and n2 must be >= 1");
  if (isa::IsIndirectDma(inst.opcode)) {
    // dma.gather / dma.scatter: the ISA layer's one implementation (the interpreter's too).
    return isa::ExecuteIndirectDma(inst, state_.memory(isa::MemSpace::kHbm, core),
                                   state_.memory(isa::MemSpace::kVmem, core));
  }
  isa::SparseMemory* from = nullptr;
  isa::SparseMemory* to = nullptr;
  switch (inst.opcode) {
    case isa::Opcode::kDmaHbmToVmem:
      from = &state_.memory(isa::MemSpace::kHbm, core);
      to = &state_.memory(isa::MemSpace::kVmem, core);
      break;
    case isa::Opcode::kDmaVmemToHbm:
      from = &state_.memory(isa::MemSpace::kVmem, core);
      to = &state_.memory(isa::MemSpace::kHbm, core);
      break;
    case isa::Opcode::kDmaHostToHbm:
      from = &state_.host;
      to = &state_.memory(isa::MemSpace::kHbm, core);
      break;
    case isa::Opcode::kDmaHbmToHost:
      from = &state_.memory(isa::MemSpace::kHbm, core);
      to = &state_.host;
      break;
    case isa::Opcode::kDmaVmemToRemote: {
      auto r = inst.As<isa::op::DmaVmemToRemote>();
      if (r.dst_core >= static_cast<uint64_t>(program_.num_cores())) {
        return InvalidArgument(fmt::format("dst_core={} is not a core of this program ({} cores)",
                                           r.dst_core, program_.num_cores()));
      }
      if (r.dst_space != isa::MemSpace::kVmem && r.dst_space != isa::MemSpace::kHbm) {
        return InvalidArgument("dst_space must be vmem or hbm");
      }
      from = &state_.memory(isa::MemSpace::kVmem, core);
      to = &state_.memory(r.dst_space, static_cast<int>(r.dst_core));
      break;
    }
    default:
      TPUSIM_CHECK(false) << "DataPath::Dma: not a DMA";
  }
  uint64_t run = n0 * eb;
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

Status DataPath::RunScratch(const std::vector<int>& cores,
                            const std::vector<isa::Instruction>& insts) {
  if (!values_) return OkStatus();
  isa::Program p;
  p.cores.resize(static_cast<size_t>(program_.num_cores()));
  p.replica_groups = program_.replica_groups;
  p.permutations = program_.permutations;
  std::vector<std::pair<int, Region>> outputs;
  for (size_t i = 0; i < cores.size(); ++i) {
    const int c = cores[i];
    p.cores[c].instructions.push_back(insts[i]);
    Footprint f = InstructionFootprint(insts[i], c, program_);
    auto add = [&](const Region& r) {
      isa::SparseMemory& mem = state_.memory(r.space, c);
      uint64_t lo = std::min(r.lo, mem.capacity()), hi = std::min(r.hi, mem.capacity());
      if (hi <= lo) return;
      isa::DataSegment seg;
      seg.space = r.space;
      seg.core = c;
      seg.address = lo;
      seg.bytes.resize(hi - lo);
      TPUSIM_CHECK(mem.Read(lo, seg.bytes.data(), hi - lo).ok());
      p.data.push_back(std::move(seg));
    };
    for (const Region& r : f.reads) add(r);
    for (const Region& r : f.writes) {
      add(r);
      outputs.emplace_back(c, r);
    }
  }
  TPUSIM_RETURN_IF_ERROR(scratch_.Load(p));
  Status st = scratch_.Run();
  if (!st.ok()) {
    // The scratch program numbers the instruction 0; drop that prefix, the caller adds the real
    // one.
    std::string m = st.message();
    if (size_t colon = m.find(": "); m.rfind("core ", 0) == 0 && colon != std::string::npos) {
      m = m.substr(colon + 2);
    }
    return Status(st.code(), m);
  }
  std::string buf;
  for (const auto& [c, r] : outputs) {
    isa::SparseMemory& mem = state_.memory(r.space, c);
    uint64_t lo = std::min(r.lo, mem.capacity()), hi = std::min(r.hi, mem.capacity());
    if (hi <= lo) continue;
    buf.resize(hi - lo);
    TPUSIM_CHECK(scratch_.memory(r.space, c).Read(lo, buf.data(), hi - lo).ok());
    TPUSIM_CHECK(mem.Write(lo, buf.data(), hi - lo).ok());
  }
  return OkStatus();
}

Status DataPath::Vector(int core, const isa::Instruction& inst) {
  return RunScratch({core}, {inst});
}

Status DataPath::Collective(const std::vector<int>& members,
                            const std::vector<isa::Instruction>& insts) {
  return RunScratch(members, insts);
}

namespace {

// One MXU input element of `dtype` at `p`, as the array sees it.
float MxuInputF(const uint8_t* p, isa::DType dtype, isa::PrecisionPart part) {
  if (dtype == isa::DType::kBF16) {
    uint16_t b;
    std::memcpy(&b, p, 2);
    return isa::Bf16BitsToF32(b);
  }
  float x;
  std::memcpy(&x, p, 4);
  return isa::Bf16Part(x, part);
}

Status CheckMxuDtype(isa::DType dtype) {
  if (dtype == isa::DType::kBF16 || dtype == isa::DType::kF32 || dtype == isa::DType::kS8) {
    return OkStatus();
  }
  return InvalidArgument(fmt::format("dtype={} (the MXU takes bf16, f32 or s8)", isa::Name(dtype)));
}

}  // namespace

StatusOr<MxuOp> DataPath::LoadWeightsOp(int core, const isa::Instruction& inst, bool values) {
  auto o = inst.As<isa::op::MxuLoadWeights>();
  TPUSIM_RETURN_IF_ERROR(CheckMxuDtype(o.dtype));
  const int64_t k = static_cast<int64_t>(o.k), n = static_cast<int64_t>(o.n);
  const bool int8 = o.dtype == isa::DType::kS8;
  MxuOp op;
  if (!values) {
    op = int8 ? MxuOp::LoadWeightsInt8(k, n, {}) : MxuOp::LoadWeights(k, n, {});
    return op;
  }
  const uint64_t size = static_cast<uint64_t>(isa::DTypeBytes(o.dtype));
  const uint64_t rows = o.transpose ? o.n : o.k, cols = o.transpose ? o.k : o.n;
  std::string buf(((rows - 1) * o.stride + cols) * size, '\0');
  Status st = state_.vmem[core].Read(o.addr, buf.data(), buf.size());
  if (!st.ok()) return InvalidArgument("weights " + st.message());
  const auto* bytes = reinterpret_cast<const uint8_t*>(buf.data());
  auto at = [&](int64_t kk, int64_t nn) {
    uint64_t idx = o.transpose ? static_cast<uint64_t>(nn) * o.stride + static_cast<uint64_t>(kk)
                               : static_cast<uint64_t>(kk) * o.stride + static_cast<uint64_t>(nn);
    return bytes + idx * size;
  };
  if (int8) {
    std::vector<int8_t> w(static_cast<size_t>(k * n));
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t nn = 0; nn < n; ++nn) w[kk * n + nn] = static_cast<int8_t>(*at(kk, nn));
    return MxuOp::LoadWeightsInt8(k, n, std::move(w));
  }
  std::vector<float> w(static_cast<size_t>(k * n));
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t nn = 0; nn < n; ++nn) w[kk * n + nn] = MxuInputF(at(kk, nn), o.dtype, o.part);
  return MxuOp::LoadWeights(k, n, std::move(w));
}

StatusOr<MxuOp> DataPath::MatmulOp(int core, const isa::Instruction& inst, bool values) {
  auto o = inst.As<isa::op::MxuMatmul>();
  TPUSIM_RETURN_IF_ERROR(CheckMxuDtype(o.dtype));
  const int64_t m = static_cast<int64_t>(o.m), k = static_cast<int64_t>(o.k);
  const bool int8 = o.dtype == isa::DType::kS8;
  const int64_t acc = static_cast<int64_t>(o.acc);
  if (!values) {
    return int8 ? MxuOp::MatMulInt8(m, k, {}, o.latch, o.accumulate, acc)
                : MxuOp::MatMul(m, k, {}, o.latch, o.accumulate, acc);
  }
  const uint64_t size = static_cast<uint64_t>(isa::DTypeBytes(o.dtype));
  std::string buf(((o.m - 1) * o.stride + o.k) * size, '\0');
  Status st = state_.vmem[core].Read(o.lhs, buf.data(), buf.size());
  if (!st.ok()) return InvalidArgument("lhs " + st.message());
  const auto* bytes = reinterpret_cast<const uint8_t*>(buf.data());
  if (int8) {
    std::vector<int8_t> a(static_cast<size_t>(m * k));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < k; ++j)
        a[i * k + j] = static_cast<int8_t>(bytes[(static_cast<uint64_t>(i) * o.stride + j) * size]);
    return MxuOp::MatMulInt8(m, k, std::move(a), o.latch, o.accumulate, acc);
  }
  std::vector<float> a(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j)
      a[i * k + j] =
          MxuInputF(bytes + (static_cast<uint64_t>(i) * o.stride + j) * size, o.dtype, o.part);
  return MxuOp::MatMul(m, k, std::move(a), o.latch, o.accumulate, acc);
}

Status DataPath::Pop(int core, const isa::Instruction& inst, const MxuAccumulators& acc) {
  if (!values_) return OkStatus();
  auto o = inst.As<isa::op::MxuPop>();
  const bool f32_acc = o.acc_dtype == isa::DType::kF32;
  if (o.acc_dtype != isa::DType::kF32 && o.acc_dtype != isa::DType::kS32) {
    return InvalidArgument("acc_dtype must be f32 or s32");
  }
  const bool ok_out = f32_acc ? (o.dtype == isa::DType::kF32 || o.dtype == isa::DType::kBF16)
                              : (o.dtype == isa::DType::kS32 || o.dtype == isa::DType::kS8);
  if (!ok_out) {
    return InvalidArgument(fmt::format("dtype={} cannot be produced from acc_dtype={}",
                                       isa::Name(o.dtype), isa::Name(o.acc_dtype)));
  }
  if (o.acc + o.m > static_cast<uint64_t>(acc.rows()) || o.n > static_cast<uint64_t>(acc.cols())) {
    return InvalidArgument(
        fmt::format("rows [{}, {}) x {} columns exceed the accumulators ({} x {})", o.acc,
                    o.acc + o.m, o.n, acc.rows(), acc.cols()));
  }
  const uint64_t size = static_cast<uint64_t>(isa::DTypeBytes(o.dtype));
  std::string row(o.n * size, '\0');
  for (uint64_t m = 0; m < o.m; ++m) {
    for (uint64_t n = 0; n < o.n; ++n) {
      uint32_t w = acc.word(static_cast<int64_t>(o.acc + m), static_cast<int64_t>(n));
      char* out = row.data() + n * size;
      if (f32_acc) {
        float y = isa::ActivateF(o.act, std::bit_cast<float>(w));
        if (o.dtype == isa::DType::kF32) {
          std::memcpy(out, &y, 4);
        } else {
          uint16_t b = isa::F32ToBf16Bits(y);
          std::memcpy(out, &b, 2);
        }
      } else {
        int32_t y = isa::ActivateI(o.act, static_cast<int32_t>(w));
        if (o.dtype == isa::DType::kS32) {
          std::memcpy(out, &y, 4);
        } else {
          auto b = static_cast<int8_t>(isa::SaturateToS8(y));
          std::memcpy(out, &b, 1);
        }
      }
    }
    Status st = state_.vmem[core].Write(o.dst + m * o.stride * size, row.data(), row.size());
    if (!st.ok()) return InvalidArgument("destination " + st.message());
  }
  return OkStatus();
}

}  // namespace tpusim::sim
