// fft (XLA's Fft; StableHLO `fft`): the discrete Fourier transform over the 1-3 trailing
// dimensions named by fft_length, computed axis by axis with Eigen's FFT module (unsupported/
// Eigen/FFT, kissfft backend) in the element's precision (c64: float, c128: double).
//   FFT:   X[k] = sum_n x[n] exp(-2 pi i n k / N) along each axis.
//   IFFT:  x[n] = 1/N sum_k X[k] exp(+2 pi i n k / N) along each axis (1/N per axis).
//   RFFT:  real input, the FFT along the last axis keeps its first fft_length[-1]/2+1 outputs,
//          then the FFT along the others.
//   IRFFT: the IFFT along the outer axes, then along the last one from the half spectrum
//          extended with X[N-k] = conj(X[k]) and the real part kept (numpy.fft.irfftn's result:
//          the imaginary parts of X[0] and, for even N, X[N/2] do not contribute).
#pragma once

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// `out` is the instruction's shape (shape_inference_complex.h InferFft gives its rules).
/// InvalidArgument when the operand, fft_length and `out` do not fit those rules.
StatusOr<Literal> Fft(const Literal& in, FftType type, const std::vector<int64_t>& fft_length,
                      const Shape& out, const KernelOptions& options);

}  // namespace tpusim::hlo
