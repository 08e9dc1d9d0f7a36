#include "compiler/passes/complex_expander.h"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <memory>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/lapack_custom_calls.h"

namespace tpusim::compiler {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;


bool HasComplex(const Shape& s) {
  return hlo::AnyLeafType(s, [](PrimitiveType t) { return hlo::IsComplex(t); });
}

// `s` with every c64 array leaf as f32 [dims..., 2] (no layout: the pairs are the minor dimension).
Shape PairShape(const Shape& s) {
  if (s.IsTuple()) {
    std::vector<Shape> elements;
    for (const Shape& e : s.tuple_shapes()) elements.push_back(PairShape(e));
    return Shape::Tuple(std::move(elements));
  }
  if (!hlo::IsComplex(s.element_type())) return s;
  std::vector<int64_t> dims = s.dimensions();
  dims.push_back(2);
  return Shape(PrimitiveType::kF32, std::move(dims));
}

Status Refuse(const hlo::HloModule& m, const HloInstruction& inst, const std::string& why) {
  return Unimplemented(fmt::format("{}%{} ({}): cannot lower: {}",
                                   LocationPrefix(m.source_name(), inst.location()), inst.name(),
                                   hlo::HloOpcodeString(inst.opcode()), why));
}

// Rewrites the entry computation (ComplexExpander's file comment). Instructions whose result is a
// complex array keep their identity where only their shape and attributes change (data movement,
// add); the others are replaced by their real expansion and removed at the end.
class Expander {
 public:
  Expander(hlo::HloModule& m, HloComputation& c) : m_(m), c_(c) {}

  StatusOr<bool> Run() {
    std::vector<HloInstruction*> order;
    for (const auto& i : c_.instructions()) order.push_back(i.get());
    bool changed = false;
    for (HloInstruction* inst : order) {
      bool complex_operand = false, c128 = HasC128(inst->shape());
      for (const HloInstruction* o : inst->operands()) {
        complex_operand |= WasComplex(o);
        c128 |= HasC128(o->shape());
      }
      if (!HasComplex(inst->shape()) && !complex_operand) continue;
      if (c128) {
        return Refuse(m_, *inst, "element type c128: complex values of f64 parts, which a TPU "
                                 "does not compute (supported: c64)");
      }
      original_[inst] = inst->shape();
      TPUSIM_RETURN_IF_ERROR(Expand(inst));
      changed = true;
    }
    c_.RemoveInstructions(dead_);
    return changed;
  }

 private:
  static bool HasC128(const Shape& s) {
    if (s.IsTuple()) {
      for (const Shape& e : s.tuple_shapes()) {
        if (HasC128(e)) return true;
      }
      return false;
    }
    return s.element_type() == PrimitiveType::kC128;
  }
  bool WasComplex(const HloInstruction* i) const {
    auto it = original_.find(i);
    return HasComplex(it != original_.end() ? it->second : i->shape());
  }

  Status Expand(HloInstruction* inst) {
    switch (inst->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kCopy:
      case HloOpcode::kTuple:
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
      case HloOpcode::kConcatenate:
      case HloOpcode::kReverse:
      case HloOpcode::kAdd:
      case HloOpcode::kSubtract:
      case HloOpcode::kNegate:
      case HloOpcode::kOptimizationBarrier:
        Retype(inst);
        return OkStatus();
      case HloOpcode::kConstant:
        // c64 literal values are (real, imaginary) pairs in order: the f32 [.., 2] values.
        Retype(inst);
        return OkStatus();
      case HloOpcode::kTranspose:
      case HloOpcode::kBroadcast: {
        const int64_t rank = inst->shape().rank();
        Retype(inst);
        inst->mutable_dimensions().push_back(inst->opcode() == HloOpcode::kTranspose
                                                 ? inst->operand(0)->shape().rank() - 1
                                                 : rank);
        return OkStatus();
      }
      case HloOpcode::kSlice:
        Retype(inst);
        inst->mutable_slice_starts().push_back(0);
        inst->mutable_slice_limits().push_back(2);
        inst->mutable_slice_strides().push_back(1);
        return OkStatus();
      case HloOpcode::kDynamicSlice:
      case HloOpcode::kDynamicUpdateSlice:
        return RetypeDynamic(inst);
      case HloOpcode::kSelect:
        return RetypeSelect(inst);
      default:
        break;
    }
    HloBuilder b(&c_, inst);
    TPUSIM_ASSIGN_OR_RETURN(HloInstruction * r, Expansion(b, inst));
    inst->ReplaceAllUsesWith(r);
    original_[r] = original_.at(inst);  // its users see a complex operand
    dead_.push_back(inst);
    return OkStatus();
  }

