// convolution on the MXUs in its direct form (hlo/convolution_form.h): an implicit GEMM
// with weight-stationary kernel taps, the way XLA's TPU backend computes convolutions. No im2col
// array exists anywhere, in HBM or in VMEM.
//
// Input: a canonical convolution (passes/convolution_lowering.h): input [N, H, W, C], kernel
// [KH, KW, C, O] ("io") or [KH, KW, O, C] ("oi"), output [N, OH, OW, O], all row-major in HBM.
//
// Blocks. An M block is `bh` whole output rows of one image (or, when one output row is too long
// for the accumulators, `bw` columns of one row; or, when whole images are small, `bn` images):
// Mc = bn * bh * bw LHS rows. The kernel DMAs one *band* of the input into VMEM per band — the
// input rows and columns the windows cover, with their halo, at their padded and base-dilated
// positions (zero-filled by vpu.fill where the band holds padding or dilation holes); a band may
// serve up to 16 consecutive blocks of output rows, so halo rows are read once per band. The
// weights [KH, KW, Cc, Nc] stay in VMEM, in window-position order ("io"; an "oi" kernel is
// transposed per tap on the XLU once per load; a reversed window's taps are placed in reverse);
// a kernel too large for VMEM streams in blocks of Kt consecutive window positions (then of Nc < O
// output features). Then, per K tile of the direct form (one tap's run of up to R input features,
// or several taps folded for small C) and per N tile (round-robin over the MXUs): load_weights, and
// one matmul per output row of the block whose LHS rows are the band's pixels at the tap's offset —
// stride `stride_w * Cc` elements apart, so the shifted windows feed the array straight from the
// band. Every tap accumulates into the same accumulator rows; after the last K tile the block is
// popped and stored once.
//
// HBM traffic: the input once per output-feature block (plus the halo rows of neighbouring bands),
// the kernel once per M block when it does not fit VMEM (once when it fits), the output once; the
// filter-gradient form (below) has its own layout. An activation-only epilogue runs in the pops;
// other epilogues (fusion.h) on each popped block. Loop order:
// image -> M block -> N block -> Cc chunk -> kernel block, software-pipelined like the dot kernel
// (the next step's band and kernel block are loaded while this step's matmuls run; two
// accumulator sets let a block's pops overlap the next block's matmuls).
//
// Summation order: the direct form's K tiles in order (what the evaluator reproduces), whatever
// the N blocks and kernel blocks, when the band holds all C features (Cc = C); only when no block
// of one window position and all C features fits VMEM (Cc < C) do the tiles run chunk by chunk —
// the same products, summed in another order.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "compiler/lower/blocking.h"
#include "compiler/lower/conv_band.h"
#include "compiler/lower/lowerer.h"
#include "compiler/lower/mxu_passes.h"
#include "isa/vpu_cost.h"
#include "hlo/convolution_form.h"

namespace tpusim::compiler {

using hlo::HloInstruction;

namespace {

// A window one row tall that strides over several input rows (ResNet's 1x1 stride-2 projection
// shortcuts) never reads the rows between its positions. The TPU's tiled layouts keep an input
// row in tiles of its own (the two minor dimensions, W and C, are tiled), so a kernel loads only
// the rows its windows read; here the convolution is re-expressed over those rows — input row j
// is row x0 + j * stride, the row pitch stride times larger, the stride 1 — and the input read
// from x0 on. Returns x0 * sH, the elements the input starts later, or nullopt (left as it is)
// when the window is taller than one row, the stride is 1, the input is base-dilated or no row
// is read.
std::optional<int64_t> SkipRowsNoWindowReads(hlo::DirectConvolution& p) {
  const int64_t s = p.wh.stride, pad = p.wh.padding_low;
  if (p.KH != 1 || s < 2 || p.wh.base_dilation != 1 || p.H < 2 || pad < 0) return std::nullopt;
  const int64_t oh0 = CeilDiv(pad, s);  // the first output row that reads an input row
  const int64_t x0 = oh0 * s - pad;     // the row it reads
  if (oh0 >= p.OH || x0 >= p.H) return std::nullopt;
  const int64_t rows = std::min((p.H - 1 - x0) / s + 1, p.OH - oh0);
  const int64_t offset = x0 * p.sH;
  p.H = rows;
  p.sH *= s;
  p.wh.stride = 1;
  p.wh.padding_low = oh0;
  p.wh.padding_high = p.OH - oh0 - rows;
  return offset;
}

// `bytes` of VMEM for a convolution kernel's buffers `what`; DoesNotFit naming `inst` otherwise.
StatusOr<uint64_t> AllocKernelVmem(CoreEmitter& em, const HloInstruction& inst, int64_t bytes,
                                   const char* what) {
  const int64_t a = em.AllocVmem(bytes);
  if (a < 0) {
    return DoesNotFit(inst, fmt::format("VMEM: the {} need {} bytes, core.vmem.capacity_bytes = {}",
                                        what, bytes, em.vmem_bytes()));
  }
  return static_cast<uint64_t>(a);
}

// Block sizes of the kernel and the VMEM they take.
struct ConvBlocks {
  int64_t bh = 1, bw = 1;  // output rows / columns of an M block
  int64_t band_rows = 1;   // output rows a band covers (a multiple of bh: blocks share a band)
  int64_t cc = 1, nc = 1;  // input features of a band, output features of a block
  int64_t kt = 1;          // window positions of a kernel block (KH * KW: the whole window)
  int64_t tpm = 1;         // N tiles each MXU owns in a block
  int64_t band_h = 1, band_w = 1;  // band rows and columns (padded, dilated input positions)
  int nband = 1;                   // band buffers (3: the next band loads while two are read)
  int nweights = 1;                // weight buffers (2 when the kernel is reloaded)
  bool double_acc = false;         // two accumulator sets
  int64_t bn = 1;                  // whole images per M block (> 1 only when an image is one block)
  int64_t mc() const { return bn * bh * bw; }
};

// VMEM bytes of `b` for element sizes le (input), re (kernel), oe (output).
int64_t ConvVmemBytes(const ConvBlocks& b, int64_t le, int64_t re, int64_t oe, bool oi) {
  const int64_t band = b.bn * b.band_h * b.band_w * b.cc * le + 64;
  const int64_t weights = b.kt * b.cc * b.nc * re + 64;
  return b.nband * band + b.nweights * weights * (oi ? 2 : 1) + 2 * (b.mc() * b.nc * oe + 64);
}

// Lets one band serve several M blocks of whole output rows (up to 16), so that the halo rows
// of neighbouring bands are read from HBM once per band rather than once per block.
ConvBlocks GrowBands(ConvBlocks b, const hlo::DirectConvolution& p, int64_t le, int64_t re,
                     int64_t oe, bool oi, int64_t vmem) {
  b.band_rows = b.bh;
  if (b.bw < p.OW || b.bn > 1) return b;
  for (int64_t f = 2; f <= 16 && b.band_rows < p.OH; f *= 2) {
    ConvBlocks g = b;
    g.band_rows = std::min(p.OH, b.bh * f);
    g.band_h = BandExtent(g.band_rows, p.wh.stride, p.KH, p.wh.window_dilation);
    if (ConvVmemBytes(g, le, re, oe, oi) > vmem) break;
    b = g;
  }
  return b;
}

// `total` items in blocks of at most `block`: the same number of blocks, of even sizes.
int64_t EvenBlock(int64_t total, int64_t block) { return CeilDiv(total, CeilDiv(total, block)); }

// `b` (which fits) with its images, rows and columns per block evened out over the same number of
// blocks: 19 output rows in blocks of at most 9 become 7, 7, 5 rather than 9, 9, 1, so no block
// streams so few LHS rows per weight tile that the MXU waits on weight loads (a load takes R *
// weight_load_cycles_per_row cycles, hidden only behind a matmul of at least that many rows). A
// smaller block needs no more VMEM or accumulator rows, so `b` still fits.
ConvBlocks Balance(ConvBlocks b, const hlo::DirectConvolution& p) {
  b.bn = EvenBlock(p.N, b.bn);
  b.bh = EvenBlock(p.OH, b.bh);
  b.bw = EvenBlock(p.OW, b.bw);
  b.band_h = BandExtent(b.bh, p.wh.stride, p.KH, p.wh.window_dilation);
  b.band_w = BandExtent(b.bw, p.ww.stride, p.KW, p.ww.window_dilation);
  return b;
}

// The blocks of `cc` input features, `nc` output features and `kt` window positions with the most
// output rows that fit `vmem` bytes, two accumulator sets and three bands when they fit.
std::optional<ConvBlocks> FitRows(const hlo::DirectConvolution& p, const config::MxuConfig& mxu,
                                  int64_t cc, int64_t nc, int64_t kt, int64_t le, int64_t re,
                                  int64_t oe, bool oi, int64_t vmem, bool double_buffer) {
  const int64_t C = mxu.cols, nm = std::max<int64_t>(1, mxu.count);
  const int64_t acc_rows = PlannedAccumulatorRows(mxu);
  const bool reload = nc < p.O || cc < p.C || kt < p.KH * p.KW;
  for (const bool dacc : {true, false}) {
    for (int nband = double_buffer ? 3 : 1; nband >= 1; nband -= (nband == 3 ? 1 : 2)) {
      ConvBlocks b;
      b.nc = nc;
      b.cc = cc;
      b.kt = kt;
      b.tpm = CeilDiv(CeilDiv(nc, C), nm);
      b.double_acc = dacc;
      b.nband = nband;
      b.nweights = reload && double_buffer ? 2 : 1;
      const int64_t rows = acc_rows / ((dacc ? 2 : 1) * b.tpm);
      if (rows < 1) continue;
      b.bw = std::min(p.OW, rows);
      b.bh = b.bw < p.OW ? 1 : std::min(p.OH, rows / p.OW);
      // Small images: several whole images per block, so each weight tile is loaded once
      // for all of them (what bounds TPU v1's CNNs, whose weights stream from DDR3).
      b.bn = b.bh == p.OH ? std::max<int64_t>(1, std::min(p.N, rows / (p.OH * p.OW))) : 1;
      while (true) {
        b.band_h = BandExtent(b.bh, p.wh.stride, p.KH, p.wh.window_dilation);
        b.band_w = BandExtent(b.bw, p.ww.stride, p.KW, p.ww.window_dilation);
        if (ConvVmemBytes(b, le, re, oe, oi) <= vmem) {
          return GrowBands(Balance(b, p), p, le, re, oe, oi, vmem);
        }
        if (b.bn > 1) {
          --b.bn;
        } else if (b.bh > 1) {
          --b.bh;
        } else if (b.bw > 8) {
          b.bw = b.bw / 2;
        } else {
          break;
        }
      }
    }
  }
  return std::nullopt;
}

// Chooses the largest blocks that fit `vmem` bytes: the whole kernel resident (Nc = O, Cc = C)
// when it fits, then as many output rows per block as two accumulator sets hold. A kernel too
// large for VMEM is streamed in blocks of consecutive window positions (Kt < KH * KW; whole window
// rows when taps are folded), then also of output features (Nc < O): each output is still summed
// over all of K in the direct form's order. Input features are cut (Cc < C, summed chunk by chunk:
// another order) only when no block of one window position and all C features fits.
std::optional<ConvBlocks> ChooseConvBlocks(const hlo::DirectConvolution& p,
                                           const config::ChipConfig& config, int64_t le, int64_t re,
                                           int64_t oe, bool oi, int64_t vmem, bool double_buffer) {
  const auto& mxu = config.core.mxu;
  const int64_t R = mxu.rows, n_unit = std::max<int64_t>(1, mxu.count) * mxu.cols;
  const bool folded = std::any_of(p.k_tiles.begin(), p.k_tiles.end(),
                                  [](const hlo::ConvKTile& t) { return t.taps > 1; });
  const int64_t kt_unit = folded ? p.KW : 1;  // a folded K tile spans taps of one window row
  for (int64_t cc = p.C; cc >= 1; cc = (p.C > R && cc > R) ? CeilDiv(cc / 2, R) * R : 0) {
    for (int64_t nc = p.O; nc >= 1; nc = nc > n_unit ? CeilDiv(nc / 2, n_unit) * n_unit : 0) {
      for (int64_t kt = p.KH * p.KW; kt >= 1;
           kt = kt > kt_unit ? CeilDiv(CeilDiv(kt, 2), kt_unit) * kt_unit : 0) {
        if (auto b = FitRows(p, mxu, cc, nc, kt, le, re, oe, oi, vmem, double_buffer)) return b;
      }
    }
  }
  return std::nullopt;
}

// Pop-time fusion (fusion.h): runs the epilogue on the popped result block at VMEM `block`, rows
// m0 .. m0 + mc of the [N*OH*OW, O] result, columns n0 .. n0 + nc; true when the convolution's own
// result must still be stored.
using ConvEpilogue =
    std::function<StatusOr<bool>(uint64_t block, int64_t m0, int64_t mc, int64_t n0, int64_t nc)>;

// Emits the kernel for chosen blocks (see the file comment).
class DirectConvEmitter {
 public:
  DirectConvEmitter(CoreEmitter& em, const config::ChipConfig& config, const HloInstruction& inst,
                    const hlo::DirectConvolution& p, const ConvBlocks& b,
                    std::vector<PassParts> passes, const HbmBuffer& lhs, const HbmBuffer& kernel,
                    const HbmBuffer& out, bool oi, bool int_path, ConvEpilogue epilogue,
                    isa::Activation act, int64_t group = 0,
                    const hlo::DirectConvolution* columns = nullptr)
      : epilogue_(std::move(epilogue)),
        act_(act),
        em_(em),
        inst_(inst),
        p_(p),
        b_(b),
        passes_(std::move(passes)),
        L_(lhs),
        W_(kernel),
        O_(out),
        oi_(oi),
        int_path_(int_path),
        g_(group),
        C_(config.core.mxu.cols),
        nm_(std::max<int64_t>(1, config.core.mxu.count)),
        double_weights_(config.core.mxu.weight_buffers >= 2),
        vmem_bytes_per_cycle_(config.core.vmem_bytes_per_cycle),
        vpu_(config.core.vpu),
        timing_(isa::MxuTiming::FromConfig(config.core.mxu)),
        cols_(columns) {}

