// The small enumerations the ISA's operand fields take: element types, memory spaces, VPU
// functions, reduction axes, activations and the f32 precision-pass part selector. Each enum lists
// its assembly spellings once (the *_LIST macros below), so the assembler, the disassembler, the
// encoder's range check and docs/isa.md all use the same names. Values are part of the binary
// encoding: append only.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpusim::isa {

// X(enumerator, "assembly name")
#define TPUSIM_ISA_DTYPE_LIST(X)     \
  X(kBF16, "bf16")                   \
  X(kF32, "f32")                     \
  X(kS8, "s8")                       \
  X(kS32, "s32")                     \
  X(kPred, "pred")                   \
  X(kU8, "u8")                       \
  X(kS16, "s16")                     \
  X(kU16, "u16")                     \
  X(kF16, "f16")                     \
  X(kU32, "u32")                     \
  X(kS64, "s64")                     \
  X(kU64, "u64")                     \
  X(kF8E4M3FN, "f8e4m3fn")           \
  X(kF8E5M2, "f8e5m2")               \
  X(kF64, "f64")                     \
  X(kS4, "s4")                       \
  X(kU4, "u4")                       \
  X(kF8E4M3, "f8e4m3")               \
  X(kF8E3M4, "f8e3m4")               \
  X(kF8E4M3FNUZ, "f8e4m3fnuz")       \
  X(kF8E5M2FNUZ, "f8e5m2fnuz")       \
  X(kF8E4M3B11FNUZ, "f8e4m3b11fnuz") \
  X(kF8E8M0FNU, "f8e8m0fnu")

// Memory spaces. kHost is the host's DRAM (reached over PCIe); kAcc is an MXU's accumulator memory,
// addressed in rows of `core.mxu.cols` 32-bit words.
#define TPUSIM_ISA_SPACE_LIST(X) \
  X(kHbm, "hbm")                 \
  X(kVmem, "vmem")               \
  X(kAcc, "acc")                 \
  X(kSmem, "smem")               \
  X(kHost, "host")

#define TPUSIM_ISA_UNARY_LIST(X) \
  X(kNeg, "neg")                 \
  X(kAbs, "abs")                 \
  X(kExp, "exp")                 \
  X(kLog, "log")                 \
  X(kTanh, "tanh")               \
  X(kLogistic, "logistic")       \
  X(kSqrt, "sqrt")               \
  X(kRsqrt, "rsqrt")             \
  X(kFloor, "floor")             \
  X(kCeil, "ceil")               \
  X(kRoundNe, "round_ne")        \
  X(kSign, "sign")               \
  X(kNot, "not")                 \
  X(kExpm1, "expm1")             \
  X(kLog1p, "log1p")             \
  X(kSin, "sin")                 \
  X(kCos, "cos")                 \
  X(kErf, "erf")                 \
  X(kRoundAfz, "round_afz")      \
  X(kTan, "tan")                 \
  X(kCbrt, "cbrt")               \
  X(kClz, "clz")                 \
  X(kPopcnt, "popcnt")           \
  X(kAcos, "acos")               \
  X(kAcosh, "acosh")             \
  X(kAsin, "asin")               \
  X(kAsinh, "asinh")             \
  X(kAtan, "atan")               \
  X(kAtanh, "atanh")             \
  X(kCosh, "cosh")               \
  X(kSinh, "sinh")

#define TPUSIM_ISA_BINARY_LIST(X) \
  X(kAdd, "add")                 \
  X(kSub, "sub")                 \
  X(kMul, "mul")                 \
  X(kDiv, "div")                 \
  X(kMax, "max")                 \
  X(kMin, "min")                 \
  X(kPow, "pow")                 \
  X(kRem, "rem")                 \
  X(kAnd, "and")                 \
  X(kOr, "or")                   \
  X(kXor, "xor")                 \
  X(kAtan2, "atan2")             \
  X(kShl, "shl")                 \
  X(kShrl, "shrl")               \
  X(kShra, "shra")               \
  X(kMulhi, "mulhi")

#define TPUSIM_ISA_COMPARE_LIST(X) \
  X(kEq, "eq")                   \
  X(kNe, "ne")                   \
  X(kLt, "lt")                   \
  X(kLe, "le")                   \
  X(kGt, "gt")                   \
  X(kGe, "ge")

#define TPUSIM_ISA_REDUCE_LIST(X) \
  X(kSum, "sum")                 \
  X(kMax, "max")                 \
  X(kMin, "min")

// A [rows, cols] region: lanes = the minor (cols) dimension, sublanes = the major (rows) dimension.
#define TPUSIM_ISA_AXIS_LIST(X) \
  X(kLanes, "lanes")             \
  X(kSublanes, "sublanes")       \
  X(kAll, "all")

// How an operand of a [rows, cols] op is read: none = [rows, cols], scalar = one element,
// row = a [cols] vector repeated for every row, col = a [rows] vector repeated for every column.
#define TPUSIM_ISA_BCAST_LIST(X) \
  X(kNone, "none")               \
  X(kScalar, "scalar")           \
  X(kRow, "row")                 \
  X(kCol, "col")

