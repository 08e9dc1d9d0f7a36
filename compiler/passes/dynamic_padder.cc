#include "compiler/passes/dynamic_padder.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// Per dimension of an array value: the s32[] instruction holding its dynamic size, or nullptr
// when every element along it is valid.
using Sizes = std::vector<HloInstruction*>;

bool AnyDynamic(const Sizes& s) {
  for (const HloInstruction* d : s) {
    if (d != nullptr) return true;
  }
  return false;
}

bool ShapeHasDynamicBound(const Shape& shape) {
  for (const Shape* leaf : shape.Leaves()) {
    for (int64_t i = 0; i < leaf->rank(); ++i) {
      if (leaf->is_dynamic_dimension(i)) return true;
    }
  }
  return false;
}

// `<=N` dimensions become N; `?` (unbounded) dimensions stay (the verifier refuses them).
void MakeStatic(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& e : shape.mutable_tuple_shapes()) MakeStatic(e);
    return;
  }
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.is_dynamic_dimension(i) && shape.dimensions(i) >= 0) {
      shape.set_dynamic_dimension(i, false);
    }
  }
}

std::optional<int64_t> ConstantValue(const HloInstruction& n) {
  if (n.opcode() != HloOpcode::kConstant || !n.shape().IsArray() || n.shape().rank() != 0 ||
      n.literal().int_values.size() != 1) {
    return std::nullopt;
  }
  return n.literal().int_values[0];
}

class Padder {
 public:
  Padder(hlo::HloModule& module, hlo::HloComputation& comp, bool is_entry)
      : module_(module), comp_(comp), is_entry_(is_entry) {}

  Status Run() {
    std::vector<HloInstruction*> order;
    for (const auto& i : comp_.instructions()) order.push_back(i.get());
    for (HloInstruction* inst : order) TPUSIM_RETURN_IF_ERROR(Visit(*inst));
    if (is_entry_) MaskOutputs();
    // Only now do the sized instructions give way to what they stand for: until here each held
    // its own sizes (x itself, read elsewhere, may be static).
    for (auto& [inst, replacement] : replacements_) {
      inst->ReplaceAllUsesWith(replacement);
      dead_.push_back(inst);
    }
    comp_.RemoveInstructions(dead_);
    return OkStatus();
  }

 private:
  const Sizes& SizesOf(const HloInstruction* i) {
    auto it = sizes_.find(i);
    if (it != sizes_.end()) return it->second;
    static const Sizes kNone;
    return kNone;
  }
  HloInstruction* SizeOf(const HloInstruction* i, int64_t d) {
    const Sizes& s = SizesOf(i);
    return d < static_cast<int64_t>(s.size()) ? s[static_cast<size_t>(d)] : nullptr;
  }
  Sizes Static(const HloInstruction& i) const {
    return Sizes(static_cast<size_t>(i.shape().IsArray() ? i.shape().rank() : 0), nullptr);
  }

  Status Refuse(const HloInstruction& inst, const std::string& why) const {
    return Unimplemented(FormatDiagnostic(
        module_.source_name(), "", inst.location(),
        fmt::format("%{} ({}): cannot lower: {} (tpusim's dynamic padder handles "
                    "set-dimension-size, get-dimension-size, SliceToDynamic, PadToStatic, "
                    "elementwise ops, broadcast, "
                    "transpose, copy, slice, concatenate, a reshape or dynamic-reshape of a "
                    "dynamic major dimension, dot and reduce; compiler/passes/dynamic_padder.h)",
                    inst.name(), hlo::HloOpcodeString(inst.opcode()), why)));
  }