  Status Run() {
    TPUSIM_RETURN_IF_ERROR(Allocate());
    BuildSteps();
    TPUSIM_ASSIGN_OR_RETURN(int64_t pending, IssueFirstLoads(steps_[0]));
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& st = steps_[i];
      em_.Wait(kConvLoadFlag, pending);
      pending = 0;
      if (st.load_w && oi_) TransposeWeights(st);
      if (i + 1 < steps_.size() && b_.nband > 1) {
        TPUSIM_ASSIGN_OR_RETURN(pending, IssueLoads(steps_[i + 1]));
      }
      const int64_t acc0 = b_.double_acc ? (out_block_ % 2) * b_.mc() * b_.tpm : 0;
      drained_ = false;
      TPUSIM_RETURN_IF_ERROR(EmitTaps(st, acc0));
      FinishWeightParts();
      if (i + 1 < steps_.size() && b_.nband == 1) {
        TPUSIM_ASSIGN_OR_RETURN(pending, IssueLoads(steps_[i + 1]));
      }
      TPUSIM_RETURN_IF_ERROR(FinishStep(st, acc0));
      TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
    }
    if (pending_store_) TPUSIM_RETURN_IF_ERROR(Store(*pending_store_));
    if (pending_pop_) {
      Pop(*pending_pop_);
      TPUSIM_RETURN_IF_ERROR(Store(*pending_pop_));
    }
    em_.Wait(kOutFlag0, store_count_[0]);
    em_.Wait(kOutFlag0 + 1, store_count_[1]);
    return OkStatus();
  }

 private:
  static constexpr uint64_t kConvLoadFlag = 2, kOutFlag0 = 4;
  // The first step's kernel block arrives in up to kMaxWeightParts parts of consecutive window
  // positions, part q signalling flag kWeightPartFlag0 + q (IssueFirstLoads).
  static constexpr uint64_t kWeightPartFlag0 = 32;
  static constexpr int64_t kMaxWeightParts = 64;
  // One step: M block (image n, output rows oh0.., columns ow0..) x N block n0 x feature chunk c0
  // x kernel block of window positions s0..; its band covers output rows band_oh0 ...
  struct Step {
    int64_t n, oh0, ow0, n0, c0, s0, band_oh0;
    bool load_band, load_w;
    int64_t band_ver, w_ver;
  };
  struct Block {
    int64_t n, oh0, ow0, n0, acc0, index;
  };

  int64_t Bn(const Step& s) const { return std::min(b_.bn, p_.N - s.n); }
  int64_t Bh(const Step& s) const { return std::min(b_.bh, p_.OH - s.oh0); }
  int64_t Bw(const Step& s) const { return std::min(b_.bw, p_.OW - s.ow0); }
  int64_t Nc(int64_t n0) const { return std::min(b_.nc, p_.O - n0); }
  int64_t Cc(int64_t c0) const { return std::min(b_.cc, p_.C - c0); }
  int64_t Kt(int64_t s0) const { return std::min(b_.kt, p_.KH * p_.KW - s0); }
  // Row split: when a block has fewer N tiles than the core has MXUs, each N tile's weights are
  // loaded into RowGroups MXUs and the block's output pixels (rows x bw, row-major: the block's
  // accumulator rows) are cut into as many contiguous groups, one per MXU — the same weights,
  // different LHS rows — so no MXU idles (a 64-feature layer on a core of two 128-wide MXUs); a
  // block of one output row is cut within the row. Group g of `pixels` is
  // [GroupBegin(g), ..(g + 1)). When the tiles do not divide evenly over the MXUs (3 tiles of a
  // 324-feature layer on 2 MXUs), each tile is cut into G = mxus / gcd(tiles, mxus) groups and the
  // (tile, group) units go round-robin over the MXUs, as the dot kernel does (DotPlan::RowGroups),
  // when that shortens the busiest MXU (units x FoldCycles(rows per unit)) and the units fit the
  // accumulator rows the block was given (tpm x mc per MXU).
  int64_t RowGroups(int64_t nc, int64_t pixels) const {
    const int64_t tiles = CeilDiv(nc, C_);
    if (tiles < nm_) return std::max<int64_t>(1, std::min(pixels, nm_ / tiles));
    if (tiles % nm_ == 0) return 1;
    const int64_t G = nm_ / std::gcd(tiles, nm_);
    const auto busiest = [&](int64_t g) {
      return CeilDiv(tiles * g, nm_) * timing_.FoldCycles(CeilDiv(pixels, g));
    };
    if (pixels < G || busiest(G) >= busiest(1) ||
        CeilDiv(tiles * G, nm_) * CeilDiv(b_.mc(), G) > b_.tpm * b_.mc()) {
      return 1;
    }
    return G;
  }
  static int64_t GroupBegin(int64_t g, int64_t groups, int64_t pixels) {
    return g * pixels / groups;
  }
  uint64_t Unit(int64_t j, int64_t g, int64_t groups) const {
    return static_cast<uint64_t>(groups > 1 ? (j * groups + g) % nm_ : j % nm_);
  }
  // The accumulator row (from the block's set) of pixel p of `pixels` for unit (j, g): tile j's
  // own rows without a split; with fewer tiles than MXUs (one unit per MXU) the pixel's own row;
  // otherwise the unit's slot on its MXU (its position among that MXU's units) times the rows of a
  // group, plus the pixel's row within its group.
  int64_t AccRow(int64_t j, int64_t g, int64_t groups, int64_t nc, int64_t pixels,
                 int64_t p) const {
    if (groups == 1) return (j / nm_) * b_.mc() + p;
    if (CeilDiv(nc, C_) < nm_) return p;
    const int64_t slot = (j * groups + g) / nm_;
    return slot * CeilDiv(pixels, groups) + p - GroupBegin(g, groups, pixels);
  }
  uint64_t Band(int64_t ver) const {
    return band0_ + static_cast<uint64_t>((ver % b_.nband) * band_bytes_);
  }
  uint64_t Weights(int64_t ver) const {
    return w0_ + static_cast<uint64_t>((ver % b_.nweights) * w_bytes_);
  }
  uint64_t Staging(int64_t ver) const {
    return stage0_ + static_cast<uint64_t>((ver % b_.nweights) * w_bytes_);
  }
  uint64_t OutBuf(int64_t index) const {
    return out0_ + static_cast<uint64_t>((index % 2) * out_bytes_);
  }

  StatusOr<uint64_t> Alloc(int64_t bytes, const char* what) {
    return AllocKernelVmem(em_, inst_, bytes, what);
  }

  Status Allocate() {
    image_band_bytes_ = b_.band_h * b_.band_w * b_.cc * L_.elem_bytes();
    band_bytes_ = (b_.bn * image_band_bytes_ + 63) / 64 * 64;
    w_bytes_ = (b_.kt * b_.cc * b_.nc * W_.elem_bytes() + 63) / 64 * 64;
    out_bytes_ = (b_.mc() * b_.nc * O_.elem_bytes() + 63) / 64 * 64;
    if (cols_ != nullptr) {
      // The result block [rows x OW, O]; the popped column blocks (two sets) and their sums.
      out_bytes_ = (ColumnSumElements() * O_.elem_bytes() + 63) / 64 * 64;
      popped_bytes_ = (b_.mc() * b_.nc * 4 + 63) / 64 * 64;
      sum_bytes_ = (ColumnSumElements() * 4 + 63) / 64 * 64;
      TPUSIM_ASSIGN_OR_RETURN(popped0_, Alloc(2 * popped_bytes_, "popped column blocks"));
      TPUSIM_ASSIGN_OR_RETURN(sum0_, Alloc(2 * sum_bytes_, "column sums"));
    }
    TPUSIM_ASSIGN_OR_RETURN(band0_, Alloc(b_.nband * band_bytes_, "input bands"));
    TPUSIM_ASSIGN_OR_RETURN(w0_, Alloc(b_.nweights * w_bytes_, "kernel blocks"));
    if (oi_) {
      TPUSIM_ASSIGN_OR_RETURN(stage0_, Alloc(b_.nweights * w_bytes_, "kernel staging"));
    }
    TPUSIM_ASSIGN_OR_RETURN(out0_, Alloc(2 * out_bytes_, "result blocks"));
    return OkStatus();
  }

  void BuildSteps() {
    for (int64_t n = 0; n < p_.N; n += b_.bn) {
      for (int64_t oh0 = 0; oh0 < p_.OH; oh0 += b_.bh) {
        const int64_t band_oh0 = oh0 / b_.band_rows * b_.band_rows;
        for (int64_t ow0 = 0; ow0 < p_.OW; ow0 += b_.bw) {
          for (int64_t n0 = 0; n0 < p_.O; n0 += b_.nc) {
            for (int64_t c0 = 0; c0 < p_.C; c0 += b_.cc) {
              for (int64_t s0 = 0; s0 < p_.KH * p_.KW; s0 += b_.kt) {
                Step st{n, oh0, ow0, n0, c0, s0, band_oh0, true, true, 0, 0};
                if (!steps_.empty()) {
                  const Step& q = steps_.back();
                  st.load_band =
                      !(q.n == n && q.band_oh0 == band_oh0 && q.ow0 == ow0 && q.c0 == c0);
                  st.load_w = !(q.n0 == n0 && q.c0 == c0 && q.s0 == s0);
                  st.band_ver = q.band_ver + (st.load_band ? 1 : 0);
                  st.w_ver = q.w_ver + (st.load_w ? 1 : 0);
                }
                steps_.push_back(st);
              }
            }
          }
        }
      }
    }
  }

  // The band of each image of the block (image i at band + i * image_band_bytes_).
  StatusOr<int64_t> LoadBand(const Step& st) {
    const int64_t out_rows = std::min(b_.band_rows, p_.OH - st.band_oh0);
    const int64_t rows = BandExtent(out_rows, p_.wh.stride, p_.KH, p_.wh.window_dilation);
    const int64_t cols = BandExtent(Bw(st), p_.ww.stride, p_.KW, p_.ww.window_dilation);
    const BandSpan hs = InputSpan(st.band_oh0 * p_.wh.stride, rows, p_.H, p_.wh);
    const BandSpan ws = InputSpan(st.ow0 * p_.ww.stride, cols, p_.W, p_.ww);
    const int64_t cc = Cc(st.c0), le = L_.elem_bytes();
    const uint64_t band = Band(st.band_ver);
    const int64_t r0 = hs.lo * p_.wh.base_dilation + p_.wh.padding_low - st.band_oh0 * p_.wh.stride;
    const int64_t q0 = ws.lo * p_.ww.base_dilation + p_.ww.padding_low - st.ow0 * p_.ww.stride;
    if (hs.holes || ws.holes) ZeroBandHoles(st, band, rows, r0, q0, hs, ws);
    if (hs.hi < hs.lo || ws.hi < ws.lo) return int64_t{0};
    const std::vector<int64_t> dims{hs.hi - hs.lo + 1, ws.hi - ws.lo + 1, cc};
    const std::vector<int64_t> ss{p_.sH * le, p_.sW * le, le};
    const std::vector<int64_t> ds{p_.wh.base_dilation * b_.band_w * cc * le,
                                  p_.ww.base_dilation * cc * le, le};
    int64_t n = 0;
    for (int64_t i = 0; i < Bn(st); ++i) {
      const uint64_t src =
          L_.address +
          static_cast<uint64_t>(
              ((st.n + i) * p_.sN + hs.lo * p_.sH + ws.lo * p_.sW + g_ * p_.C + st.c0) * le);
      const uint64_t dst =
          band + static_cast<uint64_t>(i * image_band_bytes_ + (r0 * b_.band_w + q0) * cc * le);
      TPUSIM_ASSIGN_OR_RETURN(int64_t d, em_.Dma(isa::Opcode::kDmaHbmToVmem, src, ss, dst, ds, dims,
                                                 le, kConvLoadFlag));
      n += d;
    }
    return n;
  }

  // Zeroes what the band's DMA leaves unwritten: padding and dilation holes. Without base
  // dilation the input lands as one dense [nr, nq] block of pixels at (r0, q0), so only the border
  // around it needs zeros — the rows above and below it and each row's padding columns, which lie
  // next to the following row's in the row-major band. The border is filled when its fills take
  // fewer VPU cycles than one fill of the whole band (FillCycles); otherwise (holes inside, or a
  // border of many short runs) the whole band is.
  void ZeroBandHoles(const Step& st, uint64_t band, int64_t rows, int64_t r0, int64_t q0,
                     const BandSpan& hs, const BandSpan& ws) {
    const int64_t cc = Cc(st.c0), le = L_.elem_bytes(), row = b_.band_w * cc;
    const int64_t nr = hs.hi - hs.lo + 1, nq = ws.hi - ws.lo + 1, whole = rows * row;
    const int64_t all = (Bn(st) - 1) * (image_band_bytes_ / le) + whole;
    std::vector<std::pair<int64_t, int64_t>> border;  // (first element, count) in one image
    if (nr > 0 && nq > 0 && p_.wh.base_dilation == 1 && p_.ww.base_dilation == 1) {
      const int64_t dense_begin = (r0 * b_.band_w + q0) * cc;
      border.emplace_back(0, dense_begin);  // the rows above, the first input row's left padding
      for (int64_t r = 0; r < nr; ++r) {  // row r's right padding, the next row's left padding
        const int64_t from = dense_begin + r * row + nq * cc;
        border.emplace_back(from, r + 1 < nr ? row - nq * cc : whole - from);
      }
      std::erase_if(border, [](const auto& f) { return f.second <= 0; });
    }
    int64_t border_cycles = 0;
    for (const auto& f : border) border_cycles += Bn(st) * FillCycles(f.second);
    auto fill = [&](uint64_t at, int64_t count) {
      em_.Emit(isa::op::VpuFill{
          .dtype = L_.dtype, .dst = at, .count = static_cast<uint64_t>(count), .value = 0});
    };
    if (border.empty() || border_cycles >= FillCycles(all)) {
      fill(band, all);
      return;
    }
    for (int64_t i = 0; i < Bn(st); ++i) {
      for (const auto& [first, count] : border) {
        fill(band + static_cast<uint64_t>(i * image_band_bytes_ + first * le), count);
      }
    }
  }

