// Data movement kernels: broadcast, transpose, slice, reverse, concatenate, pad, iota. All but the
// XLU transpose are strided DMAs through VMEM (GatherKernel / ScatterKernel): the DMA descriptor's
// strides do the index arithmetic (a 0 stride repeats, a permuted stride transposes; a negative
// one, which the DMA cannot take, reverses: the block is loaded forwards and vpu.copy reverses it).
#include <fmt/format.h>

#include <algorithm>

#include "compiler/lower/lowerer.h"

namespace tpusim::compiler {

using hlo::HloInstruction;

namespace {

// A strided view: (count, element stride) per dimension, outer to inner.
using View = std::vector<std::pair<int64_t, int64_t>>;

// `dims` with source element strides `ss`, size-1 dimensions dropped and each dimension merged into
// the next inner one where the two walk the source as one (ss[k] == ss[k+1] * dims[k+1]; two
// repeated dimensions, stride 0, merge too).
View MergedView(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss) {
  View v;
  for (size_t k = dims.size(); k-- > 0;) {
    if (dims[k] == 1) continue;
    if (!v.empty() && ss[k] == v.front().second * v.front().first) {
      v.front().first *= dims[k];
    } else {
      v.insert(v.begin(), {dims[k], ss[k]});
    }
  }
  if (v.empty()) v.push_back({1, 0});
  return v;
}

}  // namespace

// A broadcast of an operand that fits VMEM (per-channel vectors, [C] -> [H, W, C], [C] ->
// [N, C, H, W]): the operand is loaded once and each block of the result is built in VMEM by one
// vpu.copy with zero source strides along the repeated dimensions (the inner three dimensions of
// the merged view, whole outer rows of it per block; one copy per index of any dimension further
// out), then stored — the replication a TPU does in its vector registers, with HBM moving the
// operand once and the result once. A broadcast whose operand does not fit, or that would take more
// than kMaxBroadcastCopies copies, is a GatherKernel (the DMA's zero strides re-read the operand
// from HBM per repeat).
Status Lowerer::LowerBroadcast(const HloInstruction& inst) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  const int64_t e = in.elem_bytes();
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dims, e);
  std::vector<int64_t> ss(out.dims.size(), 0);
  for (size_t i = 0; i < inst.dimensions().size(); ++i) {
    ss[static_cast<size_t>(inst.dimensions()[i])] = in_strides[i];
  }
  std::vector<int64_t> elem_ss;
  for (int64_t x : ss) elem_ss.push_back(x / e);
  View v = MergedView(out.dims, elem_ss);
  while (v.size() < 3) v.insert(v.begin(), {1, 0});
  // v = outer dimensions..., then [rows, middle, inner] of the vpu.copy.
  const View outer(v.begin(), v.end() - 3);
  const View inner(v.end() - 3, v.end());
  int64_t copies = 1;
  for (const auto& d : outer) copies *= d.first;
  constexpr int64_t kMaxBroadcastCopies = 4096;
  constexpr int64_t kMaxCount = (int64_t{1} << 24) - 1;  // vpu.copy's 24-bit counts
  const int64_t budget = em_.vmem_free() - 512 - in.bytes();
  const int64_t row = inner[1].first * inner[2].first;  // elements of one row of the copy
  const bool fits = in.bytes() > 0 && copies <= kMaxBroadcastCopies && budget >= row * e &&
                    inner[1].first <= kMaxCount && inner[2].first <= kMaxCount;
  if (!fits || out.elements() == 0 || in.elements() == out.elements()) {
    return GatherKernel(inst, in.address, ss, out);
  }
  const int64_t rows_per_block = std::min({inner[0].first, budget / (row * e), kMaxCount});
  TPUSIM_ASSIGN_OR_RETURN(uint64_t src, Vmem(inst, in.bytes(), "operand"));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t blk, Vmem(inst, rows_per_block * row * e, "result block"));
  em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, in.address, src, in.bytes(), e, kLoadFlag);
  em_.Wait(kLoadFlag, 1);
  int64_t written = 0;  // result elements stored so far (row-major order)
  for (int64_t c = 0; c < copies; ++c) {
    int64_t src_off = 0;  // the outer index's source element offset
    for (int64_t k = static_cast<int64_t>(outer.size()) - 1, rest = c; k >= 0; --k) {
      src_off += rest % outer[static_cast<size_t>(k)].first * outer[static_cast<size_t>(k)].second;
      rest /= outer[static_cast<size_t>(k)].first;
    }
    for (int64_t r0 = 0; r0 < inner[0].first; r0 += rows_per_block) {
      const int64_t n = std::min(rows_per_block, inner[0].first - r0);
      em_.Emit(isa::op::VpuCopy{
          .dtype = in.dtype,
          .dst = blk,
          .src = src + static_cast<uint64_t>((src_off + r0 * inner[0].second) * e),
          .n0 = static_cast<uint64_t>(inner[2].first),
          .n1 = static_cast<uint64_t>(inner[1].first),
          .n2 = static_cast<uint64_t>(n),
          .src_s0 = inner[2].second,
          .src_s1 = inner[1].second,
          .src_s2 = inner[0].second,
          .dst_s0 = 1,
          .dst_s1 = inner[2].first,
          .dst_s2 = row});
      em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, blk,
                        out.address + static_cast<uint64_t>(written * e), n * row * e, e,
                        kStoreFlag);
      em_.Wait(kStoreFlag, 1);
      written += n * row;
    }
  }
  return OkStatus();
}

