#include "isa/types.h"

#include "common/check.h"

namespace tpusim::isa {

int DTypeBytes(DType t) {
  switch (t) {
    case DType::kBF16:
    case DType::kS16:
    case DType::kU16:
    case DType::kF16:
      return 2;
    case DType::kF32:
    case DType::kS32:
    case DType::kU32:
      return 4;
    case DType::kS64:
    case DType::kU64:
    case DType::kF64:
      return 8;
    case DType::kS8:
    case DType::kU8:
    case DType::kPred:
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3:
    case DType::kF8E3M4:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E4M3B11FNUZ:
    case DType::kF8E8M0FNU:
    case DType::kS4:  // one element per byte (types.h)
    case DType::kU4:
      return 1;
  }
  TPUSIM_CHECK(false) << "bad DType " << static_cast<int>(t);
  return 0;
}

bool IsFloat(DType t) {
  return t == DType::kBF16 || t == DType::kF32 || t == DType::kF16 || IsFloat8(t) ||
         t == DType::kF64;
}
bool IsFloat8(DType t) {
  switch (t) {
    case DType::kF8E4M3FN:
    case DType::kF8E5M2:
    case DType::kF8E4M3:
    case DType::kF8E3M4:
    case DType::kF8E4M3FNUZ:
    case DType::kF8E5M2FNUZ:
    case DType::kF8E4M3B11FNUZ:
    case DType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}
bool IsInteger(DType t) { return !IsFloat(t) && t != DType::kPred; }
bool IsUnsigned(DType t) {
  return t == DType::kU4 || t == DType::kU8 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
}
int IntBits(DType t) {
  if (t == DType::kS4 || t == DType::kU4) return 4;
  return t == DType::kPred ? 1 : 8 * DTypeBytes(t);
}

uint64_t BroadcastOperandElements(Broadcast b, uint64_t rows, uint64_t cols) {
  switch (b) {
    case Broadcast::kNone:
      return rows * cols;
    case Broadcast::kScalar:
      return 1;
    case Broadcast::kRow:
      return cols;
    case Broadcast::kCol:
      return rows;
  }
  return rows * cols;
}

uint64_t BroadcastOperandIndex(Broadcast b, uint64_t r, uint64_t c, uint64_t cols) {
  switch (b) {
    case Broadcast::kNone:
      return r * cols + c;
    case Broadcast::kScalar:
      return 0;
    case Broadcast::kRow:
      return c;
    case Broadcast::kCol:
      return r;
  }
  return 0;
}

#define TPUSIM_ISA_CASE_(e, s) \
  case T::e:                   \
    return s;
#define TPUSIM_ISA_NAME_FN_(Type, LIST)   \
  std::string_view Name(Type v) {         \
    using T = Type;                       \
    switch (v) { LIST(TPUSIM_ISA_CASE_) } \
    return "";                            \
  }
TPUSIM_ISA_NAME_FN_(DType, TPUSIM_ISA_DTYPE_LIST)
TPUSIM_ISA_NAME_FN_(MemSpace, TPUSIM_ISA_SPACE_LIST)
TPUSIM_ISA_NAME_FN_(UnaryOp, TPUSIM_ISA_UNARY_LIST)
TPUSIM_ISA_NAME_FN_(BinaryOp, TPUSIM_ISA_BINARY_LIST)
TPUSIM_ISA_NAME_FN_(CompareOp, TPUSIM_ISA_COMPARE_LIST)
TPUSIM_ISA_NAME_FN_(ReduceOp, TPUSIM_ISA_REDUCE_LIST)
TPUSIM_ISA_NAME_FN_(ReduceAxis, TPUSIM_ISA_AXIS_LIST)
TPUSIM_ISA_NAME_FN_(Broadcast, TPUSIM_ISA_BCAST_LIST)
TPUSIM_ISA_NAME_FN_(Activation, TPUSIM_ISA_ACTIVATION_LIST)
TPUSIM_ISA_NAME_FN_(PrecisionPart, TPUSIM_ISA_PART_LIST)
#undef TPUSIM_ISA_NAME_FN_
#undef TPUSIM_ISA_CASE_

}  // namespace tpusim::isa