#define TPUSIM_ISA_ACTIVATION_LIST(X) \
  X(kNone, "none")               \
  X(kRelu, "relu")               \
  X(kTanh, "tanh")               \
  X(kLogistic, "logistic")

// Which bf16 part of an f32 operand enters the MXU: hi = bf16(x), lo = bf16(x - hi),
// lolo = bf16(x - hi - lo) (numerics.h). bf16 and s8 operands use `hi` (the value itself).
#define TPUSIM_ISA_PART_LIST(X) \
  X(kHi, "hi")                   \
  X(kLo, "lo")                   \
  X(kLoLo, "lolo")

#define TPUSIM_ISA_ENUMERATOR_(e, s) e,
enum class DType : uint8_t { TPUSIM_ISA_DTYPE_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class MemSpace : uint8_t { TPUSIM_ISA_SPACE_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class UnaryOp : uint8_t { TPUSIM_ISA_UNARY_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class BinaryOp : uint8_t { TPUSIM_ISA_BINARY_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class CompareOp : uint8_t { TPUSIM_ISA_COMPARE_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class ReduceOp : uint8_t { TPUSIM_ISA_REDUCE_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class ReduceAxis : uint8_t { TPUSIM_ISA_AXIS_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class Broadcast : uint8_t { TPUSIM_ISA_BCAST_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class Activation : uint8_t { TPUSIM_ISA_ACTIVATION_LIST(TPUSIM_ISA_ENUMERATOR_) };
enum class PrecisionPart : uint8_t { TPUSIM_ISA_PART_LIST(TPUSIM_ISA_ENUMERATOR_) };
#undef TPUSIM_ISA_ENUMERATOR_

/// Bytes one element occupies in memory: bf16 2, f32 4, s8 1, s32 4, pred 1 (0 or 1), u8 1,
/// s16 2, u16 2, f16 2, u32 4, s64 8, u64 8. The narrow types (u8, s16, u16, f16) are stored packed
/// at their own width and widened to the VPU's 32-bit compute types when read (numerics.h LoadInt /
/// LoadFloat), as XLA's TPU backend stores and computes them. s64 and u64 are stored at 8 bytes and
/// computed exactly; the VPU's lanes are 32 bits wide, so each 64-bit element op costs several
/// 32-bit VPU ops (core.vpu.ops_per_64bit_element), as XLA's TPU backend emulates 64-bit integers
/// with pairs of 32-bit values. f8e4m3fn and f8e5m2 are stored at 1 byte and, like bf16 and f16,
/// widened exactly to f32 on load and rounded back on store (common/float8.h): the VPU computes
/// them in f32, as XLA's TPU backend upcasts 8-bit floats for vector arithmetic. f64 is stored at
/// 8 bytes; the VPU's arithmetic, compare, reduce and convert compute it in binary64 (numerics.h),
/// every other reader loads it as the nearest f32 (one rounding); the compiler emits f64 only for
/// the ops F64ComputedOn allows (compiler/lower/device_types.h). s4 and u4
/// hold values in [-8, 7] / [0, 15] and are computed as 4-bit integers (IntBits 4: results wrap to
/// 4 bits) in the VPU's 32-bit lanes; tpusim stores them at one byte per element (the value,
/// sign-extended for s4) where XLA's TPU backend packs two per byte, so an s4/u4 array moves and
/// occupies twice the bytes it does on a TPU (README, "Element types": the ISA addresses whole
/// bytes, and packing would need sub-byte addressing in every DMA and VMEM tile).
int DTypeBytes(DType t);
bool IsFloat(DType t);     // bf16, f32, f16, the f8 types, f64
bool IsFloat8(DType t);    // f8e4m3fn, f8e5m2, f8e4m3, f8e3m4, f8e4m3fnuz, f8e5m2fnuz, ...
bool IsInteger(DType t);   // s4, u4, s8, s32, u8, s16, u16, u32, s64, u64
bool IsUnsigned(DType t);  // u4, u8, u16, u32, u64
/// Bits of an integer or pred element's value: 4, 8, 16, 32, 64 (pred 1).
int IntBits(DType t);

/// Elements a VPU operand read with broadcast mode `b` holds for a [rows, cols] result: rows * cols
/// (none), 1 (scalar), cols (row: one row repeated), rows (col: one column repeated).
uint64_t BroadcastOperandElements(Broadcast b, uint64_t rows, uint64_t cols);
/// The index in such an operand of result element (r, c) of a result with `cols` columns.
uint64_t BroadcastOperandIndex(Broadcast b, uint64_t r, uint64_t c, uint64_t cols);

/// Assembly names ("bf16", "vmem", "add", ...) and their inverses (nullopt for an unknown name).
std::string_view Name(DType v);
std::string_view Name(MemSpace v);
std::string_view Name(UnaryOp v);
std::string_view Name(BinaryOp v);
std::string_view Name(CompareOp v);
std::string_view Name(ReduceOp v);
std::string_view Name(ReduceAxis v);
std::string_view Name(Broadcast v);
std::string_view Name(Activation v);
std::string_view Name(PrecisionPart v);

}  // namespace tpusim::isa