Status Lowerer::LowerTranspose(const HloInstruction& inst) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  const std::vector<int64_t>& perm = inst.dimensions();
  const int64_t e = in.elem_bytes();
  // Swapping the two minor dimensions (with any leading batch dimensions kept in place) runs on the
  // XLU: blocks of whole [rows, cols] slabs are loaded, transposed slab by slab, and stored, each
  // with one contiguous DMA.
  const size_t rank = in.dims.size();
  bool minor_swap = rank >= 2 && perm[rank - 2] == static_cast<int64_t>(rank) - 1 &&
                    perm[rank - 1] == static_cast<int64_t>(rank) - 2;
  for (size_t i = 0; i + 2 < rank; ++i)
    minor_swap = minor_swap && perm[i] == static_cast<int64_t>(i);
  if (minor_swap) {
    const int64_t rows = in.dims[rank - 2], cols = in.dims[rank - 1];
    const int64_t slab = rows * cols * e;
    int64_t slabs = 1;
    for (size_t i = 0; i + 2 < rank; ++i) slabs *= in.dims[i];
    const int64_t per_block =
        std::min(slabs, (em_.vmem_free() - 128) / std::max<int64_t>(1, 2 * slab));
    if (per_block >= 1 && slab > 0) {
      TPUSIM_ASSIGN_OR_RETURN(uint64_t src, Vmem(inst, per_block * slab, "operand slabs"));
      TPUSIM_ASSIGN_OR_RETURN(uint64_t dst, Vmem(inst, per_block * slab, "result slabs"));
      for (int64_t s0 = 0; s0 < slabs; s0 += per_block) {
        const int64_t k = std::min(per_block, slabs - s0);
        const uint64_t off = static_cast<uint64_t>(s0 * slab);
        em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, in.address + off, src, k * slab, e,
                          kLoadFlag);
        em_.Wait(kLoadFlag, 1);
        for (int64_t j = 0; j < k; ++j) {
          em_.Emit(isa::op::XluTranspose{.dtype = in.dtype,
                                         .dst = dst + static_cast<uint64_t>(j * slab),
                                         .src = src + static_cast<uint64_t>(j * slab),
                                         .rows = static_cast<uint64_t>(rows),
                                         .cols = static_cast<uint64_t>(cols)});
        }
        em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, dst, out.address + off, k * slab, e,
                          kStoreFlag);
        em_.Wait(kStoreFlag, 1);
      }
      return OkStatus();
    }
  }
  // Otherwise a strided gather: out dim i reads operand dim perm[i].
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dims, e);
  std::vector<int64_t> ss;
  for (int64_t p : perm) ss.push_back(in_strides[static_cast<size_t>(p)]);
  return GatherKernel(inst, in.address, ss, out);
}

// A copy or reshape that moves data (passes/data_formatting.h, MovesData): XLA's "data
// formatting". The simulated memory holds both arrays row-major
// in their logical dimensions, so the elements move in order, streamed through VMEM; each side's
// DMAs move its tile-padded bytes in its own layout (CoreEmitter::HbmBytes), which is what the TPU
// profiles show such an op moving. The physical transposition between the two tile layouts on the
// XLU is not modelled (docs/codegen.md).
Status Lowerer::LowerCopy(const HloInstruction& inst) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  return GatherKernel(inst, in.address, RowMajorStrides(out.dims, in.elem_bytes()), out);
}

