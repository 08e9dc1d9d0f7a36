#include "compiler/lower/device_types.h"

#include <fmt/format.h>

namespace tpusim::compiler {

std::optional<isa::DType> DeviceType(hlo::PrimitiveType t) {
  switch (t) {
    case hlo::PrimitiveType::kF32:
      return isa::DType::kF32;
    case hlo::PrimitiveType::kBF16:
      return isa::DType::kBF16;
    case hlo::PrimitiveType::kS8:
      return isa::DType::kS8;
    case hlo::PrimitiveType::kS32:
      return isa::DType::kS32;
    case hlo::PrimitiveType::kU32:
      return isa::DType::kU32;
    case hlo::PrimitiveType::kS64:
      return isa::DType::kS64;
    case hlo::PrimitiveType::kU64:
      return isa::DType::kU64;
    case hlo::PrimitiveType::kPred:
      return isa::DType::kPred;
    case hlo::PrimitiveType::kU8:
      return isa::DType::kU8;
    case hlo::PrimitiveType::kS16:
      return isa::DType::kS16;
    case hlo::PrimitiveType::kU16:
      return isa::DType::kU16;
    case hlo::PrimitiveType::kF16:
      return isa::DType::kF16;
    case hlo::PrimitiveType::kF8E4M3FN:
      return isa::DType::kF8E4M3FN;
    case hlo::PrimitiveType::kF8E5M2:
      return isa::DType::kF8E5M2;
    case hlo::PrimitiveType::kF8E4M3:
      return isa::DType::kF8E4M3;
    case hlo::PrimitiveType::kF8E3M4:
      return isa::DType::kF8E3M4;
    case hlo::PrimitiveType::kF8E4M3FNUZ:
      return isa::DType::kF8E4M3FNUZ;
    case hlo::PrimitiveType::kF8E5M2FNUZ:
      return isa::DType::kF8E5M2FNUZ;
    case hlo::PrimitiveType::kF8E4M3B11FNUZ:
      return isa::DType::kF8E4M3B11FNUZ;
    case hlo::PrimitiveType::kF8E8M0FNU:
      return isa::DType::kF8E8M0FNU;
    case hlo::PrimitiveType::kF64:
      return isa::DType::kF64;
    case hlo::PrimitiveType::kS4:
      return isa::DType::kS4;
    case hlo::PrimitiveType::kU4:
      return isa::DType::kU4;
    default:
      return std::nullopt;
  }
}

namespace {

bool HasF64(const hlo::Shape& shape) {
  for (const hlo::Shape* leaf : shape.Leaves()) {
    if (leaf->element_type() == hlo::PrimitiveType::kF64) return true;
  }
  return false;
}

}  // namespace

bool F64ComputedOn(const hlo::HloInstruction& inst) {
  bool f64 = HasF64(inst.shape());
  for (const hlo::HloInstruction* op : inst.operands()) f64 = f64 || HasF64(op->shape());
  if (!f64) return false;
  using hlo::HloOpcode;
  switch (inst.opcode()) {
    // Held and moved as bytes.
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kBroadcast:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kCopy:
    case HloOpcode::kSlice:
    case HloOpcode::kConcatenate:
    case HloOpcode::kReverse:
    case HloOpcode::kPad:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kGather:  // indices computed in s32, the f64 rows moved by indirect DMA
    // Computed in binary64 on the VPU (vpu.unary, vpu.binary, vpu.compare, vpu.select,
    // vpu.convert and vpu.reduce with dtype=f64, isa/numerics.h), costed as XLA's f32-pair
    // emulation (core.vpu.ops_per_f64_element).
    case HloOpcode::kConvert:
    case HloOpcode::kAbs:
    case HloOpcode::kNegate:
    case HloOpcode::kSign:
    case HloOpcode::kFloor:
    case HloOpcode::kCeil:
    case HloOpcode::kRoundNearestAfz:
    case HloOpcode::kRoundNearestEven:
    case HloOpcode::kExp:
    case HloOpcode::kExpm1:
    case HloOpcode::kLog:
    case HloOpcode::kLog1p:
    case HloOpcode::kLogistic:
    case HloOpcode::kSqrt:
    case HloOpcode::kRsqrt:
    case HloOpcode::kCbrt:
    case HloOpcode::kSin:
    case HloOpcode::kCos:
    case HloOpcode::kTan:
    case HloOpcode::kTanh:
    case HloOpcode::kAcos:
    case HloOpcode::kAcosh:
    case HloOpcode::kAsin:
    case HloOpcode::kAsinh:
    case HloOpcode::kAtan:
    case HloOpcode::kAtanh:
    case HloOpcode::kCosh:
    case HloOpcode::kSinh:
    case HloOpcode::kErf:
    case HloOpcode::kAdd:
    case HloOpcode::kSubtract:
    case HloOpcode::kMultiply:
    case HloOpcode::kDivide:
    case HloOpcode::kRemainder:
    case HloOpcode::kMaximum:
    case HloOpcode::kMinimum:
    case HloOpcode::kPower:
    case HloOpcode::kAtan2:
    case HloOpcode::kCompare:
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kIsFinite:
    case HloOpcode::kReduce:
      return false;
    default:
      return true;
  }
}

std::string NoDeviceTypeReason(hlo::PrimitiveType t) {
  const std::string name(hlo::PrimitiveTypeName(t));
  std::string why;
  switch (t) {
    case hlo::PrimitiveType::kF64:
      why =
          "a TPU has no 64-bit floating point in its VPU or MXU: XLA's TPU backend rewrites f64 "
          "into pairs of f32, which tpusim models (values in binary64, cost as f32-pair "
          "arithmetic) for elementwise arithmetic, compare, select, clamp, convert, reduce and "
          "data movement only; convert to f32 before this op";
      break;
    case hlo::PrimitiveType::kC64:
    case hlo::PrimitiveType::kC128:
      why =
          "complex numbers have no TPU device type in tpusim; split them into real and imaginary "
          "f32 arrays";
      break;
    default:
      why = "it has no device type";
      break;
  }
  return fmt::format(
      "element type {}: {} (device types: f32, bf16, f16, the f8 types, s4, u4, s8, u8, s16, u16, "
      "s32, u32, s64, u64, pred; f64 for conversion only)",
      name, why);
}

}  // namespace tpusim::compiler
