#include "hlo/cost_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "hlo/computation.h"
#include "hlo/kernel_cost_estimate.h"
#include "hlo/while_loop.h"

namespace tpusim::hlo {
namespace {

double Elements(const Shape& s) {
  if (s.IsTuple()) {
    double n = 0;
    for (const Shape& e : s.tuple_shapes()) n += Elements(e);
    return n;
  }
  if (!s.IsArray()) return 0;
  double n = 1;
  for (int64_t d : s.dimensions()) n *= static_cast<double>(std::max<int64_t>(d, 0));
  return n;
}

double Bytes(const Shape& s) {
  if (s.IsTuple()) {
    double n = 0;
    for (const Shape& e : s.tuple_shapes()) n += Bytes(e);
    return n;
  }
  if (!s.IsArray()) return 0;
  return Elements(s) * BitWidth(s.element_type()) / 8.0;
}

double FirstLeafElements(const Shape& s) {
  if (s.IsTuple()) return s.tuple_shapes_size() > 0 ? FirstLeafElements(s.tuple_shapes(0)) : 0;
  return Elements(s);
}

bool MovesNoBytes(HloOpcode op) {
  switch (op) {
    case HloOpcode::kParameter:
    case HloOpcode::kConstant:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kTuple:
    case HloOpcode::kBitcast:
    case HloOpcode::kAfterAll:
    case HloOpcode::kCall:
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

// A Pallas TPU kernel's declared cost_estimate (kernel_cost_estimate.h), as XLA's TPU backend
// costs such a kernel; nullopt for every other instruction and for a kernel declaring none or an
// unreadable one (then its FLOP are unknown, like any custom-call's).
std::optional<CostProperties> DeclaredKernelCost(const HloInstruction& inst) {
  if (!IsMosaicKernel(inst)) return std::nullopt;
  StatusOr<std::optional<KernelCostEstimate>> e = ReadKernelCostEstimate(inst);
  if (!e.ok() || !e->has_value()) return std::nullopt;
  CostProperties c;
  c.flops = static_cast<double>((*e)->flops);
  c.transcendentals = static_cast<double>((*e)->transcendentals);
  c.bytes_accessed = static_cast<double>((*e)->bytes_accessed);
  return c;
}

}  // namespace

CostProperties InstructionOwnCost(const HloInstruction& inst, double reducer_flops,
                                  double scatter_flops) {
  CostProperties c;
  const HloOpcode op = inst.opcode();
  if (!MovesNoBytes(op)) {
    for (const HloInstruction* o : inst.operands()) c.bytes_accessed += Bytes(o->shape());
    c.bytes_accessed += Bytes(inst.shape());
  }
  if (const auto estimate = DeclaredKernelCost(inst)) return *estimate;
  const double out = Elements(inst.shape());
  if (IsElementwise(op)) {
    if (op == HloOpcode::kCopy) return c;
    (IsTranscendental(op) ? c.transcendentals : c.flops) = out;
    return c;
  }
  switch (op) {
    case HloOpcode::kDot: {
      double k = 1;
      const Shape& lhs = inst.operand(0)->shape();
      for (int64_t d : inst.dot_dimension_numbers().lhs_contracting_dimensions) {
        if (d >= 0 && d < lhs.rank()) k *= static_cast<double>(lhs.dimensions(d));
      }
      c.flops = 2 * out * k;
      break;
    }
    case HloOpcode::kConvolution: {
      const Shape& kernel = inst.operand(1)->shape();
      const ConvolutionDimensionNumbers& dn = inst.convolution_dimension_numbers();
      double taps = 1;
      for (int64_t d : dn.kernel_spatial_dimensions) {
        if (d >= 0 && d < kernel.rank()) taps *= static_cast<double>(kernel.dimensions(d));
      }
      const Shape& input = inst.operand(0)->shape();
      double in_feat = 1;
      if (dn.input_feature_dimension < input.rank()) {
        in_feat = static_cast<double>(input.dimensions(dn.input_feature_dimension));
      }
      c.flops = 2 * out * taps * in_feat / static_cast<double>(inst.feature_group_count());
      break;
    }
    case HloOpcode::kReduce: {
      const int64_t n = inst.operand_count() / 2;
      const double in = n > 0 ? Elements(inst.operand(0)->shape()) : 0;
      c.flops = (in - FirstLeafElements(inst.shape())) * reducer_flops;
      break;
    }
    case HloOpcode::kReduceWindow: {
      double window = 1;
      for (const WindowDimension& w : inst.window().dimensions)
        window *= static_cast<double>(w.size);
      c.flops = FirstLeafElements(inst.shape()) * (window - 1) * reducer_flops;
      break;
    }
    case HloOpcode::kSelectAndScatter: {
      double window = 1;
      for (const WindowDimension& w : inst.window().dimensions)
        window *= static_cast<double>(w.size);
      const double source = Elements(inst.operand(1)->shape());
      c.flops = source * window * reducer_flops + source * scatter_flops;
      break;
    }
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kReduceScatter: {
      double in = 0;
      for (const HloInstruction* o : inst.operands()) in += Elements(o->shape());
      c.flops = in * reducer_flops;
      break;
    }
    case HloOpcode::kScatter: {
      const int64_t n = (inst.operand_count() - 1) / 2;
      if (n >= 1)
        c.flops = Elements(inst.operand(inst.operand_count() - 1)->shape()) * n * reducer_flops;
      break;
    }
    case HloOpcode::kBatchNormTraining:
    case HloOpcode::kBatchNormInference:
    case HloOpcode::kBatchNormGrad:
      // Per element: normalize (sub, mul), scale and shift, plus the mean/variance reductions — XLA
      // counts these as elementwise work over the operand; use 4 per operand element (rsqrt per
      // feature is a transcendental).
      c.flops = 4 * Elements(inst.operand(0)->shape());
      break;
    default:
      break;
  }
  return c;
}

ModuleCost AnalyzeCost(const HloModule& module) {
  ModuleCost result;
  std::map<const HloComputation*, CostProperties> comp_cost;
  auto cost_of = [&](const HloComputation* c) {
    auto it = comp_cost.find(c);
    return it == comp_cost.end() ? CostProperties{} : it->second;
  };
  std::map<const HloInstruction*, CostProperties> inst_cost;
  // Post order: callees before callers, so every callee's cost is known when its caller is costed.
  for (const HloComputation* comp : module.MakeComputationPostOrder()) {
    CostProperties total;
    for (const auto& up : comp->instructions()) {
      const HloInstruction& inst = *up;
      const HloOpcode op = inst.opcode();
      const double reducer = inst.to_apply() ? cost_of(inst.to_apply()).flops
                                             : (inst.select() ? cost_of(inst.select()).flops : 1.0);
      const double scatter = inst.scatter() ? cost_of(inst.scatter()).flops : 1.0;
      CostProperties c = InstructionOwnCost(inst, reducer, scatter);
      switch (op) {
        case HloOpcode::kFusion:
          for (const HloComputation* callee : inst.calls()) {
            const CostProperties k = cost_of(callee);
            c.flops += k.flops;
            c.transcendentals += k.transcendentals;
          }
          break;
        case HloOpcode::kCall:
        case HloOpcode::kAsyncStart:
          if (inst.to_apply()) c += cost_of(inst.to_apply());
          for (const HloComputation* callee : inst.calls()) c += cost_of(callee);
          break;
        case HloOpcode::kWhile: {
          // A known trip count multiplies the body (and the condition, evaluated once more).
          const TripCount t = KnownTripCount(inst);
          const CostProperties body = cost_of(inst.while_body());
          const CostProperties cond = cost_of(inst.while_condition());
          if (t.trips) {
            const double n = static_cast<double>(*t.trips);
            c.flops += n * body.flops + (n + 1) * cond.flops;
            c.transcendentals += n * body.transcendentals + (n + 1) * cond.transcendentals;
            c.bytes_accessed += n * body.bytes_accessed + (n + 1) * cond.bytes_accessed;
            result.notes.push_back(
                fmt::format("while '%{}': {} trips (known trip count)", inst.name(), *t.trips));
          } else {
            c += body;
            c += cond;
            result.notes.push_back(
                fmt::format("while '%{}': body and condition counted once (trip count unknown: {})",
                            inst.name(), t.reason));
          }
          break;
        }
        case HloOpcode::kConditional: {
          CostProperties best;
          for (const HloComputation* b : inst.branch_computations()) {
            const CostProperties k = cost_of(b);
            if (k.flops + k.transcendentals >= best.flops + best.transcendentals) best = k;
          }
          c += best;
          result.notes.push_back(
              fmt::format("conditional '%{}': most expensive branch counted", inst.name()));
          break;
        }
        case HloOpcode::kCustomCall:
          if (!DeclaredKernelCost(inst)) result.unknown_flops.push_back(&inst);
          break;
        case HloOpcode::kRng:
        case HloOpcode::kRngBitGenerator:
        case HloOpcode::kFft:
        case HloOpcode::kCholesky:
        case HloOpcode::kTriangularSolve:
        case HloOpcode::kTopK:
          result.unknown_flops.push_back(&inst);
          break;
        default:
          break;
      }
      inst_cost[&inst] = c;
      total += c;
    }
    comp_cost[comp] = total;
  }
  if (const HloComputation* entry = module.entry_computation()) {
    result.total = cost_of(entry);
    for (const auto& inst : entry->instructions()) {
      result.per_instruction.emplace_back(inst.get(), inst_cost[inst.get()]);
    }
  }
  return result;
}

}  // namespace tpusim::hlo
