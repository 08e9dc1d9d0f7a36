#include "hlo/eval/collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "hlo/eval/kernels/data_movement.h"
#include "hlo/eval/kernels/reduce.h"
#include "hlo/sharding.h"

namespace tpusim::hlo {
namespace {

bool IsPermute(HloOpcode op) {
  return op == HloOpcode::kCollectivePermute || op == HloOpcode::kCollectivePermuteStart;
}

// Splits `x` into `n` equal chunks along `dim`.
StatusOr<std::vector<Literal>> SplitAlong(const Literal& x, int64_t dim, int64_t n,
                                          const KernelOptions& options, const char* op) {
  if (dim < 0 || dim >= x.shape().rank() || n <= 0 || x.shape().dimensions(dim) % n != 0) {
    return InvalidArgument(fmt::format("{}: {} cannot be split into {} chunks along dimension {}",
                                       op, x.shape().ToString(false), n, dim));
  }
  const int64_t chunk = x.shape().dimensions(dim) / n;
  std::vector<int64_t> starts(static_cast<size_t>(x.shape().rank()), 0);
  std::vector<int64_t> limits = x.shape().dimensions();
  std::vector<int64_t> strides(static_cast<size_t>(x.shape().rank()), 1);
  std::vector<Literal> out;
  for (int64_t i = 0; i < n; ++i) {
    starts[static_cast<size_t>(dim)] = i * chunk;
    limits[static_cast<size_t>(dim)] = (i + 1) * chunk;
    std::vector<int64_t> dims = x.shape().dimensions();
    dims[static_cast<size_t>(dim)] = chunk;
    TPUSIM_ASSIGN_OR_RETURN(
        Literal s, Slice(x, starts, limits, strides, Shape(x.element_type(), dims), options));
    out.push_back(std::move(s));
  }
  return out;
}

// The members of one replica group: member m's k-th operand.
struct GroupView {
  const std::vector<std::vector<const Literal*>>& operands;  // per evaluated device
  const std::vector<int64_t>& slot;   // global device -> position in `operands`
  const std::vector<int64_t>& group;  // global devices
  size_t size() const { return group.size(); }
  const Literal& op(size_t member, size_t k) const {
    return *operands[static_cast<size_t>(slot[static_cast<size_t>(group[member])])][k];
  }
};

// Per member m: per_member[m] gets this operand's result.
using PerMember = std::vector<std::vector<Literal>>;

// collective-permute: devices that receive nothing get zeros (XLA operation semantics,
// CollectivePermute).
StatusOr<std::vector<Literal>> EvaluatePermute(
    const HloInstruction& inst, const DeviceGrid& grid, const std::vector<int64_t>& devices,
    const std::vector<int64_t>& slot, const std::vector<std::vector<const Literal*>>& operands,
    const KernelOptions& options) {
  std::vector<Literal> results(devices.size());
  const bool cross_partition = inst.channel_id().has_value();
  for (size_t i = 0; i < devices.size(); ++i) {
    const Literal& x = *operands[i][0];
    TPUSIM_ASSIGN_OR_RETURN(Literal zero, Literal::Create(x.shape(), options.max_bytes));
    results[i] = std::move(zero);
  }
  const int64_t P = grid.partitions;
  for (const auto& [src, dst] : inst.source_target_pairs()) {
    for (size_t i = 0; i < devices.size(); ++i) {
      const int64_t d = devices[i];
      const int64_t r = d / P, p = d % P;
      const int64_t my_id = cross_partition ? p : r;
      if (my_id != dst) continue;
      const int64_t limit = cross_partition ? P : grid.replicas;
      if (src < 0 || src >= limit) {
        return InvalidArgument(fmt::format("collective-permute: source {} out of range", src));
      }
      const int64_t src_dev = cross_partition ? r * P + src : src * P + p;
      const int64_t s = slot[static_cast<size_t>(src_dev)];
      if (s < 0) return InvalidArgument("collective-permute: source device is not being evaluated");
      results[i] = *operands[static_cast<size_t>(s)][0];
    }
  }
  return results;
}

// all-reduce and reduce-scatter of operand k. (A scalar operand of a multi-operand reduce-scatter
// is all-reduced: PyTorch/XLA dumps carry a bf16[] beside the scattered arrays, with a bf16[]
// result.)
Status ReduceOperand(const HloInstruction& inst, const GroupView& g, size_t k,
                     const CalledComputation* reducer, const KernelOptions& options,
                     PerMember& per_member) {
  const size_t n = g.size();
  if (reducer == nullptr) return InvalidArgument("all-reduce needs to_apply");
  std::vector<const Literal*> members;
  for (size_t m = 0; m < n; ++m) members.push_back(&g.op(m, k));
  TPUSIM_ASSIGN_OR_RETURN(Literal acc, FoldArrays(*reducer, members, options));
  if (inst.opcode() == HloOpcode::kReduceScatter && acc.shape().rank() > 0) {
    if (inst.dimensions().size() != 1) return InvalidArgument("reduce-scatter needs one dimension");
    TPUSIM_ASSIGN_OR_RETURN(auto chunks, SplitAlong(acc, inst.dimensions(0),
                                                    static_cast<int64_t>(n), options,
                                                    "reduce-scatter"));
    for (size_t m = 0; m < n; ++m) per_member[m].push_back(std::move(chunks[m]));
  } else {
    for (size_t m = 0; m < n; ++m) per_member[m].push_back(acc);
  }
  return OkStatus();
}

// all-gather of operand k.
Status GatherOperand(const HloInstruction& inst, const GroupView& g, size_t k,
                     const KernelOptions& options, PerMember& per_member) {
  const size_t n = g.size();
  if (inst.dimensions().size() != 1) return InvalidArgument("all-gather needs one dimension");
  if (g.op(0, k).shape().rank() == 0) {
    // A scalar operand of a multi-operand all-gather (PyTorch/XLA dumps carry an f32[] beside the
    // gathered arrays, with an f32[] result): nothing to gather, each device keeps its own.
    for (size_t m = 0; m < n; ++m) per_member[m].push_back(g.op(m, k));
    return OkStatus();
  }
  std::vector<const Literal*> parts;
  for (size_t m = 0; m < n; ++m) parts.push_back(&g.op(m, k));
  const Literal& x = g.op(0, k);
  const int64_t dim = inst.dimensions(0);
  if (dim < 0 || dim >= x.shape().rank()) return InvalidArgument("all-gather: bad dimension");
  std::vector<int64_t> dims = x.shape().dimensions();
  dims[static_cast<size_t>(dim)] *= static_cast<int64_t>(n);
  TPUSIM_ASSIGN_OR_RETURN(Literal gathered,
                          Concatenate(parts, dim, Shape(x.element_type(), dims), options));
  for (size_t m = 0; m < n; ++m) per_member[m].push_back(gathered);
  return OkStatus();
}

// all-to-all of operand k (of `num_ops` per member).
Status AllToAllOperand(const HloInstruction& inst, const GroupView& g, size_t k, size_t num_ops,
                       const KernelOptions& options, PerMember& per_member) {
  const size_t n = g.size();
  if (inst.dimensions().size() == 1) {
    // Array form: member j's chunk i goes to member i, placed at position j.
    std::vector<std::vector<Literal>> chunks(n);
    for (size_t m = 0; m < n; ++m) {
      TPUSIM_ASSIGN_OR_RETURN(chunks[m], SplitAlong(g.op(m, k), inst.dimensions(0),
                                                    static_cast<int64_t>(n), options,
                                                    "all-to-all"));
    }
    for (size_t i = 0; i < n; ++i) {
      std::vector<const Literal*> parts;
      for (size_t j = 0; j < n; ++j) parts.push_back(&chunks[j][i]);
      TPUSIM_ASSIGN_OR_RETURN(Literal r,
                              Concatenate(parts, inst.dimensions(0), g.op(i, k).shape(), options));
      per_member[i].push_back(std::move(r));
    }
    return OkStatus();
  }
  // Tuple form: result element k of member i = operand i of member k.
  if (num_ops != n) return InvalidArgument("all-to-all (tuple form) needs one operand per member");
  for (size_t i = 0; i < n; ++i) per_member[i].push_back(g.op(k, i));
  return OkStatus();
}

// ragged-all-to-all(input, output, input_offsets, send_sizes, output_offsets, recv_sizes), XLA's
// operation semantics: member j sends rows [input_offsets_j[i], + send_sizes_j[i]) of its input
// (dimension 0) to member i, which holds them at rows [output_offsets_j[i], + send_sizes_j[i]) of
// its result (the offsets are in the receiver's output); every other row of a member's result
// is its `output` operand's. recv_sizes_i[j] must equal send_sizes_j[i].
StatusOr<PerMember> RaggedAllToAll(const GroupView& g) {
  const size_t n = g.size();
  if (g.operands.empty() || g.operands[0].size() != 6) {
    return InvalidArgument("ragged-all-to-all takes 6 operands (input, output, input_offsets, "
                           "send_sizes, output_offsets, recv_sizes)");
  }
  auto at = [&](size_t m, size_t k, size_t i) -> StatusOr<int64_t> {
    const Literal& v = g.op(m, k);
    if (v.shape().rank() != 1 || v.element_count() != static_cast<int64_t>(n)) {
      return InvalidArgument(fmt::format(
          "ragged-all-to-all: operand {} must have one entry per replica-group member ({})", k,
          n));
    }
    return v.GetAsInt64(static_cast<int64_t>(i));
  };
  PerMember per_member(n);
  for (size_t i = 0; i < n; ++i) per_member[i].push_back(g.op(i, 1));
  for (size_t j = 0; j < n; ++j) {
    const Literal& in = g.op(j, 0);
    if (in.shape().rank() == 0) return InvalidArgument("ragged-all-to-all: a scalar input");
    const int64_t rows_in = in.shape().dimensions(0);
    const int64_t row_bytes = rows_in == 0 ? 0 : in.size_bytes() / rows_in;
    for (size_t i = 0; i < n; ++i) {
      TPUSIM_ASSIGN_OR_RETURN(const int64_t io, at(j, 2, i));
      TPUSIM_ASSIGN_OR_RETURN(const int64_t ss, at(j, 3, i));
      TPUSIM_ASSIGN_OR_RETURN(const int64_t oo, at(j, 4, i));
      TPUSIM_ASSIGN_OR_RETURN(const int64_t rs, at(i, 5, j));
      Literal& out = per_member[i][0];
      const int64_t rows_out = out.shape().rank() == 0 ? 0 : out.shape().dimensions(0);
      if (ss < 0 || io < 0 || oo < 0 || io > rows_in - ss || oo > rows_out - ss || rs != ss ||
          out.size_bytes() != rows_out * row_bytes) {
        return InvalidArgument(fmt::format(
            "ragged-all-to-all: member {} sends rows [{}, {}) of its {} to member {} at rows "
            "[{}, {}) of its {}, which expects {} rows (recv_sizes)",
            j, io, io + ss, rows_in, i, oo, oo + ss, rows_out, rs));
      }
      std::memcpy(out.mutable_raw() + oo * row_bytes, in.raw() + io * row_bytes,
                  static_cast<size_t>(ss * row_bytes));
    }
  }
  return per_member;
}

// The per-member results of one replica group, operand by operand.
StatusOr<PerMember> EvaluateGroup(const HloInstruction& inst, const GroupView& g,
                                  const CalledComputation* reducer, const KernelOptions& options) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kRaggedAllToAll) return RaggedAllToAll(g);
  const size_t n = g.size();
  const size_t num_ops =
      g.operands[static_cast<size_t>(g.slot[static_cast<size_t>(g.group[0])])].size();
  PerMember per_member(n);
  for (size_t k = 0; k < num_ops; ++k) {
    switch (op) {
      case HloOpcode::kAllReduce:
      case HloOpcode::kAllReduceStart:
      case HloOpcode::kReduceScatter:
        TPUSIM_RETURN_IF_ERROR(ReduceOperand(inst, g, k, reducer, options, per_member));
        break;
      case HloOpcode::kAllGather:
      case HloOpcode::kAllGatherStart:
        TPUSIM_RETURN_IF_ERROR(GatherOperand(inst, g, k, options, per_member));
        break;
      case HloOpcode::kAllToAll:
        TPUSIM_RETURN_IF_ERROR(AllToAllOperand(inst, g, k, num_ops, options, per_member));
        break;
      case HloOpcode::kCollectiveBroadcast:
        for (size_t m = 0; m < n; ++m) per_member[m].push_back(g.op(0, k));
        break;
      default:
        return Unimplemented(fmt::format("collective '{}' is not supported by the CPU evaluator",
                                         HloOpcodeString(op)));
    }
  }
  return per_member;
}

}  // namespace