  // The VPU cycles a fill of `count` input elements occupies the unit: the simulator's own
  // formula (isa/vpu_cost.h), on the instruction the fill would be.
  int64_t FillCycles(int64_t count) const {
    const isa::Instruction fill = isa::op::VpuFill{.dtype = L_.dtype,
                                                   .dst = 0,
                                                   .count = static_cast<uint64_t>(count),
                                                   .value = 0}
                                      .ToInstruction();
    return static_cast<int64_t>(
        isa::VectorInstructionCost(fill, vpu_, vmem_bytes_per_cycle_).occupancy.value());
  }

  // The kernel's tap (row-major index) whose weights window position `s` (input-offset order)
  // takes: itself unless the window is reversed along a dimension (and, reversal being its own
  // inverse, the window position of kernel tap `s`).
  int64_t KernelTap(int64_t s) const {
    const int64_t kh = s / p_.KW, kw = s % p_.KW;
    return (p_.wh.window_reversal ? p_.KH - 1 - kh : kh) * p_.KW +
           (p_.ww.window_reversal ? p_.KW - 1 - kw : kw);
  }
  bool Reversed() const { return p_.wh.window_reversal || p_.ww.window_reversal; }

  // The kernel block of window positions s0.. (Kt of them), features c0.., outputs n0.., as
  // [Kt, Cc, Nc] in window-position order, so the taps a K tile folds lie next to each other
  // whether or not the window is reversed ("oi": into the staging buffer as [Kt, Nc, Cc],
  // transposed per tap once loaded). A reversed kernel takes one DMA per tap.
  // Window positions [j0, j0 + kt) of the block only (all of them by default), on `flag`.
  StatusOr<int64_t> LoadWeights(const Step& st, int64_t j0 = 0, int64_t kt = -1,
                                uint64_t flag = kConvLoadFlag) {
    if (kt < 0) kt = Kt(st.s0);
    if (cols_ != nullptr) return LoadWindowRows(st, j0, kt, flag);
    const int64_t cc = Cc(st.c0), nc = Nc(st.n0), re = W_.elem_bytes();
    // Per tap: HBM [C, Ot] ("io") or [Ot, C] ("oi") rows (Ot: all groups' output features);
    // VMEM [Cc, Nc] or [Nc, Cc].
    const int64_t Ot = p_.Ot(), o0 = g_ * p_.O + st.n0;
    const std::vector<int64_t> ss = oi_ ? std::vector<int64_t>{Ot * p_.C * re, p_.C * re, re}
                                        : std::vector<int64_t>{p_.C * Ot * re, Ot * re, re};
    const std::vector<int64_t> ds = oi_ ? std::vector<int64_t>{nc * cc * re, cc * re, re}
                                        : std::vector<int64_t>{cc * nc * re, nc * re, re};
    const int64_t first = oi_ ? o0 * p_.C + st.c0 : st.c0 * Ot + o0;
    const uint64_t dst = oi_ ? Staging(st.w_ver) : Weights(st.w_ver);
    const int64_t rows = oi_ ? nc : cc, cols = oi_ ? cc : nc;
    if (!Reversed()) {
      const std::vector<int64_t> dims{kt, rows, cols};
      return em_.Dma(isa::Opcode::kDmaHbmToVmem,
                     W_.address + static_cast<uint64_t>((st.s0 + j0) * ss[0] + first * re), ss,
                     dst + static_cast<uint64_t>(j0 * ds[0]), ds, dims, re, flag);
    }
    const std::vector<int64_t> dims{rows, cols};
    int64_t n = 0;
    for (int64_t j = j0; j < j0 + kt; ++j) {
      const uint64_t src =
          W_.address + static_cast<uint64_t>(KernelTap(st.s0 + j) * ss[0] + first * re);
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d, em_.Dma(isa::Opcode::kDmaHbmToVmem, src, std::span(ss).subspan(1),
                             dst + static_cast<uint64_t>(j * ds[0]), std::span(ds).subspan(1),
                             dims, re, flag));
      n += d;
    }
    return n;
  }

