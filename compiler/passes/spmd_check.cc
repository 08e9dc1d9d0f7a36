#include "compiler/passes/spmd_check.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "compiler/passes/spmd_tiling.h"
#include "hlo/eval/evaluator.h"
#include "hlo/eval/literal_compare.h"

namespace tpusim::compiler {
namespace {

using hlo::HloSharding;
using hlo::Literal;

StatusOr<Literal> ExtractArrayShard(const Literal& full, const HloSharding& sharding,
                                    int64_t num_partitions, int64_t partition) {
  const std::vector<int64_t>& dims = full.shape().dimensions();
  TPUSIM_ASSIGN_OR_RETURN(spmd::Tiling t,
                          spmd::TilingFromSharding(sharding, full.shape().rank(), num_partitions));
  if (!spmd::DividesEvenly(dims, t)) {
    return Unimplemented(fmt::format("sharding {} cuts {} unevenly", sharding.ToString(),
                                     full.shape().ToString(false)));
  }
  if (t.IsReplicated()) return full;
  const std::vector<int64_t> shard = spmd::ShardDims(dims, t);
  const std::vector<int64_t> offset = spmd::ShardOffsets(dims, t, partition);
  TPUSIM_ASSIGN_OR_RETURN(Literal out, Literal::Create(hlo::Shape(full.element_type(), shard)));
  if (out.element_count() == 0) return out;
  const size_t elem =
      static_cast<size_t>(full.size_bytes() / std::max<int64_t>(1, full.element_count()));
  // Copy row by row: the innermost dimension of a piece is contiguous in both arrays.
  const size_t rank = dims.size();
  const int64_t inner = rank ? shard[rank - 1] : 1;
  const int64_t rows = out.element_count() / inner;
  std::vector<int64_t> idx(rank, 0);  // index within the piece, innermost left at 0
  uint8_t* dst = out.mutable_raw();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) src = src * dims[d] + offset[d] + idx[d];
    std::memcpy(dst + static_cast<size_t>(r * inner) * elem,
                full.raw() + static_cast<size_t>(src) * elem, static_cast<size_t>(inner) * elem);
    for (size_t d = rank - 1; d-- > 0;) {
      if (++idx[d] < shard[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

StatusOr<Literal> ExtractShard(const Literal& full, const HloSharding& sharding,
                               int64_t num_partitions, int64_t partition) {
  if (partition < 0 || partition >= num_partitions) {
    return InvalidArgument(
        fmt::format("partition {} is not in [0, {})", partition, num_partitions));
  }
  if (full.IsTuple()) {
    if (sharding.kind != HloSharding::Kind::kTuple) {
      if (sharding.kind == HloSharding::Kind::kReplicated ||
          sharding.kind == HloSharding::Kind::kMaximal) {
        return full;
      }
      return InvalidArgument(fmt::format("sharding {} for a tuple value {}", sharding.ToString(),
                                         full.shape().ToString(false)));
    }
    if (static_cast<int64_t>(sharding.tuple_elements.size()) != full.tuple_size()) {
      return InvalidArgument(fmt::format("sharding {} has {} elements for a tuple of {}",
                                         sharding.ToString(), sharding.tuple_elements.size(),
                                         full.tuple_size()));
    }
    std::vector<Literal> elements;
    for (int64_t i = 0; i < full.tuple_size(); ++i) {
      TPUSIM_ASSIGN_OR_RETURN(
          Literal e, ExtractShard(full.element(i), sharding.tuple_elements[static_cast<size_t>(i)],
                                  num_partitions, partition));
      elements.push_back(std::move(e));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  if (!full.IsArray()) return full;
  return ExtractArrayShard(full, sharding, num_partitions, partition);
}

StatusOr<std::vector<Literal>> ShardArguments(const SpmdSignature& signature,
                                              const std::vector<Literal>& full_args,
                                              int64_t partition) {
  if (full_args.size() != signature.parameters.size()) {
    return InvalidArgument(fmt::format("{} arguments for {} parameters", full_args.size(),
                                       signature.parameters.size()));
  }
  std::vector<Literal> out;
  for (size_t i = 0; i < full_args.size(); ++i) {
    TPUSIM_ASSIGN_OR_RETURN(Literal piece, ExtractShard(full_args[i], signature.parameters[i],
                                                        signature.num_partitions, partition));
    out.push_back(std::move(piece));
  }
  return out;
}

StatusOr<std::vector<Literal>> ShardArguments(const hlo::HloModule& partitioned,
                                              const std::vector<Literal>& full_args,
                                              int64_t partition) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> out,
                          ShardArguments(SpmdSignature::Of(partitioned), full_args, partition));
  const hlo::HloComputation* entry = partitioned.entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const hlo::HloInstruction* p = entry->parameter_instruction(i);
    const Literal& piece = out[static_cast<size_t>(i)];
    if (!piece.shape().Compatible(p->shape())) {
      return InvalidArgument(fmt::format(
          "parameter {} (%{}): partition {}'s piece of the argument is {}, the parameter is {}", i,
          p->name(), partition, piece.shape().ToString(false), p->shape().ToString(false)));
    }
  }
  return out;
}

StatusOr<Literal> ExpectedPartitionOutput(const SpmdSignature& signature,
                                          const Literal& full_output, int64_t partition) {
  return ExtractShard(full_output, signature.result, signature.num_partitions, partition);
}

StatusOr<Literal> ExpectedPartitionOutput(const hlo::HloModule& partitioned,
                                          const Literal& full_output, int64_t partition) {
  TPUSIM_ASSIGN_OR_RETURN(Literal want, ExpectedPartitionOutput(SpmdSignature::Of(partitioned),
                                                                full_output, partition));
  const hlo::HloInstruction* root = partitioned.entry_computation()->root_instruction();
  if (!want.shape().Compatible(root->shape())) {
    return InvalidArgument(
        fmt::format("partition {}'s piece of the output is {}, the root %{} is {}", partition,
                    want.shape().ToString(false), root->name(), root->shape().ToString(false)));
  }
  return want;
}

StatusOr<SpmdCheckResult> CheckPartitionedModule(const hlo::HloModule& unpartitioned,
                                                 const hlo::HloModule& partitioned,
                                                 const SpmdCheckOptions& options) {
  const int64_t n = std::max<int64_t>(1, partitioned.num_partitions());
  const int64_t replicas = std::max<int64_t>(1, unpartitioned.replica_count());
  hlo::EvaluatorOptions eo;
  eo.seed = options.seed;
  eo.tpu_default_precision = options.tpu_default_precision;
  hlo::Evaluator ev(eo);
  // Replica r's full-size arguments and results (one device per replica).
  std::vector<std::vector<Literal>> full_args;
  for (int64_t rep = 0; rep < replicas; ++rep) {
    TPUSIM_ASSIGN_OR_RETURN(auto a,
                            hlo::Evaluator::MakeRandomArguments(unpartitioned, options.seed, rep));
    full_args.push_back(std::move(a));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> full_out,
                          ev.EvaluateReplicated(unpartitioned, replicas, 1, full_args));
  // Device d = replica * n + partition gets its shard of its replica's arguments.
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < replicas * n; ++d) {
    TPUSIM_ASSIGN_OR_RETURN(
        auto a, ShardArguments(partitioned, full_args[static_cast<size_t>(d / n)], d % n));
    args.push_back(std::move(a));
  }
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> got,
                          ev.EvaluateReplicated(partitioned, replicas, n, args));
  SpmdCheckResult r;
  r.partitions = n;
  r.replicas = replicas;
  for (int64_t d = 0; d < replicas * n; ++d) {
    const int64_t p = d % n;
    TPUSIM_ASSIGN_OR_RETURN(
        Literal want,
        ExpectedPartitionOutput(partitioned, full_out[static_cast<size_t>(d / n)], p));
    std::vector<const Literal*> gl = got[static_cast<size_t>(d)].Leaves();
    std::vector<const Literal*> wl = want.Leaves();
    if (gl.size() != wl.size()) {
      return InvalidArgument(
          fmt::format("device {}: {} output leaves, expected {}", d, gl.size(), wl.size()));
    }
    for (size_t k = 0; k < gl.size(); ++k) {
      if (!gl[k]->shape().Compatible(wl[k]->shape())) {
        return InvalidArgument(fmt::format("device {} output {}: shape {}, expected {}", d, k,
                                           gl[k]->shape().ToString(false),
                                           wl[k]->shape().ToString(false)));
      }
      for (int64_t i = 0; i < gl[k]->element_count(); ++i) {
        const double g = gl[k]->GetAsDouble(i);
        const double w = wl[k]->GetAsDouble(i);
        const double err = std::fabs(g - w);
        const bool same = (std::isnan(g) && std::isnan(w)) || g == w;
        ++r.elements_compared;
        if (!same) r.max_abs_error = std::max(r.max_abs_error, err);
        if (!hlo::WithinTolerance(g, w, options.atol, options.rtol)) {
          if (r.mismatches++ == 0) {
            r.first_mismatch =
                fmt::format("replica {} partition {} output {} element {}: got {}, want {}", d / n,
                            p, k, i, g, w);
          }
        }
      }
    }
  }
  return r;
}

}  // namespace tpusim::compiler
