#include "compiler/passes/custom_call_expander.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;

hlo::HloComputation* GetOrAddScalarMax(hlo::HloModule& module) {
  const std::string name = "tpusim.max.f32";
  if (hlo::HloComputation* c = module.FindComputation(name)) return c;
  auto comp = std::make_unique<hlo::HloComputation>(name);
  auto x = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                            hlo::Shape::Scalar(PrimitiveType::kF32), "x");
  x->set_parameter_number(0);
  auto y = std::make_unique<HloInstruction>(HloOpcode::kParameter,
                                            hlo::Shape::Scalar(PrimitiveType::kF32), "y");
  y->set_parameter_number(1);
  HloInstruction* px = comp->AddInstruction(std::move(x));
  HloInstruction* py = comp->AddInstruction(std::move(y));
  auto m = std::make_unique<HloInstruction>(HloOpcode::kMaximum,
                                            hlo::Shape::Scalar(PrimitiveType::kF32), "max");
  m->AppendOperand(px);
  m->AppendOperand(py);
  comp->set_root_instruction(comp->AddInstruction(std::move(m)));
  return module.AddComputation(std::move(comp));
}

// The reduced dimension from backend_config ("" = last, negative = from the end).
int64_t ReducedDim(const HloInstruction& cc, int64_t rank) {
  const std::string& cfg = cc.backend_config();
  if (cfg.empty()) return rank - 1;
  int64_t d = std::strtoll(cfg.c_str(), nullptr, 10);
  return d < 0 ? d + rank : d;
}

class Expander {
 public:
  Expander(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* cc)
      : module_(module),
        b_(&comp, cc),
        cc_(cc),
        shape_(PrimitiveType::kF32, cc->operand(0)->shape().dimensions()) {}

  // Operand i in f32 (bf16 and f16 operands are converted: the kernel computes in f32).
  HloInstruction* Operand(int64_t i) {
    HloInstruction* op = cc_->operand(i);
    if (op->shape().element_type() == PrimitiveType::kF32) return op;
    return b_.Convert(op, PrimitiveType::kF32, "f32");
  }

  // The expansion in f32, converted to the call's element type.
  HloInstruction* ExpandAndRound() {
    HloInstruction* y = Expand();
    if (y == nullptr || cc_->shape().element_type() == PrimitiveType::kF32) return y;
    return b_.Convert(y, cc_->shape().element_type(), "round");
  }

  HloInstruction* Const(double v) {
    return b_.Splat(shape_, v, "c", "c_b");
  }
  HloInstruction* Mul(HloInstruction* a, HloInstruction* b) {
    return b_.Binary(HloOpcode::kMultiply, a, b, "mul");
  }
  HloInstruction* Add(HloInstruction* a, HloInstruction* b) {
    return b_.Binary(HloOpcode::kAdd, a, b, "add");
  }
  HloInstruction* Un(HloOpcode op, HloInstruction* a) { return b_.Unary(op, a, "f"); }
  // Reduces along `d` and broadcasts back to the operand shape.
  HloInstruction* ReduceBack(HloInstruction* x, int64_t d, bool max) {
    hlo::HloComputation* r =
        max ? GetOrAddScalarMax(module_) : GetOrAddScalarAdd(module_, PrimitiveType::kF32);
    HloInstruction* init = b_.ScalarConstant(
        PrimitiveType::kF32, max ? -std::numeric_limits<double>::infinity() : 0.0, "init");
    HloInstruction* red = b_.Reduce(x, init, {d}, r, max ? "max" : "sum");
    std::vector<int64_t> dims;
    for (int64_t i = 0; i < shape_.rank(); ++i) {
      if (i != d) dims.push_back(i);
    }
    return b_.Broadcast(red, shape_, dims, "reduced_b");
  }

