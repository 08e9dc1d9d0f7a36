// Typed HLO instruction attributes, in XLA's terms (xla/xla_data.proto,
// xla/hlo/ir/hlo_instruction.h). Plain structs: the parser fills them from the text, the printer
// writes them back, the verifier and the evaluator read them. Dimension numbers are 0-based logical
// dimensions of the operand they name.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tpusim::hlo {

/// dot: `lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0},
/// rhs_contracting_dims={1}`. Output dims are [batch..., lhs free..., rhs free...] (operation
/// semantics, DotGeneral).
struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

/// operand_precision={default,high,highest} per operand. On TPU an f32 dot at kDefault rounds its
/// operands to bf16 (1 MXU pass), kHigh uses 3 bf16 passes, kHighest 6 (see DESIGN.md, Numerics).
enum class Precision : uint8_t { kDefault, kHigh, kHighest };
std::string_view PrecisionName(Precision p);  // "default", "high", "highest"

struct PrecisionConfig {
  std::vector<Precision> operand_precision;  // empty = all kDefault
  std::string algorithm;  // `algorithm=dot_bf16_bf16_f32` verbatim, empty if absent
  bool operator==(const PrecisionConfig&) const = default;
};

/// One dimension of `window={size=3x3 stride=2x2 pad=0_1x0_1 lhs_dilate=1x1 rhs_dilate=2x2
/// rhs_reversal=1x1}`.
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilate (dilation of the input; "transposed convolution")
  int64_t window_dilation = 1;  // rhs_dilate (atrous convolution)
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};

struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

/// From `dim_labels=b01f_01io->b01f`: which dimension of input / kernel / output is batch, feature
/// and each spatial dimension. Spatial dimension k of all three corresponds to window dimension k.
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

/// pad: `padding=0_0x1_1_2` — per dimension low_high[_interior]; low/high may be negative.
struct PaddingDimension {
  int64_t edge_padding_low = 0;
  int64_t edge_padding_high = 0;
  int64_t interior_padding = 0;
  bool operator==(const PaddingDimension&) const = default;
};

struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;
  bool operator==(const PaddingConfig&) const = default;
};

/// gather: offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim (+ batching dims,
/// new XLA).
struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

/// scatter: update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
/// index_vector_dim.
struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

/// compare: direction=EQ|NE|GE|GT|LE|LT, optional type=FLOAT|TOTALORDER|SIGNED|UNSIGNED.
enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
/// kDefault: no `type=` written; the type follows from the operand element type (XLA's default).
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
std::string_view ComparisonDirectionName(ComparisonDirection d);  // "EQ", ...
std::string_view ComparisonTypeName(ComparisonType t);            // "", "FLOAT", "TOTALORDER", ...

/// fusion: kind=kLoop|kInput|kOutput|kCustom.
enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
std::string_view FusionKindName(FusionKind k);  // "kLoop", ...

/// rng: distribution=rng_uniform|rng_normal.
enum class RandomDistribution : uint8_t { kUniform, kNormal };
/// rng-bit-generator: algorithm=rng_default|rng_three_fry|rng_philox.
enum class RandomAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
std::string_view RandomDistributionName(RandomDistribution d);  // "rng_uniform", "rng_normal"
std::string_view RandomAlgorithmName(RandomAlgorithm a);        // "rng_default", ...

/// fft: fft_type=FFT|IFFT|RFFT|IRFFT (XLA's FftType). FFT/IFFT: complex -> complex; RFFT: f32/f64
/// -> c64/c128 keeping the fft_length[-1]/2+1 non-negative frequencies; IRFFT: the inverse,
/// complex -> real. The inverse transforms scale by 1/N (StableHLO spec, `fft`).
enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
std::string_view FftTypeName(FftType t);  // "FFT", "IFFT", "RFFT", "IRFFT"

/// metadata={op_type="Conv2D" op_name="a/b" source_file="x.py" source_line=10 ...}. Keys tpusim
/// does not model (source_end_line, stack_frame_id, ...) are kept in order as raw `key=value` text.
struct OpMetadata {
  std::string op_type;
  std::string op_name;
  std::string source_file;
  int64_t source_line = 0;
  std::vector<std::pair<std::string, std::string>> other;  // key -> value text as written
  bool empty() const {
    return op_type.empty() && op_name.empty() && source_file.empty() && source_line == 0 &&
           other.empty();
  }
  bool operator==(const OpMetadata&) const = default;
};

/// The values of a `constant(...)` exactly as parsed, before any Literal exists (the evaluator
/// builds its Literal from this). Values are in row-major (logical index) order.
///   - elided: the dump wrote `{...}`; no values are stored (and none are allocated, whatever the
///   shape).
///   - floating-point element types (f16/bf16/f32/f64/f8*): float_values (inf/-inf/nan included).
///   - complex element types: float_values holds (real, imag) pairs.
///   - integer and pred element types: int_values (pred: 0/1; u64 above INT64_MAX wraps to the bit
///   pattern).
///   - tuple constants: tuple_elements, one per tuple element, recursively.
struct LiteralValues {
  bool elided = false;
  std::vector<double> float_values;
  std::vector<int64_t> int_values;
  std::vector<LiteralValues> tuple_elements;
  bool operator==(const LiteralValues& o) const;
};

}  // namespace tpusim::hlo
