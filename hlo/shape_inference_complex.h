// The shape rules that involve complex element types (c64, c128), following XLA's
// (xla/service/shape_inference.cc: InferUnaryOpShape, InferBinaryOpShape, InferConvertShape,
// InferBitcastConvertShape, InferFftShape) and XLA's evaluator, which compares complex values only
// for equality. Used by InferShape; messages carry no location (the verifier adds it).
#pragma once

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// InvalidArgument when an elementwise instruction (or bitcast-convert) uses a complex operand or
/// result where XLA refuses one: floor/ceil/round-*, is-finite, reduce-precision, clz,
/// popcnt, not, and/or/xor; compare other than EQ/NE; convert or bitcast-convert from complex to
/// real (and bitcast-convert from real to complex). Also `complex` of anything but (f32, f32) or
/// (f64, f64), and real/imag of an integer or pred operand. OkStatus otherwise, including for every
/// instruction without complex operands.
Status CheckComplexElementTypes(const HloInstruction& inst);

/// The result shape of `fft` (XLA's InferFftShape): fft_length names the 1-3 trailing dimensions.
/// FFT/IFFT: a complex operand, result as the operand. RFFT: an f32/f64 operand whose trailing
/// dimensions equal fft_length; result c64/c128 with the last dimension fft_length[-1]/2+1 (0 stays
/// 0). IRFFT: a complex operand whose trailing dimensions but the last equal fft_length and whose
/// last is fft_length[-1]/2+1; result f32/f64 with the last dimension fft_length[-1].
/// InvalidArgument naming the rule otherwise.
StatusOr<Shape> InferFft(const HloInstruction& inst);

}  // namespace tpusim::hlo