  // A size below the bound appears at `inst`: only the entry computation follows one.
  Status SizeOutsideTheEntry(const HloInstruction& inst) const {
    return Refuse(inst, fmt::format("a dynamic size inside computation '{}' (sizes are followed "
                                    "in the entry computation)", comp_.name()));
  }
  Status Visit(HloInstruction& inst);
  Status VisitReshape(HloInstruction& inst);
  Status VisitSliceToDynamic(HloInstruction& inst);
  Status VisitPadToStatic(HloInstruction& inst);
  // `inst` gives way to `by` once every instruction is visited (Run).
  void Replace(HloInstruction& inst, HloInstruction* by) {
    auto it = replaced_by_.find(by);
    if (it != replaced_by_.end()) by = it->second;
    replaced_by_[&inst] = by;
    replacements_.emplace_back(&inst, by);
  }
  Status VisitReduce(HloInstruction& inst);
  Status VisitDot(HloInstruction& inst);

  // s32[] max(0, min(n, bound)) before `anchor`.
  HloInstruction* ClampedSize(HloInstruction* n, int64_t bound, const HloInstruction& anchor);
  // pred of `shape`: whether each element is below the dynamic sizes of `dims` (nullptr when every
  // one of them is static).
  HloInstruction* Validity(const Shape& shape, const Sizes& sizes, const std::vector<int64_t>& dims,
                           const HloInstruction& anchor);
  // x with the elements at or past the dynamic sizes of `dims` replaced by `pad` (a scalar).
  HloInstruction* Mask(HloInstruction* x, const Sizes& sizes, const std::vector<int64_t>& dims,
                       HloInstruction* pad, const HloInstruction& anchor);
  void MaskOutputs();

  hlo::HloModule& module_;
  hlo::HloComputation& comp_;
  const bool is_entry_;  // sizes are followed in the entry computation only
  std::unordered_map<const HloInstruction*, Sizes> sizes_;
  std::vector<std::pair<HloInstruction*, HloInstruction*>> replacements_;
  std::unordered_map<const HloInstruction*, HloInstruction*> replaced_by_;
  std::vector<HloInstruction*> dead_;
};

HloInstruction* Padder::ClampedSize(HloInstruction* n, int64_t bound,
                                    const HloInstruction& anchor) {
  HloBuilder b(&comp_, &anchor);
  if (n->shape().element_type() != PrimitiveType::kS32) {
    n = b.Convert(n, PrimitiveType::kS32, "size");
  }
  HloInstruction* lo = b.ScalarConstant(PrimitiveType::kS32, 0, "size.min");
  HloInstruction* hi = b.ScalarConstant(PrimitiveType::kS32, static_cast<double>(bound), "bound");
  return b.Binary(HloOpcode::kMinimum, b.Binary(HloOpcode::kMaximum, n, lo, "size.lo"), hi,
                  "size");
}

HloInstruction* Padder::Validity(const Shape& shape, const Sizes& sizes,
                                 const std::vector<int64_t>& dims, const HloInstruction& anchor) {
  HloBuilder b(&comp_, &anchor);
  HloInstruction* valid = nullptr;
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(sizes.size())) continue;  // a static operand
    HloInstruction* size = sizes[static_cast<size_t>(d)];
    if (size == nullptr) continue;
    auto iota = std::make_unique<HloInstruction>(
        HloOpcode::kIota, Shape(PrimitiveType::kS32, shape.dimensions()),
        b.UniqueName(anchor.name() + ".pad.iota"));
    iota->set_iota_dimension(d);
    HloInstruction* index = b.Add(std::move(iota));
    HloInstruction* in = b.Compare(index, b.Broadcast(size, index->shape(), {}, "pad.size"),
                                   hlo::ComparisonDirection::kLt, "pad.valid");
    valid = valid == nullptr ? in : b.Binary(HloOpcode::kAnd, valid, in, "pad.valid");
  }
  return valid;
}

HloInstruction* Padder::Mask(HloInstruction* x, const Sizes& sizes,
                             const std::vector<int64_t>& dims, HloInstruction* pad,
                             const HloInstruction& anchor) {
  HloInstruction* valid = Validity(x->shape(), sizes, dims, anchor);
  if (valid == nullptr) return x;
  HloBuilder b(&comp_, &anchor);
  return b.Select(valid, x, b.Broadcast(pad, x->shape(), {}, "pad.value"), "pad.masked");
}