StatusOr<std::vector<std::vector<int64_t>>> CollectiveGroups(const HloInstruction& inst,
                                                             const DeviceGrid& grid) {
  const int64_t R = grid.replicas, P = grid.partitions;
  std::vector<std::vector<int64_t>> groups;
  const bool channel = inst.channel_id().has_value();
  if (inst.use_global_device_ids()) {
    TPUSIM_ASSIGN_OR_RETURN(groups, ExpandReplicaGroups(inst.replica_groups(), grid.size()));
  } else {
    TPUSIM_ASSIGN_OR_RETURN(auto replica_groups, ExpandReplicaGroups(inst.replica_groups(), R));
    if (!channel) {
      for (int64_t p = 0; p < P; ++p) {
        for (const auto& g : replica_groups) {
          std::vector<int64_t> devs;
          for (int64_t r : g) devs.push_back(r * P + p);
          groups.push_back(std::move(devs));
        }
      }
    } else {
      for (const auto& g : replica_groups) {
        std::vector<int64_t> devs;
        for (int64_t p = 0; p < P; ++p) {
          for (int64_t r : g) devs.push_back(r * P + p);
        }
        groups.push_back(std::move(devs));
      }
    }
  }
  std::vector<int> seen(static_cast<size_t>(grid.size()), 0);
  for (const auto& g : groups) {
    for (int64_t d : g) {
      if (d < 0 || d >= grid.size()) {
        return InvalidArgument(
            fmt::format("device {} in replica_groups is out of range for {} "
                        "replica(s) x {} partition(s)",
                        d, R, P));
      }
      if (seen[static_cast<size_t>(d)]++) {
        return InvalidArgument(fmt::format("device {} appears in two replica groups", d));
      }
    }
  }
  return groups;
}