  HloInstruction* Expand() {
    const std::string& t = cc_->custom_call_target();
    HloInstruction* x = Operand(0);
    const double kInvSqrt2 = 1.0 / std::sqrt(2.0);
    if (t == "AwsNeuronGelu") {
      HloInstruction* phi2 = Add(Const(1.0), Un(HloOpcode::kErf, Mul(x, Const(kInvSqrt2))));
      return Mul(Mul(x, Const(0.5)), phi2);
    }
    if (t == "AwsNeuronGeluApprxTanh") {
      HloInstruction* x3 = Mul(Mul(x, x), x);
      HloInstruction* inner = Mul(Const(std::sqrt(2.0 / M_PI)), Add(x, Mul(Const(0.044715), x3)));
      return Mul(Mul(x, Const(0.5)), Add(Const(1.0), Un(HloOpcode::kTanh, inner)));
    }
    if (t == "AwsNeuronGeluBackward") {
      HloInstruction* cdf =
          Mul(Const(0.5), Add(Const(1.0), Un(HloOpcode::kErf, Mul(x, Const(kInvSqrt2)))));
      HloInstruction* pdf =
          Mul(Un(HloOpcode::kExp, Mul(Mul(x, x), Const(-0.5))), Const(1.0 / std::sqrt(2.0 * M_PI)));
      return Add(cdf, Mul(x, pdf));
    }
    const int64_t d = ReducedDim(*cc_, shape_.rank());
    if (d < 0 || d >= shape_.rank()) return nullptr;
    if (t == "AwsNeuronSoftmax") {
      HloInstruction* e =
          Un(HloOpcode::kExp, b_.Binary(HloOpcode::kSubtract, x, ReduceBack(x, d, true), "shift"));
      return b_.Binary(HloOpcode::kDivide, e, ReduceBack(e, d, false), "softmax");
    }
    if (t == "AwsNeuronSoftmaxBackward" && cc_->operand_count() == 2) {
      HloInstruction* dy = Operand(1);
      HloInstruction* s = ReduceBack(Mul(dy, x), d, false);
      return Mul(x, b_.Binary(HloOpcode::kSubtract, dy, s, "diff"));
    }
    if (t == "AwsNeuronRmsNorm" && cc_->operand_count() == 3) {
      HloInstruction* w = b_.Broadcast(Operand(1), shape_, {d}, "w_b");
      HloInstruction* eps = b_.Broadcast(Operand(2), shape_, {}, "eps_b");
      HloInstruction* mean =
          Mul(ReduceBack(Mul(x, x), d, false),
              Const(1.0 / static_cast<double>(std::max<int64_t>(1, shape_.dimensions(d)))));
      return Mul(Mul(x, Un(HloOpcode::kRsqrt, Add(mean, eps))), w);
    }
    return nullptr;
  }

 private:
  hlo::HloModule& module_;
  HloBuilder b_;
  HloInstruction* cc_;
  hlo::Shape shape_;
};

// f32, or a narrower float the expansion widens to f32 and rounds back.
bool F32OrNarrowFloat(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

bool Expandable(const HloInstruction& cc) {
  if (cc.opcode() != HloOpcode::kCustomCall || cc.operand_count() < 1 || !cc.shape().IsArray()) {
    return false;
  }
  static const char* const kTargets[] = {
      "AwsNeuronGelu",    "AwsNeuronGeluApprxTanh",   "AwsNeuronGeluBackward",
      "AwsNeuronSoftmax", "AwsNeuronSoftmaxBackward", "AwsNeuronRmsNorm"};
  bool known = false;
  for (const char* t : kTargets) known = known || cc.custom_call_target() == t;
  if (!known) return false;
  for (const HloInstruction* op : cc.operands()) {
    if (!op->shape().IsArray() || !F32OrNarrowFloat(op->shape().element_type())) return false;
  }
  return F32OrNarrowFloat(cc.shape().element_type()) &&
         cc.shape().dimensions() == cc.operand(0)->shape().dimensions();
}

}  // namespace

StatusOr<bool> CustomCallExpander::Run(hlo::HloModule& module) {
  // Every computation a call can sit in (the entry, while bodies, branches).
  return RewriteEach(module, Expandable, [&](hlo::HloComputation& comp, HloInstruction* cc) {
    HloInstruction* result = Expander(module, comp, cc).ExpandAndRound();
    if (result == nullptr) return false;
    cc->ReplaceAllUsesWith(result);
    comp.RemoveInstruction(cc);
    return true;
  });
}

}  // namespace tpusim::compiler
