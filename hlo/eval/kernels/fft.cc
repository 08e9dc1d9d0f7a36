#include "hlo/eval/kernels/fft.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <complex>
#include <unsupported/Eigen/FFT>
#include <vector>

#include "hlo/eval/kernels/parallel.h"

namespace tpusim::hlo {
namespace {

// One axis of a row-major array: `count` lines of `len` elements, element j of line l at
// base(l) + j * stride, base(l) = (l / stride) * len * stride + l % stride.
struct Lines {
  int64_t count = 0, len = 0, stride = 0;
  int64_t Base(int64_t l) const { return (l / stride) * len * stride + l % stride; }
};

Lines AxisLines(const std::vector<int64_t>& dims, int64_t axis) {
  Lines a;
  a.len = dims[static_cast<size_t>(axis)];
  a.stride = 1;
  for (size_t d = static_cast<size_t>(axis) + 1; d < dims.size(); ++d) a.stride *= dims[d];
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  a.count = a.len == 0 ? 0 : total / a.len;
  return a;
}

// In place: the forward or inverse (scaled 1/len) complex FFT along `axis` of `data`.
template <typename R>
void TransformAxis(std::complex<R>* data, const std::vector<int64_t>& dims, int64_t axis,
                   bool inverse, int threads) {
  const Lines a = AxisLines(dims, axis);
  if (a.count == 0 || a.len == 0) return;
  ParallelForBlocks(a.count, 16, threads, [&](int64_t b, int64_t e) {
    Eigen::FFT<R> fft;
    std::vector<std::complex<R>> src(static_cast<size_t>(a.len)), dst(src.size());
    for (int64_t l = b; l < e; ++l) {
      std::complex<R>* p = data + a.Base(l);
      for (int64_t j = 0; j < a.len; ++j) src[static_cast<size_t>(j)] = p[j * a.stride];
      if (inverse) {
        fft.inv(dst.data(), src.data(), a.len);
      } else {
        fft.fwd(dst.data(), src.data(), a.len);
      }
      for (int64_t j = 0; j < a.len; ++j) p[j * a.stride] = dst[static_cast<size_t>(j)];
    }
  });
}

// Copies the leading `keep` elements of each line of the last axis (dims -> dims with the last
// replaced by keep), converting with `f`.
template <typename To, typename From, typename F>
std::vector<To> ResizeLast(const From* src, const std::vector<int64_t>& dims, int64_t keep, F f) {
  const int64_t len = dims.back();
  const int64_t lines = len == 0 ? 0 : AxisLines(dims, static_cast<int64_t>(dims.size()) - 1).count;
  std::vector<To> out(static_cast<size_t>(lines * keep));
  for (int64_t l = 0; l < lines; ++l) {
    for (int64_t j = 0; j < keep && j < len; ++j) {
      out[static_cast<size_t>(l * keep + j)] = f(src[l * len + j]);
    }
  }
  return out;
}

template <typename R>
StatusOr<Literal> FftTyped(const Literal& in, FftType type, const std::vector<int64_t>& len,
                           const Shape& out, const KernelOptions& options) {
  using C = std::complex<R>;
  const int64_t rank = in.shape().rank();
  const int64_t n = static_cast<int64_t>(len.size());
  const int64_t first = rank - n;
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  std::vector<int64_t> dims = in.shape().dimensions();
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft: {
      std::vector<C> buf(in.data<C>(), in.data<C>() + in.element_count());
      for (int64_t ax = first; ax < rank; ++ax) {
        TransformAxis(buf.data(), dims, ax, type == FftType::kIfft, options.threads);
      }
      std::copy(buf.begin(), buf.end(), result.mutable_data<C>());
      return result;
    }
    case FftType::kRfft: {
      // Full complex FFT along the last axis, keep len/2+1, then the outer axes.
      std::vector<C> buf = ResizeLast<C>(in.data<R>(), dims, dims.back(), [](R x) { return C(x); });
      TransformAxis(buf.data(), dims, rank - 1, false, options.threads);
      const int64_t half = out.dimensions(rank - 1);
      buf = ResizeLast<C>(buf.data(), dims, half, [](C x) { return x; });
      dims.back() = half;
      for (int64_t ax = first; ax + 1 < rank; ++ax) {
        TransformAxis(buf.data(), dims, ax, false, options.threads);
      }
      std::copy(buf.begin(), buf.end(), result.mutable_data<C>());
      return result;
    }
    case FftType::kIrfft: {
      std::vector<C> buf(in.data<C>(), in.data<C>() + in.element_count());
      for (int64_t ax = first; ax + 1 < rank; ++ax) {
        TransformAxis(buf.data(), dims, ax, true, options.threads);
      }
      // Hermitian extension of the last axis: X[N-k] = conj(X[k]).
      const int64_t full = len.back(), half = dims.back();
      std::vector<C> ext = ResizeLast<C>(buf.data(), dims, full, [](C x) { return x; });
      std::vector<int64_t> ext_dims = dims;
      ext_dims.back() = full;
      const int64_t lines = full == 0 ? 0 : static_cast<int64_t>(ext.size()) / full;
      for (int64_t l = 0; l < lines; ++l) {
        for (int64_t k = half; k < full; ++k) {
          ext[static_cast<size_t>(l * full + k)] = std::conj(ext[static_cast<size_t>(l * full + full - k)]);
        }
      }
      TransformAxis(ext.data(), ext_dims, rank - 1, true, options.threads);
      R* d = result.mutable_data<R>();
      for (size_t i = 0; i < ext.size(); ++i) d[i] = ext[i].real();
      return result;
    }
  }
  return InvalidArgument("fft: unknown fft_type");
}

}  // namespace