Status Padder::Visit(HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kIota:
      return OkStatus();  // a `<=N` parameter is given whole: size N
    case HloOpcode::kSetDimensionSize: {
      if (inst.operand_count() != 2 || inst.dimensions().size() != 1) {
        return Refuse(inst, "set-dimension-size takes (x, size), dimensions={d}");
      }
      HloInstruction* x = inst.operand(0);
      const int64_t d = inst.dimensions(0);
      Sizes s = SizesOf(x).empty() ? Static(*x) : SizesOf(x);
      const int64_t bound = x->shape().dimensions(d);
      const std::optional<int64_t> n = ConstantValue(*inst.operand(1));
      const bool full = n.has_value() && *n == bound;
      if (!full && !is_entry_) return SizeOutsideTheEntry(inst);
      s[static_cast<size_t>(d)] = full ? nullptr : ClampedSize(inst.operand(1), bound, inst);
      if (AnyDynamic(s)) sizes_[&inst] = std::move(s);
      Replace(inst, x);
      return OkStatus();
    }
    case HloOpcode::kGetDimensionSize: {
      const int64_t d = inst.dimensions(0);
      HloInstruction* size = SizeOf(inst.operand(0), d);
      if (size == nullptr) {
        size = HloBuilder(&comp_, &inst)
                   .ScalarConstant(PrimitiveType::kS32,
                                   static_cast<double>(inst.operand(0)->shape().dimensions(d)),
                                   "bound");
      }
      Replace(inst, size);
      return OkStatus();
    }
    case HloOpcode::kCustomCall:
      if (inst.custom_call_target() == "SliceToDynamic") return VisitSliceToDynamic(inst);
      if (inst.custom_call_target() == "PadToStatic") return VisitPadToStatic(inst);
      break;
    case HloOpcode::kReshape:
    case HloOpcode::kDynamicReshape:
      return VisitReshape(inst);
    case HloOpcode::kReduce:
      return VisitReduce(inst);
    case HloOpcode::kDot:
      return VisitDot(inst);
    default:
      break;
  }
  bool dynamic_operand = false;
  for (const HloInstruction* o : inst.operands()) dynamic_operand |= AnyDynamic(SizesOf(o));
  if (!dynamic_operand) return OkStatus();
  Sizes out = Static(inst);
  const HloInstruction* x = inst.operand(0);
  if (hlo::IsElementwise(op) || op == HloOpcode::kConvert || op == HloOpcode::kCopy ||
      op == HloOpcode::kBitcastConvert || op == HloOpcode::kReducePrecision) {
    for (const HloInstruction* o : inst.operands()) {
      const Sizes& s = SizesOf(o);
      for (size_t d = 0; d < s.size() && d < out.size(); ++d) {
        if (out[d] == nullptr) out[d] = s[d];
      }
    }
  } else if (op == HloOpcode::kBroadcast) {
    for (size_t j = 0; j < inst.dimensions().size(); ++j) {
      out[static_cast<size_t>(inst.dimensions(static_cast<int64_t>(j)))] = SizesOf(x)[j];
    }
  } else if (op == HloOpcode::kTranspose) {
    for (size_t i = 0; i < out.size(); ++i) {
      out[i] = SizesOf(x)[static_cast<size_t>(inst.dimensions(static_cast<int64_t>(i)))];
    }
  } else if (op == HloOpcode::kSlice) {
    const Sizes& s = SizesOf(x);
    for (size_t d = 0; d < s.size(); ++d) {
      if (s[d] == nullptr) continue;
      if (inst.slice_starts()[d] != 0 || inst.slice_strides()[d] != 1 ||
          inst.slice_limits()[d] != x->shape().dimensions(static_cast<int64_t>(d))) {
        return Refuse(inst, fmt::format("a slice of dynamic dimension {} of %{}", d, x->name()));
      }
      out[d] = s[d];
    }
  } else if (op == HloOpcode::kConcatenate) {
    const int64_t along = inst.dimensions(0);
    for (const HloInstruction* o : inst.operands()) {
      const Sizes& s = SizesOf(o);
      for (size_t d = 0; d < s.size(); ++d) {
        if (s[d] == nullptr) continue;
        if (static_cast<int64_t>(d) == along) {
          return Refuse(inst, fmt::format("concatenated along dynamic dimension {} of %{}", d,
                                          o->name()));
        }
        if (out[d] == nullptr) out[d] = s[d];
      }
    }
  } else if (op == HloOpcode::kTuple && &inst == comp_.root_instruction()) {
    return OkStatus();  // the outputs are masked at the end
  } else {
    for (int64_t k = 0; k < inst.operand_count(); ++k) {
      const Sizes& s = SizesOf(inst.operand(k));
      for (size_t d = 0; d < s.size(); ++d) {
        if (s[d] != nullptr) {
          return Refuse(inst, fmt::format("operand {} (%{}) has a dynamic size in dimension {}", k,
                                          inst.operand(k)->name(), d));
        }
      }
    }
  }
  if (AnyDynamic(out)) sizes_[&inst] = std::move(out);
  return OkStatus();
}

