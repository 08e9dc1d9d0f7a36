// A grouped convolution with few input features per group — a depthwise convolution, its input
// gradient — on the vector units (hlo/convolution_form.h, VpuConvolution), as XLA's TPU backend
// runs depthwise convolutions: output features on the VPU lanes, one multiply-accumulate per
// window position ("tap") and input feature of a group, no MXU and no im2col array.
//
// Input: a canonical VPU convolution (passes/convolution_lowering.h): input [N, H, W, G * cg]
// (features minor, read in place at strides sN, sH, sW), kernel [KH, KW, cg, G * og] ("io"),
// output [N, OH, OW, G * og], row-major in HBM.
//
// Blocks. A block is `bh` output rows (all OW columns) of one image and `gc` groups (gc * cg input
// features, gc * og output lanes). Per block the band of input rows its windows cover — with the
// halo, at padded and base-dilated positions, zero-filled by vpu.fill where it holds padding or
// dilation holes — is DMA'd into VMEM (three band buffers: the next block's band loads while this
// one is computed); the kernel rows of the chunk's groups, [KH * KW * cg, gc * og], stay in VMEM
// for all blocks of the chunk (two buffers: the next chunk's load overlaps). Operands are brought
// to the VPU's compute type (f32, or s32 for integers) by vpu.convert once per band and kernel
// chunk; f32 operands at one MXU pass of precision (DEFAULT) are rounded to bf16 first, the
// numerics XLA's precision config allows and the evaluator checks.
//
// Per tap (kh, kw) and input feature j of a group: one vpu.copy gathers the shifted window —
// output pixel (r, ow), lane o reads band row r * stride_h + kh * dilation_h, column
// ow * stride_w + kw * dilation_w, feature (o / og) * cg + j: strides and the depthwise
// multiplier (a source stride of 0 repeats a feature over its og lanes) are addressing, not
// data — then vpu.binary mul by the tap's weight row (b_bcast=row) and vpu.binary add into the
// block's f32 accumulator. The first product initializes the accumulator. The result is
// converted to the output type and DMA'd out (two result buffers: a block's store overlaps the
// next block).
//
// Summation order: per output element, the products in (tap row-major, j) order added one after
// another — the evaluator's order for this form (hlo::ConvolutionSummationOrder), so f32 and bf16
// results agree bit for bit.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "compiler/lower/conv_band.h"
#include "compiler/lower/lowerer.h"
#include "compiler/lower/mxu_passes.h"
#include "hlo/convolution_form.h"

namespace tpusim::compiler {

using hlo::HloInstruction;

namespace {

int64_t Align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// A block count per image large enough that the next block's band loads while this block runs;
// fewer when the image has fewer output rows. (A compiler choice, not a modelled figure.)
constexpr int64_t kMinBlocksPerImage = 4;

struct VpuConvBlocks {
  int64_t gc = 1, bh = 1;          // groups of a chunk, output rows of a block
  int64_t band_h = 1, band_w = 1;  // band rows and columns (padded, dilated positions)
};

// Element sizes and conversions of one VPU convolution.
struct VpuConvTypes {
  isa::DType ct = isa::DType::kF32;  // compute type
  bool convert_in = false, convert_w = false, round_in = false, round_w = false;
  int64_t le = 4, re = 4, oe = 4, ce = 4;
};

// VMEM bytes of `b`: three raw bands, a compute-type band (when converted), two raw kernel chunks
// and one converted, the gather buffer, two accumulators (the result when it needs no conversion)
// and two result buffers.
int64_t VpuConvVmemBytes(const hlo::VpuConvolution& p, const VpuConvBlocks& b,
                         const VpuConvTypes& t) {
  const int64_t band = b.band_h * b.band_w * b.gc * p.cg;
  const int64_t kernel = p.KH * p.KW * p.cg * b.gc * p.og;
  const int64_t block = b.bh * p.OW * b.gc * p.og;
  int64_t bytes = 3 * Align64(band * t.le) + 2 * Align64(kernel * t.re) + Align64(block * t.ce) +
                  2 * Align64(block * t.ce) + 2 * Align64(block * t.oe);
  if (t.convert_in || t.round_in) bytes += Align64(band * t.ce);
  if (t.convert_w || t.round_w) bytes += Align64(kernel * t.ce);
  return bytes;
}

// The most groups per chunk, then the most output rows per block (at least kMinBlocksPerImage
// blocks per image when it has the rows), that fit `vmem` bytes.
std::optional<VpuConvBlocks> ChooseVpuConvBlocks(const hlo::VpuConvolution& p,
                                                 const VpuConvTypes& t, int64_t vmem) {
  const int64_t max_bh = std::max<int64_t>(1, (p.OH + kMinBlocksPerImage - 1) / kMinBlocksPerImage);
  for (int64_t gc = p.G; gc >= 1; gc = gc > 1 ? (gc + 1) / 2 : 0) {
    for (int64_t bh = max_bh; bh >= 1; --bh) {
      VpuConvBlocks b;
      b.gc = gc;
      b.bh = (p.OH + (p.OH + bh - 1) / bh - 1) / ((p.OH + bh - 1) / bh);  // even blocks
      b.band_h = BandExtent(b.bh, p.wh.stride, p.KH, p.wh.window_dilation);
      b.band_w = BandExtent(p.OW, p.ww.stride, p.KW, p.ww.window_dilation);
      if (VpuConvVmemBytes(p, b, t) <= vmem) return b;
    }
    if (gc == 1) break;
  }
  return std::nullopt;
}

class VpuConvEmitter {
 public:
  VpuConvEmitter(CoreEmitter& em, const HloInstruction& inst, const hlo::VpuConvolution& p,
                 const VpuConvBlocks& b, const VpuConvTypes& t, const HbmBuffer& in,
                 const HbmBuffer& kernel, const HbmBuffer& out)
      : em_(em), inst_(inst), p_(p), b_(b), t_(t), L_(in), W_(kernel), O_(out) {}

