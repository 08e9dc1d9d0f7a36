#include "compiler/passes/integer_dot_expander.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

bool IsInt(PrimitiveType t) { return hlo::IsInteger(t) && t != PrimitiveType::kPred; }

// Signed 8-bit digits an operand of type `t` needs modulo 2^32 (at most 4).
int64_t Digits(PrimitiveType t) {
  const int64_t bits = hlo::BitWidth(t) + (hlo::IsUnsignedInteger(t) ? 1 : 0);
  return std::min<int64_t>(4, (bits + 7) / 8);
}

bool SplitsIntoDigits(const HloInstruction& dot) {
  const PrimitiveType r = dot.shape().element_type();
  const PrimitiveType a = dot.operand(0)->shape().element_type();
  const PrimitiveType b = dot.operand(1)->shape().element_type();
  const int rbits = IsInt(r) ? hlo::BitWidth(r) : 0;
  if (rbits != 8 && rbits != 16 && rbits != 32) return false;
  if (!IsInt(a) || !IsInt(b) || hlo::BitWidth(a) > 32 || hlo::BitWidth(b) > 32) return false;
  return !(a == PrimitiveType::kS8 && b == PrimitiveType::kS8 && r == PrimitiveType::kS32);
}

bool MixesIntAndFloat(const HloInstruction& dot) {
  const PrimitiveType a = dot.operand(0)->shape().element_type();
  const PrimitiveType b = dot.operand(1)->shape().element_type();
  return hlo::IsFloatingPoint(dot.shape().element_type()) &&
         ((IsInt(a) && hlo::IsFloatingPoint(b)) || (hlo::IsFloatingPoint(a) && IsInt(b)));
}

bool Matches(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kDot && inst.operand_count() == 2 &&
         inst.shape().IsArray() && (SplitsIntoDigits(inst) || MixesIntAndFloat(inst));
}

// s32 splat of `v` shaped like `x`.
HloInstruction* Splat32(HloBuilder& b, const HloInstruction* x, int64_t v) {
  return b.SplatInt(hlo::Shape(PrimitiveType::kS32, x->shape().dimensions()), v, "c");
}

// The s8 digits d_0 .. d_{n-1} of `x` (an integer array), x = sum d_i 256^i mod 2^32.
std::vector<HloInstruction*> SignedDigits(HloBuilder& b, HloInstruction* x, int64_t n) {
  HloInstruction* r = x->shape().element_type() == PrimitiveType::kS32
                          ? x
                          : b.Convert(x, PrimitiveType::kS32, "s32");
  std::vector<HloInstruction*> digits;
  for (int64_t i = 0; i < n; ++i) {
    HloInstruction* low = b.Binary(
        HloOpcode::kShiftRightArithmetic,
        b.Binary(HloOpcode::kShiftLeft, r, Splat32(b, r, 24), "shl"), Splat32(b, r, 24), "low");
    digits.push_back(b.Convert(low, PrimitiveType::kS8, "digit"));
    if (i + 1 < n) {
      r = b.Binary(HloOpcode::kShiftRightArithmetic,
                   b.Binary(HloOpcode::kSubtract, r, low, "rest"), Splat32(b, r, 8), "next");
    }
  }
  return digits;
}

void SplitIntoDigits(hlo::HloComputation& comp, HloInstruction* dot) {
  HloBuilder b(&comp, dot);
  const PrimitiveType ta = dot->operand(0)->shape().element_type();
  const PrimitiveType tb = dot->operand(1)->shape().element_type();
  const std::vector<HloInstruction*> a = SignedDigits(b, dot->operand(0), Digits(ta));
  const std::vector<HloInstruction*> w = SignedDigits(b, dot->operand(1), Digits(tb));
  hlo::Shape s32 = dot->shape();
  s32.set_element_type(PrimitiveType::kS32);
  std::map<int64_t, HloInstruction*> by_shift;  // i + j -> sum of dot(a_i, w_j)
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = 0; j < w.size() && i + j <= 3; ++j) {
      HloInstruction* part = b.Add(CloneInstructionAs(
          *dot, HloOpcode::kDot, s32, {a[i], w[j]},
          b.UniqueName(dot->name() + ".d" + std::to_string(i) + std::to_string(j))));
      HloInstruction*& acc = by_shift[static_cast<int64_t>(i + j)];
      acc = acc == nullptr ? part : b.Binary(HloOpcode::kAdd, acc, part, "sum");
    }
  }
  HloInstruction* total = nullptr;
  for (const auto& [shift, sum] : by_shift) {
    HloInstruction* term =
        shift == 0 ? sum
                   : b.Binary(HloOpcode::kShiftLeft, sum, Splat32(b, sum, 8 * shift), "shift");
    total = total == nullptr ? term : b.Binary(HloOpcode::kAdd, total, term, "total");
  }
  const PrimitiveType r = dot->shape().element_type();
  const int bits = hlo::BitWidth(r);
  if (bits < 32) {  // the low bits, as the narrow type's wrapping sums leave them
    total = hlo::IsUnsignedInteger(r)
                ? b.Binary(HloOpcode::kAnd, total, Splat32(b, total, (int64_t{1} << bits) - 1),
                           "low")
                : b.Binary(HloOpcode::kShiftRightArithmetic,
                           b.Binary(HloOpcode::kShiftLeft, total, Splat32(b, total, 32 - bits),
                                    "shl"),
                           Splat32(b, total, 32 - bits), "low");
    total = b.Convert(total, r, "narrow");
  } else if (r == PrimitiveType::kU32) {
    total = b.BitcastConvert(total, PrimitiveType::kU32, "u32");
  }
  dot->ReplaceAllUsesWith(total);
  comp.RemoveInstruction(dot);
}

void UpcastIntegerOperand(hlo::HloComputation& comp, HloInstruction* dot) {
  HloBuilder b(&comp, dot);
  const PrimitiveType r = dot->shape().element_type();
  std::vector<HloInstruction*> operands;
  for (int64_t i = 0; i < 2; ++i) {
    HloInstruction* x = dot->operand(i);
    operands.push_back(IsInt(x->shape().element_type()) ? b.Convert(x, r, "upcast") : x);
  }
  HloInstruction* op = b.Add(CloneInstructionAs(*dot, HloOpcode::kDot, dot->shape(), operands,
                                                b.UniqueName(dot->name() + ".upcast")));
  dot->ReplaceAllUsesWith(op);
  comp.RemoveInstruction(dot);
}

}  // namespace

StatusOr<bool> IntegerDotExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Matches, [](hlo::HloComputation& comp, HloInstruction* dot) {
    if (SplitsIntoDigits(*dot)) {
      SplitIntoDigits(comp, dot);
    } else {
      UpcastIntegerOperand(comp, dot);
    }
  });
}

}  // namespace tpusim::compiler