// custom-call SliceToDynamic(data, size_0 .. size_{r-1}) (XLA's dynamic padder writes it where a
// static buffer becomes a dynamic array): data, with the size of each dimension the result marks
// `<=` — a set-dimension-size per such dimension.
Status Padder::VisitSliceToDynamic(HloInstruction& inst) {
  HloInstruction* data = inst.operand_count() > 0 ? inst.operand(0) : nullptr;
  const int64_t rank = data != nullptr && data->shape().IsArray() ? data->shape().rank() : -1;
  bool sizes_ok = rank >= 0 && inst.operand_count() == 1 + rank && inst.shape().IsArray() &&
                  inst.shape().dimensions() == data->shape().dimensions();
  for (int64_t d = 0; sizes_ok && d < rank; ++d) {
    const Shape& n = inst.operand(1 + d)->shape();
    sizes_ok = n.IsArray() && n.rank() == 0 && n.element_type() == PrimitiveType::kS32;
  }
  if (!sizes_ok) {
    return Refuse(inst, "SliceToDynamic takes (data, one s32[] size per dimension of data) and "
                        "gives data's dimensions");
  }
  if (AnyDynamic(SizesOf(data))) {
    return Refuse(inst, fmt::format("SliceToDynamic of %{}, itself dynamic", data->name()));
  }
  Sizes s = Static(*data);
  for (int64_t d = 0; d < rank; ++d) {
    if (!inst.shape().is_dynamic_dimension(d)) continue;
    const int64_t bound = data->shape().dimensions(d);
    const std::optional<int64_t> n = ConstantValue(*inst.operand(1 + d));
    if (n.has_value() && *n == bound) continue;
    if (!is_entry_) return SizeOutsideTheEntry(inst);
    s[static_cast<size_t>(d)] = ClampedSize(inst.operand(1 + d), bound, inst);
  }
  if (AnyDynamic(s)) sizes_[&inst] = std::move(s);
  Replace(inst, data);
  return OkStatus();
}

