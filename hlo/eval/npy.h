// NumPy .npy files for evaluator inputs and outputs (format: numpy/lib/format.py, "NPY format" v1.0
// with a 2-byte header length, v2.0 with 4 bytes; the header is a Python dict literal with 'descr',
// 'fortran_order' and 'shape', padded with spaces and a '\n' to a multiple of 64 bytes).
//
// dtypes: pred <-> '|b1', s8 '|i1', s16 '<i2', s32 '<i4', s64 '<i8', u8 '|u1', u16 '<u2', u32
// '<u4', u64 '<u8', f16 '<f2', f32 '<f4', f64 '<f8'. NumPy has no bfloat16, so bf16 travels as
// '<f4' holding bf16-representable values (exact widening on write; round-to-nearest-even on read).
// Only little-endian, C-order files are read; big-endian or Fortran-order files are an
// InvalidArgument / Unimplemented naming the file.
#pragma once

#include <string>

#include "common/status.h"
#include "hlo/eval/literal.h"

namespace tpusim::hlo {

/// Serializes an array literal as .npy bytes (v1.0, or v2.0 when the header needs > 65535 bytes).
StatusOr<std::string> EncodeNpy(const Literal& array);
/// Parses .npy bytes; `name` (a path) is used in error messages. The literal has the file's dtype.
StatusOr<Literal> DecodeNpy(const std::string& bytes, const std::string& name,
                            int64_t max_bytes = Literal::kDefaultMaxBytes);

/// Writes `array` to `path` (atomically).
Status WriteNpy(const std::string& path, const Literal& array);
/// Reads `path` and returns a literal of exactly `expected` (dims and element type). A '<f4' file
/// for a bf16 parameter is rounded to bf16; any other dtype or dims mismatch is InvalidArgument
/// naming the file, the file's shape and the expected shape.
StatusOr<Literal> ReadNpyAs(const std::string& path, const Shape& expected,
                            int64_t max_bytes = Literal::kDefaultMaxBytes);

}  // namespace tpusim::hlo