  Status Run() {
    TPUSIM_RETURN_IF_ERROR(Allocate());
    for (int64_t g0 = 0; g0 < p_.G; g0 += b_.gc) {
      for (int64_t n = 0; n < p_.N; ++n) {
        for (int64_t oh0 = 0; oh0 < p_.OH; oh0 += b_.bh) steps_.push_back({g0, n, oh0});
      }
    }
    TPUSIM_ASSIGN_OR_RETURN(int64_t pending, IssueLoads(0));
    for (size_t i = 0; i < steps_.size(); ++i) {
      em_.Wait(kLoadFlag, pending);
      pending = 0;
      if (i + 1 < steps_.size()) {
        TPUSIM_ASSIGN_OR_RETURN(pending, IssueLoads(i + 1));
      }
      TPUSIM_RETURN_IF_ERROR(Compute(i));
      TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
    }
    em_.Wait(kOutFlag0, store_count_[0]);
    em_.Wait(kOutFlag0 + 1, store_count_[1]);
    return OkStatus();
  }

 private:
  static constexpr uint64_t kLoadFlag = 2, kOutFlag0 = 4;
  struct Step {
    int64_t g0, n, oh0;
  };

  int64_t Gc(const Step& s) const { return std::min(b_.gc, p_.G - s.g0); }
  int64_t Bh(const Step& s) const { return std::min(b_.bh, p_.OH - s.oh0); }
  int64_t Chunk(size_t i) const { return steps_[i].g0 / b_.gc; }
  bool NewChunk(size_t i) const { return i == 0 || Chunk(i) != Chunk(i - 1); }

  StatusOr<uint64_t> Alloc(int64_t bytes, const char* what) {
    const int64_t a = em_.AllocVmem(bytes);
    if (a < 0) {
      return DoesNotFit(inst_, fmt::format("VMEM: the {} need {} bytes", what, bytes));
    }
    return static_cast<uint64_t>(a);
  }