// custom-call PadToStatic(x) -> (x's buffer with a static shape, s32[] size of each dimension)
// (XLA's dynamic padder writes it where a dynamic array leaves for code that takes static shapes):
// tuple(x, its sizes — the bound for a static dimension). The padding holds what x's buffer holds
// (undefined in XLA).
Status Padder::VisitPadToStatic(HloInstruction& inst) {
  HloInstruction* x = inst.operand_count() == 1 ? inst.operand(0) : nullptr;
  const int64_t rank = x != nullptr && x->shape().IsArray() ? x->shape().rank() : -1;
  bool ok = rank >= 0 && inst.shape().IsTuple() && inst.shape().tuple_shapes_size() == 1 + rank &&
            inst.shape().tuple_shapes(0).IsArray() &&
            inst.shape().tuple_shapes(0).dimensions() == x->shape().dimensions();
  for (int64_t d = 0; ok && d < rank; ++d) {
    const Shape& n = inst.shape().tuple_shapes(1 + d);
    ok = n.IsArray() && n.rank() == 0 && n.element_type() == PrimitiveType::kS32;
  }
  if (!ok) {
    return Refuse(inst, "PadToStatic takes one array x and gives (x's dimensions, one s32[] size "
                        "per dimension)");
  }
  HloBuilder b(&comp_, &inst);
  std::vector<HloInstruction*> parts = {x};
  for (int64_t d = 0; d < rank; ++d) {
    HloInstruction* size = SizeOf(x, d);
    if (size == nullptr) {
      size = b.ScalarConstant(PrimitiveType::kS32,
                              static_cast<double>(x->shape().dimensions(d)), "bound");
    }
    parts.push_back(size);
  }
  Replace(inst, b.Tuple(parts, "padded"));
  return OkStatus();
}

// reshape / dynamic-reshape: the valid elements stay a prefix of the buffer when only the major
// dimension of the operand is dynamic and the result's minor dimensions divide the operand's; the
// result's major size is then size * (operand minor elements / result minor elements), or the
// size operand a dynamic-reshape gives for it. A dynamic-reshape becomes a reshape of the bounds.
Status Padder::VisitReshape(HloInstruction& inst) {
  const HloInstruction& x = *inst.operand(0);
  const bool sized = inst.opcode() == HloOpcode::kDynamicReshape;
  const Sizes& s = SizesOf(&x);
  const Shape& out = inst.shape();
  for (int64_t d = 1; d < out.rank(); ++d) {
    if (out.is_dynamic_dimension(d)) return Refuse(inst, "a result with a dynamic minor dimension");
  }
  for (size_t d = 1; d < s.size(); ++d) {
    if (s[d] != nullptr) {
      return Refuse(inst, fmt::format("dimension {} of %{} is dynamic: the valid elements are not "
                                      "a prefix of the buffer", d, x.name()));
    }
  }
  Sizes result = Static(inst);
  if (sized && out.rank() > 0 && out.is_dynamic_dimension(0)) {
    if (!is_entry_) return SizeOutsideTheEntry(inst);
    result[0] = ClampedSize(inst.operand(1), out.dimensions(0), inst);
  } else if (AnyDynamic(s)) {
    int64_t inner_in = 1, inner_out = 1;
    for (int64_t d = 1; d < x.shape().rank(); ++d) inner_in *= x.shape().dimensions(d);
    for (int64_t d = 1; d < out.rank(); ++d) inner_out *= out.dimensions(d);
    if (out.rank() == 0 || inner_out == 0 || inner_in % inner_out != 0) {
      return Refuse(inst, fmt::format("the result's minor dimensions ({} elements) split the "
                                      "rows of %{} ({} elements)", inner_out, x.name(), inner_in));
    }
    HloBuilder b(&comp_, &inst);
    HloInstruction* f =
        b.ScalarConstant(PrimitiveType::kS32, static_cast<double>(inner_in / inner_out), "rows");
    result[0] = b.Binary(HloOpcode::kMultiply, s[0], f, "size");
  }
  if (AnyDynamic(result)) sizes_[&inst] = std::move(result);
  if (sized) {
    if (out.ElementCount() != x.shape().ElementCount()) {
      return Refuse(inst, "a result bound with another element count than the operand's bound");
    }
    HloInstruction* r =
        HloBuilder(&comp_, &inst).Reshape(inst.operand(0), out.dimensions(), "static");
    Replace(inst, r);
  }
  return OkStatus();
}