  // With the window columns in N: window rows s0 + j0 .. of the kernel [KH, KW, C, O] as
  // [C, KW x O] each (column kw * O + o: tap (kh, kw)'s output o), one DMA per window row.
  StatusOr<int64_t> LoadWindowRows(const Step& st, int64_t j0, int64_t kt, uint64_t flag) {
    const int64_t re = W_.elem_bytes(), KW = cols_->KW, C = cols_->C, O = cols_->O;
    const std::vector<int64_t> dims{C, KW, O}, ss{O * re, C * O * re, re},
        ds{KW * O * re, O * re, re};
    int64_t n = 0;
    for (int64_t j = j0; j < j0 + kt; ++j) {
      const int64_t kh = st.s0 + j;
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t d,
          em_.Dma(isa::Opcode::kDmaHbmToVmem,
                  W_.address + static_cast<uint64_t>(kh * KW * C * O * re), ss,
                  Weights(st.w_ver) + static_cast<uint64_t>(j * C * KW * O * re), ds, dims, re,
                  flag));
      n += d;
    }
    return n;
  }

  void TransposeWeights(const Step& st) {
    const int64_t ver = st.w_ver;
    const int64_t cc = Cc(st.c0), nc = Nc(st.n0), bytes = cc * nc * W_.elem_bytes();
    for (int64_t j = 0; j < Kt(st.s0); ++j) {
      em_.Emit(isa::op::XluTranspose{.dtype = W_.dtype,
                                     .dst = Weights(ver) + static_cast<uint64_t>(j * bytes),
                                     .src = Staging(ver) + static_cast<uint64_t>(j * bytes),
                                     .rows = static_cast<uint64_t>(nc),
                                     .cols = static_cast<uint64_t>(cc)});
    }
  }

  // The first step's loads. Nothing earlier hides them, so the kernel block is not waited for
  // as a whole: it is loaded in parts of consecutive window positions (one DMA run each, in the
  // order the taps run), and the first tile of a part waits only for that part (EmitRuns) — the
  // prologue of a software pipeline over K tiles, as XLA's TPU emitters stream operand tiles,
  // rather than a whole-kernel load before the first matmul. Returns the band's DMAs on
  // kConvLoadFlag; an "oi" kernel (transposed once loaded) is still waited for whole.
  StatusOr<int64_t> IssueFirstLoads(const Step& st) {
    const int64_t kt = st.load_w ? Kt(st.s0) : 0;
    if (oi_ || kt < 2) return IssueLoads(st);
    int64_t n = 0;
    if (st.load_band) {
      TPUSIM_ASSIGN_OR_RETURN(n, LoadBand(st));
    }
    const int64_t parts = std::min(kt, kMaxWeightParts);
    part_of_slot_.assign(static_cast<size_t>(kt), 0);
    part_dmas_.assign(static_cast<size_t>(parts), 0);
    for (int64_t q = 0; q < parts; ++q) {
      const int64_t lo = q * kt / parts, hi = (q + 1) * kt / parts;
      for (int64_t s = lo; s < hi; ++s) part_of_slot_[static_cast<size_t>(s)] = q;
      TPUSIM_ASSIGN_OR_RETURN(
          part_dmas_[static_cast<size_t>(q)],
          LoadWeights(st, lo, hi - lo, kWeightPartFlag0 + static_cast<uint64_t>(q)));
    }
    return n;
  }

  // Before the first use of kernel-block slot `slot` in the first step: waits for its part.
  void WaitForWeightPart(int64_t slot) {
    if (slot < 0 || static_cast<size_t>(slot) >= part_of_slot_.size()) return;
    const size_t q = static_cast<size_t>(part_of_slot_[static_cast<size_t>(slot)]);
    em_.Wait(kWeightPartFlag0 + q, part_dmas_[q]);
    part_dmas_[q] = 0;  // waited
  }

  // After the first step's taps: waits for any part no tile used (every flag ends at zero).
  void FinishWeightParts() {
    for (size_t q = 0; q < part_dmas_.size(); ++q) em_.Wait(kWeightPartFlag0 + q, part_dmas_[q]);
    part_of_slot_.clear();
    part_dmas_.clear();
  }

  StatusOr<int64_t> IssueLoads(const Step& st) {
    int64_t n = 0;
    if (st.load_band) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t d, LoadBand(st));
      n += d;
    }
    if (st.load_w) {
      TPUSIM_ASSIGN_OR_RETURN(int64_t d, LoadWeights(st));
      n += d;
    }
    return n;
  }

  // Per K tile of the chunk and N tile: load_weights, then one matmul per output row of the block
  // reading the band at the tap's offset; all taps accumulate into the block's accumulator rows.
  Status EmitTaps(const Step& st, int64_t acc0) {
    const int64_t cc = Cc(st.c0), nc = Nc(st.n0), bh = Bh(st), bw = Bw(st), bn = Bn(st);
    const int64_t le = L_.elem_bytes(), re = W_.elem_bytes();
    const uint64_t band = Band(st.band_ver), w = Weights(st.w_ver);
    std::vector<TileRun> runs;
    for (const hlo::ConvKTile& t : p_.k_tiles) {
      const int64_t slot = t.kh * p_.KW + t.kw - st.s0;  // in the kernel block
      if (t.c0 < st.c0 || t.c0 >= st.c0 + cc || slot < 0 || slot >= Kt(st.s0)) continue;
      const bool first_tile = &t == &p_.k_tiles.front();
      const int64_t rows = bn * bh, pixels = rows * bw, groups = RowGroups(nc, pixels);
      for (int64_t nt = 0; nt < nc; nt += C_) {
        const int64_t j = nt / C_, nn = std::min(C_, nc - nt);
        for (size_t q = 0; q < passes_.size(); ++q) {
          for (int64_t g = 0; g < groups; ++g) {
            const uint64_t unit = Unit(j, g, groups);
            TileRun& run = runs.emplace_back();
            run.slot = slot;
            run.lw = isa::op::MxuLoadWeights{
                .mxu = unit,
                .addr = w + static_cast<uint64_t>(
                                ((slot * cc + t.c0 - st.c0) * nc + nt) * re),
                .k = static_cast<uint64_t>(t.k()),
                .n = static_cast<uint64_t>(nn),
                .stride = static_cast<uint64_t>(nc),
                .dtype = W_.dtype,
                .transpose = false,
                .part = passes_[q].rhs};
            // One matmul per output row (or the part of it in this group).
            const int64_t p0 = GroupBegin(g, groups, pixels), p1 = GroupBegin(g + 1, groups, pixels);
            for (int64_t r = p0 / bw; r * bw < p1; ++r) {
              const int64_t c_lo = std::max(p0, r * bw) - r * bw;
              const int64_t c_hi = std::min(p1, (r + 1) * bw) - r * bw;
              const int64_t image = r / bh;
              const int64_t window_row =
                  (st.oh0 + r % bh) * p_.wh.stride + t.kh * p_.wh.window_dilation;
              // Rows of padding or of base-dilation holes are zeros in the band: their products
              // add nothing (XLA's convolution skips such window positions), so the matmul is
              // not issued — half of an lhs_dilate=2 input gradient's rows — unless it is the
              // one that starts the accumulators.
              if (!(first_tile && q == 0) && !IsInputRow(window_row)) continue;
              const int64_t band_row = window_row - st.band_oh0 * p_.wh.stride;
              const int64_t band_col = t.kw * p_.ww.window_dilation + c_lo * p_.ww.stride;
              run.mms.push_back(isa::op::MxuMatmul{
                  .mxu = unit,
                  .lhs = band + static_cast<uint64_t>(
                                    image * image_band_bytes_ +
                                    ((band_row * b_.band_w + band_col) * cc + t.c0 - st.c0) * le),
                  .stride = static_cast<uint64_t>(p_.ww.stride * cc),
                  .m = static_cast<uint64_t>(c_hi - c_lo),
                  .k = static_cast<uint64_t>(t.k()),
                  .n = static_cast<uint64_t>(nn),
                  .dtype = L_.dtype,
                  .part = passes_[q].lhs,
                  .acc = static_cast<uint64_t>(
                      acc0 + AccRow(j, g, groups, nc, pixels, r * bw + c_lo)),
                  .accumulate = !(first_tile && q == 0),
                  .latch = run.mms.empty()});
            }
          }
        }
      }
    }
    std::erase_if(runs, [](const TileRun& run) { return run.mms.empty(); });
    return EmitRuns(runs);
  }

  // Whether row `y` of the padded, base-dilated input (the coordinates a window row reads) holds
  // an input row rather than padding or a dilation hole.
  bool IsInputRow(int64_t y) const {
    const int64_t x = y - p_.wh.padding_low;
    return x >= 0 && x % p_.wh.base_dilation == 0 && x / p_.wh.base_dilation < p_.H;
  }

  // One weight tile on one MXU: its load and the matmuls that stream through it.
  struct TileRun {
    int64_t slot = 0;  // the window position's slot in the kernel block
    isa::op::MxuLoadWeights lw;
    std::vector<isa::op::MxuMatmul> mms;
  };
  // Emits the runs. Consecutive runs on different MXUs form a wave whose matmuls are interleaved
  // (one of each run in turn), so the core's in-order issue feeds every MXU at once — as a VLIW
  // bundle would — instead of filling one MXU's command queue while the others idle (a run of one
  // short matmul per output row is longer than a queue). With double-buffered weights
  // (core.mxu.weight_buffers >= 2) the next run's load on the same MXU goes right after this run's
  // first, latching matmul, so the next tile shifts in while this one's other matmuls stream: a
  // tile streamed as one short matmul per output row would otherwise expose most of every load.
  // Same instructions, same values: the runs of a wave write different MXUs' accumulators.
  // After the first wave the previous block is popped and the one before it stored
  // (DrainPrevious), so the pops run on the MXUs' result path under this step's queued matmuls.
  Status EmitRuns(const std::vector<TileRun>& runs) {
    std::vector<size_t> next(runs.size(), runs.size());  // the next run on the same MXU
    std::map<uint64_t, size_t> later;
    for (size_t i = runs.size(); i-- > 0;) {
      auto it = later.find(runs[i].lw.mxu);
      if (it != later.end()) next[i] = it->second;
      later[runs[i].lw.mxu] = i;
    }
    std::vector<bool> loaded(runs.size(), false);
    size_t begin = 0;
    while (begin < runs.size()) {
      // The wave: runs [begin, end), no two on one MXU.
      std::set<uint64_t> mxus;
      size_t end = begin;
      while (end < runs.size() && mxus.insert(runs[end].lw.mxu).second) ++end;
      size_t longest = 0;
      for (size_t i = begin; i < end; ++i) {
        longest = std::max(longest, runs[i].mms.size());
        if (!runs[i].mms.empty() && !loaded[i]) {
          WaitForWeightPart(runs[i].slot);
          em_.Emit(runs[i].lw);
        }
      }
      for (size_t k = 0; k < longest; ++k) {
        for (size_t i = begin; i < end; ++i) {
          if (k >= runs[i].mms.size()) continue;
          em_.Emit(runs[i].mms[k]);
          const size_t j = next[i];
          if (k == 0 && double_weights_ && j < runs.size() && !runs[j].mms.empty()) {
            WaitForWeightPart(runs[j].slot);
            em_.Emit(runs[j].lw);
            loaded[j] = true;
          }
        }
      }
      begin = end;
      TPUSIM_RETURN_IF_ERROR(DrainPrevious());
    }
    return OkStatus();
  }

  // Once per step, with double-buffered accumulators: stores the block popped one step earlier
  // and pops the previous block (its matmuls were issued before this step's; this step's write
  // the other accumulator set). Emitted after the step's first wave of matmuls rather than after
  // its last, so that the core's in-order issue reaches the pops while the MXUs still have this
  // step's matmuls queued — the previous block drains under them, as XLA's emitters overlap a
  // tile's result drain with the next tile's matmuls — instead of after them.
  Status DrainPrevious() {
    if (drained_ || !b_.double_acc) return OkStatus();
    drained_ = true;
    if (pending_store_) {
      TPUSIM_RETURN_IF_ERROR(Store(*pending_store_));
      pending_store_.reset();
    }
    if (pending_pop_) {
      Pop(*pending_pop_);
      pending_store_ = pending_pop_;
      pending_pop_.reset();
    }
    return OkStatus();
  }

  // After a step's matmuls: drains the previous block if no wave did (DrainPrevious), and queues
  // this step's block when it was its last feature chunk and kernel block (popped and stored at
  // once with a single accumulator set).
  Status FinishStep(const Step& st, int64_t acc0) {
    TPUSIM_RETURN_IF_ERROR(DrainPrevious());
    const bool last_chunk = st.c0 + b_.cc >= p_.C && st.s0 + b_.kt >= p_.KH * p_.KW;
    if (last_chunk) {
      pending_pop_ = Block{st.n, st.oh0, st.ow0, st.n0, acc0, out_block_++};
      if (!b_.double_acc) {
        Pop(*pending_pop_);
        TPUSIM_RETURN_IF_ERROR(Store(*pending_pop_));
        pending_pop_.reset();
      }
    }
    return OkStatus();
  }

  void Pop(const Block& bl) {
    const Step probe{bl.n, bl.oh0, bl.ow0, bl.n0, 0, 0, 0, false, false, 0, 0};
    const int64_t mc = Bn(probe) * Bh(probe) * Bw(probe), nc = Nc(bl.n0);
    const int o = static_cast<int>(bl.index % 2);
    em_.Wait(kOutFlag0 + static_cast<uint64_t>(o), store_count_[o]);
    store_count_[o] = 0;
    const uint64_t out = cols_ != nullptr ? Popped(bl.index) : OutBuf(bl.index);
    const isa::DType acc_dtype = int_path_ ? isa::DType::kS32 : isa::DType::kF32;
    const int64_t pe = cols_ != nullptr ? 4 : O_.elem_bytes();
    const int64_t groups = RowGroups(nc, mc);
    for (int64_t nt = 0; nt < nc; nt += C_) {
      const int64_t j = nt / C_;
      for (int64_t g = 0; g < groups; ++g) {
        const int64_t p0 = GroupBegin(g, groups, mc), p1 = GroupBegin(g + 1, groups, mc);
        const int64_t acc = bl.acc0 + AccRow(j, g, groups, nc, mc, p0);
        em_.Emit(isa::op::MxuPop{
            .mxu = Unit(j, g, groups),
            .acc = static_cast<uint64_t>(acc),
            .m = static_cast<uint64_t>(groups > 1 ? p1 - p0 : mc),
            .n = static_cast<uint64_t>(std::min(C_, nc - nt)),
            .acc_dtype = acc_dtype,
            .dst = out + static_cast<uint64_t>((p0 * nc + nt) * pe),
            .stride = static_cast<uint64_t>(nc),
            .dtype = cols_ != nullptr ? acc_dtype : O_.dtype,
            .act = act_});
      }
    }
  }

  // Elements of a result block with the window columns in N: its images x output rows x OW x O.
  int64_t ColumnSumElements() const { return b_.bn * b_.bh * cols_->OW * cols_->O; }
  uint64_t Popped(int64_t index) const {
    return popped0_ + static_cast<uint64_t>((index % 2) * popped_bytes_);
  }

  // The window columns' partial sums of block `bl` (`rows` output rows of OW_q popped pixels, each
  // [KW x O]) added into the block's result [rows x OW, O]: output column ow takes column block
  // kw of popped pixel ow * stride + kw, added in kw order on the VPU (vpu.copy gathers each
  // column block, vpu.binary adds it, vpu.convert rounds the sum to the result type).
  void SumColumns(const Block& bl, int64_t rows) {
    const isa::DType acc_dtype = int_path_ ? isa::DType::kS32 : isa::DType::kF32;
    const int64_t OW = cols_->OW, O = cols_->O, KW = cols_->KW, stride = cols_->ww.stride;
    const int64_t nc = p_.O, count = rows * OW * O;
    const bool direct = O_.dtype == acc_dtype;  // the last add writes the result itself
    const uint64_t sum = sum0_, part = sum0_ + static_cast<uint64_t>(sum_bytes_);
    for (int64_t kw = 0; kw < KW; ++kw) {
      em_.Emit(isa::op::VpuCopy{
          .dtype = acc_dtype,
          .dst = kw == 0 ? sum : part,
          .src = Popped(bl.index) + static_cast<uint64_t>((kw * nc + kw * O) * 4),
          .n0 = static_cast<uint64_t>(O),
          .n1 = static_cast<uint64_t>(OW),
          .n2 = static_cast<uint64_t>(rows),
          .src_s0 = 1,
          .src_s1 = stride * nc,
          .src_s2 = p_.OW * nc,
          .dst_s0 = 1,
          .dst_s1 = O,
          .dst_s2 = OW * O});
      if (kw == 0) continue;
      const bool last = kw + 1 == KW;
      em_.Emit(isa::op::VpuBinary{.op = isa::BinaryOp::kAdd,
                                  .dtype = acc_dtype,
                                  .dst = last && direct ? OutBuf(bl.index) : sum,
                                  .a = sum,
                                  .b = part,
                                  .rows = static_cast<uint64_t>(rows * OW),
                                  .cols = static_cast<uint64_t>(O)});
    }
    if (!direct) {
      em_.Emit(isa::op::VpuConvert{.src_dtype = acc_dtype,
                                   .dtype = O_.dtype,
                                   .dst = OutBuf(bl.index),
                                   .src = sum,
                                   .count = static_cast<uint64_t>(count)});
    }
  }

  Status Store(const Block& bl) {
    if (cols_ != nullptr) return StoreColumnSums(bl);
    const Step probe{bl.n, bl.oh0, bl.ow0, bl.n0, 0, 0, 0, false, false, 0, 0};
    // Several images per block only when each is whole: their rows are contiguous in the output.
    const int64_t bh = Bn(probe) * Bh(probe), bw = Bw(probe), nc = Nc(bl.n0), oe = O_.elem_bytes();
    const int o = static_cast<int>(bl.index % 2);
    if (epilogue_) {
      const int64_t m0 = (bl.n * p_.OH + bl.oh0) * p_.OW + bl.ow0;
      TPUSIM_ASSIGN_OR_RETURN(const bool store_conv,
                              epilogue_(OutBuf(bl.index), m0, bh * bw, bl.n0, nc));
      if (!store_conv) {
        store_count_[o] = 0;
        return em_.CheckSize();
      }
    }
    const std::vector<int64_t> dims{bh, bw, nc}, ss{bw * nc * oe, nc * oe, oe};
    const std::vector<int64_t> ds{p_.OW * p_.Ot() * oe, p_.Ot() * oe, oe};
    const int64_t pixel = (bl.n * p_.OH + bl.oh0) * p_.OW + bl.ow0;
    const uint64_t dst =
        O_.address + static_cast<uint64_t>((pixel * p_.Ot() + g_ * p_.O + bl.n0) * oe);
    TPUSIM_ASSIGN_OR_RETURN(store_count_[o],
                            em_.Dma(isa::Opcode::kDmaVmemToHbm, OutBuf(bl.index), ss, dst, ds, dims,
                                    oe, kOutFlag0 + static_cast<uint64_t>(o)));
    return em_.CheckSize();
  }

  // With the window columns in N: sums the block's columns (SumColumns: one step after its pops,
  // so the core's in-order issue does not wait on the pops) and stores the result block of whole
  // output rows [rows x OW, O] of the original convolution, at its rows (images) in the output.
  Status StoreColumnSums(const Block& bl) {
    const Step probe{bl.n, bl.oh0, bl.ow0, bl.n0, 0, 0, 0, false, false, 0, 0};
    const hlo::DirectConvolution& c = *cols_;
    const int64_t rows = Bn(probe) * Bh(probe), oe = O_.elem_bytes(), mc = rows * c.OW;
    SumColumns(bl, rows);
    const int o = static_cast<int>(bl.index % 2);
    const int64_t m0 = (bl.n * c.OH + bl.oh0) * c.OW;
    if (epilogue_) {
      TPUSIM_ASSIGN_OR_RETURN(const bool store_conv, epilogue_(OutBuf(bl.index), m0, mc, 0, c.O));
      if (!store_conv) {
        store_count_[o] = 0;
        return em_.CheckSize();
      }
    }
    const std::vector<int64_t> dims{mc, c.O}, ss{c.O * oe, oe}, ds{c.O * oe, oe};
    TPUSIM_ASSIGN_OR_RETURN(
        store_count_[o],
        em_.Dma(isa::Opcode::kDmaVmemToHbm, OutBuf(bl.index), ss,
                O_.address + static_cast<uint64_t>(m0 * c.O * oe), ds, dims, oe,
                kOutFlag0 + static_cast<uint64_t>(o)));
    return em_.CheckSize();
  }

  const ConvEpilogue epilogue_;
  const isa::Activation act_;  // applied by the pops (Lowerer::FoldPopActivation)
  CoreEmitter& em_;
  const HloInstruction& inst_;
  const hlo::DirectConvolution& p_;
  const ConvBlocks b_;
  const std::vector<PassParts> passes_;
  const HbmBuffer& L_;
  const HbmBuffer& W_;
  const HbmBuffer& O_;
  const bool oi_, int_path_;
  const int64_t g_;  // the feature group (hlo::DirectConvolution::groups)
  const int64_t C_, nm_;
  const bool double_weights_;
  const int64_t vmem_bytes_per_cycle_;
  const config::VpuConfig vpu_;
  const isa::MxuTiming timing_;
  // The convolution whose window columns are folded into N, p_ being its MXU part (null: none).
  const hlo::DirectConvolution* const cols_;
  int64_t image_band_bytes_ = 0, band_bytes_ = 0, w_bytes_ = 0, out_bytes_ = 0;
  int64_t popped_bytes_ = 0, sum_bytes_ = 0;
  uint64_t band0_ = 0, w0_ = 0, stage0_ = 0, out0_ = 0, popped0_ = 0, sum0_ = 0;
  std::vector<Step> steps_;
  // The first step's kernel parts (IssueFirstLoads): the part of each slot, the DMAs of each part
  // not yet waited for. Empty after the first step.
  std::vector<int64_t> part_of_slot_, part_dmas_;
  std::optional<Block> pending_pop_, pending_store_;
  bool drained_ = false;  // DrainPrevious ran in this step
  int64_t store_count_[2] = {0, 0};
  int64_t out_block_ = 0;
};

// The filter-gradient form (hlo/convolution_form.h, FilterGradientConvolution): input
// X [F, H, W, B], kernel operand G [F, KH, KW, O] (the output gradient), result [OH, OW, B, O].
// Per pass over a chunk of Bc rows of B and Nc columns of O, the MXUs keep one [Bc, C] accumulator
// block per output position and owned N tile, summed over the form's K tiles (runs of window
// positions of one f). Per step (consecutive K tiles of one f, covering a few window rows) the
// band of X those rows read is DMA'd into VMEM, transposed on the XLU to [Bc, band positions] and,
// per output column ox, packed by vpu.copy into [Bc, band rows x KW] — the window positions that
// output column reads, so a K tile that crosses window rows is one contiguous run of each LHS row.
// Per K tile and N tile, the G rows [count, Nc] are the stationary weights and one matmul per
// output position streams the Bc packed rows at that position's offset. Bands and G rows are
// double-buffered; the accumulators are popped once per pass.
struct FilterGradBlocks {
  int64_t bc = 1, nc = 1, tpm = 1;  // B rows, O columns per pass, N tiles per MXU
  int64_t rows = 1;                 // window rows a step may cover
  int64_t band_h = 1, band_w = 1;   // X band rows (at most) and columns (padded input positions)
  bool packed = true;               // per output column packing needed (not: OW = 1, no padding)
};

