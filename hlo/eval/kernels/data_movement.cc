#include "hlo/eval/kernels/data_movement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "hlo/eval/convert.h"
#include "hlo/eval/kernels/index_util.h"

namespace tpusim::hlo {
namespace {

int64_t ElemBytes(const Literal& l) { return ByteWidth(l.element_type()); }

Status Mismatch(const char* op, const Shape& got, const Shape& want) {
  return InvalidArgument(fmt::format("{}: computed shape {} does not match the result shape {}", op,
                                     got.ToString(false), want.ToString(false)));
}

Status CheckResult(const char* op, std::span<const int64_t> dims, PrimitiveType type,
                   const Shape& out) {
  if (!out.IsArray() || out.element_type() != type ||
      !std::equal(dims.begin(), dims.end(), out.dimensions().begin(), out.dimensions().end())) {
    return Mismatch(op, Shape(type, std::vector<int64_t>(dims.begin(), dims.end())), out);
  }
  return OkStatus();
}

// Clamped start indices of a dynamic slice/update (XLA: start = clamp(start, 0, dim - size)).
StatusOr<std::vector<int64_t>> ClampedStarts(const char* op, std::span<const Literal* const> starts,
                                             std::span<const int64_t> dims,
                                             std::span<const int64_t> sizes) {
  if (starts.size() != dims.size()) {
    return InvalidArgument(
        fmt::format("{}: {} start indices for a rank-{} operand", op, starts.size(), dims.size()));
  }
  std::vector<int64_t> out(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) {
    const Literal& s = *starts[k];
    if (!s.IsArray() || s.element_count() != 1 || !IsInteger(s.element_type())) {
      return InvalidArgument(fmt::format("{}: start index {} must be an integer scalar", op, k));
    }
    if (sizes[k] > dims[k]) {
      return InvalidArgument(
          fmt::format("{}: size {} exceeds dimension {} of size {}", op, sizes[k], k, dims[k]));
    }
    int64_t v = s.element_type() == PrimitiveType::kU64
                    ? static_cast<int64_t>(std::min<uint64_t>(s.data<uint64_t>()[0], INT64_MAX))
                    : s.GetAsInt64(0);
    out[k] = std::clamp<int64_t>(v, 0, dims[k] - sizes[k]);
  }
  return out;
}

// dst[i] = src[i * stride] for i < n, elements held as T (a fixed-size copy the compiler turns
// into one load and store; a stride of 0, a broadcast along the row, is a fill).
template <class T>
void CopyRowAs(uint8_t* dst, const uint8_t* src, int64_t n, int64_t stride) {
  T v;
  if (stride == 0) {
    std::memcpy(&v, src, sizeof(T));
    for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(&v, src + i * stride * static_cast<int64_t>(sizeof(T)), sizeof(T));
    std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
  }
}

// One row of StridedCopy whose source elements are not contiguous.
void CopyRow(uint8_t* dst, const uint8_t* src, int64_t n, int64_t stride, int64_t elem_bytes) {
  switch (elem_bytes) {
    case 1:
      return CopyRowAs<uint8_t>(dst, src, n, stride);
    case 2:
      return CopyRowAs<uint16_t>(dst, src, n, stride);
    case 4:
      return CopyRowAs<uint32_t>(dst, src, n, stride);
    case 8:
      return CopyRowAs<uint64_t>(dst, src, n, stride);
    default:
      for (int64_t i = 0; i < n; ++i) {
        std::memcpy(dst + i * elem_bytes, src + i * stride * elem_bytes,
                    static_cast<size_t>(elem_bytes));
      }
  }
}

}  // namespace

void StridedCopy(const uint8_t* src, int64_t src_offset, std::span<const int64_t> src_strides,
                 uint8_t* dst, std::span<const int64_t> dims, int64_t elem_bytes) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (rank == 0) {
    std::memcpy(dst, src + src_offset * elem_bytes, static_cast<size_t>(elem_bytes));
    return;
  }
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  const int64_t inner = dims[static_cast<size_t>(rank - 1)];
  const int64_t inner_stride = src_strides[static_cast<size_t>(rank - 1)];
  std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
  int64_t outer_offset = src_offset;
  int64_t d = 0;
  while (true) {
    if (inner_stride == 1) {
      std::memcpy(dst + d * elem_bytes, src + outer_offset * elem_bytes,
                  static_cast<size_t>(inner * elem_bytes));
    } else {
      CopyRow(dst + d * elem_bytes, src + outer_offset * elem_bytes, inner, inner_stride,
              elem_bytes);
    }
    d += inner;
    // Advance the outer odometer (all dims but the last), updating the source offset incrementally.
    int64_t k = rank - 2;
    for (; k >= 0; --k) {
      size_t uk = static_cast<size_t>(k);
      outer_offset += src_strides[uk];
      if (++idx[uk] < dims[uk]) break;
      outer_offset -= src_strides[uk] * dims[uk];
      idx[uk] = 0;
    }
    if (k < 0) return;
  }
}

