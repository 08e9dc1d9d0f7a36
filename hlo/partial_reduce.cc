#include "hlo/partial_reduce.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "hlo/computation.h"

namespace tpusim::hlo {
namespace {

StatusOr<int64_t> ConfigInt(const nlohmann::json& config, const char* field, int64_t lo,
                            int64_t hi) {
  auto it = config.find(field);
  if (it == config.end()) {
    return InvalidArgument(fmt::format("PartialReduce backend_config has no \"{}\"", field));
  }
  if (!it->is_number_integer() || it->get<int64_t>() < lo || it->get<int64_t>() > hi) {
    return InvalidArgument(fmt::format(
        "PartialReduce backend_config \"{}\" is {}: expected an integer in [{}, {}]", field,
        it->dump(), lo, hi));
  }
  return it->get<int64_t>();
}

Status CheckShapes(const HloInstruction& inst, const PartialReduceForm& f) {
  const Shape& x = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  if (!out.IsTuple() || out.tuple_shapes_size() != f.operands) {
    return InvalidArgument(
        fmt::format("PartialReduce: the result must be a tuple of {} arrays", f.operands));
  }
  for (int64_t i = 0; i < f.operands; ++i) {
    const Shape& xi = inst.operand(i)->shape();
    const Shape& init = inst.operand(f.operands + i)->shape();
    const Shape& oi = out.tuple_shapes(i);
    if (!xi.IsArray() || xi.dimensions() != x.dimensions()) {
      return InvalidArgument(fmt::format("PartialReduce: operand {} is not an array of {}'s "
                                         "dimensions", i, x.ToString(false)));
    }
    if (!init.IsArray() || init.rank() != 0 || init.element_type() != xi.element_type()) {
      return InvalidArgument(fmt::format(
          "PartialReduce: operand {} (an init value) must be a scalar of operand {}'s type",
          f.operands + i, i));
    }
    if (!oi.IsArray() || oi.element_type() != xi.element_type() || oi.rank() != x.rank()) {
      return InvalidArgument(fmt::format("PartialReduce: result {} has not operand {}'s type "
                                         "and rank", i, i));
    }
    for (int64_t d = 0; d < x.rank(); ++d) {
      const int64_t want = d == f.dimension ? f.bins : x.dimensions(d);
      if (oi.dimensions(d) != want) {
        return InvalidArgument(fmt::format(
            "PartialReduce: result {} must have the operands' dimensions but for reduction_dim "
            "{}, and the same size there in every result",
            i, f.dimension));
      }
    }
  }
  return OkStatus();
}

}  // namespace

bool IsPartialReduce(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kCustomCall &&
         inst.custom_call_target() == kPartialReduceTarget;
}

StatusOr<PartialReduceForm> GetPartialReduceForm(const HloInstruction& inst) {
  PartialReduceForm f;
  if (inst.operand_count() < 2 || inst.operand_count() % 2 != 0) {
    return InvalidArgument(fmt::format(
        "PartialReduce needs operands (x_1..x_k, init_1..init_k), has {}", inst.operand_count()));
  }
  f.operands = inst.operand_count() / 2;
  const std::vector<HloComputation*> called = inst.called_computations();
  if (called.size() != 1 || called[0] == nullptr ||
      called[0]->num_parameters() != 2 * f.operands) {
    return InvalidArgument(fmt::format(
        "PartialReduce needs called_computations={{comparator}} with {} scalar parameters",
        2 * f.operands));
  }
  const Shape& x = inst.operand(0)->shape();
  if (!x.IsArray() || x.rank() == 0) {
    return InvalidArgument("PartialReduce: operand 0 must be an array of rank >= 1");
  }
  const nlohmann::json config =
      nlohmann::json::parse(inst.backend_config(), nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    return InvalidArgument("PartialReduce backend_config is not a JSON object");
  }
  TPUSIM_ASSIGN_OR_RETURN(f.log2_reduction, ConfigInt(config, "log2_reduction", 0, 62));
  TPUSIM_ASSIGN_OR_RETURN(f.dimension, ConfigInt(config, "reduction_dim", 0, x.rank() - 1));
  f.n = x.dimensions(f.dimension);
  const Shape& out = inst.shape();
  f.bins = out.IsTuple() && out.tuple_shapes_size() > 0 && out.tuple_shapes(0).IsArray() &&
                   out.tuple_shapes(0).rank() == x.rank()
               ? out.tuple_shapes(0).dimensions(f.dimension)
               : 0;
  TPUSIM_RETURN_IF_ERROR(CheckShapes(inst, f));
  // L * 2^R >= n, without overflow: element n - 1 is folded at step (n - 1) / L < 2^R.
  if (f.bins < 1 || (f.n > 0 && ((f.n - 1) / f.bins) >> f.log2_reduction != 0)) {
    return InvalidArgument(fmt::format(
        "PartialReduce: {} bins of 2^{} elements cannot hold dimension {} of size {}", f.bins,
        f.log2_reduction, f.dimension, f.n));
  }
  return f;
}

}  // namespace tpusim::hlo