int64_t FilterGradVmem(const FilterGradBlocks& b, const hlo::FilterGradientConvolution& p,
                       int64_t le, int64_t re, int64_t oe) {
  const int64_t band = b.band_h * b.band_w * b.bc * le + 64;
  const int64_t packed = b.packed ? p.OW * b.band_h * p.KW * b.bc * le + 64 : 0;
  return 2 * (2 * band + packed + b.rows * p.KW * b.nc * re + 64) + 2 * (b.bc * b.nc * oe + 64);
}

std::optional<FilterGradBlocks> ChooseFilterGradBlocks(const hlo::FilterGradientConvolution& p,
                                                       const config::ChipConfig& config, int64_t le,
                                                       int64_t re, int64_t oe, int64_t vmem) {
  const auto& mxu = config.core.mxu;
  const int64_t R = mxu.rows, C = mxu.cols, nm = std::max<int64_t>(1, mxu.count);
  const int64_t acc_rows = PlannedAccumulatorRows(mxu);
  const int64_t positions = p.OH * p.OW;
  // A step covers at least the rows of one K tile (up to R positions, plus one partial row).
  const int64_t min_rows = std::min(p.KH, CeilDiv(R, p.KW) + 1);
  for (const int64_t nc : {p.O, std::min(p.O, nm * C)}) {
    FilterGradBlocks b;
    b.nc = nc;
    b.tpm = CeilDiv(CeilDiv(nc, C), nm);
    b.bc = std::min(p.B, acc_rows / (b.tpm * positions));
    if (b.bc > 8 && b.bc < p.B) b.bc = b.bc / 8 * 8;
    if (b.bc < std::min<int64_t>(p.B, 64) && nc != std::min(p.O, nm * C)) continue;
    if (b.bc < 1) return std::nullopt;
    b.band_w = BandExtent(p.OW, p.ww.stride, p.KW, p.ww.window_dilation);
    b.packed = !(p.OW == 1 && b.band_w == p.KW);
    for (b.rows = std::min(p.KH, std::max<int64_t>(16, min_rows)); b.rows >= min_rows;
         b.rows = b.rows > min_rows ? std::max(min_rows, b.rows / 2) : 0) {
      b.band_h = BandExtent(p.OH, p.wh.stride, b.rows, p.wh.window_dilation);
      if (FilterGradVmem(b, p, le, re, oe) <= vmem) return b;
      if (b.rows == min_rows) break;
    }
  }
  return std::nullopt;
}

// What both filter-gradient kernels (the position and the feature K tiling) share: operands, MXU
// shape and passes; the passes over result blocks of rows [b0, b0 + bc) of B and columns
// [n0, n0 + nc) of O; the VMEM of the input bands (as loaded and transposed), the G rows and the
// result blocks; and the pop of a pass's accumulators: one [bc, C] block per output position and
// N tile (N tile j on MXU j % mxus at row offset ((j / mxus) * positions + pos) * bc), popped into
// two alternating result buffers and stored to the output [OH, OW, B, O].
class FilterGradKernel {
 protected:
  FilterGradKernel(CoreEmitter& em, const config::ChipConfig& config, const HloInstruction& inst,
                   const hlo::FilterGradientConvolution& p, int64_t bc, int64_t nc,
                   std::vector<PassParts> passes, const HbmBuffer& x, const HbmBuffer& g,
                   const HbmBuffer& out, bool int_path)
      : em_(em),
        inst_(inst),
        p_(p),
        bc_(bc),
        nc_(nc),
        passes_(std::move(passes)),
        X_(x),
        G_(g),
        O_(out),
        int_path_(int_path),
        C_(config.core.mxu.cols),
        nm_(std::max<int64_t>(1, config.core.mxu.count)) {}

  /// `bytes` rounded up to whole 64-byte VMEM lines.
  static int64_t Align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

  StatusOr<uint64_t> Alloc(int64_t bytes, const char* what) {
    return AllocKernelVmem(em_, inst_, bytes, what);
  }

  /// Two bands of `band_bytes` each as loaded (raw0_) and two transposed (xt0_).
  Status AllocateBands(int64_t band_bytes) {
    band_bytes_ = band_bytes;
    TPUSIM_ASSIGN_OR_RETURN(raw0_, Alloc(2 * band_bytes_, "input bands"));
    TPUSIM_ASSIGN_OR_RETURN(xt0_, Alloc(2 * band_bytes_, "transposed input bands"));
    return OkStatus();
  }

  /// Two versions of a step's G rows, `g_bytes` each (g0_).
  Status AllocateGRows(int64_t g_bytes) {
    g_bytes_ = g_bytes;
    TPUSIM_ASSIGN_OR_RETURN(g0_, Alloc(2 * g_bytes_, "output-gradient rows"));
    return OkStatus();
  }

  /// Two [bc, nc] result buffers in the output's type (out0_).
  Status AllocateResults() {
    out_bytes_ = Align64(bc_ * nc_ * O_.elem_bytes());
    TPUSIM_ASSIGN_OR_RETURN(out0_, Alloc(2 * out_bytes_, "result blocks"));
    return OkStatus();
  }

  /// Runs `pass(b0, n0)` over every result block, B-major.
  template <typename PassFn>
  Status ForEachPass(const PassFn& pass) {
    for (int64_t b0 = 0; b0 < p_.B; b0 += bc_) {
      for (int64_t n0 = 0; n0 < p_.O; n0 += nc_) TPUSIM_RETURN_IF_ERROR(pass(b0, n0));
    }
    return OkStatus();
  }

  /// The accumulator row of output position `pos` and N tile `j` (on MXU j % nm_): the tiles of
  /// one MXU are stacked, each `positions` blocks of bc_ rows.
  uint64_t AccRow(int64_t j, int64_t pos) const {
    return static_cast<uint64_t>(((j / nm_) * (p_.OH * p_.OW) + pos) * bc_);
  }

  /// The pass at (b0, n0) over `steps` steps, double-buffered: step 0's loads (`load(0, slot 0)`,
  /// returning the descriptors that signal `flag`); per step i in slot i % 2, wait for its loads,
  /// `prepare(i, slot)` (the band's transposes), issue step i + 1's loads into the other slot and
  /// `emit(i, slot)` its matmuls; then pop and store the pass's accumulators.
  template <typename LoadFn, typename PrepareFn, typename EmitFn>
  Status PipelinePass(int64_t b0, int64_t n0, size_t steps, uint64_t flag, const LoadFn& load,
                      const PrepareFn& prepare, const EmitFn& emit) {
    TPUSIM_ASSIGN_OR_RETURN(int64_t pending, load(size_t{0}, 0));
    for (size_t i = 0; i < steps; ++i) {
      const int slot = static_cast<int>(i % 2);
      em_.Wait(flag, pending);
      pending = 0;
      prepare(i, slot);
      if (i + 1 < steps) {
        TPUSIM_ASSIGN_OR_RETURN(pending, load(i + 1, 1 - slot));
      }
      emit(i, slot);
      TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
    }
    return PopAndStore(b0, n0);
  }

  /// One K tile of a step, of `k` rows, against every N tile of a pass with `bc` B rows and `nc`
  /// O columns: per N tile j (on MXU j % nm_) and MXU pass, the [k, nn] G tile at VMEM `g` + its
  /// column offset (rows `nc` elements apart) is loaded as the stationary weights, and one matmul
  /// per output position streams the bc LHS rows at `lhs(pos)` (rows `lhs_stride` elements apart)
  /// into that position's accumulators (AccRow), overwriting them when `first_tile`.
  template <typename LhsFn>
  void EmitKTile(uint64_t g, int64_t k, int64_t bc, int64_t nc, bool first_tile,
                 int64_t lhs_stride, const LhsFn& lhs) {
    const int64_t re = G_.elem_bytes(), positions = p_.OH * p_.OW;
    for (int64_t nt = 0; nt < nc; nt += C_) {
      const int64_t j = nt / C_, nn = std::min(C_, nc - nt);
      const uint64_t unit = static_cast<uint64_t>(j % nm_);
      for (size_t q = 0; q < passes_.size(); ++q) {
        em_.Emit(isa::op::MxuLoadWeights{.mxu = unit,
                                         .addr = g + static_cast<uint64_t>(nt * re),
                                         .k = static_cast<uint64_t>(k),
                                         .n = static_cast<uint64_t>(nn),
                                         .stride = static_cast<uint64_t>(nc),
                                         .dtype = G_.dtype,
                                         .transpose = false,
                                         .part = passes_[q].rhs});
        for (int64_t pos = 0; pos < positions; ++pos) {
          em_.Emit(isa::op::MxuMatmul{.mxu = unit,
                                      .lhs = lhs(pos),
                                      .stride = static_cast<uint64_t>(lhs_stride),
                                      .m = static_cast<uint64_t>(bc),
                                      .k = static_cast<uint64_t>(k),
                                      .n = static_cast<uint64_t>(nn),
                                      .dtype = X_.dtype,
                                      .part = passes_[q].lhs,
                                      .acc = AccRow(j, pos),
                                      .accumulate = !(first_tile && q == 0),
                                      .latch = pos == 0});
        }
      }
    }
  }

  /// Pops the accumulators of the pass at (b0, n0) and stores them to the output.
  Status PopAndStore(int64_t b0, int64_t n0) {
    constexpr uint64_t kOutFlag0 = 4;
    const int64_t bc = std::min(bc_, p_.B - b0), nc = std::min(nc_, p_.O - n0);
    const int64_t oe = O_.elem_bytes(), positions = p_.OH * p_.OW;
    int64_t pending[2] = {0, 0};
    for (int64_t pos = 0; pos < positions; ++pos) {
      const int o = static_cast<int>(pos % 2);
      em_.Wait(kOutFlag0 + static_cast<uint64_t>(o), pending[o]);
      const uint64_t out = out0_ + static_cast<uint64_t>(o * out_bytes_);
      for (int64_t nt = 0; nt < nc; nt += C_) {
        const int64_t j = nt / C_;
        em_.Emit(isa::op::MxuPop{
            .mxu = static_cast<uint64_t>(j % nm_),
            .acc = AccRow(j, pos),
            .m = static_cast<uint64_t>(bc),
            .n = static_cast<uint64_t>(std::min(C_, nc - nt)),
            .acc_dtype = int_path_ ? isa::DType::kS32 : isa::DType::kF32,
            .dst = out + static_cast<uint64_t>(nt * oe),
            .stride = static_cast<uint64_t>(nc),
            .dtype = O_.dtype,
            .act = isa::Activation::kNone});
      }
      const std::vector<int64_t> dims{bc, nc}, ss{nc * oe, oe}, ds{p_.O * oe, oe};
      TPUSIM_ASSIGN_OR_RETURN(
          pending[o],
          em_.Dma(isa::Opcode::kDmaVmemToHbm, out, ss,
                 O_.address + static_cast<uint64_t>(((pos * p_.B) + b0) * p_.O * oe + n0 * oe), ds,
                 dims, oe, kOutFlag0 + static_cast<uint64_t>(o)));
    }
    em_.Wait(kOutFlag0, pending[0]);
    em_.Wait(kOutFlag0 + 1, pending[1]);
    return em_.CheckSize();
  }

  CoreEmitter& em_;
  const HloInstruction& inst_;
  const hlo::FilterGradientConvolution& p_;
  const int64_t bc_, nc_;  // result block: B rows and O columns per pass
  const std::vector<PassParts> passes_;
  const HbmBuffer& X_;
  const HbmBuffer& G_;
  const HbmBuffer& O_;
  const bool int_path_;
  const int64_t C_, nm_;
  int64_t band_bytes_ = 0, g_bytes_ = 0, out_bytes_ = 0;
  uint64_t raw0_ = 0, xt0_ = 0, g0_ = 0, out0_ = 0;
};

// Operand fusion (fusion.h, AddConvPrologues): the producers of X (0) or G (1), run by the Lowerer
// (lower/dot_prologue.cc) on each block of the operand seen as a matrix ([F*H*W, B], [F*KH*KW, O])
// as its band is loaded. `load` DMAs the block's inputs (rows r0 .. r0 + rc, columns c0 .. c0 + cc)
// into version `slot` and returns the descriptor count; `run` computes the [rc, cc] block into
// VMEM `dst`.
struct ConvOperandFusion {
  std::function<StatusOr<int64_t>(int slot, int64_t r0, int64_t rc, int64_t c0, int64_t cc)> load;
  std::function<void(int slot, int64_t rc, int64_t cc, uint64_t dst)> run;
  bool active() const { return static_cast<bool>(load); }
};

// Whether every band of X holds whole input rows (all W columns): what the X prologue's
// [F*H*W, B] blocks need. False only when the window stops short of the last columns.
bool FilterGradBandsHoldWholeRows(const hlo::FilterGradientConvolution& p) {
  const int64_t band_w = BandExtent(p.OW, p.ww.stride, p.KW, p.ww.window_dilation);
  return p.ww.padding_low >= 0 && band_w - 1 - p.ww.padding_low >= p.W - 1;
}

class FilterGradEmitter : FilterGradKernel {
 public:
  FilterGradEmitter(CoreEmitter& em, const config::ChipConfig& config, const HloInstruction& inst,
                    const hlo::FilterGradientConvolution& p, const FilterGradBlocks& b,
                    std::vector<PassParts> passes, const HbmBuffer& x, const HbmBuffer& g,
                    const HbmBuffer& out, bool int_path, ConvOperandFusion fuse_x = {},
                    ConvOperandFusion fuse_g = {})
      : FilterGradKernel(em, config, inst, p, b.bc, b.nc, std::move(passes), x, g, out, int_path),
        b_(b),
        fuse_x_(std::move(fuse_x)),
        fuse_g_(std::move(fuse_g)) {}

  /// VMEM the kernel's own buffers take beyond FilterGradVmem with an X prologue: its computed
  /// blocks before they are placed into the bands.
  static int64_t FusedStagingBytes(const FilterGradBlocks& b,
                                   const hlo::FilterGradientConvolution& p, int64_t le) {
    return 2 * Align64(b.band_h * p.W * b.bc * le);
  }

