// Data-movement HLO operations (no arithmetic): broadcast, reshape, transpose, slice,
// dynamic-slice, dynamic-update-slice, concatenate, pad, reverse, iota. All work on any element
// type by copying element bytes; semantics follow XLA's operation-semantics doc. `out` is the
// instruction's result shape; each function checks the operands against it and returns
// InvalidArgument (naming the shapes) on a mismatch.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "hlo/attributes.h"
#include "hlo/eval/kernels/kernel_options.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// out[idx] = in[idx_src] where operand dim i maps to output dim dimensions[i].
StatusOr<Literal> Broadcast(const Literal& in, std::span<const int64_t> dimensions,
                            const Shape& out, const KernelOptions& options);
/// Same elements in row-major order, new dims (shares the buffer).
StatusOr<Literal> Reshape(const Literal& in, const Shape& out);
/// out dim i = in dim permutation[i].
StatusOr<Literal> Transpose(const Literal& in, std::span<const int64_t> permutation,
                            const Shape& out, const KernelOptions& options);
/// slice={[start:limit:stride], ...}.
StatusOr<Literal> Slice(const Literal& in, std::span<const int64_t> starts,
                        std::span<const int64_t> limits, std::span<const int64_t> strides,
                        const Shape& out, const KernelOptions& options);
/// dynamic-slice: start indices (scalars, any integer type) are clamped to [0, dim - size] (XLA).
StatusOr<Literal> DynamicSlice(const Literal& in, std::span<const Literal* const> start_indices,
                               const Shape& out, const KernelOptions& options);
/// dynamic-update-slice: `update` written at clamped starts ([0, dim - update_dim]).
StatusOr<Literal> DynamicUpdateSlice(const Literal& in, const Literal& update,
                                     std::span<const Literal* const> start_indices,
                                     const Shape& out, const KernelOptions& options);
/// concatenate along `dimension`.
StatusOr<Literal> Concatenate(std::span<const Literal* const> operands, int64_t dimension,
                              const Shape& out, const KernelOptions& options);
/// pad: low/high edge padding (negative removes elements) and interior padding, filled with the
/// scalar `pad_value`.
StatusOr<Literal> Pad(const Literal& in, const Literal& pad_value, const PaddingConfig& padding,
                      const Shape& out, const KernelOptions& options);
/// reverse along `dimensions`.
StatusOr<Literal> Reverse(const Literal& in, std::span<const int64_t> dimensions, const Shape& out,
                          const KernelOptions& options);
/// iota along `dimension` (value = index, converted to the element type).
StatusOr<Literal> Iota(const Shape& out, int64_t dimension, const KernelOptions& options);

/// Low-level strided copy: for every row-major index idx of `dims`,
/// dst[linear(idx)] = src[src_offset + sum_k idx[k] * src_strides[k]] (offsets and strides in
/// elements, strides may be 0 or negative). Used by the functions above and by other kernels.
void StridedCopy(const uint8_t* src, int64_t src_offset, std::span<const int64_t> src_strides,
                 uint8_t* dst, std::span<const int64_t> dims, int64_t elem_bytes);

}  // namespace tpusim::hlo