StatusOr<Literal> Fft(const Literal& in, FftType type, const std::vector<int64_t>& fft_length,
                      const Shape& out, const KernelOptions& options) {
  const int64_t n = static_cast<int64_t>(fft_length.size());
  if (!in.IsArray() || !out.IsArray() || n < 1 || n > 3 || in.shape().rank() < n ||
      out.rank() != in.shape().rank()) {
    return InvalidArgument(fmt::format("fft: cannot transform {} over fft_length {{{}}} into {}",
                                       in.shape().ToString(false), fmt::join(fft_length, ","),
                                       out.ToString(false)));
  }
  const PrimitiveType t = in.element_type();
  const bool real_in = type == FftType::kRfft;
  const PrimitiveType component = real_in ? t : ComplexComponentType(t);
  const bool types_ok = real_in ? (t == PrimitiveType::kF32 || t == PrimitiveType::kF64)
                                : IsComplex(t);
  if (!types_ok) {
    return InvalidArgument(fmt::format("fft {} of element type {} is not defined",
                                       FftTypeName(type), PrimitiveTypeName(t)));
  }
  std::vector<int64_t> want = in.shape().dimensions();
  const int64_t first = in.shape().rank() - n;
  bool dims_ok = true;
  for (int64_t i = 0; i < n; ++i) {
    const bool checked = type == FftType::kRfft || (type == FftType::kIrfft && i + 1 < n);
    if (checked && want[static_cast<size_t>(first + i)] != fft_length[static_cast<size_t>(i)]) {
      dims_ok = false;
    }
  }
  if (type == FftType::kRfft) want.back() = fft_length.back() / 2 + 1;
  if (type == FftType::kIrfft) {
    dims_ok = dims_ok && want.back() == fft_length.back() / 2 + 1;
    want.back() = fft_length.back();
  }
  const PrimitiveType out_type = type == FftType::kIrfft ? component
                                 : component == PrimitiveType::kF64 ? PrimitiveType::kC128
                                                                    : PrimitiveType::kC64;
  if (!dims_ok || want != out.dimensions() || out.element_type() != out_type) {
    return InvalidArgument(fmt::format("fft {}: {} over fft_length {{{}}} cannot produce {}",
                                       FftTypeName(type), in.shape().ToString(false),
                                       fmt::join(fft_length, ","), out.ToString(false)));
  }
  if (component == PrimitiveType::kF64) return FftTyped<double>(in, type, fft_length, out, options);
  return FftTyped<float>(in, type, fft_length, out, options);
}

}  // namespace tpusim::hlo