  Status Allocate() {
    band_elems_ = b_.band_h * b_.band_w * b_.gc * p_.cg;
    kernel_elems_ = p_.KH * p_.KW * p_.cg * b_.gc * p_.og;
    block_elems_ = b_.bh * p_.OW * b_.gc * p_.og;
    TPUSIM_ASSIGN_OR_RETURN(band0_, Alloc(3 * Align64(band_elems_ * t_.le), "input bands"));
    TPUSIM_ASSIGN_OR_RETURN(w0_, Alloc(2 * Align64(kernel_elems_ * t_.re), "kernel chunks"));
    TPUSIM_ASSIGN_OR_RETURN(tmp_, Alloc(Align64(block_elems_ * t_.ce), "gathered windows"));
    TPUSIM_ASSIGN_OR_RETURN(acc0_, Alloc(2 * Align64(block_elems_ * t_.ce), "accumulators"));
    TPUSIM_ASSIGN_OR_RETURN(out0_, Alloc(2 * Align64(block_elems_ * t_.oe), "result blocks"));
    if (t_.convert_in || t_.round_in) {
      TPUSIM_ASSIGN_OR_RETURN(band_c_, Alloc(Align64(band_elems_ * t_.ce), "converted bands"));
    }
    if (t_.convert_w || t_.round_w) {
      TPUSIM_ASSIGN_OR_RETURN(w_c_, Alloc(Align64(kernel_elems_ * t_.ce), "converted kernel"));
    }
    return OkStatus();
  }
  uint64_t Band(size_t i) const {
    return band0_ + (i % 3) * static_cast<uint64_t>(Align64(band_elems_ * t_.le));
  }
  uint64_t Weights(size_t i) const {
    return w0_ + (Chunk(i) % 2) * static_cast<uint64_t>(Align64(kernel_elems_ * t_.re));
  }
  uint64_t Acc(size_t i) const {
    return acc0_ + (i % 2) * static_cast<uint64_t>(Align64(block_elems_ * t_.ce));
  }
  uint64_t Out(size_t i) const {
    return out0_ + (i % 2) * static_cast<uint64_t>(Align64(block_elems_ * t_.oe));
  }