StatusOr<Literal> Broadcast(const Literal& in, std::span<const int64_t> dimensions,
                            const Shape& out, const KernelOptions& options) {
  if (static_cast<int64_t>(dimensions.size()) != in.shape().rank() ||
      in.element_type() != out.element_type()) {
    return Mismatch("broadcast", in.shape(), out);
  }
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> src_strides(static_cast<size_t>(out.rank()), 0);
  for (size_t i = 0; i < dimensions.size(); ++i) {
    int64_t od = dimensions[i];
    if (od < 0 || od >= out.rank() ||
        out.dimensions(od) != in.shape().dimensions(static_cast<int64_t>(i))) {
      return InvalidArgument(
          fmt::format("broadcast: operand {} with dimensions={{{}}} does not fit {}",
                      in.shape().ToString(false), fmt::join(dimensions, ","), out.ToString(false)));
    }
    src_strides[static_cast<size_t>(od)] = in_strides[i];
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StridedCopy(in.raw(), 0, src_strides, result.mutable_raw(), out.dimensions(), ElemBytes(in));
  return result;
}

StatusOr<Literal> Reshape(const Literal& in, const Shape& out) {
  if (!out.IsArray() || out.element_type() != in.element_type() ||
      out.ElementCount() != in.element_count()) {
    return InvalidArgument(fmt::format("reshape: {} cannot become {}", in.shape().ToString(false),
                                       out.ToString(false)));
  }
  Literal result = in;
  result.ReshapeInPlace(out);
  return result;
}

StatusOr<Literal> Transpose(const Literal& in, std::span<const int64_t> permutation,
                            const Shape& out, const KernelOptions& options) {
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return Mismatch("transpose", in.shape(), out);
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> dims(static_cast<size_t>(rank)), strides(static_cast<size_t>(rank));
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t p = permutation[static_cast<size_t>(i)];
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)]) {
      return InvalidArgument(fmt::format("transpose: dimensions={{{}}} is not a permutation",
                                         fmt::join(permutation, ",")));
    }
    seen[static_cast<size_t>(p)] = true;
    dims[static_cast<size_t>(i)] = in.shape().dimensions(p);
    strides[static_cast<size_t>(i)] = in_strides[static_cast<size_t>(p)];
  }
  TPUSIM_RETURN_IF_ERROR(CheckResult("transpose", dims, in.element_type(), out));
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StridedCopy(in.raw(), 0, strides, result.mutable_raw(), dims, ElemBytes(in));
  return result;
}

StatusOr<Literal> Slice(const Literal& in, std::span<const int64_t> starts,
                        std::span<const int64_t> limits, std::span<const int64_t> strides,
                        const Shape& out, const KernelOptions& options) {
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(starts.size()) != rank || limits.size() != starts.size()) {
    return Mismatch("slice", in.shape(), out);
  }
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  std::vector<int64_t> dims(static_cast<size_t>(rank)), src_strides(static_cast<size_t>(rank));
  int64_t offset = 0;
  for (size_t k = 0; k < static_cast<size_t>(rank); ++k) {
    int64_t stride = strides.empty() ? 1 : strides[k];
    if (starts[k] < 0 || limits[k] > in.shape().dimensions(static_cast<int64_t>(k)) ||
        starts[k] > limits[k] || stride < 1) {
      return InvalidArgument(fmt::format("slice: [{}:{}:{}] is out of range for dimension {} of {}",
                                         starts[k], limits[k], stride, k,
                                         in.shape().ToString(false)));
    }
    dims[k] = (limits[k] - starts[k] + stride - 1) / stride;
    src_strides[k] = in_strides[k] * stride;
    offset += starts[k] * in_strides[k];
  }
  TPUSIM_RETURN_IF_ERROR(CheckResult("slice", dims, in.element_type(), out));
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StridedCopy(in.raw(), offset, src_strides, result.mutable_raw(), dims, ElemBytes(in));
  return result;
}