  Status Run() {
    TPUSIM_RETURN_IF_ERROR(Allocate());
    BuildSteps();
    return ForEachPass([this](int64_t b0, int64_t n0) { return Pass(b0, n0); });
  }

 private:
  static constexpr uint64_t kLoadFlag2 = 2, kOutFlag0 = 4;
  // Consecutive K tiles [t0, t1) of one f, covering window rows [r0, r0 + rows).
  struct Step {
    int64_t f, r0, rows;
    size_t t0, t1;
  };

  Status Allocate() {
    const int64_t le = X_.elem_bytes();
    TPUSIM_RETURN_IF_ERROR(AllocateBands(Align64(b_.band_h * b_.band_w * b_.bc * le)));
    pack_ox_bytes_ = b_.band_h * p_.KW * b_.bc * le;
    pack_bytes_ = b_.packed ? Align64(p_.OW * pack_ox_bytes_) : 0;
    if (b_.packed) {
      TPUSIM_ASSIGN_OR_RETURN(pack0_, Alloc(2 * pack_bytes_, "packed input windows"));
    }
    TPUSIM_RETURN_IF_ERROR(AllocateGRows(Align64(b_.rows * p_.KW * b_.nc * G_.elem_bytes())));
    if (fuse_x_.active()) {
      xs_bytes_ = FusedStagingBytes(b_, p_, le) / 2;
      TPUSIM_ASSIGN_OR_RETURN(xs0_, Alloc(2 * xs_bytes_, "fused input blocks"));
    }
    return AllocateResults();
  }

  void BuildSteps() {
    const auto& tiles = p_.k_tiles;
    for (size_t i = 0; i < tiles.size();) {
      Step st{tiles[i].f, tiles[i].k0 / p_.KW, 1, i, i};
      while (st.t1 < tiles.size() && tiles[st.t1].f == st.f) {
        const int64_t last_row = (tiles[st.t1].k0 + tiles[st.t1].count - 1) / p_.KW;
        if (last_row - st.r0 + 1 > b_.rows && st.t1 > st.t0) break;
        st.rows = last_row - st.r0 + 1;
        ++st.t1;
      }
      steps_.push_back(st);
      i = st.t1;
    }
  }

  int64_t BandH(const Step& st) const {
    return BandExtent(p_.OH, p_.wh.stride, st.rows, p_.wh.window_dilation);
  }

  StatusOr<int64_t> Load(const Step& st, int slot, int64_t b0, int64_t n0) {
    const int64_t bc = std::min(b_.bc, p_.B - b0), nc = std::min(b_.nc, p_.O - n0);
    const int64_t le = X_.elem_bytes(), re = G_.elem_bytes();
    const uint64_t raw = raw0_ + static_cast<uint64_t>(slot * band_bytes_);
    // X rows and columns the band covers: band row 0 is input row r0 * dh - pad_low.
    const int64_t first_row = st.r0 * p_.wh.window_dilation - p_.wh.padding_low;
    const int64_t band_h = BandH(st);
    const int64_t r_lo = std::max<int64_t>(0, first_row);
    const int64_t r_hi = std::min(p_.H - 1, first_row + band_h - 1);
    const int64_t c_lo = std::max<int64_t>(0, -p_.ww.padding_low);
    const int64_t c_hi = std::min(p_.W - 1, b_.band_w - 1 - p_.ww.padding_low);
    const bool holes = r_lo != first_row || r_hi != first_row + band_h - 1 ||
                       p_.ww.padding_low > 0 || c_hi != b_.band_w - 1 - p_.ww.padding_low;
    if (holes) {
      em_.Emit(isa::op::VpuFill{.dtype = X_.dtype,
                                .dst = raw,
                                .count = static_cast<uint64_t>(band_h * b_.band_w * bc),
                                .value = 0});
    }
    int64_t n = 0;
    fused_rows_[slot] = 0;
    if (fuse_x_.active() && r_lo <= r_hi) {
      // The prologue computes rows r_lo..r_hi (whole rows: FilterGradBandsHoldWholeRows) into
      // the staging buffer; Prepare places them into the band.
      fused_rows_[slot] = r_hi - r_lo + 1;
      fused_dst_[slot] = raw + static_cast<uint64_t>(
                                   ((r_lo - first_row) * b_.band_w + p_.ww.padding_low) * bc * le);
      TPUSIM_ASSIGN_OR_RETURN(
          n, fuse_x_.load(slot, (st.f * p_.H + r_lo) * p_.W, fused_rows_[slot] * p_.W, b0, bc));
    } else if (r_lo <= r_hi && c_lo <= c_hi) {
      // X as stored (f01b, or in place with its images minor: strides sF..sB).
      const std::vector<int64_t> dims{r_hi - r_lo + 1, c_hi - c_lo + 1, bc};
      const std::vector<int64_t> ss{p_.sH * le, p_.sW * le, p_.sB * le};
      const std::vector<int64_t> ds{b_.band_w * bc * le, bc * le, le};
      const uint64_t src =
          X_.address +
          static_cast<uint64_t>((st.f * p_.sF + r_lo * p_.sH + c_lo * p_.sW + b0 * p_.sB) * le);
      const uint64_t dst =
          raw + static_cast<uint64_t>(((r_lo - first_row) * b_.band_w + c_lo + p_.ww.padding_low) *
                                      bc * le);
      TPUSIM_ASSIGN_OR_RETURN(
          n, em_.Dma(isa::Opcode::kDmaHbmToVmem, src, ss, dst, ds, dims, le, kLoadFlag2));
    }
    if (fuse_g_.active()) {
      TPUSIM_ASSIGN_OR_RETURN(
          int64_t m, fuse_g_.load(slot, (st.f * p_.KH + st.r0) * p_.KW, st.rows * p_.KW, n0, nc));
      return n + m;
    }
    const std::vector<int64_t> gd{st.rows, p_.KW, nc}, gs{p_.KW * p_.O * re, p_.O * re, re};
    const std::vector<int64_t> gds{p_.KW * nc * re, nc * re, re};
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t m,
        em_.Dma(
            isa::Opcode::kDmaHbmToVmem,
            G_.address + static_cast<uint64_t>(((st.f * p_.KH + st.r0) * p_.KW * p_.O + n0) * re),
            gs, g0_ + static_cast<uint64_t>(slot * g_bytes_), gds, gd, re, kLoadFlag2));
    return n + m;
  }

  // The fused prologues of the loaded step in `slot`: X's rows computed and placed into the band
  // (at their padded positions, row pitch band_w), G's rows computed in place.
  void Prepare(const Step& st, int slot, int64_t bc, int64_t nc) {
    if (fuse_x_.active() && fused_rows_[slot] > 0) {
      const uint64_t xs = xs0_ + static_cast<uint64_t>(slot * xs_bytes_);
      fuse_x_.run(slot, fused_rows_[slot] * p_.W, bc, xs);
      em_.Emit(isa::op::VpuCopy{.dtype = X_.dtype,
                                .dst = fused_dst_[slot],
                                .src = xs,
                                .n0 = static_cast<uint64_t>(p_.W * bc),
                                .n1 = static_cast<uint64_t>(fused_rows_[slot]),
                                .n2 = 1,
                                .src_s0 = 1,
                                .src_s1 = p_.W * bc,
                                .src_s2 = 0,
                                .dst_s0 = 1,
                                .dst_s1 = b_.band_w * bc,
                                .dst_s2 = 0});
    }
    if (fuse_g_.active()) {
      fuse_g_.run(slot, st.rows * p_.KW, nc, g0_ + static_cast<uint64_t>(slot * g_bytes_));
    }
  }

  // The loaded band in `slot`, transposed to [Bc, band positions] and packed per output column.
  void Transpose(const Step& st, int slot, int64_t bc) {
    const int64_t band_h = BandH(st), le = X_.elem_bytes();
    const uint64_t xt = xt0_ + static_cast<uint64_t>(slot * band_bytes_);
    em_.Emit(isa::op::XluTranspose{.dtype = X_.dtype,
                                   .dst = xt,
                                   .src = raw0_ + static_cast<uint64_t>(slot * band_bytes_),
                                   .rows = static_cast<uint64_t>(band_h * b_.band_w),
                                   .cols = static_cast<uint64_t>(bc)});
    if (!b_.packed) return;
    for (int64_t ox = 0; ox < p_.OW; ++ox) {
      em_.Emit(isa::op::VpuCopy{.dtype = X_.dtype,
                                .dst = Packed(slot, ox),
                                .src = xt + static_cast<uint64_t>(ox * p_.ww.stride * le),
                                .n0 = static_cast<uint64_t>(p_.KW),
                                .n1 = static_cast<uint64_t>(band_h),
                                .n2 = static_cast<uint64_t>(bc),
                                .src_s0 = p_.ww.window_dilation,
                                .src_s1 = b_.band_w,
                                .src_s2 = band_h * b_.band_w,
                                .dst_s0 = 1,
                                .dst_s1 = p_.KW,
                                .dst_s2 = band_h * p_.KW});
    }
  }
  uint64_t Packed(int slot, int64_t ox) const {
    return pack0_ + static_cast<uint64_t>(slot * pack_bytes_ + ox * pack_ox_bytes_);
  }

  // One pass: every step accumulates into the pass's accumulators.
  Status Pass(int64_t b0, int64_t n0) {
    const int64_t bc = std::min(b_.bc, p_.B - b0);
    return PipelinePass(
        b0, n0, steps_.size(), kLoadFlag2,
        [&](size_t i, int slot) { return Load(steps_[i], slot, b0, n0); },
        [&](size_t i, int slot) {
          Prepare(steps_[i], slot, bc, std::min(b_.nc, p_.O - n0));
          Transpose(steps_[i], slot, bc);
        },
        [&](size_t i, int slot) { EmitStep(steps_[i], slot, b0, n0); });
  }

  void EmitStep(const Step& st, int slot, int64_t b0, int64_t n0) {
    const int64_t bc = std::min(b_.bc, p_.B - b0), nc = std::min(b_.nc, p_.O - n0);
    const int64_t le = X_.elem_bytes(), re = G_.elem_bytes(), band_h = BandH(st);
    const uint64_t g = g0_ + static_cast<uint64_t>(slot * g_bytes_);
    const uint64_t xt = xt0_ + static_cast<uint64_t>(slot * band_bytes_);
    // Row stride of the LHS (one row per element of B) and the packed row length.
    const int64_t row_len = b_.packed ? p_.KW : b_.band_w;
    for (size_t ti = st.t0; ti < st.t1; ++ti) {
      const auto& t = p_.k_tiles[ti];
      const int64_t r = t.k0 / p_.KW, kw = t.k0 % p_.KW;
      EmitKTile(g + static_cast<uint64_t>((t.k0 - st.r0 * p_.KW) * nc * re), t.count, bc, nc,
                t.f == 0 && t.k0 == 0, band_h * row_len, [&](int64_t pos) {
                  const int64_t oy = pos / p_.OW, ox = pos % p_.OW;
                  const uint64_t base = b_.packed ? Packed(slot, ox) : xt;
                  const int64_t band_row =
                      oy * p_.wh.stride + (r - st.r0) * p_.wh.window_dilation;
                  return base + static_cast<uint64_t>((band_row * row_len + kw) * le);
                });
    }
  }

  const FilterGradBlocks b_;
  const ConvOperandFusion fuse_x_, fuse_g_;
  int64_t pack_ox_bytes_ = 0, pack_bytes_ = 0, xs_bytes_ = 0;
  uint64_t pack0_ = 0, xs0_ = 0;
  int64_t fused_rows_[2] = {0, 0};  // X rows the prologue computes for the step in each slot
  uint64_t fused_dst_[2] = {0, 0};  // where they go in the band
  std::vector<Step> steps_;
};


// The filter-gradient form with feature tiles (FilterGradientConvolution::feature_tiles, chosen
// when F fills the array's rows better than runs of window positions do). Per pass over Bc rows
// of B and Nc columns of O the MXUs keep one [Bc, C] accumulator block per output position and
// owned N tile, as in the position form. Per step — a chunk of up to R features and one window
// row kh — the X rows that window row reads (one per output row, at their padded column
// positions) are DMA'd into VMEM as [Fc, OH, band_w, Bc] and transposed on the XLU to
// [OH * band_w * Bc, Fc]: each pixel's Bc rows with the chunk's features contiguous, the LHS of
// a matmul with K = Fc (as XLA's TPU layouts keep a filter gradient's features next to its minor
// dimension, `{3,0,2,1}` for Mask R-CNN's [512,14,14,256]). The step's G rows [KW, Fc, Nc] load
// beside it; per window column kw and N tile the [Fc, Nc] G tile is the stationary weights and
// one matmul per output position streams the Bc rows of the pixel it reads. Padding pixels are
// zero-filled and streamed like the others. Bands and G rows are double-buffered.
struct FilterGradFeatureBlocks {
  int64_t bc = 1, nc = 1, fc = 1;  // B rows and O columns per pass, features per K tile
  int64_t band_w = 1;              // padded input columns a window row's outputs read
};

int64_t FilterGradFeatureVmem(const FilterGradFeatureBlocks& b,
                              const hlo::FilterGradientConvolution& p, int64_t le, int64_t re,
                              int64_t oe) {
  const int64_t band = b.fc * p.OH * b.band_w * b.bc * le + 64;
  return 2 * (2 * band + p.KW * b.fc * b.nc * re + 64) + 2 * (b.bc * b.nc * oe + 64);
}