Status Padder::VisitReduce(HloInstruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  bool dynamic = false;
  for (int64_t k = 0; k < n; ++k) dynamic |= AnyDynamic(SizesOf(inst.operand(k)));
  for (int64_t k = n; k < inst.operand_count(); ++k) {
    if (AnyDynamic(SizesOf(inst.operand(k)))) return Refuse(inst, "a dynamic init value");
  }
  if (!dynamic) return OkStatus();
  // The operands of a variadic reduce (argmax) share their shape: one size per dimension, from
  // whichever operand carries it, masks every operand (each with its own init).
  Sizes s = Static(*inst.operand(0));
  for (int64_t k = 0; k < n; ++k) {
    const Sizes& sk = SizesOf(inst.operand(k));
    for (size_t d = 0; d < sk.size() && d < s.size(); ++d) {
      if (s[d] == nullptr) s[d] = sk[d];
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    HloInstruction* x = inst.operand(k);
    HloInstruction* masked = Mask(x, s, inst.dimensions(), inst.operand(n + k), inst);
    if (masked != x) inst.ReplaceOperandWith(k, masked);
  }
  Sizes out;
  for (size_t d = 0; d < s.size(); ++d) {
    bool reduced = false;
    for (int64_t r : inst.dimensions()) reduced |= r == static_cast<int64_t>(d);
    if (!reduced) out.push_back(s[d]);
  }
  if (AnyDynamic(out)) sizes_[&inst] = std::move(out);
  return OkStatus();
}

Status Padder::VisitDot(HloInstruction& inst) {
  const hlo::DotDimensionNumbers& dn = inst.dot_dimension_numbers();
  const Sizes lhs = SizesOf(inst.operand(0)), rhs = SizesOf(inst.operand(1));
  if (!AnyDynamic(lhs) && !AnyDynamic(rhs)) return OkStatus();
  HloBuilder b(&comp_, &inst);
  auto at = [](const Sizes& s, int64_t d) {
    return s.empty() ? nullptr : s[static_cast<size_t>(d)];
  };
  // A contracting pair has one size, from whichever side carries it; both sides read zeros past
  // it (a static side's elements there need not be finite: inf x 0 would be NaN).
  Sizes lc = Static(*inst.operand(0)), rc = Static(*inst.operand(1));
  for (size_t k = 0; k < dn.lhs_contracting_dimensions.size(); ++k) {
    const int64_t l = dn.lhs_contracting_dimensions[k], r = dn.rhs_contracting_dimensions[k];
    HloInstruction* size = at(lhs, l) != nullptr ? at(lhs, l) : at(rhs, r);
    lc[static_cast<size_t>(l)] = size;
    rc[static_cast<size_t>(r)] = size;
  }
  auto mask = [&](int64_t k, const Sizes& s, const std::vector<int64_t>& contracting) {
    if (!AnyDynamic(s)) return;
    HloInstruction* x = inst.operand(k);
    HloInstruction* zero = b.ScalarConstant(x->shape().element_type(), 0, "pad.zero");
    HloInstruction* masked = Mask(x, s, contracting, zero, inst);
    if (masked != x) inst.ReplaceOperandWith(k, masked);
  };
  mask(0, lc, dn.lhs_contracting_dimensions);
  mask(1, rc, dn.rhs_contracting_dimensions);
  // Result dimensions: batch, lhs free, rhs free (XLA's order).
  auto in = [](const std::vector<int64_t>& v, int64_t d) {
    return std::find(v.begin(), v.end(), d) != v.end();
  };
  Sizes out;
  for (size_t k = 0; k < dn.lhs_batch_dimensions.size(); ++k) {
    HloInstruction* l = at(lhs, dn.lhs_batch_dimensions[k]);
    out.push_back(l != nullptr ? l : at(rhs, dn.rhs_batch_dimensions[k]));
  }
  for (int64_t d = 0; d < inst.operand(0)->shape().rank(); ++d) {
    if (!in(dn.lhs_batch_dimensions, d) && !in(dn.lhs_contracting_dimensions, d)) {
      out.push_back(at(lhs, d));
    }
  }
  for (int64_t d = 0; d < inst.operand(1)->shape().rank(); ++d) {
    if (!in(dn.rhs_batch_dimensions, d) && !in(dn.rhs_contracting_dimensions, d)) {
      out.push_back(at(rhs, d));
    }
  }
  if (AnyDynamic(out)) sizes_[&inst] = std::move(out);
  return OkStatus();
}

// Each array output of the entry computation (the root, or each element of a root tuple) reads
// zeros in its padding.
void Padder::MaskOutputs() {
  HloInstruction* root = comp_.root_instruction();
  auto zero = [&](const HloInstruction* x) {
    return HloBuilder(&comp_, root).ScalarConstant(x->shape().element_type(), 0, "pad.zero");
  };
  auto every_dim = [](const Sizes& s) {
    std::vector<int64_t> all(s.size());
    for (size_t d = 0; d < s.size(); ++d) all[d] = static_cast<int64_t>(d);
    return all;
  };
  if (root->opcode() == HloOpcode::kTuple) {
    for (int64_t k = 0; k < root->operand_count(); ++k) {
      HloInstruction* x = root->operand(k);
      const Sizes& s = SizesOf(x);
      if (!AnyDynamic(s) || !x->shape().IsArray()) continue;
      HloInstruction* m = Mask(x, s, every_dim(s), zero(x), *root);
      if (m != x) root->ReplaceOperandWith(k, m);
    }
    return;
  }
  const Sizes& s = SizesOf(root);
  if (!AnyDynamic(s) || !root->shape().IsArray()) return;
  // The select reads the root, so it goes after it, as the new root.
  HloInstruction* valid = Validity(root->shape(), s, every_dim(s), *root);
  HloInstruction* pad = HloBuilder(&comp_, root).Broadcast(zero(root), root->shape(), {},
                                                            "pad.value");
  auto select = std::make_unique<HloInstruction>(
      HloOpcode::kSelect, Shape(root->shape().element_type(), root->shape().dimensions()),
      comp_.UniqueName(root->name() + ".pad.masked"));
  select->set_location(root->location());
  select->AppendOperand(valid);
  select->AppendOperand(root);
  select->AppendOperand(pad);
  comp_.set_root_instruction(comp_.AddInstruction(std::move(select)));
}

}  // namespace