  StatusOr<int64_t> IssueLoads(size_t i) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, LoadBand(i));
    if (NewChunk(i)) {
      // Kernel rows [KH * KW * cg, gc * og] of the chunk's groups.
      const Step& s = steps_[i];
      const int64_t oc = Gc(s) * p_.og, re = t_.re;
      const std::vector<int64_t> dims{p_.KH * p_.KW * p_.cg, oc};
      const std::vector<int64_t> ss{p_.O() * re, re}, ds{oc * re, re};
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d, em_.Dma(isa::Opcode::kDmaHbmToVmem,
                             W_.address + static_cast<uint64_t>(s.g0 * p_.og * re), ss, Weights(i),
                             ds, dims, re, kLoadFlag));
      n += d;
    }
    return n;
  }

  // The band of block i: [band_h, band_w, gc * cg] at padded, dilated positions.
  StatusOr<int64_t> LoadBand(size_t i) {
    const Step& s = steps_[i];
    const int64_t rows = BandExtent(Bh(s), p_.wh.stride, p_.KH, p_.wh.window_dilation);
    const int64_t cc = Gc(s) * p_.cg, le = t_.le;
    const BandSpan hs = InputSpan(s.oh0 * p_.wh.stride, rows, p_.H, p_.wh);
    const BandSpan ws = InputSpan(0, b_.band_w, p_.W, p_.ww);
    if (hs.holes || ws.holes) {
      em_.Emit(isa::op::VpuFill{.dtype = L_.dtype,
                                .dst = Band(i),
                                .count = static_cast<uint64_t>(rows * b_.band_w * cc),
                                .value = 0});
    }
    if (hs.hi < hs.lo || ws.hi < ws.lo) return int64_t{0};
    const int64_t r0 = hs.lo * p_.wh.base_dilation + p_.wh.padding_low - s.oh0 * p_.wh.stride;
    const int64_t q0 = ws.lo * p_.ww.base_dilation + p_.ww.padding_low;
    const std::vector<int64_t> dims{hs.hi - hs.lo + 1, ws.hi - ws.lo + 1, cc};
    const std::vector<int64_t> ss{p_.sH * le, p_.sW * le, le};
    const std::vector<int64_t> ds{p_.wh.base_dilation * b_.band_w * cc * le,
                                  p_.ww.base_dilation * cc * le, le};
    const uint64_t src = L_.address + static_cast<uint64_t>((s.n * p_.sN + hs.lo * p_.sH +
                                                             ws.lo * p_.sW + s.g0 * p_.cg) *
                                                            le);
    const uint64_t dst = Band(i) + static_cast<uint64_t>((r0 * b_.band_w + q0) * cc * le);
    return em_.Dma(isa::Opcode::kDmaHbmToVmem, src, ss, dst, ds, dims, le, kLoadFlag);
  }

  // `count` elements at `raw` (type `from`) in the compute type: at `conv` when converted (through
  // bf16 when `round`), at `raw` itself otherwise.
  uint64_t ToCompute(uint64_t raw, isa::DType from, bool convert, bool round, uint64_t conv,
                     int64_t count) {
    const auto n = static_cast<uint64_t>(count);
    if (round) {  // f32 -> bf16 -> f32: one MXU pass's operand rounding
      em_.Emit(isa::op::VpuConvert{
          .src_dtype = from, .dtype = isa::DType::kBF16, .dst = conv, .src = raw, .count = n});
      em_.Emit(isa::op::VpuConvert{
          .src_dtype = isa::DType::kBF16, .dtype = t_.ct, .dst = raw, .src = conv, .count = n});
      return raw;
    }
    if (!convert) return raw;
    em_.Emit(isa::op::VpuConvert{.src_dtype = from, .dtype = t_.ct, .dst = conv, .src = raw,
                                 .count = n});
    return conv;
  }

  Status Compute(size_t i) {
    const Step& s = steps_[i];
    const int64_t gc = Gc(s), bh = Bh(s), cc = gc * p_.cg, oc = gc * p_.og;
    const int64_t rows = BandExtent(bh, p_.wh.stride, p_.KH, p_.wh.window_dilation);
    const uint64_t band = ToCompute(Band(i), L_.dtype, t_.convert_in, t_.round_in, band_c_,
                                    rows * b_.band_w * cc);
    if (NewChunk(i)) {
      weights_ = ToCompute(Weights(i), W_.dtype, t_.convert_w, t_.round_w, w_c_,
                           p_.KH * p_.KW * p_.cg * oc);
    }
    const int o = static_cast<int>(i % 2);
    em_.Wait(kOutFlag0 + static_cast<uint64_t>(o), store_count_[o]);
    store_count_[o] = 0;
    const uint64_t acc = Acc(i);
    const auto ce = static_cast<uint64_t>(t_.ce);
    const auto pixels = static_cast<uint64_t>(bh * p_.OW);
    bool first = true;
    for (int64_t kh = 0; kh < p_.KH; ++kh) {
      for (int64_t kw = 0; kw < p_.KW; ++kw) {
        for (int64_t j = 0; j < p_.cg; ++j) {
          const int64_t origin = (kh * p_.wh.window_dilation * b_.band_w +
                                  kw * p_.ww.window_dilation) * cc + j;
          Gather(band + static_cast<uint64_t>(origin) * ce, bh, gc, cc);
          const uint64_t wrow = weights_ + static_cast<uint64_t>(((kh * p_.KW + kw) * p_.cg + j) *
                                                                 oc) * ce;
          em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kMul, .dtype = t_.ct,
                                      .dst = first ? acc : tmp_, .a = tmp_, .b = wrow,
                                      .rows = pixels, .cols = static_cast<uint64_t>(oc),
                                      .a_bcast = isa::Broadcast::kNone,
                                      .b_bcast = isa::Broadcast::kRow});
          if (!first) {
            em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kAdd, .dtype = t_.ct, .dst = acc,
                                        .a = acc, .b = tmp_, .rows = pixels,
                                        .cols = static_cast<uint64_t>(oc)});
          }
          first = false;
        }
      }
    }
    return Store(i, acc, pixels * static_cast<uint64_t>(oc));
  }

  // The shifted window of tap origin `src` into the gather buffer as [bh * OW, gc * og]: lane
  // (g, m) of pixel (r, ow) reads band element src + (r * stride_h * band_w + ow * stride_w) * cc
  // + g * cg. Without a multiplier (og = 1) one copy covers the block; with one, one per row.
  void Gather(uint64_t src, int64_t bh, int64_t gc, int64_t cc) {
    const int64_t oc = gc * p_.og, ce = t_.ce;
    const int64_t row_step = p_.wh.stride * b_.band_w * cc, col_step = p_.ww.stride * cc;
    if (p_.og == 1) {
      em_.Emit(isa::op::VpuCopy{.dtype = t_.ct, .dst = tmp_, .src = src,
                                .n0 = static_cast<uint64_t>(gc),
                                .n1 = static_cast<uint64_t>(p_.OW),
                                .n2 = static_cast<uint64_t>(bh),
                                .src_s0 = p_.cg, .src_s1 = col_step, .src_s2 = row_step,
                                .dst_s0 = 1, .dst_s1 = oc, .dst_s2 = p_.OW * oc});
      return;
    }
    for (int64_t r = 0; r < bh; ++r) {
      em_.Emit(isa::op::VpuCopy{
          .dtype = t_.ct,
          .dst = tmp_ + static_cast<uint64_t>(r * p_.OW * oc * ce),
          .src = src + static_cast<uint64_t>(r * row_step * ce),
          .n0 = static_cast<uint64_t>(p_.og),
          .n1 = static_cast<uint64_t>(gc),
          .n2 = static_cast<uint64_t>(p_.OW),
          .src_s0 = 0, .src_s1 = p_.cg, .src_s2 = col_step,
          .dst_s0 = 1, .dst_s1 = p_.og, .dst_s2 = oc});
    }
  }

  // The block's accumulator, converted to the output type when it differs, DMA'd to its rows of
  // the output.
  Status Store(size_t i, uint64_t acc, uint64_t count) {
    const Step& s = steps_[i];
    const int64_t oc = Gc(s) * p_.og, oe = t_.oe;
    uint64_t src = acc;
    if (O_.dtype != t_.ct) {
      src = Out(i);
      em_.Emit(isa::op::VpuConvert{
          .src_dtype = t_.ct, .dtype = O_.dtype, .dst = src, .src = acc, .count = count});
    }
    const std::vector<int64_t> dims{Bh(s) * p_.OW, oc};
    const std::vector<int64_t> ss{oc * oe, oe}, ds{p_.O() * oe, oe};
    const uint64_t dst =
        O_.address +
        static_cast<uint64_t>(((s.n * p_.OH + s.oh0) * p_.OW * p_.O() + s.g0 * p_.og) * oe);
    const int o = static_cast<int>(i % 2);
    TPUSIM_ASSIGN_OR_RETURN(store_count_[o],
                            em_.Dma(isa::Opcode::kDmaVmemToHbm, src, ss, dst, ds, dims, oe,
                                    kOutFlag0 + static_cast<uint64_t>(o)));
    return OkStatus();
  }

  CoreEmitter& em_;
  const HloInstruction& inst_;
  const hlo::VpuConvolution& p_;
  const VpuConvBlocks b_;
  const VpuConvTypes t_;
  const HbmBuffer& L_;
  const HbmBuffer& W_;
  const HbmBuffer& O_;
  std::vector<Step> steps_;
  int64_t band_elems_ = 0, kernel_elems_ = 0, block_elems_ = 0;
  uint64_t band0_ = 0, w0_ = 0, tmp_ = 0, acc0_ = 0, out0_ = 0, band_c_ = 0, w_c_ = 0;
  uint64_t weights_ = 0;
  int64_t store_count_[2] = {0, 0};
};

}  // namespace