  // The real expansion of `inst` (its complex result as a pair, or its real result).
  StatusOr<HloInstruction*> Expansion(HloBuilder& b, HloInstruction* inst) {
    switch (inst->opcode()) {
      case HloOpcode::kReal:
      case HloOpcode::kImag:
        if (!WasComplex(inst->operand(0))) return Refuse(m_, *inst, "a real operand");
        return Part(b, inst->operand(0), inst->opcode() == HloOpcode::kImag);
      case HloOpcode::kComplex:
        return Join(b, inst->operand(0), inst->operand(1));
      case HloOpcode::kConvert:
        if (WasComplex(inst->operand(0))) {
          return Refuse(m_, *inst, "a convert from a complex type (XLA converts complex values "
                                   "only to complex types; take real() or imag())");
        }
        return Join(b, b.Convert(inst->operand(0), PrimitiveType::kF32, "re"),
                    Zeros(b, inst->shape().dimensions()));
      case HloOpcode::kMultiply:
        return Multiply(b, inst->operand(0), inst->operand(1));
      case HloOpcode::kDivide:
        return Divide(b, inst->operand(0), inst->operand(1));
      case HloOpcode::kExp:
        return Exp(b, inst->operand(0));
      case HloOpcode::kAbs: {
        HloInstruction* re = Part(b, inst->operand(0), false);
        HloInstruction* im = Part(b, inst->operand(0), true);
        return b.Unary(HloOpcode::kSqrt,
                       b.Binary(HloOpcode::kAdd, b.Binary(HloOpcode::kMultiply, re, re, "re2"),
                                b.Binary(HloOpcode::kMultiply, im, im, "im2"), "norm"),
                       "abs");
      }
      case HloOpcode::kCompare:
        return Compare(b, inst);
      case HloOpcode::kDot:
        return Dot(b, inst);
      case HloOpcode::kReduce:
        return Reduce(b, inst);
      case HloOpcode::kPad:
        return Pad(b, inst);
      case HloOpcode::kFft:
        return Fft(b, inst);
      default:
        if (inst->opcode() == HloOpcode::kCustomCall) {
          const std::string lapack = UnreadLapackCallNote(inst->custom_call_target());
          if (!lapack.empty()) return Refuse(m_, *inst, lapack);
        }
        return Refuse(m_, *inst,
                      "complex values in this op are not lowered (complex ops tpusim runs: data "
                      "movement, add, subtract, negate, multiply, divide, exponential, abs, "
                      "real, imag, complex, compare EQ/NE, convert from real, dot, reduce with "
                      "add, fft)");
    }
  }

  // The instruction with every c64 leaf of its shape a pair (operands are pairs already).
  static void Retype(HloInstruction* inst) { inst->mutable_shape() = PairShape(inst->shape()); }

  Status RetypeDynamic(HloInstruction* inst) {
    HloBuilder b(&c_, inst);
    const PrimitiveType index = inst->operand(inst->operand_count() - 1)->shape().element_type();
    HloInstruction* zero = b.ScalarConstant(index, 0, "pair_start");
    Retype(inst);
    inst->AppendOperand(zero);
    if (inst->opcode() == HloOpcode::kDynamicSlice) {
      inst->mutable_dynamic_slice_sizes().push_back(2);
    }
    return OkStatus();
  }

  Status RetypeSelect(HloInstruction* inst) {
    HloBuilder b(&c_, inst);
    // The predicate (of the result's dimensions, or a scalar) broadcast over the pairs.
    HloInstruction* p = inst->operand(0);
    std::vector<int64_t> dims = inst->shape().dimensions(), kept;
    for (int64_t d = 0; d < p->shape().rank(); ++d) kept.push_back(d);
    dims.push_back(2);
    inst->ReplaceOperandWith(
        0, b.Broadcast(p, Shape(p->shape().element_type(), dims), kept, "pair_pred"));
    Retype(inst);
    return OkStatus();
  }