std::optional<FilterGradFeatureBlocks> ChooseFilterGradFeatureBlocks(
    const hlo::FilterGradientConvolution& p, const config::ChipConfig& config, int64_t le,
    int64_t re, int64_t oe, int64_t vmem) {
  const auto& mxu = config.core.mxu;
  const int64_t R = mxu.rows, C = mxu.cols, nm = std::max<int64_t>(1, mxu.count);
  const int64_t acc_rows = PlannedAccumulatorRows(mxu);
  for (const int64_t nc : {p.O, std::min(p.O, nm * C)}) {
    FilterGradFeatureBlocks b;
    b.nc = nc;
    b.fc = std::min(p.F, R);
    b.band_w = BandExtent(p.OW, p.ww.stride, p.KW, p.ww.window_dilation);
    const int64_t tpm = CeilDiv(CeilDiv(nc, C), nm);
    int64_t bc = std::min(p.B, acc_rows / (tpm * p.OH * p.OW));
    if (bc < 1) continue;
    bc = std::min(bc, CeilDiv(CeilDiv(p.B, CeilDiv(p.B, bc)), 8) * 8);  // even passes
    while (bc >= 1) {
      b.bc = bc;
      if (FilterGradFeatureVmem(b, p, le, re, oe) <= vmem) return b;
      bc = bc > 8 ? std::max<int64_t>(8, bc / 2 / 8 * 8) : bc - 1;
    }
  }
  return std::nullopt;
}

class FilterGradFeatureEmitter : FilterGradKernel {
 public:
  FilterGradFeatureEmitter(CoreEmitter& em, const config::ChipConfig& config,
                           const HloInstruction& inst, const hlo::FilterGradientConvolution& p,
                           const FilterGradFeatureBlocks& b, std::vector<PassParts> passes,
                           const HbmBuffer& x, const HbmBuffer& g, const HbmBuffer& out,
                           bool int_path)
      : FilterGradKernel(em, config, inst, p, b.bc, b.nc, std::move(passes), x, g, out, int_path),
        b_(b) {}

  Status Run() {
    TPUSIM_RETURN_IF_ERROR(
        AllocateBands(Align64(b_.fc * p_.OH * b_.band_w * b_.bc * X_.elem_bytes())));
    TPUSIM_RETURN_IF_ERROR(AllocateGRows(Align64(p_.KW * b_.fc * b_.nc * G_.elem_bytes())));
    TPUSIM_RETURN_IF_ERROR(AllocateResults());
    for (int64_t f0 = 0; f0 < p_.F; f0 += b_.fc) {
      for (int64_t kh = 0; kh < p_.KH; ++kh) steps_.push_back(Step{f0, kh});
    }
    return ForEachPass([this](int64_t b0, int64_t n0) { return Pass(b0, n0); });
  }

 private:
  static constexpr uint64_t kLoadFlag = 2;
  struct Step {
    int64_t f0, kh;  // features [f0, f0 + fc), window row kh
  };
  int64_t Features(const Step& st) const { return std::min(b_.fc, p_.F - st.f0); }

  // DMAs step `st`'s band of X (zero-filled where it holds padding) and its G rows into `slot`.
  StatusOr<int64_t> Load(const Step& st, int slot, int64_t b0, int64_t n0) {
    const int64_t bc = std::min(b_.bc, p_.B - b0), nc = std::min(b_.nc, p_.O - n0);
    const int64_t fc = Features(st), le = X_.elem_bytes(), re = G_.elem_bytes();
    const auto& wh = p_.wh;
    const auto& ww = p_.ww;
    const uint64_t raw = raw0_ + static_cast<uint64_t>(slot * band_bytes_);
    // Output row oy reads input row oy * sh + kh * dh - pad_low; rows inside X: oy_lo..oy_hi.
    const int64_t y0 = st.kh * wh.window_dilation - wh.padding_low;
    const int64_t oy_lo = y0 >= 0 ? 0 : CeilDiv(-y0, wh.stride);
    const int64_t oy_hi = std::min(p_.OH - 1, y0 > p_.H - 1 ? -1 : (p_.H - 1 - y0) / wh.stride);
    const int64_t c_hi = std::min(p_.W - 1, b_.band_w - 1 - ww.padding_low);
    const bool holes = oy_lo > 0 || oy_hi < p_.OH - 1 || ww.padding_low > 0 ||
                       c_hi < b_.band_w - 1 - ww.padding_low;
    if (holes) {
      em_.Emit(isa::op::VpuFill{.dtype = X_.dtype,
                                .dst = raw,
                                .count = static_cast<uint64_t>(fc * p_.OH * b_.band_w * bc),
                                .value = 0});
    }
    int64_t n = 0;
    if (oy_lo <= oy_hi && c_hi >= 0) {
      const std::vector<int64_t> dims{fc, oy_hi - oy_lo + 1, c_hi + 1, bc};
      const std::vector<int64_t> ss{p_.H * p_.W * p_.B * le, wh.stride * p_.W * p_.B * le,
                                    p_.B * le, le};
      const std::vector<int64_t> ds{p_.OH * b_.band_w * bc * le, b_.band_w * bc * le, bc * le, le};
      const int64_t y = oy_lo * wh.stride + y0;
      const uint64_t src =
          X_.address + static_cast<uint64_t>((((st.f0 * p_.H + y) * p_.W) * p_.B + b0) * le);
      const uint64_t dst =
          raw + static_cast<uint64_t>((oy_lo * b_.band_w + ww.padding_low) * bc * le);
      TPUSIM_ASSIGN_OR_RETURN(
          n, em_.Dma(isa::Opcode::kDmaHbmToVmem, src, ss, dst, ds, dims, le, kLoadFlag));
    }
    // G rows [f0 .. f0 + fc) of window row kh, as [KW, fc, nc].
    const std::vector<int64_t> gd{p_.KW, fc, nc};
    const std::vector<int64_t> gs{p_.O * re, p_.KH * p_.KW * p_.O * re, re};
    const std::vector<int64_t> gds{fc * nc * re, nc * re, re};
    TPUSIM_ASSIGN_OR_RETURN(
        int64_t m,
        em_.Dma(isa::Opcode::kDmaHbmToVmem,
                G_.address + static_cast<uint64_t>(
                                 ((st.f0 * p_.KH + st.kh) * p_.KW * p_.O + n0) * re),
                gs, g0_ + static_cast<uint64_t>(slot * g_bytes_), gds, gd, re, kLoadFlag));
    return n + m;
  }

  Status Pass(int64_t b0, int64_t n0) {
    const int64_t bc = std::min(b_.bc, p_.B - b0);
    return PipelinePass(
        b0, n0, steps_.size(), kLoadFlag,
        [&](size_t i, int slot) { return Load(steps_[i], slot, b0, n0); },
        [&](size_t i, int slot) {
          em_.Emit(isa::op::XluTranspose{
              .dtype = X_.dtype,
              .dst = xt0_ + static_cast<uint64_t>(slot * band_bytes_),
              .src = raw0_ + static_cast<uint64_t>(slot * band_bytes_),
              .rows = static_cast<uint64_t>(Features(steps_[i])),
              .cols = static_cast<uint64_t>(p_.OH * b_.band_w * bc)});
        },
        [&](size_t i, int slot) { EmitStep(steps_[i], slot, b0, n0); });
  }

  void EmitStep(const Step& st, int slot, int64_t b0, int64_t n0) {
    const int64_t bc = std::min(b_.bc, p_.B - b0), nc = std::min(b_.nc, p_.O - n0);
    const int64_t fc = Features(st), le = X_.elem_bytes(), re = G_.elem_bytes();
    const uint64_t g = g0_ + static_cast<uint64_t>(slot * g_bytes_);
    const uint64_t xt = xt0_ + static_cast<uint64_t>(slot * band_bytes_);
    for (int64_t kw = 0; kw < p_.KW; ++kw) {
      EmitKTile(g + static_cast<uint64_t>(kw * fc * nc * re), fc, bc, nc,
                st.f0 == 0 && st.kh == 0 && kw == 0, fc, [&](int64_t pos) {
                  const int64_t oy = pos / p_.OW, ox = pos % p_.OW;
                  const int64_t pixel =
                      oy * b_.band_w + ox * p_.ww.stride + kw * p_.ww.window_dilation;
                  return xt + static_cast<uint64_t>(pixel * bc * fc * le);
                });
    }
  }

  const FilterGradFeatureBlocks b_;
  std::vector<Step> steps_;
};
}  // namespace

// The element types both forms take, and the MXU passes for them.
StatusOr<std::vector<PassParts>> ConvPasses(const HloInstruction& inst,
                                            const config::ChipConfig& config, isa::DType l,
                                            isa::DType r, isa::DType o, bool* int_path) {
  using isa::DType;
  const auto is_float = [](DType t) { return t == DType::kF32 || t == DType::kBF16; };
  *int_path = l == DType::kS8 && r == DType::kS8 && o == DType::kS32;
  if (!*int_path && !(is_float(l) && is_float(r) && is_float(o))) {
    return Unsupported(inst, fmt::format("convolution of {} x {} -> {} (the MXU takes f32/bf16 "
                                         "operands with f32/bf16 results, or s8 x s8 -> s32)",
                                         isa::Name(l), isa::Name(r), isa::Name(o)));
  }
  if (!*int_path && !config.core.mxu.bf16) {
    return Unsupported(inst,
                       fmt::format("a {} convolution on '{}', whose MXU has no floating-point "
                                   "path (core.mxu.bf16: false): quantize it to s8 x s8 -> "
                                   "s32",
                                   isa::Name(l), config.name));
  }
  if (*int_path) return std::vector<PassParts>{{isa::PrecisionPart::kHi, isa::PrecisionPart::kHi}};
  return PrecisionPasses(std::max(inst.operand_precision(0), inst.operand_precision(1)),
                         l == DType::kF32, r == DType::kF32);
}

Status Lowerer::LowerConvolution(const HloInstruction& inst) {
  const auto& cd = inst.convolution_dimension_numbers();
  const int64_t rank = inst.shape().rank();
  const std::vector<int64_t>&lhs = inst.operand(0)->shape().dimensions(),
        &rhs = inst.operand(1)->shape().dimensions(), &out = inst.shape().dimensions();
  const int64_t R = config_.core.mxu.rows;
  if (cd.input_feature_dimension == rank - 1 && cd.output_feature_dimension == rank - 1) {
    if (const auto plan =
            hlo::PlanVpuConvolution(lhs, rhs, out, inst.window(), cd, inst.feature_group_count(),
                                    inst.batch_group_count(), R)) {
      return LowerVpuConvolution(inst, *plan);
    }
    // The kernel's layout may fold its window columns into N (float convolutions: integer sums
    // are exact in any order, and the pops saturate s8 results as the direct form needs).
    const hlo::Shape& kernel = inst.operand(1)->shape();
    const bool columns_in_n =
        kernel.has_layout() && hlo::IsFloatingPoint(inst.shape().element_type()) &&
        hlo::KernelFoldsWindowColumnsIntoN(kernel.layout().minor_to_major, cd);
    if (const auto plan =
            hlo::PlanDirectConvolution(lhs, rhs, out, inst.window(), cd, inst.feature_group_count(),
                                       inst.batch_group_count(), R, columns_in_n)) {
      return LowerDirectConvolution(inst, *plan);
    }
  }
  if ((cd.input_feature_dimension == 0 || cd.input_feature_dimension == rank - 1) &&
      cd.output_feature_dimension == rank - 1) {
    if (const auto plan = hlo::PlanFilterGradientConvolution(lhs, rhs, out, inst.window(), cd,
                                                             inst.feature_group_count(),
                                                             inst.batch_group_count(), R)) {
      const HbmBuffer& X = Buffer(inst.operand(0));
      const HbmBuffer& G = Buffer(inst.operand(1));
      const HbmBuffer& O = Buffer(&inst);
      bool int_path = false;
      TPUSIM_ASSIGN_OR_RETURN(std::vector<PassParts> passes,
                              ConvPasses(inst, config_, X.dtype, G.dtype, O.dtype, &int_path));
      if (O.elements() == 0) return OkStatus();
      return LowerFilterGradConvolution(inst, *plan, std::move(passes), int_path);
    }
  }
  return Unsupported(inst,
                     "this convolution has no direct, VPU, filter-gradient or im2col form "
                     "(supported: one or two spatial dimensions with feature groups, or any "
                     "convolution without negative padding, through im2col)");
}