StatusOr<std::vector<Literal>> EvaluateCollective(
    const HloInstruction& inst, const DeviceGrid& grid, const std::vector<int64_t>& devices,
    const std::vector<std::vector<const Literal*>>& operands, const CalledComputation* reducer,
    const Shape& out, const KernelOptions& options) {
  const HloOpcode op = inst.opcode();
  // Position of each global device in `devices` (-1: not being evaluated).
  std::vector<int64_t> slot(static_cast<size_t>(grid.size()), -1);
  for (size_t i = 0; i < devices.size(); ++i)
    slot[static_cast<size_t>(devices[i])] = static_cast<int64_t>(i);
  if (IsPermute(op)) return EvaluatePermute(inst, grid, devices, slot, operands, options);
  std::vector<Literal> results(devices.size());
  std::vector<bool> done(devices.size(), false);
  TPUSIM_ASSIGN_OR_RETURN(auto groups, CollectiveGroups(inst, grid));
  for (const auto& group : groups) {
    bool any = false, all = true;
    for (int64_t d : group) {
      if (slot[static_cast<size_t>(d)] >= 0) {
        any = true;
      } else {
        all = false;
      }
    }
    if (!any) continue;
    if (!all) {
      return InvalidArgument(
          fmt::format("{}: a replica group spans devices that are not all executing "
                      "this instruction (diverged control flow)",
                      HloOpcodeString(op)));
    }
    const size_t n = group.size();
    const GroupView view{operands, slot, group};
    TPUSIM_ASSIGN_OR_RETURN(PerMember per_member, EvaluateGroup(inst, view, reducer, options));
    for (size_t m = 0; m < n; ++m) {
      const size_t i = static_cast<size_t>(slot[static_cast<size_t>(group[m])]);
      if (per_member[m].size() == 1 && !out.IsTuple()) {
        results[i] = std::move(per_member[m][0]);
        results[i].ReshapeInPlace(out);
      } else {
        results[i] = Literal::MakeTuple(std::move(per_member[m]));
      }
      done[i] = true;
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!done[i]) {
      return InvalidArgument(
          fmt::format("{}: device {} is in no replica group", HloOpcodeString(op), devices[i]));
    }
  }
  return results;
}

}  // namespace tpusim::hlo
