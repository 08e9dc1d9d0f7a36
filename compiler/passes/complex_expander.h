// complex-expander: complex arrays run on the device as pairs of f32, as XLA's TPU backend computes
// c64 on its real VPU and MXU. Every c64 array of the entry computation becomes an f32 array with a
// trailing dimension of 2 — (real, imaginary), the byte order of c64 itself, so parameters and
// results keep their bytes and the driver reads them back as c64 (CompiledModule's placements keep
// the c64 shapes):
//   * data movement (parameter, constant, copy, reshape, bitcast, transpose, broadcast, slice,
//     concatenate, reverse, pad, select, dynamic-slice, dynamic-update-slice, tuple,
//     get-tuple-element) moves the pairs: the op with the trailing dimension appended;
//   * add, subtract, negate act on both parts; multiply is (ar br - ai bi, ar bi + ai br); divide
//     is Smith's algorithm (the larger of |br|, |bi| divides first); exponential is
//     e^ar (cos ai, sin ai); abs is sqrt(ar^2 + ai^2); compare EQ/NE compares both parts; real,
//     imag and complex slice and join the parts; convert from a real type pairs the value with 0;
//   * dot is four real dots at the dot's precision: Re = Ar.Br - Ai.Bi, Im = Ar.Bi + Ai.Br;
//   * reduce with an add reducer reduces each part;
//   * fft (FFT, IFFT, RFFT, IRFFT over the trailing 1-3 dimensions) is a discrete Fourier transform
//     per transformed dimension: real dots with constant twiddle matrices [N, N] (cos and sin of
//     2 pi n k / N, computed in double and rounded to f32) at HIGHEST precision, IFFT scaled by
//     1/N per dimension; RFFT keeps the N/2 + 1 non-negative frequencies, IRFFT weights the inner
//     ones twice (the input's Hermitian half). A DFT costs O(N^2) MXU work per dimension where an
//     FFT costs O(N log N): tpusim's assumption for how a TPU computes fft, since XLA's TPU FFT
//     emitter is not public (docs/codegen.md).
// Complex values anywhere else (a while or conditional computation, a collective, a gather, a
// c128 array: the device has no f64) are refused with a located error naming the op.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ComplexExpander : public HloPass {
 public:
  std::string_view name() const override { return "complex-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