  // Part `imag` of pair `x` (f32 [dims..., 2]): f32 [dims...].
  static HloInstruction* Part(HloBuilder& b, HloInstruction* x, bool imag) {
    std::vector<int64_t> start(static_cast<size_t>(x->shape().rank()), 0);
    std::vector<int64_t> limit = x->shape().dimensions(), step(start.size(), 1);
    start.back() = imag ? 1 : 0;
    limit.back() = start.back() + 1;
    std::vector<int64_t> dims = x->shape().dimensions();
    dims.pop_back();
    return b.Reshape(b.Slice(x, start, limit, step, imag ? "im" : "re"), dims,
                     imag ? "im" : "re");
  }

  // The pair (re, im) of two f32 arrays of one shape.
  static HloInstruction* Join(HloBuilder& b, HloInstruction* re, HloInstruction* im) {
    std::vector<int64_t> dims = re->shape().dimensions();
    dims.push_back(1);
    return b.Concatenate({b.Reshape(re, dims, "re1"), b.Reshape(im, dims, "im1")},
                         static_cast<int64_t>(dims.size()) - 1, "pair");
  }

  static HloInstruction* Zeros(HloBuilder& b, const std::vector<int64_t>& dims) {
    return b.Splat(Shape(PrimitiveType::kF32, dims), 0, "zero", "zeros");
  }

  static HloInstruction* Multiply(HloBuilder& b, HloInstruction* x, HloInstruction* y) {
    HloInstruction *ar = Part(b, x, false), *ai = Part(b, x, true);
    HloInstruction *br = Part(b, y, false), *bi = Part(b, y, true);
    const auto mul = [&](HloInstruction* p, HloInstruction* q) {
      return b.Binary(HloOpcode::kMultiply, p, q, "mul");
    };
    return Join(b, b.Binary(HloOpcode::kSubtract, mul(ar, br), mul(ai, bi), "re"),
                b.Binary(HloOpcode::kAdd, mul(ar, bi), mul(ai, br), "im"));
  }

  // Smith's algorithm: with |br| >= |bi|, r = bi / br, d = br + bi r, x / y =
  // ((ar + ai r) / d, (ai - ar r) / d); otherwise the same with the parts of y swapped.
  static HloInstruction* Divide(HloBuilder& b, HloInstruction* x, HloInstruction* y) {
    HloInstruction *ar = Part(b, x, false), *ai = Part(b, x, true);
    HloInstruction *br = Part(b, y, false), *bi = Part(b, y, true);
    const auto bin = [&](HloOpcode op, HloInstruction* p, HloInstruction* q) {
      return b.Binary(op, p, q, "div");
    };
    HloInstruction* wide = b.Compare(b.Unary(HloOpcode::kAbs, br, "abs_re"),
                                     b.Unary(HloOpcode::kAbs, bi, "abs_im"),
                                     hlo::ComparisonDirection::kGe, "wide");
    // |br| >= |bi|
    HloInstruction* r1 = bin(HloOpcode::kDivide, bi, br);
    HloInstruction* d1 = bin(HloOpcode::kAdd, br, bin(HloOpcode::kMultiply, bi, r1));
    HloInstruction* re1 =
        bin(HloOpcode::kDivide, bin(HloOpcode::kAdd, ar, bin(HloOpcode::kMultiply, ai, r1)), d1);
    HloInstruction* im1 = bin(HloOpcode::kDivide,
                              bin(HloOpcode::kSubtract, ai, bin(HloOpcode::kMultiply, ar, r1)), d1);
    // |bi| > |br|
    HloInstruction* r2 = bin(HloOpcode::kDivide, br, bi);
    HloInstruction* d2 = bin(HloOpcode::kAdd, bi, bin(HloOpcode::kMultiply, br, r2));
    HloInstruction* re2 =
        bin(HloOpcode::kDivide, bin(HloOpcode::kAdd, bin(HloOpcode::kMultiply, ar, r2), ai), d2);
    HloInstruction* im2 = bin(HloOpcode::kDivide,
                              bin(HloOpcode::kSubtract, bin(HloOpcode::kMultiply, ai, r2), ar), d2);
    return Join(b, b.Select(wide, re1, re2, "re"), b.Select(wide, im1, im2, "im"));
  }