Status Lowerer::LowerSlice(const HloInstruction& inst) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  const std::vector<int64_t> in_strides = RowMajorStrides(in.dims, in.elem_bytes());
  uint64_t base = in.address;
  std::vector<int64_t> ss;
  for (size_t i = 0; i < in.dims.size(); ++i) {
    const int64_t step = i < inst.slice_strides().size() ? inst.slice_strides()[i] : 1;
    base += static_cast<uint64_t>(inst.slice_starts()[i] * in_strides[i]);
    ss.push_back(in_strides[i] * step);
  }
  return GatherKernel(inst, base, ss, out);
}

Status Lowerer::LowerReverse(const HloInstruction& inst) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& out = Buffer(&inst);
  std::vector<int64_t> ss = RowMajorStrides(in.dims, in.elem_bytes());
  // out[i] reads in[dims - 1 - i] along each reversed dimension: from its last element, backwards.
  uint64_t base = in.address;
  for (int64_t dim : inst.dimensions()) {
    const size_t k = static_cast<size_t>(dim);
    if (in.dims[k] > 0) base += static_cast<uint64_t>((in.dims[k] - 1) * ss[k]);
    ss[k] = -ss[k];
  }
  return GatherKernel(inst, base, ss, out);
}

Status Lowerer::LowerConcatenate(const HloInstruction& inst) {
  const HbmBuffer& out = Buffer(&inst);
  const size_t d = static_cast<size_t>(inst.dimensions()[0]);
  const std::vector<int64_t> out_strides = RowMajorStrides(out.dims, out.elem_bytes());
  int64_t offset = 0;
  for (const HloInstruction* op : inst.operands()) {
    const HbmBuffer& in = Buffer(op);
    if (in.elements() > 0) {
      em_.ResetVmem();
      TPUSIM_RETURN_IF_ERROR(ScatterKernel(
          inst, in, out.address + static_cast<uint64_t>(offset * out_strides[d]), out_strides));
    }
    offset += in.dims[d];
  }
  return OkStatus();
}

Status Lowerer::LowerPad(const HloInstruction& inst) {
  const HbmBuffer& in = Buffer(inst.operand(0));
  const HbmBuffer& value = Buffer(inst.operand(1));
  const HbmBuffer& out = Buffer(&inst);
  const auto& pc = inst.padding_config().dimensions;
  for (const auto& p : pc) {
    if (p.edge_padding_low < 0 || p.edge_padding_high < 0 || p.interior_padding < 0) {
      return Unsupported(inst, "negative padding (a pad that slices) is not supported");
    }
  }
  const std::vector<int64_t> out_strides = RowMajorStrides(out.dims, out.elem_bytes());
  // 1. The padding value: only the edges around the operand's box when there is no interior
  // padding (per dimension i, the slabs below and above it, spanning the box in dimensions < i and
  // everything in dimensions > i), else the whole result.
  bool interior = false;
  for (const auto& p : pc) interior = interior || p.interior_padding > 0;
  if (interior || in.elements() == 0) {
    TPUSIM_RETURN_IF_ERROR(FillBox(inst, value, out.address, out.dims, out_strides));
  } else {
    for (size_t i = 0; i < out.dims.size(); ++i) {
      for (bool high : {false, true}) {
        std::vector<int64_t> box = out.dims;
        uint64_t base = out.address;
        for (size_t j = 0; j < i; ++j) {
          box[j] = in.dims[j];
          base += static_cast<uint64_t>(pc[j].edge_padding_low * out_strides[j]);
        }
        box[i] = high ? pc[i].edge_padding_high : pc[i].edge_padding_low;
        if (high)
          base += static_cast<uint64_t>((pc[i].edge_padding_low + in.dims[i]) * out_strides[i]);
        em_.ResetVmem();
        TPUSIM_RETURN_IF_ERROR(FillBox(inst, value, base, box, out_strides));
      }
    }
  }
  // 2. Scatter the operand into its interior positions.
  if (in.elements() == 0) return OkStatus();
  uint64_t base = out.address;
  std::vector<int64_t> ds;
  for (size_t i = 0; i < out.dims.size(); ++i) {
    base += static_cast<uint64_t>(pc[i].edge_padding_low * out_strides[i]);
    ds.push_back(out_strides[i] * (pc[i].interior_padding + 1));
  }
  em_.ResetVmem();
  return ScatterKernel(inst, in, base, ds);
}