Status Lowerer::LowerVpuConvolution(const HloInstruction& inst, const hlo::VpuConvolution& p) {
  const HbmBuffer& L = Buffer(inst.operand(0));
  const HbmBuffer& Wt = Buffer(inst.operand(1));
  const HbmBuffer& O = Buffer(&inst);
  VpuConvTypes t;
  const bool float_out = isa::IsFloat(O.dtype);
  if (isa::IsFloat(L.dtype) != float_out || isa::IsFloat(Wt.dtype) != float_out ||
      O.dtype == isa::DType::kPred || isa::DTypeBytes(O.dtype) > 4) {
    return Unsupported(inst, fmt::format("a grouped convolution of {} x {} -> {} on the VPU "
                                         "(operands and result all floating-point or all "
                                         "integers of up to 32 bits)",
                                         isa::Name(L.dtype), isa::Name(Wt.dtype),
                                         isa::Name(O.dtype)));
  }
  if (O.elements() == 0) return OkStatus();
  t.ct = float_out ? isa::DType::kF32 : isa::DType::kS32;
  // One MXU pass (DEFAULT precision) multiplies f32 operands as bf16; the VPU form keeps those
  // numerics (the evaluator checks them).
  const bool one_pass =
      float_out && PrecisionPasses(std::max(inst.operand_precision(0), inst.operand_precision(1)),
                                   L.dtype == isa::DType::kF32, Wt.dtype == isa::DType::kF32)
                           .size() == 1;
  t.round_in = one_pass && L.dtype == isa::DType::kF32;
  t.round_w = one_pass && Wt.dtype == isa::DType::kF32;
  t.convert_in = L.dtype != t.ct;
  t.convert_w = Wt.dtype != t.ct;
  t.le = L.elem_bytes();
  t.re = Wt.elem_bytes();
  t.oe = O.elem_bytes();
  t.ce = isa::DTypeBytes(t.ct);
  const std::optional<VpuConvBlocks> blocks =
      ChooseVpuConvBlocks(p, t, em_.vmem_free() - 8 * 64);
  if (!blocks) {
    return DoesNotFit(inst, fmt::format("VMEM: no band of one output row of one feature group "
                                        "fits core.vmem.capacity_bytes = {}",
                                        em_.vmem_bytes()));
  }
  VpuConvEmitter kernel(em_, inst, p, *blocks, t, L, Wt, O);
  return kernel.Run();
}

}  // namespace tpusim::compiler
