#include "compiler/passes/rng_expander.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <numbers>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/eval/kernels/rng.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

bool Expandable(const HloInstruction& r) {
  if (r.opcode() != HloOpcode::kRng || r.operand_count() != 2 || !r.shape().IsArray()) {
    return false;
  }
  const PrimitiveType t = r.shape().element_type();
  const bool float_type =
      t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
  return float_type && r.operand(0)->shape().IsArray() && r.operand(0)->shape().rank() == 0 &&
         r.operand(1)->shape().IsArray() && r.operand(1)->shape().rank() == 0;
}

class RngOps {
 public:
  RngOps(HloBuilder& b, const HloInstruction& anchor) : b_(b), anchor_(anchor) {}

  std::unique_ptr<HloInstruction> New(HloOpcode op, const Shape& shape, const std::string& s) {
    return std::make_unique<HloInstruction>(op, shape, b_.UniqueName(anchor_.name() + "." + s));
  }
  HloInstruction* Splat(PrimitiveType t, double v, const std::vector<int64_t>& dims,
                        const char* s) {
    return b_.Splat(Shape(t, dims), v, s);
  }
  // A scalar operand as f32.
  HloInstruction* ScalarF32(HloInstruction* x, const char* s) {
    if (x->shape().element_type() == PrimitiveType::kF32) return x;
    return b_.Convert(x, PrimitiveType::kF32, s);
  }
  // A scalar operand as f32 broadcast to `dims`.
  HloInstruction* SplatF32(HloInstruction* x, const std::vector<int64_t>& dims, const char* s) {
    return b_.Broadcast(ScalarF32(x, s), Shape(PrimitiveType::kF32, dims), {}, s);
  }
  // u32[words] drawn from a fresh state: rng-get-and-update-state + rng-bit-generator.
  HloInstruction* Draw(int64_t words) {
    const Shape state_shape(PrimitiveType::kU64, {2});
    auto state = New(HloOpcode::kRngGetAndUpdateState, state_shape, "state");
    state->mutable_raw_attributes().emplace_back("delta", std::to_string(words));
    HloInstruction* st = b_.Add(std::move(state));
    const Shape bits_shape(PrimitiveType::kU32, {words});
    auto gen = New(HloOpcode::kRngBitGenerator, Shape::Tuple({state_shape, bits_shape}), "draw");
    gen->set_rng_algorithm(hlo::RandomAlgorithm::kDefault);
    gen->AppendOperand(st);
    HloInstruction* g = b_.Add(std::move(gen));
    auto bits = New(HloOpcode::kGetTupleElement, bits_shape, "bits");
    bits->set_tuple_index(1);
    bits->AppendOperand(g);
    return b_.Add(std::move(bits));
  }
  // f32[dims] in [0, 1) from words [start, start + n) of `bits`.
  HloInstruction* Unit(HloInstruction* bits, int64_t start, const std::vector<int64_t>& dims) {
    const int64_t n = Shape(PrimitiveType::kU32, dims).ElementCount();
    HloInstruction* w = bits;
    if (start != 0 || bits->shape().dimensions(0) != n) {
      w = b_.Slice(bits, {start}, {start + n}, {1}, "words");
    }
    w = b_.Reshape(w, dims, "words");
    const std::vector<int64_t>& d = dims;
    HloInstruction* mantissa = b_.Binary(HloOpcode::kShiftRightLogical, w,
                                         Splat(PrimitiveType::kU32, 9, d, "nine"), "mantissa");
    HloInstruction* one_two = b_.Binary(HloOpcode::kOr, mantissa,
                                        Splat(PrimitiveType::kU32, 0x3F800000, d, "exponent"),
                                        "one_to_two");
    HloInstruction* f = b_.BitcastConvert(one_two, PrimitiveType::kF32, "as_f32");
    return b_.Binary(HloOpcode::kSubtract, f, Splat(PrimitiveType::kF32, 1, d, "one"), "unit");
  }

 private:
  HloBuilder& b_;
  const HloInstruction& anchor_;
};