StatusOr<Literal> DynamicSlice(const Literal& in, std::span<const Literal* const> start_indices,
                               const Shape& out, const KernelOptions& options) {
  if (out.rank() != in.shape().rank() || out.element_type() != in.element_type()) {
    return Mismatch("dynamic-slice", in.shape(), out);
  }
  TPUSIM_ASSIGN_OR_RETURN(
      std::vector<int64_t> starts,
      ClampedStarts("dynamic-slice", start_indices, in.shape().dimensions(), out.dimensions()));
  std::vector<int64_t> in_strides = RowMajorStrides(in.shape().dimensions());
  int64_t offset = 0;
  for (size_t k = 0; k < starts.size(); ++k) offset += starts[k] * in_strides[k];
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StridedCopy(in.raw(), offset, in_strides, result.mutable_raw(), out.dimensions(), ElemBytes(in));
  return result;
}

StatusOr<Literal> DynamicUpdateSlice(const Literal& in, const Literal& update,
                                     std::span<const Literal* const> start_indices,
                                     const Shape& out, const KernelOptions& options) {
  (void)options;
  if (!in.shape().Compatible(out) || update.element_type() != in.element_type() ||
      update.shape().rank() != in.shape().rank()) {
    return Mismatch("dynamic-update-slice", in.shape(), out);
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                          ClampedStarts("dynamic-update-slice", start_indices,
                                        in.shape().dimensions(), update.shape().dimensions()));
  Literal result = in;  // copy-on-write: the first mutable access copies the operand's buffer
  result.ReshapeInPlace(out);
  const int64_t eb = ElemBytes(in);
  std::vector<int64_t> out_strides = RowMajorStrides(in.shape().dimensions());
  uint8_t* dst = result.mutable_raw();
  const uint8_t* src = update.raw();
  int64_t i = 0;
  ForEachIndex(update.shape().dimensions(), [&](std::span<const int64_t> idx) {
    int64_t o = 0;
    for (size_t k = 0; k < idx.size(); ++k) o += (idx[k] + starts[k]) * out_strides[k];
    std::memcpy(dst + o * eb, src + i * eb, static_cast<size_t>(eb));
    ++i;
  });
  return result;
}