  static HloInstruction* Exp(HloBuilder& b, HloInstruction* x) {
    HloInstruction *ar = Part(b, x, false), *ai = Part(b, x, true);
    HloInstruction* e = b.Unary(HloOpcode::kExp, ar, "exp");
    return Join(b, b.Binary(HloOpcode::kMultiply, e, b.Unary(HloOpcode::kCos, ai, "cos"), "re"),
                b.Binary(HloOpcode::kMultiply, e, b.Unary(HloOpcode::kSin, ai, "sin"), "im"));
  }

  StatusOr<HloInstruction*> Compare(HloBuilder& b, HloInstruction* inst) {
    const hlo::ComparisonDirection d = inst->comparison_direction();
    if (d != hlo::ComparisonDirection::kEq && d != hlo::ComparisonDirection::kNe) {
      return Refuse(m_, *inst, "complex values have no order (compare EQ or NE)");
    }
    HloInstruction *x = inst->operand(0), *y = inst->operand(1);
    HloInstruction* re = b.Compare(Part(b, x, false), Part(b, y, false), d, "re");
    HloInstruction* im = b.Compare(Part(b, x, true), Part(b, y, true), d, "im");
    return b.Binary(d == hlo::ComparisonDirection::kEq ? HloOpcode::kAnd : HloOpcode::kOr, re, im,
                    "both");
  }

  StatusOr<HloInstruction*> Dot(HloBuilder& b, HloInstruction* inst) {
    if (!WasComplex(inst->operand(0)) || !WasComplex(inst->operand(1))) {
      return Refuse(m_, *inst, "a dot of a complex and a real operand (convert the real one)");
    }
    HloInstruction *x = inst->operand(0), *y = inst->operand(1);
    const Shape out(PrimitiveType::kF32, inst->shape().dimensions());
    const auto dot = [&](HloInstruction* p, HloInstruction* q) {
      return b.Add(CloneInstructionAs(*inst, HloOpcode::kDot, out, {p, q},
                                      b.UniqueName(inst->name() + ".dot")));
    };
    HloInstruction *ar = Part(b, x, false), *ai = Part(b, x, true);
    HloInstruction *br = Part(b, y, false), *bi = Part(b, y, true);
    return Join(b, b.Binary(HloOpcode::kSubtract, dot(ar, br), dot(ai, bi), "re"),
                b.Binary(HloOpcode::kAdd, dot(ar, bi), dot(ai, br), "im"));
  }

  StatusOr<HloInstruction*> Reduce(HloBuilder& b, HloInstruction* inst) {
    const HloComputation* r = inst->to_apply();
    const HloInstruction* root = r != nullptr ? r->root_instruction() : nullptr;
    if (inst->operand_count() != 2 || root == nullptr || root->opcode() != HloOpcode::kAdd ||
        root->operand(0)->opcode() != HloOpcode::kParameter ||
        root->operand(1)->opcode() != HloOpcode::kParameter ||
        root->operand(0) == root->operand(1)) {
      return Refuse(m_, *inst, "a reduce of complex values with a reducer other than add");
    }
    HloComputation* add = GetOrAddScalarAdd(m_, PrimitiveType::kF32);
    HloInstruction *x = inst->operand(0), *init = inst->operand(1);
    const auto part = [&](bool imag) {
      return b.Reduce(Part(b, x, imag), Part(b, init, imag), inst->dimensions(), add,
                      imag ? "im" : "re");
    };
    return Join(b, part(false), part(true));
  }

  StatusOr<HloInstruction*> Pad(HloBuilder& b, HloInstruction* inst) {
    HloInstruction *x = inst->operand(0), *v = inst->operand(1);
    const auto part = [&](bool imag) {
      return b.Pad(Part(b, x, imag), Part(b, v, imag), inst->padding_config(),
                   imag ? "im" : "re");
    };
    return Join(b, part(false), part(true));
  }

  StatusOr<HloInstruction*> Fft(HloBuilder& b, HloInstruction* inst);