void Expand(hlo::HloComputation& comp, HloInstruction* r) {
  HloBuilder b(&comp, r);
  RngOps o(b, *r);
  const std::vector<int64_t> dims = r->shape().dimensions();
  const Shape f32(PrimitiveType::kF32, dims);
  const bool normal = r->distribution() == hlo::RandomDistribution::kNormal;
  HloInstruction* bits = o.Draw(hlo::RngWords(r->distribution(), r->shape()));
  HloInstruction* a = o.SplatF32(r->operand(0), dims, "a");
  HloInstruction* value = nullptr;
  if (!normal) {
    HloInstruction* width = b.Binary(HloOpcode::kSubtract, o.ScalarF32(r->operand(1), "b"),
                                     o.ScalarF32(r->operand(0), "a"), "range");
    HloInstruction* range = b.Broadcast(width, f32, {}, "range");
    value = b.Binary(HloOpcode::kMultiply, o.Unit(bits, 0, dims), range, "scaled");
  } else {
    const int64_t n = f32.ElementCount();
    HloInstruction* one_minus =
        b.Binary(HloOpcode::kSubtract, o.Splat(PrimitiveType::kF32, 1, dims, "one"),
                 o.Unit(bits, 0, dims), "one_minus");
    HloInstruction* m2log =
        b.Binary(HloOpcode::kMultiply, o.Splat(PrimitiveType::kF32, -2, dims, "minus_two"),
                 b.Unary(HloOpcode::kLog, one_minus, "log"), "minus_two_log");
    HloInstruction* radius = b.Unary(HloOpcode::kSqrt, m2log, "radius");
    HloInstruction* two_pi = o.Splat(PrimitiveType::kF32, 2 * std::numbers::pi, dims, "two_pi");
    HloInstruction* angle =
        b.Binary(HloOpcode::kMultiply, two_pi, o.Unit(bits, n, dims), "angle");
    HloInstruction* z =
        b.Binary(HloOpcode::kMultiply, radius, b.Unary(HloOpcode::kCos, angle, "cos"), "z");
    value = b.Binary(HloOpcode::kMultiply, z, o.SplatF32(r->operand(1), dims, "sigma"), "scaled");
  }
  value = b.Binary(HloOpcode::kAdd, value, a, "value");
  if (r->shape().element_type() != PrimitiveType::kF32) {
    value = b.Convert(value, r->shape().element_type(), "typed");
  }
  r->ReplaceAllUsesWith(value);
  comp.RemoveInstruction(r);
}

// Instructions `root` depends on (the evaluator evaluates only those).
std::unordered_set<const HloInstruction*> Reachable(const HloInstruction* root) {
  std::unordered_set<const HloInstruction*> seen{root};
  std::vector<const HloInstruction*> stack{root};
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    for (const HloInstruction* op : i->operands()) {
      if (seen.insert(op).second) stack.push_back(op);
    }
  }
  return seen;
}

int64_t Delta(const HloInstruction& s) {
  const std::string* d = s.FindRawAttribute("delta");
  int64_t v = 0;
  if (d == nullptr || std::from_chars(d->data(), d->data() + d->size(), v).ec != std::errc()) {
    return 0;
  }
  return std::max<int64_t>(v, 0);
}

}  // namespace

StatusOr<bool> RngExpander::Run(hlo::HloModule& module) {
  return RewriteEach(module, Expandable, Expand);
}

StatusOr<bool> RngStateAssignment::Run(hlo::HloModule& module) {
  hlo::HloComputation* entry = module.entry_computation();
  if (entry == nullptr || entry->root_instruction() == nullptr) return false;
  const std::unordered_set<const HloInstruction*> live = Reachable(entry->root_instruction());
  std::vector<HloInstruction*> states;
  for (const auto& i : entry->instructions()) {
    if (i->opcode() == HloOpcode::kRngGetAndUpdateState) states.push_back(i.get());
  }
  uint64_t counter = 0;
  for (HloInstruction* s : states) {
    HloBuilder b(entry, s);
    auto c = std::make_unique<HloInstruction>(HloOpcode::kConstant, s->shape(),
                                              b.UniqueName(s->name() + ".value"));
    c->mutable_literal().int_values = {static_cast<int64_t>(hlo::kRngKey),
                                       static_cast<int64_t>(counter)};
    HloInstruction* value = b.Add(std::move(c));
    if (live.count(s) != 0) counter += static_cast<uint64_t>(Delta(*s));
    s->ReplaceAllUsesWith(value);
    entry->RemoveInstruction(s);
  }
  return !states.empty();
}

}  // namespace tpusim::compiler