StatusOr<Literal> Concatenate(std::span<const Literal* const> operands, int64_t dimension,
                              const Shape& out, const KernelOptions& options) {
  if (operands.empty() || dimension < 0 || dimension >= out.rank()) {
    return InvalidArgument("concatenate: needs operands and a valid dimension");
  }
  int64_t total = 0;
  for (const Literal* op : operands) {
    if (op->shape().rank() != out.rank() || op->element_type() != out.element_type()) {
      return Mismatch("concatenate", op->shape(), out);
    }
    for (int64_t k = 0; k < out.rank(); ++k) {
      if (k != dimension && op->shape().dimensions(k) != out.dimensions(k)) {
        return Mismatch("concatenate", op->shape(), out);
      }
    }
    total += op->shape().dimensions(dimension);
  }
  if (total != out.dimensions(dimension)) {
    return InvalidArgument(
        fmt::format("concatenate: operands add up to {} along dimension {}, result has {}", total,
                    dimension, out.dimensions(dimension)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const int64_t eb = ByteWidth(out.element_type());
  // outer = prod(dims before `dimension`); each operand contributes a contiguous chunk per outer
  // index.
  int64_t outer = 1;
  for (int64_t k = 0; k < dimension; ++k) outer *= out.dimensions(k);
  int64_t out_chunk = 1;
  for (int64_t k = dimension; k < out.rank(); ++k) out_chunk *= out.dimensions(k);
  uint8_t* dst = result.mutable_raw();
  int64_t col = 0;
  for (const Literal* op : operands) {
    int64_t chunk = op->element_count() / std::max<int64_t>(outer, 1);
    if (outer == 0 || chunk == 0) continue;
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (o * out_chunk + col) * eb, op->raw() + o * chunk * eb,
                  static_cast<size_t>(chunk * eb));
    }
    col += chunk;
  }
  return result;
}

StatusOr<Literal> Pad(const Literal& in, const Literal& pad_value, const PaddingConfig& padding,
                      const Shape& out, const KernelOptions& options) {
  const int64_t rank = in.shape().rank();
  if (static_cast<int64_t>(padding.dimensions.size()) != rank ||
      pad_value.element_type() != in.element_type() || pad_value.element_count() != 1) {
    return Mismatch("pad", in.shape(), out);
  }
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  for (int64_t k = 0; k < rank; ++k) {
    const PaddingDimension& p = padding.dimensions[static_cast<size_t>(k)];
    int64_t d = in.shape().dimensions(k);
    if (p.interior_padding < 0) return InvalidArgument("pad: negative interior padding");
    int64_t dilated = d == 0 ? 0 : d + (d - 1) * p.interior_padding;
    dims[static_cast<size_t>(k)] = p.edge_padding_low + dilated + p.edge_padding_high;
    if (dims[static_cast<size_t>(k)] < 0) {
      return InvalidArgument(fmt::format("pad: dimension {} would have negative size", k));
    }
  }
  TPUSIM_RETURN_IF_ERROR(CheckResult("pad", dims, in.element_type(), out));
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  const int64_t eb = ElemBytes(in);
  uint8_t* dst = result.mutable_raw();
  for (int64_t i = 0; i < result.element_count(); ++i) {
    std::memcpy(dst + i * eb, pad_value.raw(), static_cast<size_t>(eb));
  }
  std::vector<int64_t> out_strides = RowMajorStrides(dims);
  const uint8_t* src = in.raw();
  int64_t i = 0;
  ForEachIndex(in.shape().dimensions(), [&](std::span<const int64_t> idx) {
    int64_t o = 0;
    bool inside = true;
    for (size_t k = 0; k < idx.size(); ++k) {
      const PaddingDimension& p = padding.dimensions[k];
      int64_t pos = p.edge_padding_low + idx[k] * (p.interior_padding + 1);
      if (pos < 0 || pos >= dims[k]) {
        inside = false;
        break;
      }
      o += pos * out_strides[k];
    }
    if (inside) std::memcpy(dst + o * eb, src + i * eb, static_cast<size_t>(eb));
    ++i;
  });
  return result;
}

StatusOr<Literal> Reverse(const Literal& in, std::span<const int64_t> dimensions, const Shape& out,
                          const KernelOptions& options) {
  if (!in.shape().Compatible(out)) return Mismatch("reverse", in.shape(), out);
  std::vector<int64_t> strides = RowMajorStrides(in.shape().dimensions());
  int64_t offset = 0;
  for (int64_t d : dimensions) {
    if (d < 0 || d >= in.shape().rank()) return InvalidArgument("reverse: dimension out of range");
    size_t ud = static_cast<size_t>(d);
    offset += (in.shape().dimensions(d) - 1) * strides[ud];
    strides[ud] = -strides[ud];
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  StridedCopy(in.raw(), offset, strides, result.mutable_raw(), out.dimensions(), ElemBytes(in));
  return result;
}

StatusOr<Literal> Iota(const Shape& out, int64_t dimension, const KernelOptions& options) {
  if (dimension < 0 || dimension >= out.rank()) {
    return InvalidArgument(
        fmt::format("iota: iota_dimension={} out of range for {}", dimension, out.ToString(false)));
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal result, Literal::Create(out, options.max_bytes));
  std::vector<int64_t> strides = RowMajorStrides(out.dimensions());
  const int64_t stride = strides[static_cast<size_t>(dimension)];
  const int64_t size = out.dimensions(dimension);
  PrimitiveTypeSwitch(out.element_type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* d = result.mutable_data<T>();
    for (int64_t i = 0; i < result.element_count(); ++i) {
      d[i] = ConvertElement<T>((i / stride) % size);
    }
  });
  return result;
}

}  // namespace tpusim::hlo