  hlo::HloModule& m_;
  HloComputation& c_;
  std::map<const HloInstruction*, Shape> original_;  // shapes before the rewrite
  std::vector<HloInstruction*> dead_;
};

// ---- fft as discrete Fourier transforms ----

// A constant f32 [rows, cols] whose (r, c) element is f(r, c) (computed in double).
template <typename F>
HloInstruction* Matrix(HloBuilder& b, int64_t rows, int64_t cols, const std::string& suffix,
                       F f) {
  auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant,
                                            Shape(PrimitiveType::kF32, {rows, cols}),
                                            b.UniqueName(suffix));
  std::vector<double>& v = c->mutable_literal().float_values;
  v.reserve(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) {
      v.push_back(static_cast<double>(static_cast<float>(f(r, k))));
    }
  }
  return b.Add(std::move(c));
}

// The angle 2 pi (n k mod N) / N of a twiddle factor (reduced first: exact for any n k).
double Angle(int64_t n, int64_t k, int64_t N) {
  return 2 * std::numbers::pi * static_cast<double>((n * k) % N) / static_cast<double>(N);
}

// x [.., n at `axis`, ..] times m [n, k] along `axis`: the result has k at `axis` (a dot moving the
// free dimension last, then a transpose back), at HIGHEST precision.
HloInstruction* AlongAxis(HloBuilder& b, HloInstruction* x, HloInstruction* m, int64_t axis,
                          const std::string& suffix) {
  const int64_t rank = x->shape().rank();
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) dims.push_back(x->shape().dimensions(d));
  }
  dims.push_back(m->shape().dimensions(1));
  auto dot = std::make_unique<HloInstruction>(HloOpcode::kDot, Shape(PrimitiveType::kF32, dims),
                                              b.UniqueName(suffix));
  dot->mutable_dot_dimension_numbers().lhs_contracting_dimensions = {axis};
  dot->mutable_dot_dimension_numbers().rhs_contracting_dimensions = {0};
  dot->mutable_precision_config().operand_precision = {hlo::Precision::kHighest,
                                                       hlo::Precision::kHighest};
  dot->AppendOperand(x);
  dot->AppendOperand(m);
  HloInstruction* y = b.Add(std::move(dot));
  if (axis == rank - 1) return y;
  std::vector<int64_t> perm;  // result dim d <- y's dim
  for (int64_t d = 0; d < rank; ++d) {
    perm.push_back(d < axis ? d : d == axis ? rank - 1 : d - 1);
  }
  return b.Transpose(y, perm, suffix + ".t");
}

