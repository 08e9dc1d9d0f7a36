#include "compiler/passes/bitcast_convert_expander.h"

#include <optional>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// The unsigned integer type of `bits` bits (8, 16, 32, 64); nullopt for another width.
std::optional<PrimitiveType> UnsignedOfWidth(int bits) {
  switch (bits) {
    case 8: return PrimitiveType::kU8;
    case 16: return PrimitiveType::kU16;
    case 32: return PrimitiveType::kU32;
    case 64: return PrimitiveType::kU64;
    default: return std::nullopt;
  }
}

bool Expandable(const HloInstruction& i) {
  if (i.opcode() != HloOpcode::kBitcastConvert || !i.shape().IsArray() ||
      !i.operand(0)->shape().IsArray()) {
    return false;
  }
  const PrimitiveType from = i.operand(0)->shape().element_type();
  const PrimitiveType to = i.shape().element_type();
  if (from == PrimitiveType::kPred || to == PrimitiveType::kPred) return false;
  if (hlo::IsComplex(from) || hlo::IsComplex(to)) return false;
  const int fw = hlo::BitWidth(from), tw = hlo::BitWidth(to);
  return fw != tw && UnsignedOfWidth(fw) && UnsignedOfWidth(tw);
}

// x as the unsigned type of its width (x itself when it is that type).
HloInstruction* AsUnsigned(HloBuilder& b, HloInstruction* x) {
  const PrimitiveType u = *UnsignedOfWidth(hlo::BitWidth(x->shape().element_type()));
  return x->shape().element_type() == u ? x : b.BitcastConvert(x, u, "bits");
}

// narrow [..., k] -> wide [...] (unsigned wide type).
HloInstruction* Widen(HloBuilder& b, HloInstruction* x, PrimitiveType wide) {
  const Shape& s = x->shape();
  const int64_t rank = s.rank();
  const int narrow_bits = hlo::BitWidth(s.element_type());
  std::vector<int64_t> out(s.dimensions().begin(), s.dimensions().end() - 1);
  const Shape ws(wide, out);
  HloInstruction* u = AsUnsigned(b, x);
  HloInstruction* acc = nullptr;
  for (int64_t j = 0; j < s.dimensions(rank - 1); ++j) {
    std::vector<int64_t> start(static_cast<size_t>(rank), 0), limit = s.dimensions();
    start.back() = j;
    limit.back() = j + 1;
    HloInstruction* piece = b.Convert(
        b.Reshape(b.Slice(u, start, limit, std::vector<int64_t>(rank, 1), "piece"), out, "part"),
        wide, "wide");
    if (j > 0) {
      piece = b.Binary(HloOpcode::kShiftLeft, piece, b.SplatInt(ws, j * narrow_bits, "shift"),
                       "placed");
    }
    acc = acc == nullptr ? piece : b.Binary(HloOpcode::kOr, acc, piece, "joined");
  }
  return acc;
}

// wide [...] -> narrow [..., k] (unsigned narrow type).
HloInstruction* Narrow(HloBuilder& b, HloInstruction* x, PrimitiveType narrow, int64_t k) {
  const Shape& s = x->shape();
  const int narrow_bits = hlo::BitWidth(narrow);
  HloInstruction* u = AsUnsigned(b, x);
  const Shape us = u->shape();
  std::vector<int64_t> piece_dims = s.dimensions();
  piece_dims.push_back(1);
  const int64_t mask = narrow_bits == 64 ? -1 : (int64_t{1} << narrow_bits) - 1;
  std::vector<HloInstruction*> pieces;
  for (int64_t j = 0; j < k; ++j) {
    HloInstruction* v = u;
    if (j > 0) {
      v = b.Binary(HloOpcode::kShiftRightLogical, v, b.SplatInt(us, j * narrow_bits, "shift"),
                   "down");
    }
    v = b.Binary(HloOpcode::kAnd, v, b.SplatInt(us, mask, "mask"), "low");
    pieces.push_back(b.Reshape(b.Convert(v, narrow, "narrow"), piece_dims, "piece"));
  }
  return b.Concatenate(pieces, static_cast<int64_t>(s.rank()), "pieces");
}

}  // namespace

StatusOr<bool> BitcastConvertExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, [](hlo::HloComputation& comp, HloInstruction* bc) {
    HloBuilder b(&comp, bc);
    HloInstruction* x = bc->operand(0);
    const PrimitiveType to = bc->shape().element_type();
    const int fw = hlo::BitWidth(x->shape().element_type()), tw = hlo::BitWidth(to);
    const PrimitiveType unsigned_to = *UnsignedOfWidth(tw);
    HloInstruction* bits = fw < tw ? Widen(b, x, unsigned_to)
                                   : Narrow(b, x, unsigned_to, fw / tw);
    HloInstruction* result = to == unsigned_to ? bits : b.BitcastConvert(bits, to, "typed");
    bc->ReplaceAllUsesWith(result);
    comp.RemoveInstruction(bc);
  });
}

}  // namespace tpusim::compiler