StatusOr<uint64_t> Lowerer::LoadPaddingValue(const HloInstruction& reader,
                                             const HloInstruction& pad) {
  const HbmBuffer& v = Buffer(pad.operand(1));
  TPUSIM_ASSIGN_OR_RETURN(uint64_t at, Vmem(reader, 64, "padding value"));
  em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, v.address, at, v.elem_bytes(), v.elem_bytes(),
                    kLoadFlag);
  return at;
}

StatusOr<int64_t> Lowerer::LoadPaddedRows(const HloInstruction& pad, int64_t row0, int64_t rows,
                                          uint64_t dst, uint64_t value, uint64_t flag) {
  const HbmBuffer& in = Buffer(pad.operand(0));
  const HbmBuffer& p = Buffer(&pad);  // the operand's buffer, the pad's dims
  const auto& pc = pad.padding_config().dimensions;
  const int64_t cols = p.dims[1], e = p.elem_bytes();
  em_.Emit(isa::op::VpuBroadcast{.mode = isa::Broadcast::kScalar,
                                 .dtype = p.dtype,
                                 .dst = dst,
                                 .src = value,
                                 .rows = static_cast<uint64_t>(rows),
                                 .cols = static_cast<uint64_t>(cols)});
  // Operand rows inside [row0, row0 + rows), each placed at column edge_padding_low.
  const int64_t lo = pc[0].edge_padding_low, in_rows = in.dims[0], in_cols = in.dims[1];
  const int64_t first = std::max(row0, lo), last = std::min(row0 + rows, lo + in_rows);
  if (first >= last || in_cols == 0) return int64_t{0};
  const std::vector<int64_t> dims{last - first, in_cols}, ss{in_cols * e, e}, ds{cols * e, e};
  return em_.Dma(isa::Opcode::kDmaHbmToVmem,
                 in.address + static_cast<uint64_t>((first - lo) * in_cols * e), ss,
                 dst + static_cast<uint64_t>(((first - row0) * cols + pc[1].edge_padding_low) * e),
                 ds, dims, e, flag);
}

Status Lowerer::LowerIota(const HloInstruction& inst) {
  const HbmBuffer& out = Buffer(&inst);
  const int64_t e = out.elem_bytes();
  if (IsVirtualBroadcast(inst)) {
    // Along the last dimension: only its row [0, .., cols - 1] is stored (VirtualBroadcastKind);
    // the readers repeat it.
    const int64_t cols = out.dims.back();
    TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, Vmem(inst, cols * e, "iota row"));
    em_.Emit(isa::op::VpuIota{.dtype = out.dtype,
                              .dst = buf,
                              .rows = 1,
                              .cols = static_cast<uint64_t>(cols),
                              .axis = isa::ReduceAxis::kLanes});
    em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, buf, out.address, cols * e, e, kStoreFlag);
    em_.Wait(kStoreFlag, 1);
    return OkStatus();
  }
  const size_t d = static_cast<size_t>(inst.iota_dimension());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < d; ++i) outer *= out.dims[i];
  for (size_t i = d + 1; i < out.dims.size(); ++i) inner *= out.dims[i];
  const int64_t len = out.dims[d];
  // [len, inner] block with value = row index, written `outer` times with a 0-stride source.
  TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, Vmem(inst, len * inner * e, "iota block"));
  em_.Emit(isa::op::VpuIota{.dtype = out.dtype,
                            .dst = buf,
                            .rows = static_cast<uint64_t>(len),
                            .cols = static_cast<uint64_t>(inner),
                            .axis = isa::ReduceAxis::kSublanes});
  const std::vector<int64_t> dims{outer, len * inner};
  const std::vector<int64_t> ss{0, e};
  const std::vector<int64_t> ds{len * inner * e, e};
  TPUSIM_ASSIGN_OR_RETURN(int64_t n, em_.Dma(isa::Opcode::kDmaVmemToHbm, buf, ss, out.address, ds,
                                             dims, e, kStoreFlag));
  em_.Wait(kStoreFlag, n);
  return OkStatus();
}

}  // namespace tpusim::compiler