StatusOr<HloInstruction*> Expander::Fft(HloBuilder& b, HloInstruction* inst) {
  const hlo::FftType type = inst->fft_type();
  const std::vector<int64_t>& lengths = inst->fft_length();
  const bool inverse = type == hlo::FftType::kIfft || type == hlo::FftType::kIrfft;
  const bool real_in = type == hlo::FftType::kRfft, real_out = type == hlo::FftType::kIrfft;
  const int64_t rank = inst->shape().rank(), k = static_cast<int64_t>(lengths.size());
  if (k < 1 || k > 3 || k > rank) {  // the verifier's rule (XLA's InferFftShape)
    return Refuse(m_, *inst, fmt::format("fft_type={} over {} dimensions",
                                         hlo::FftTypeName(type), k));
  }
  const double sign = inverse ? 1 : -1;
  HloInstruction *re = nullptr, *im = nullptr;
  HloInstruction* x = inst->operand(0);
  const int64_t last = rank - 1;
  if (real_in) {  // the last dimension: N reals -> N/2 + 1 frequencies
    const int64_t N = lengths.back(), F = N / 2 + 1;
    re = AlongAxis(b, x, Matrix(b, N, F, "rfft.cos", [&](int64_t n, int64_t f) {
                     return std::cos(Angle(n, f, N));
                   }), last, "rfft.re");
    im = AlongAxis(b, x, Matrix(b, N, F, "rfft.sin", [&](int64_t n, int64_t f) {
                     return -std::sin(Angle(n, f, N));
                   }), last, "rfft.im");
  } else {
    re = Part(b, x, false);
    im = Part(b, x, true);
  }
  // Full complex transforms along the other dimensions (all k of them for FFT / IFFT).
  const int64_t first = rank - k, full_end = (real_in || real_out) ? last : rank;
  for (int64_t axis = first; axis < full_end; ++axis) {
    const int64_t N = lengths[static_cast<size_t>(axis - first)];
    const double scale = inverse ? 1.0 / static_cast<double>(N) : 1.0;
    HloInstruction* C = Matrix(b, N, N, "dft.cos", [&](int64_t n, int64_t f) {
      return scale * std::cos(Angle(n, f, N));
    });
    HloInstruction* S = Matrix(b, N, N, "dft.sin", [&](int64_t n, int64_t f) {
      return scale * sign * std::sin(Angle(n, f, N));
    });
    // (re + i im)(C + i S) = (re C - im S) + i (re S + im C)
    HloInstruction* next_re = b.Binary(HloOpcode::kSubtract, AlongAxis(b, re, C, axis, "dft.rc"),
                                       AlongAxis(b, im, S, axis, "dft.is"), "dft.re");
    HloInstruction* next_im = b.Binary(HloOpcode::kAdd, AlongAxis(b, re, S, axis, "dft.rs"),
                                       AlongAxis(b, im, C, axis, "dft.ic"), "dft.im");
    re = next_re;
    im = next_im;
  }
  if (!real_out) return Join(b, re, im);
  // IRFFT's last dimension: N/2 + 1 Hermitian frequencies -> N reals, x[n] = 1/N sum_f w_f
  // (re_f cos(2 pi f n / N) - im_f sin(2 pi f n / N)), w = 1 for f = 0 (and N/2), else 2.
  const int64_t N = lengths.back(), F = N / 2 + 1;
  const auto weight = [&](int64_t f) {
    return (f == 0 || 2 * f == N ? 1.0 : 2.0) / static_cast<double>(N);
  };
  HloInstruction* cr = AlongAxis(b, re, Matrix(b, F, N, "irfft.cos", [&](int64_t f, int64_t n) {
                                   return weight(f) * std::cos(Angle(f, n, N));
                                 }), last, "irfft.re");
  HloInstruction* ci = AlongAxis(b, im, Matrix(b, F, N, "irfft.sin", [&](int64_t f, int64_t n) {
                                   return weight(f) * std::sin(Angle(f, n, N));
                                 }), last, "irfft.im");
  return b.Binary(HloOpcode::kSubtract, cr, ci, "irfft");
}

}  // namespace

StatusOr<bool> ComplexExpander::Run(hlo::HloModule& module) {
  // Only the computations the entry calls run: one left unreferenced (a call call-inliner inlined,
  // as JAX wraps jnp.fft.fft) is dead code, complex or not.
  std::set<const hlo::HloComputation*> live = {module.entry_computation()};
  std::vector<const hlo::HloComputation*> todo = {module.entry_computation()};
  while (!todo.empty()) {
    const hlo::HloComputation* c = todo.back();
    todo.pop_back();
    for (const auto& inst : c->instructions()) {
      for (const hlo::HloComputation* callee : inst->called_computations()) {
        if (live.insert(callee).second) todo.push_back(callee);
      }
    }
  }
  for (const auto& comp : module.computations()) {
    if (!live.count(comp.get())) continue;
    bool any = false;
    for (const auto& inst : comp->instructions()) any |= HasComplex(inst->shape());
    if (!any) continue;
    if (comp.get() != module.entry_computation()) {
      // A complex reducer of a reduce the entry's expansion replaces is left unused; complex
      // values inside any other computation are not lowered.
      bool reducer_only = true;
      for (const auto& inst : comp->instructions()) {
        reducer_only &= inst->opcode() == HloOpcode::kParameter ||
                        (inst.get() == comp->root_instruction() &&
                         inst->opcode() == HloOpcode::kAdd);
      }
      if (reducer_only) continue;
      for (const auto& inst : comp->instructions()) {
        if (HasComplex(inst->shape())) {
          return Refuse(module, *inst,
                        "complex values inside a called computation (a while, conditional or "
                        "fusion body) are not lowered; only the entry computation's");
        }
      }
    }
  }
  return Expander(module, *module.entry_computation()).Run();
}

}  // namespace tpusim::compiler