Status Lowerer::LowerFilterGradConvolution(const HloInstruction& inst,
                                           const hlo::FilterGradientConvolution& p,
                                           std::vector<PassParts> passes, bool int_path) {
  const HbmBuffer& X = Buffer(inst.operand(0));
  const HbmBuffer& G = Buffer(inst.operand(1));
  const HbmBuffer& O = Buffer(&inst);
  const int64_t le = X.elem_bytes(), re = G.elem_bytes(), oe = O.elem_bytes();
  // X stored f01b, or [H, W, B, F] (images minor, read in place: FilterGradInputInPlace).
  const bool x_f01b =
      p.sB == 1 && p.sW == p.B && p.sH == p.W * p.B && p.sF == p.H * p.W * p.B;
  const bool x_hwbf =
      !x_f01b && p.sF == 1 && p.sB == p.F && p.sW == p.B * p.F && p.sH == p.W * p.B * p.F;
  if (p.feature_tiles && !x_f01b) {
    return Internal("%" + inst.name() + ": the feature-tile filter gradient reads an f01b input");
  }
  if (p.feature_tiles) {
    // No operand fusion in this form: the prologues' ops get kernels of their own.
    if (prologue_disabled_.count(&inst) == 0 &&
        (groups_.prologue_of_dot.count({&inst, 0}) != 0 ||
         groups_.prologue_of_dot.count({&inst, 1}) != 0)) {
      TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
    }
    const std::optional<FilterGradFeatureBlocks> blocks =
        ChooseFilterGradFeatureBlocks(p, config_, le, re, oe, em_.vmem_free() - 8 * 64);
    if (!blocks) {
      return DoesNotFit(inst, fmt::format("VMEM: no band of one window row and {} features fits "
                                          "core.vmem.capacity_bytes = {}",
                                          std::min(p.F, config_.core.mxu.rows),
                                          em_.vmem_bytes()));
    }
    FilterGradFeatureEmitter kernel(em_, config_, inst, p, *blocks, std::move(passes), X, G, O,
                                    int_path);
    return kernel.Run();
  }
  // Operand fusion (AddConvPrologues): the prologues' VMEM comes off the blocks' budget.
  const std::vector<const HloInstruction*>* pro_ops[2] = {nullptr, nullptr};
  if (prologue_disabled_.count(&inst) == 0) {
    for (int idx = 0; idx < 2; ++idx) {
      auto it = groups_.prologue_of_dot.find({&inst, idx});
      if (it != groups_.prologue_of_dot.end()) pro_ops[idx] = &it->second;
    }
    if (pro_ops[0] != nullptr && (!FilterGradBandsHoldWholeRows(p) || (!x_f01b && !x_hwbf))) {
      TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
      return LowerFilterGradConvolution(inst, p, std::move(passes), int_path);
    }
  }
  const bool fused = pro_ops[0] != nullptr || pro_ops[1] != nullptr;
  // An [H, W, B, F] X's prologue runs on its [H*W*B, F] view, one image's column of band rows
  // (all B) at a time; an f01b X's on [F*H*W, B], a band's rows x the pass's B columns.
  auto x_block = [&](const FilterGradBlocks& b) {
    return x_hwbf ? std::pair<int64_t, int64_t>{b.band_h * p.W * p.B, 1}
                  : std::pair<int64_t, int64_t>{b.band_h * p.W, b.bc};
  };
  auto prologue_bytes = [&](const FilterGradBlocks& b) {
    int64_t bytes = 0;
    if (pro_ops[0] != nullptr) {
      const PrologueFootprint f = MeasurePrologue(*pro_ops[0]);
      const auto [rows, cols] = x_block(b);
      bytes += 2 * (f.per_element * rows * cols +
                    f.vectors * std::max(rows, cols) * f.vector_bytes_per_element) +
               f.allocations * 64 * 2 + FilterGradEmitter::FusedStagingBytes(b, p, le);
    }
    if (pro_ops[1] != nullptr) {
      const PrologueFootprint f = MeasurePrologue(*pro_ops[1]);
      const int64_t rows = b.rows * p.KW;
      bytes += 2 * (f.per_element * rows * b.nc +
                    f.vectors * std::max(rows, b.nc) * f.vector_bytes_per_element) +
               f.allocations * 64 * 2;
    }
    return bytes;
  };
  int64_t budget = em_.vmem_free() - 8 * 64;
  std::optional<FilterGradBlocks> blocks = ChooseFilterGradBlocks(p, config_, le, re, oe, budget);
  for (int tries = 0; fused && blocks && tries < 4; ++tries) {
    const int64_t need = FilterGradVmem(*blocks, p, le, re, oe) + prologue_bytes(*blocks);
    if (need <= em_.vmem_free() - 8 * 64) break;
    budget -= need - (em_.vmem_free() - 8 * 64);
    blocks = budget > 0 ? ChooseFilterGradBlocks(p, config_, le, re, oe, budget) : std::nullopt;
  }
  std::optional<Prologue> pro[2];
  ConvOperandFusion fuse[2];
  for (int idx = 0; blocks && idx < 2; ++idx) {
    if (pro_ops[idx] == nullptr) continue;
    if (idx == 0 && x_hwbf && blocks->bc != p.B) break;  // a column holds every b
    const auto [rows, cols] =
        idx == 0 ? x_block(*blocks) : std::pair<int64_t, int64_t>{blocks->rows * p.KW, blocks->nc};
    pro[idx] = PlanPrologue(*pro_ops[idx], rows, cols, 2);
    if (!pro[idx]) break;
    const int64_t R = idx == 0 ? p.F * p.H * p.W : p.F * p.KH * p.KW;
    const int64_t C = idx == 0 ? p.B : p.O;
    const Prologue* pr = &*pro[idx];
    const bool hwbf = idx == 0 && x_hwbf;
    // The kernel asks for rows r0 .. r0 + rc of the f01b view [F*H*W, B] (whole input rows of
    // one image f, all B); an [H, W, B, F] X gives them as image f's column of its [H*W*B, F]
    // view, the same elements in the same [rows, B] order.
    const int64_t HW = p.H * p.W, B = p.B, F = p.F;
    fuse[idx].load = [this, pr, R, C, hwbf, HW, B, F](int slot, int64_t r0, int64_t rc, int64_t c0,
                                                      int64_t cc) -> StatusOr<int64_t> {
      if (hwbf) {
        return LoadPrologueBlock(*pr, slot,
                                 OperandBlock{0, HW * B, F, r0 % HW * B, rc * B, r0 / HW, 1}, 2);
      }
      return LoadPrologueBlock(*pr, slot, OperandBlock{0, R, C, r0, rc, c0, cc}, 2);
    };
    fuse[idx].run = [this, pr, hwbf](int slot, int64_t rc, int64_t cc, uint64_t dst) {
      if (hwbf) {
        RunPrologueBlock(*pr, slot, rc * cc, 1, dst);
        return;
      }
      RunPrologueBlock(*pr, slot, rc, cc, dst);
    };
  }
  const bool planned =
      blocks && (pro_ops[0] == nullptr || pro[0]) && (pro_ops[1] == nullptr || pro[1]);
  if (fused &&
      (!planned ||
       FilterGradVmem(*blocks, p, le, re, oe) +
               (pro_ops[0] != nullptr ? FilterGradEmitter::FusedStagingBytes(*blocks, p, le) : 0) >
           em_.vmem_free() - 8 * 64)) {
    // The prologues do not fit beside the kernel: their ops get kernels of their own.
    em_.ResetVmem();
    TPUSIM_RETURN_IF_ERROR(LowerPrologueKernels(inst));
    return LowerFilterGradConvolution(inst, p, std::move(passes), int_path);
  }
  if (!blocks) {
    return DoesNotFit(inst, fmt::format("VMEM: no band of one window row fits "
                                        "core.vmem.capacity_bytes = {}",
                                        em_.vmem_bytes()));
  }
  FilterGradEmitter kernel(em_, config_, inst, p, *blocks, std::move(passes), X, G, O, int_path,
                           fuse[0], fuse[1]);
  return kernel.Run();
}

namespace {

// The MXU part of a convolution whose window columns are folded into N
// (hlo::DirectConvolution::columns_in_n): a convolution of window KH x 1 and stride 1 along W over
// every input column the windows read (OW_q = (OW - 1) x stride + KW), with KW x O output
// features, whose "output" pixels are the popped partial sums the emitter adds (SumColumns).
hlo::DirectConvolution WindowColumnsMxuPart(const hlo::DirectConvolution& p) {
  hlo::DirectConvolution q = p;
  q.columns_in_n = false;
  q.KW = 1;
  q.OW = (p.OW - 1) * p.ww.stride + p.KW;
  q.O = p.KW * p.O;
  q.ww.size = 1;
  q.ww.stride = 1;
  q.ww.padding_high = std::max<int64_t>(0, q.OW - p.W - p.ww.padding_low);
  return q;
}

}  // namespace

Status Lowerer::LowerDirectConvolution(const HloInstruction& inst,
                                       hlo::DirectConvolution p) {
  const auto& cd = inst.convolution_dimension_numbers();
  const int64_t rank = inst.shape().rank();
  const bool oi = cd.kernel_input_feature_dimension == rank - 1;
  HbmBuffer L = Buffer(inst.operand(0));  // the rows a kernel reads start `skip` elements later
  if (const std::optional<int64_t> skip = SkipRowsNoWindowReads(p)) {
    L.address += static_cast<uint64_t>(*skip * L.elem_bytes());
  }
  const HbmBuffer& Wt = Buffer(inst.operand(1));
  const HbmBuffer& D = Buffer(&inst);
  bool int_path = false;
  TPUSIM_ASSIGN_OR_RETURN(const std::vector<PassParts> passes,
                          ConvPasses(inst, config_, L.dtype, Wt.dtype, D.dtype, &int_path));
  if (D.elements() == 0) return OkStatus();
  // Pop-time fusion: a third of VMEM is kept for the epilogue's blocks, as in the dot kernel; an
  // activation-only epilogue runs in the pops instead (FoldPopActivation).
  const std::vector<const HloInstruction*>* epilogue_ops = nullptr;
  std::optional<PopActivation> pop_act;
  // With the window columns in N the MXUs run `mxu` (WindowColumnsMxuPart) and the activation
  // comes after the columns' sum, so it is not folded into the pops.
  const bool cols = p.columns_in_n;
  const hlo::DirectConvolution mxu = cols ? WindowColumnsMxuPart(p) : p;
  if (auto it = groups_.epilogue_of_dot.find(&inst); it != groups_.epilogue_of_dot.end()) {
    epilogue_ops = &it->second;
    if (!cols) pop_act = FoldPopActivation(inst, *epilogue_ops);
    if (pop_act) epilogue_ops = nullptr;
  }
  const HbmBuffer& O = pop_act ? Buffer(pop_act->last) : D;
  const int64_t le = L.elem_bytes(), re = Wt.elem_bytes(), oe = O.elem_bytes();
  // A result block's rows and columns (of the convolution's [N x OH x OW, O] result).
  const auto result_rows = [&](const ConvBlocks& b) { return cols ? b.bn * b.bh * p.OW : b.mc(); };
  const auto kernel_vmem = [&](const ConvBlocks& b) {
    const int64_t bytes = ConvVmemBytes(b, le, re, oe, oi);
    if (!cols) return bytes;
    // The two result blocks are [rows x OW, O] rather than [mc, nc]; two popped blocks [mc, nc]
    // and two sums [rows x OW, O] in f32 come on top (DirectConvEmitter::Allocate).
    const int64_t popped = b.mc() * b.nc, result = result_rows(b) * p.O;
    return bytes + 2 * (result - popped) * oe + 2 * (popped + result) * 4 + 4 * 64;
  };
  // Blocks within `budget` bytes; with the columns in N only whole popped rows of all KW x O
  // columns (a row's columns are summed across its pixels).
  const auto choose = [&](int64_t budget) -> std::optional<ConvBlocks> {
    std::optional<ConvBlocks> b =
        ChooseConvBlocks(mxu, config_, le, re, oe, oi, budget, double_buffer_);
    if (cols && b && kernel_vmem(*b) > budget) {  // again, in the VMEM the extra buffers leave
      const int64_t extra = kernel_vmem(*b) - ConvVmemBytes(*b, le, re, oe, oi);
      b = ChooseConvBlocks(mxu, config_, le, re, oe, oi, budget - extra, double_buffer_);
    }
    if (cols && b && (kernel_vmem(*b) > budget || b->bw < mxu.OW || b->nc < mxu.O)) {
      return std::nullopt;
    }
    return b;
  };
  const int64_t vmem = (em_.vmem_free() - 8 * 64) * (epilogue_ops != nullptr ? 2 : 3) / 3;
  std::optional<ConvBlocks> blocks = choose(vmem);
  if (!blocks) {
    if (cols) {
      return DoesNotFit(
          inst, fmt::format("accumulators/VMEM: the kernel's layout folds its {} window columns "
                            "into the MXU's N dimension, which needs a whole row of {} input "
                            "columns x {} columns per block (core.mxu.accumulator_rows = {}, "
                            "core.vmem.capacity_bytes = {})",
                            p.KW, mxu.OW, mxu.O, config_.core.mxu.accumulator_rows,
                            em_.vmem_bytes()));
    }
    return DoesNotFit(inst,
                      fmt::format("VMEM: no band of one output row with {} input features "
                                  "and its kernel taps fits core.vmem.capacity_bytes = {}",
                                  std::min<int64_t>(p.C, config_.core.mxu.rows), em_.vmem_bytes()));
  }
  // The epilogue's VMEM comes first (ChooseConvBlocks left a third of VMEM for it). One with many
  // operands (a batch-norm backward's chain) gets smaller blocks — the kernel's share of VMEM cut
  // to 1/2, 1/3, 1/4 — before its ops are left to kernels of their own.
  std::optional<Epilogue> epi;
  ConvEpilogue run_epilogue;
  if (epilogue_ops != nullptr) {
    const auto epilogue_budget = [&] {
      return em_.vmem_free() - 8 * 64 - kernel_vmem(*blocks);
    };
    const auto plan = [&] {
      return PlanEpilogue(inst, *epilogue_ops, result_rows(*blocks),
                          cols ? p.O : blocks->nc, epilogue_budget());
    };
    TPUSIM_ASSIGN_OR_RETURN(epi, plan());
    for (const int64_t share : {2, 3, 4}) {
      if (epi && kernel_vmem(*blocks) <= em_.vmem_free() - 8 * 64) break;
      epi.reset();
      em_.ResetVmem();
      std::optional<ConvBlocks> smaller = choose((em_.vmem_free() - 8 * 64) / share);
      if (!smaller) break;
      blocks = smaller;
      TPUSIM_ASSIGN_OR_RETURN(epi, plan());
    }
    if (!epi || kernel_vmem(*blocks) > em_.vmem_free() - 8 * 64) {
      // The epilogue took more than its third: run without it (its ops get kernels of their own).
      epi.reset();
      em_.ResetVmem();
      blocks = choose(em_.vmem_free() - 8 * 64);
      if (!blocks) return Internal("convolution %" + inst.name() + ": blocks vanished");
    }
  }
  if (epi) {
    const int64_t M = p.N * p.OH * p.OW;
    run_epilogue = [&, M](uint64_t block, int64_t m0, int64_t mc, int64_t n0,
                          int64_t nc) -> StatusOr<bool> {
      TPUSIM_RETURN_IF_ERROR(RunEpilogue(inst, *epi, block, O.dtype, 0, M, m0, mc, n0, nc, p.O));
      return epi->store_dot;
    };
  }
  // Feature groups (no epilogue: AddDotEpilogues leaves grouped convolutions alone) run one after
  // another, each with the same blocks at its own feature offsets; a group's stores are done
  // before the next reuses the VMEM.
  for (int64_t g = 0; g < p.groups; ++g) {
    if (g > 0) em_.ResetVmem();
    DirectConvEmitter kernel(em_, config_, inst, mxu, *blocks, passes, L, Wt, O, oi, int_path,
                             run_epilogue, pop_act ? pop_act->act : isa::Activation::kNone, g,
                             cols ? &p : nullptr);
    TPUSIM_RETURN_IF_ERROR(kernel.Run());
  }
  return CloseEpilogue(inst, pop_act.has_value(), epi ? &*epi : nullptr);
}

}  // namespace tpusim::compiler
