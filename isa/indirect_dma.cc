#include "isa/indirect_dma.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/saturating.h"
#include "isa/numerics.h"

namespace tpusim::isa {

bool IsIndirectDma(Opcode op) { return op == Opcode::kDmaGather || op == Opcode::kDmaScatter; }

IndirectDma IndirectDma::From(const Instruction& inst) {
  IndirectDma d;
  auto fill = [&](const auto& o) {
    d.src = o.src, d.dst = o.dst, d.elem_bytes = o.elem_bytes;
    d.n0 = o.n0, d.n1 = o.n1, d.n2 = o.n2;
    d.src_s1 = o.src_s1, d.src_s2 = o.src_s2, d.dst_s1 = o.dst_s1, d.dst_s2 = o.dst_s2;
    d.idx = o.idx, d.count = o.count, d.idx_scale = o.idx_scale, d.bound = o.bound;
    d.slice_stride = o.slice_stride;
  };
  if (inst.opcode == Opcode::kDmaScatter) {
    auto o = inst.As<op::DmaScatter>();
    fill(o);
    d.scatter = true;
    d.combine = o.combine;
    d.op = o.op;
    d.dtype = o.dtype;
  } else {
    fill(inst.As<op::DmaGather>());
  }
  return d;
}

namespace {

// Bytes spanned by a box side with strides s1, s2: (n2-1)*s2 + (n1-1)*s1 + n0*elem_bytes.
uint64_t BoxExtent(const IndirectDma& d, uint64_t s1, uint64_t s2) {
  return SaturatingAdd(SaturatingAdd(SaturatingMul(d.n2 - 1, s2), SaturatingMul(d.n1 - 1, s1)), SaturatingMul(d.n0, d.elem_bytes));
}

}  // namespace

uint64_t IndirectDma::hbm_extent() const {
  const uint64_t box =
      scatter ? BoxExtent(*this, dst_s1, dst_s2) : BoxExtent(*this, src_s1, src_s2);
  return SaturatingAdd(SaturatingMul(bound, idx_scale), box);
}

uint64_t IndirectDma::vmem_extent() const {
  const uint64_t box =
      scatter ? BoxExtent(*this, src_s1, src_s2) : BoxExtent(*this, dst_s1, dst_s2);
  return SaturatingAdd(SaturatingMul(count - 1, slice_stride), box);
}

namespace {

// Applies the scatter combiner to one run of `n` elements: dst = op(dst, upd).
void CombineRun(const IndirectDma& d, uint8_t* dst, const uint8_t* upd, uint64_t n) {
  const uint64_t eb = d.elem_bytes;
  for (uint64_t k = 0; k < n; ++k) {
    uint8_t* x = dst + k * eb;
    const uint8_t* y = upd + k * eb;
    if (!IsFloat(d.dtype)) {
      StoreInt(x, d.dtype, ReduceI(d.op, LoadInt(x, d.dtype), LoadInt(y, d.dtype), d.dtype));
    } else {
      const float a = LoadFloat(x, d.dtype), b = LoadFloat(y, d.dtype);
      const float r = d.op == ReduceOp::kSum   ? a + b
                      : d.op == ReduceOp::kMax ? MaxF(a, b)
                                               : MinF(a, b);
      StoreFloat(x, d.dtype, r);
    }
  }
}

}  // namespace

Status ExecuteIndirectDma(const Instruction& inst, SparseMemory& hbm, SparseMemory& vmem) {
  TPUSIM_CHECK(IsIndirectDma(inst.opcode)) << "ExecuteIndirectDma: " << Mnemonic(inst.opcode);
  const IndirectDma d = IndirectDma::From(inst);
  const uint64_t eb = d.elem_bytes;
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8) {
    return InvalidArgument(fmt::format("elem_bytes={} (must be 1, 2, 4 or 8)", eb));
  }
  if (d.n0 == 0 || d.n1 == 0 || d.n2 == 0) return InvalidArgument("n0, n1 and n2 must be >= 1");
  if (d.count == 0) return InvalidArgument("count must be >= 1");
  if (d.combine) {
    if (d.dtype == DType::kPred) {
      return InvalidArgument("dtype=pred (a scatter combiner computes on numbers, not pred)");
    }
    if (static_cast<uint64_t>(DTypeBytes(d.dtype)) != eb) {
      return InvalidArgument(fmt::format("dtype={} but elem_bytes={}", Name(d.dtype), eb));
    }
  }
  const uint64_t run = d.n0 * eb;
  if (d.n0 > (uint64_t{1} << 40) / eb || d.n1 * d.n2 > (uint64_t{1} << 40) / run ||
      d.count > (uint64_t{1} << 40) / (run * d.n1 * d.n2)) {
    return InvalidArgument("transfer larger than 2^40 bytes");
  }
  if (d.bound != 0 && d.idx_scale > UINT64_MAX / d.bound) {
    return InvalidArgument("bound * idx_scale overflows 64 bits");
  }
  // The index list.
  std::vector<int32_t> idx(d.count);
  if (Status st = vmem.Read(d.idx, idx.data(), d.idx_bytes()); !st.ok()) {
    return InvalidArgument("index list " + st.message());
  }
  const uint64_t box = run * d.n1 * d.n2;
  std::string buf(box * d.count, '\0');
  // Visits the runs of one box: f(byte offset within the packed box, source offset, dst offset).
  auto runs = [&](auto&& f) -> Status {
    uint64_t off = 0;
    for (uint64_t i2 = 0; i2 < d.n2; ++i2) {
      for (uint64_t i1 = 0; i1 < d.n1; ++i1, off += run) {
        TPUSIM_RETURN_IF_ERROR(
            f(off, i2 * d.src_s2 + i1 * d.src_s1, i2 * d.dst_s2 + i1 * d.dst_s1));
      }
    }
    return OkStatus();
  };
  if (!d.scatter) {
    for (uint64_t j = 0; j < d.count; ++j) {
      const uint64_t i =
          static_cast<uint64_t>(std::clamp<int64_t>(idx[j], 0, static_cast<int64_t>(d.bound)));
      const uint64_t base = d.src + i * d.idx_scale;
      TPUSIM_RETURN_IF_ERROR(runs([&](uint64_t off, uint64_t so, uint64_t) -> Status {
        Status st = hbm.Read(base + so, buf.data() + j * box + off, run);
        return st.ok() ? st : InvalidArgument("source " + st.message());
      }));
    }
    for (uint64_t j = 0; j < d.count; ++j) {
      const uint64_t base = d.dst + j * d.slice_stride;
      TPUSIM_RETURN_IF_ERROR(runs([&](uint64_t off, uint64_t, uint64_t dof) -> Status {
        Status st = vmem.Write(base + dof, buf.data() + j * box + off, run);
        return st.ok() ? st : InvalidArgument("destination " + st.message());
      }));
    }
    return OkStatus();
  }
  for (uint64_t j = 0; j < d.count; ++j) {
    const uint64_t base = d.src + j * d.slice_stride;
    TPUSIM_RETURN_IF_ERROR(runs([&](uint64_t off, uint64_t so, uint64_t) -> Status {
      Status st = vmem.Read(base + so, buf.data() + j * box + off, run);
      return st.ok() ? st : InvalidArgument("source " + st.message());
    }));
  }
  std::string old(d.combine ? run : 0, '\0');
  for (uint64_t j = 0; j < d.count; ++j) {
    if (idx[j] < 0 || static_cast<uint64_t>(idx[j]) > d.bound) continue;  // out of bounds: skipped
    const uint64_t base = d.dst + static_cast<uint64_t>(idx[j]) * d.idx_scale;
    TPUSIM_RETURN_IF_ERROR(runs([&](uint64_t off, uint64_t, uint64_t dof) -> Status {
      const char* upd = buf.data() + j * box + off;
      if (d.combine) {
        Status st = hbm.Read(base + dof, old.data(), run);
        if (!st.ok()) return InvalidArgument("destination " + st.message());
        CombineRun(d, reinterpret_cast<uint8_t*>(old.data()), reinterpret_cast<const uint8_t*>(upd),
                   d.n0);
        upd = old.data();
      }
      Status st = hbm.Write(base + dof, upd, run);
      return st.ok() ? st : InvalidArgument("destination " + st.message());
    }));
  }
  return OkStatus();
}

}  // namespace tpusim::isa