bool HasDynamicShapes(const hlo::HloModule& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& i : comp->instructions()) {
      if (ShapeHasDynamicBound(i->shape())) return true;
    }
  }
  return false;
}

StatusOr<bool> DynamicPadder::Run(hlo::HloModule& module) {
  bool size_ops = false;
  for (const auto& comp : module.computations()) {
    for (const auto& i : comp->instructions()) {
      size_ops = size_ops || i->opcode() == HloOpcode::kSetDimensionSize ||
                 i->opcode() == HloOpcode::kGetDimensionSize ||
                 i->opcode() == HloOpcode::kDynamicReshape ||
                 (i->opcode() == HloOpcode::kCustomCall &&
                  (i->custom_call_target() == "SliceToDynamic" ||
                   i->custom_call_target() == "PadToStatic"));
    }
  }
  if (!size_ops && !HasDynamicShapes(module)) return false;
  std::vector<hlo::HloComputation*> comps;
  for (const auto& comp : module.computations()) comps.push_back(comp.get());
  for (hlo::HloComputation* comp : comps) {
    TPUSIM_RETURN_IF_ERROR(Padder(module, *comp, comp == module.entry_computation()).Run());
  }
  for (const auto& comp : module.computations()) {
    for (const auto& i : comp->instructions()) MakeStatic(i->mutable_shape());
  }
  return true;
}

}  // namespace tpusim::compiler
