#include "compiler/passes/spmd_partitioner.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/check.h"
#include "common/diagnostic.h"
#include "compiler/passes/hlo_builder.h"
#include "compiler/passes/spmd_manual.h"
#include "compiler/passes/spmd_propagation.h"
#include "compiler/passes/spmd_tiling.h"
#include "hlo/sharding.h"

namespace tpusim::compiler {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::HloSharding;
using hlo::PrimitiveType;
using hlo::Shape;
using spmd::Tiling;

// True if `s` (or any tuple element) splits a value across devices.
bool SplitsValues(const HloSharding& s) {
  switch (s.kind) {
    case HloSharding::Kind::kReplicated:
    case HloSharding::Kind::kMaximal:
    case HloSharding::Kind::kUnknown:
      return false;
    case HloSharding::Kind::kTuple:
      for (const HloSharding& e : s.tuple_elements) {
        if (SplitsValues(e)) return true;
      }
      return false;
    case HloSharding::Kind::kTiled:
    case HloSharding::Kind::kManual:
      return true;
  }
  return true;
}

std::vector<int64_t> AxesExcept(int64_t rank, int64_t except) {
  std::vector<int64_t> a;
  for (int64_t d = 0; d < rank; ++d) a.push_back(d == except ? -1 : d);
  return a;
}

// A partitioned value: the instruction that holds it and how it is cut. `partial_groups` non-empty
// means each partition holds a partial result that the all-reduce over those groups with `reducer`
// (null: a scalar add) completes (created on first use, kept in `reduced`) — or, when every user
// wants the completed value cut along `scatter_dim` as a reduce-scatter over those groups leaves
// it (`scatter_tiling`), the reduce-scatter, which moves 1/k of the all-reduce's bytes.
struct Value {
  HloInstruction* inst = nullptr;
  Tiling tiling;
  std::vector<std::vector<int64_t>> partial_groups;
  HloComputation* reducer = nullptr;
  HloInstruction* reduced = nullptr;
  int64_t scatter_dim = -1;
  std::optional<Tiling> scatter_tiling;
};

class Partitioner {
 public:
  Partitioner(hlo::HloModule& module, spmd::Assignment assignment, SpmdPartitionerOptions options)
      : module_(module),
        comp_(*module.entry_computation()),
        n_(module.num_partitions()),
        a_(std::move(assignment)),
        options_(options) {
    int64_t max_channel = 0;
    for (const auto& c : module.computations()) {
      for (const auto& inst : c->instructions()) {
        if (inst->channel_id()) max_channel = std::max(max_channel, *inst->channel_id());
      }
    }
    next_channel_ = max_channel + 1;
    for (const auto& inst : comp_.instructions()) names_.insert(inst->name());
  }

  Status Run() {
    std::vector<HloInstruction*> order;
    for (const auto& up : comp_.instructions()) order.push_back(up.get());
    HloInstruction* root = comp_.root_instruction();
    // Everything that can fail is planned before the module is touched.
    TPUSIM_RETURN_IF_ERROR(PlanAll(order));
    for (HloInstruction* inst : order) PlanReduceScatter(inst, root);
    for (HloInstruction* inst : order) {
      if (inst != root || inst->opcode() == HloOpcode::kParameter) inst->set_sharding(std::nullopt);
    }
    for (HloInstruction* inst : order) Apply(inst);
    TPUSIM_RETURN_IF_ERROR(FinishRoot(root));
    RemoveAnnotations();
    comp_.set_name(comp_.name() + "_spmd");
    module_.set_entry_computation_layout("");
    return OkStatus();
  }

 private:
  std::string Where(const HloInstruction& inst) const {
    return FormatDiagnostic(
        module_.source_name(), "", inst.location(),
        fmt::format("%{} ({})", inst.name(), hlo::HloOpcodeString(inst.opcode())));
  }

  const Tiling& Assigned(const HloInstruction* inst) const {
    auto it = a_.array.find(inst);
    TPUSIM_CHECK(it != a_.array.end()) << "no tiling for " << inst->name();
    return it->second;
  }

  // ---- Emitting instructions ----

  // Adds `inst` before `anchor` (at the end when anchor is null), with `source`'s location and
  // metadata so reports point at the user's instruction.
  HloInstruction* Emit(std::unique_ptr<HloInstruction> inst, const HloInstruction* anchor,
                       const HloInstruction& source) {
    inst->set_location(source.location());
    inst->mutable_metadata() = source.metadata();
    return anchor ? comp_.AddInstructionBefore(std::move(inst), anchor)
                  : comp_.AddInstruction(std::move(inst));
  }

  // A name not used in the computation yet: "<source>.<suffix>", else with ".1", ".2", ...
  std::string Name(const HloInstruction& source, const std::string& suffix) {
    const std::string base = source.name() + "." + suffix;
    std::string n = base;
    for (int i = 1; names_.count(n); ++i) n = base + "." + std::to_string(i);
    names_.insert(n);
    return n;
  }

  std::unique_ptr<HloInstruction> New(HloOpcode op, Shape shape, const HloInstruction& source,
                                      const std::string& suffix) {
    return std::make_unique<HloInstruction>(op, std::move(shape), Name(source, suffix));
  }

  void SetGroups(HloInstruction& c, const std::vector<std::vector<int64_t>>& groups) {
    hlo::ReplicaGroups rg;
    const int64_t replicas = std::max<int64_t>(1, module_.replica_count());
    for (int64_t r = 0; r < replicas; ++r) {
      for (const auto& g : groups) {
        rg.groups.emplace_back();
        for (int64_t p : g) rg.groups.back().push_back(r * n_ + p);
      }
    }
    c.mutable_replica_groups() = std::move(rg);
    c.set_has_replica_groups(true);
    c.set_channel_id(next_channel_++);
    c.set_use_global_device_ids(true);
  }

  HloInstruction* AllReduce(HloInstruction* x, const std::vector<std::vector<int64_t>>& groups,
                            HloComputation* reducer, const HloInstruction* anchor) {
    auto ar = New(HloOpcode::kAllReduce, x->shape(), *x, "all-reduce");
    ar->AppendOperand(x);
    ar->set_to_apply(reducer);
    SetGroups(*ar, groups);
    return Emit(std::move(ar), anchor, *x);
  }

  HloInstruction* ReduceScatter(const Value& v, const HloInstruction* anchor) {
    Shape shape = v.inst->shape();
    const auto d = static_cast<size_t>(v.scatter_dim);
    shape.mutable_dimensions()[d] /= static_cast<int64_t>(v.partial_groups.front().size());
    auto rs = New(HloOpcode::kReduceScatter, shape, *v.inst, "reduce-scatter");
    rs->AppendOperand(v.inst);
    rs->mutable_dimensions() = {v.scatter_dim};
    rs->set_has_dimensions(true);
    rs->set_to_apply(v.reducer);
    SetGroups(*rs, v.partial_groups);
    return Emit(std::move(rs), anchor, *v.inst);
  }

  // Moves the pieces of `x` (cut as `have`) to the partitions `want` (same tiles) gives them: the
  // k-th holder of a piece under `have` sends it to its k-th holder under `want`, a permutation.
  HloInstruction* CollectivePermute(HloInstruction* x, const Tiling& have, const Tiling& want,
                                    const HloInstruction* anchor) {
    auto cp = New(HloOpcode::kCollectivePermute, x->shape(), *x, "collective-permute");
    cp->AppendOperand(x);
    // Both device arrays list each piece's holders together (row-major over [tiles, copies]).
    for (size_t pos = 0; pos < have.devices.size(); ++pos) {
      cp->mutable_source_target_pairs().emplace_back(have.devices[pos], want.devices[pos]);
    }
    cp->set_channel_id(next_channel_++);
    return Emit(std::move(cp), anchor, *x);
  }

  // All-gathers dimension `d` of `x` (cut by `t`); returns the gathered value and sets `t` to
  // its tiling.
  HloInstruction* AllGather(HloInstruction* x, Tiling& t, int64_t d, const HloInstruction* anchor) {
    Shape shape = x->shape();
    shape.mutable_dimensions()[static_cast<size_t>(d)] *= t.tiles[static_cast<size_t>(d)];
    auto ag = New(HloOpcode::kAllGather, shape, *x, "all-gather");
    ag->AppendOperand(x);
    ag->mutable_dimensions() = {d};
    ag->set_has_dimensions(true);
    SetGroups(*ag, spmd::GroupsAlong(t, {d}));
    t = spmd::Remap(t, AxesExcept(t.rank(), d));
    return Emit(std::move(ag), anchor, *x);
  }

  HloInstruction* S32(int64_t v, const HloInstruction& source, const HloInstruction* anchor) {
    auto c = New(HloOpcode::kConstant, Shape::Scalar(PrimitiveType::kS32), source, "c");
    c->mutable_literal().int_values = {v};
    return Emit(std::move(c), anchor, source);
  }

  // partition-id converted to s32, emitted once at the top of the computation.
  HloInstruction* PartitionId() {
    if (pid_ != nullptr) return pid_;
    const HloInstruction* first = comp_.instructions().front().get();
    const HloInstruction& src = *first;
    auto id = std::make_unique<HloInstruction>(
        HloOpcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32), Name(src, "partition-id"));
    id->set_location(src.location());
    HloInstruction* raw = comp_.AddInstructionBefore(std::move(id), first);
    auto cv = std::make_unique<HloInstruction>(
        HloOpcode::kConvert, Shape::Scalar(PrimitiveType::kS32), Name(src, "partition-id.s32"));
    cv->AppendOperand(raw);
    cv->set_location(src.location());
    pid_ = comp_.AddInstructionBefore(std::move(cv), first);
    return pid_;
  }

  // The piece `want` gives this partition of the whole value `x`, taken locally.
  HloInstruction* LocalSlice(HloInstruction* x, const Tiling& want, const HloInstruction* anchor) {
    const std::vector<int64_t>& dims = x->shape().dimensions();
    const std::vector<int64_t> shard = spmd::ShardDims(dims, want);
    Shape piece_shape = x->shape();
    piece_shape.mutable_dimensions() = shard;
    HloInstruction* pid = PartitionId();
    const auto index = want.Indices();
    if (options_.local_slice == SpmdPartitionerOptions::LocalSlice::kDynamicSlice) {
      std::vector<HloInstruction*> starts;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (want.tiles[d] == 1) {
          starts.push_back(S32(0, *x, anchor));
          continue;
        }
        auto table = New(HloOpcode::kConstant, Shape(PrimitiveType::kS32, {n_}), *x, "offsets");
        for (int64_t p = 0; p < n_; ++p) {
          table->mutable_literal().int_values.push_back(index[static_cast<size_t>(p)][d] *
                                                        shard[d]);
        }
        HloInstruction* t = Emit(std::move(table), anchor, *x);
        auto one = New(HloOpcode::kDynamicSlice, Shape(PrimitiveType::kS32, {1}), *x, "offset");
        one->AppendOperand(t);
        one->AppendOperand(pid);
        one->mutable_dynamic_slice_sizes() = {1};
        HloInstruction* o = Emit(std::move(one), anchor, *x);
        auto scalar = New(HloOpcode::kReshape, Shape::Scalar(PrimitiveType::kS32), *x, "offset");
        scalar->AppendOperand(o);
        starts.push_back(Emit(std::move(scalar), anchor, *x));
      }
      auto ds = New(HloOpcode::kDynamicSlice, piece_shape, *x, "shard");
      ds->AppendOperand(x);
      for (HloInstruction* s : starts) ds->AppendOperand(s);
      ds->mutable_dynamic_slice_sizes() = shard;
      return Emit(std::move(ds), anchor, *x);
    }
    // kSelectSlices: pieces in order of the first partition holding them.
    std::vector<std::vector<int64_t>> offsets;
    std::vector<std::vector<int64_t>> holders;
    std::map<std::vector<int64_t>, size_t> piece_of;
    for (int64_t p = 0; p < n_; ++p) {
      std::vector<int64_t> off(dims.size());
      for (size_t d = 0; d < dims.size(); ++d) off[d] = index[static_cast<size_t>(p)][d] * shard[d];
      auto [it, added] = piece_of.emplace(off, offsets.size());
      if (added) {
        offsets.push_back(off);
        holders.emplace_back();
      }
      holders[it->second].push_back(p);
    }
    HloInstruction* acc = nullptr;
    for (size_t k = 0; k < offsets.size(); ++k) {
      auto s = New(HloOpcode::kSlice, piece_shape, *x, "piece");
      s->AppendOperand(x);
      for (size_t d = 0; d < dims.size(); ++d) {
        s->mutable_slice_starts().push_back(offsets[k][d]);
        s->mutable_slice_limits().push_back(offsets[k][d] + shard[d]);
        s->mutable_slice_strides().push_back(1);
      }
      HloInstruction* piece = Emit(std::move(s), anchor, *x);
      if (acc == nullptr) {
        acc = piece;
        continue;
      }
      HloInstruction* mine = nullptr;
      for (int64_t p : holders[k]) {
        auto eq = New(HloOpcode::kCompare, Shape::Scalar(PrimitiveType::kPred), *x, "is-mine");
        eq->AppendOperand(pid);
        eq->AppendOperand(S32(p, *x, anchor));
        eq->set_comparison_direction(hlo::ComparisonDirection::kEq);
        HloInstruction* e = Emit(std::move(eq), anchor, *x);
        if (mine == nullptr) {
          mine = e;
        } else {
          auto o = New(HloOpcode::kOr, Shape::Scalar(PrimitiveType::kPred), *x, "is-mine");
          o->AppendOperand(mine);
          o->AppendOperand(e);
          mine = Emit(std::move(o), anchor, *x);
        }
      }
      auto b = New(HloOpcode::kBroadcast, Shape(PrimitiveType::kPred, shard), *x, "is-mine");
      b->AppendOperand(mine);
      b->set_has_dimensions(true);
      HloInstruction* mask = Emit(std::move(b), anchor, *x);
      auto sel = New(HloOpcode::kSelect, piece_shape, *x, "shard");
      sel->AppendOperand(mask);
      sel->AppendOperand(piece);
      sel->AppendOperand(acc);
      acc = Emit(std::move(sel), anchor, *x);
    }
    return acc;
  }

  // ---- Values and resharding ----

  // The value of original instruction `orig`, with a pending all-reduce completed before `anchor`.
  std::pair<HloInstruction*, Tiling> Resolve(const HloInstruction* orig,
                                             const HloInstruction* anchor) {
    auto it = values_.find(orig);
    TPUSIM_CHECK(it != values_.end()) << "no partitioned value for " << orig->name();
    Value& v = it->second;
    if (v.partial_groups.empty()) return {v.inst, v.tiling};
    if (v.reducer == nullptr)
      v.reducer = GetOrAddScalarAdd(module_, v.inst->shape().element_type());
    if (v.scatter_tiling) {
      if (v.reduced == nullptr) v.reduced = ReduceScatter(v, anchor);
      return {v.reduced, *v.scatter_tiling};
    }
    if (v.reduced == nullptr) v.reduced = AllReduce(v.inst, v.partial_groups, v.reducer, anchor);
    return {v.reduced, v.tiling};
  }

  // `orig`'s value cut as `want`, made before `anchor`.
  HloInstruction* Reshard(const HloInstruction* orig, const Tiling& want,
                          const HloInstruction* anchor) {
    // Not a structured binding: the lambda below captures x (clang 14, the fuzz build's
    // compiler, cannot capture a binding).
    const std::pair<HloInstruction*, Tiling> resolved = Resolve(orig, anchor);
    HloInstruction* const x = resolved.first;
    const Tiling& have = resolved.second;
    if (spmd::SameLayout(have, want)) return x;
    const auto key = std::make_pair(x, want.ToString());
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    HloInstruction* cur = x;
    Tiling t = have;
    // All-gathers dimension d of cur, reusing a gather of the same value another user made.
    auto gather = [&](int64_t d) {
      Tiling next = spmd::Remap(t, AxesExcept(t.rank(), d));
      const auto k = std::make_pair(x, next.ToString());
      if (auto it = cache_.find(k); it != cache_.end()) {
        cur = it->second;
        t = next;
        return;
      }
      cur = AllGather(cur, t, d, anchor);
      cache_[k] = cur;
    };
    // Gather the dimensions cut differently first; if that gives `want`, stop there.
    for (int64_t d = 0; d < t.rank(); ++d) {
      const auto i = static_cast<size_t>(d);
      if (t.tiles[i] > 1 && t.tiles[i] != want.tiles[i]) gather(d);
    }
    if (!spmd::SameLayout(t, want) && !t.IsReplicated() && t.tiles == want.tiles) {
      // Same cut, pieces on other partitions: each partition receives its piece from one holder.
      cur = CollectivePermute(cur, t, want, anchor);
    } else if (!spmd::SameLayout(t, want)) {
      for (int64_t d = 0; d < t.rank(); ++d) {
        if (t.tiles[static_cast<size_t>(d)] > 1) gather(d);
      }
      if (!want.IsReplicated()) cur = LocalSlice(cur, want, anchor);
    }
    cache_[key] = cur;
    return cur;
  }

  // ---- Per-instruction rules ----
  //
  // Every decision is planned on the unmodified graph (all shapes full-size) before anything is
  // rewritten: PlanOne() fills plans_[inst] from the planned tilings of the operands, Apply() then
  // reshards the operands, sets the per-partition shape and records the value.

  // How `inst` is partitioned.
  struct Plan {
    std::vector<std::optional<Tiling>> operand_wants;  // per operand; nullopt = leave as is
    std::optional<Tiling> shard_as;                    // array result: cut its shape by this tiling
    Value value;                                       // array result (inst filled in by Apply)
    std::vector<Tiling> tuple;                         // kTuple result: the elements' tilings
    bool forward = false;  // an annotation: its users read its (resharded) operand
  };

  const Tiling& Planned(const HloInstruction* inst) const {
    auto it = plans_.find(inst);
    TPUSIM_CHECK(it != plans_.end()) << "no plan for " << inst->name();
    return it->second.value.tiling;
  }

  Status PlanAll(const std::vector<HloInstruction*>& order) {
    for (HloInstruction* inst : order) {
      Plan p;
      p.operand_wants.assign(static_cast<size_t>(inst->operand_count()), std::nullopt);
      TPUSIM_RETURN_IF_ERROR(PlanOne(*inst, p));
      plans_[inst] = std::move(p);
    }
    return OkStatus();
  }

  Status PlanOne(const HloInstruction& inst, Plan& p) {
    if (a_.manual.count(&inst)) return PlanManual(inst, p);
    if (spmd::IsShardToFull(inst)) return PlanShardToFull(inst, p);
    switch (inst.opcode()) {
      case HloOpcode::kParameter:
        if (!inst.shape().IsArray()) return PlanGeneric(inst, p);
        p.shard_as = Assigned(&inst);
        p.value.tiling = *p.shard_as;
        return OkStatus();
      case HloOpcode::kTuple:
        return PlanTuple(inst, p);
      case HloOpcode::kGetTupleElement:
        if (inst.operand(0)->opcode() == HloOpcode::kTuple && inst.shape().IsArray()) {
          p.value.tiling =
              plans_.at(inst.operand(0)).tuple[static_cast<size_t>(inst.tuple_index())];
          return OkStatus();
        }
        return PlanGeneric(inst, p);
      case HloOpcode::kDot:
      case HloOpcode::kConvolution:
        return PlanDot(inst, p);
      case HloOpcode::kReduce:
        if (inst.operand_count() == 2 && inst.shape().IsArray()) return PlanReduce(inst, p);
        return PlanGeneric(inst, p);
      case HloOpcode::kGather:
        return PlanGather(inst, p);
      case HloOpcode::kScatter:
        return PlanScatter(inst, p);
      default:
        break;
    }
    const HloOpcode op = inst.opcode();
    if (inst.shape().IsArray() && inst.operand_count() > 0 &&
        (spmd::KeepsTiling(inst) || op == HloOpcode::kBroadcast || op == HloOpcode::kTranspose ||
         op == HloOpcode::kReshape || op == HloOpcode::kBitcast || op == HloOpcode::kSlice ||
         op == HloOpcode::kPad || op == HloOpcode::kConcatenate || op == HloOpcode::kReverse ||
         (op == HloOpcode::kReduceWindow && inst.operand_count() == 2) ||
         op == HloOpcode::kSelectAndScatter || op == HloOpcode::kDynamicSlice ||
         op == HloOpcode::kDynamicUpdateSlice)) {
      return PlanLocal(inst, p);
    }
    return PlanGeneric(inst, p);
  }

  // An instruction of a manual region (spmd_manual.h) runs as written on every partition: its
  // shape stays, its operands from outside the region are read whole. SPMDFullToShardShape reads
  // its operand as it is cut (each partition's piece is its result) and the custom-calls
  // "Sharding" of a region only restate the manual sharding: both become their operand (Apply).
  Status PlanManual(const HloInstruction& inst, Plan& p) {
    p.value = Value{};
    p.value.tiling = Tiling::Replicated(inst.shape().IsArray() ? inst.shape().rank() : 0, n_);
    if (spmd::IsFullToShard(inst)) {
      const HloInstruction* op = inst.operand(0);
      const Tiling& have = Planned(op);
      if (!spmd::DividesEvenly(op->shape().dimensions(), have) ||
          spmd::ShardDims(op->shape().dimensions(), have) != inst.shape().dimensions()) {
        return Unimplemented(fmt::format(
            "{}: the result {} is not the piece of its operand %{} {} cut as {}; tpusim's SPMD "
            "partitioner needs the operand's sharding (the custom-call \"Sharding\" before it) "
            "to cut it into pieces of the result's shape",
            Where(inst), inst.shape().ToString(false), op->name(), op->shape().ToString(false),
            have.ToString()));
      }
      p.operand_wants[0] = have;
      p.forward = true;
      return OkStatus();
    }
    p.forward = IsShardingAnnotation(inst);
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const HloInstruction* op = inst.operand(i);
      if (op->shape().IsArray()) {
        p.operand_wants[static_cast<size_t>(i)] = Tiling::Replicated(op->shape().rank(), n_);
      }
    }
    return OkStatus();
  }

  // SPMDShardToFullShape: each partition's region value is its piece of the full-size result, cut
  // as the result's sharding says; it becomes its operand (Apply).
  Status PlanShardToFull(const HloInstruction& inst, Plan& p) {
    const HloInstruction* op = inst.operand(0);
    const Tiling& t = Assigned(&inst);
    if (!a_.manual.count(op) || !spmd::DividesEvenly(inst.shape().dimensions(), t) ||
        spmd::ShardDims(inst.shape().dimensions(), t) != op->shape().dimensions()) {
      return Unimplemented(fmt::format(
          "{}: its operand %{} {} is not {} the piece of the result {} cut as {}", Where(inst),
          op->name(), op->shape().ToString(false),
          a_.manual.count(op) ? "" : "a value of a manual region, nor",
          inst.shape().ToString(false), t.ToString()));
    }
    p.operand_wants[0] = Tiling::Replicated(op->shape().rank(), n_);
    p.shard_as = t;
    p.value.tiling = t;
    p.forward = true;
    return OkStatus();
  }

  Status PlanTuple(const HloInstruction& inst, Plan& p) {
    auto it = a_.tuple.find(&inst);
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const HloInstruction* op = inst.operand(i);
      if (!op->shape().IsArray()) {
        p.tuple.push_back(Tiling::Replicated(0, n_));
        continue;
      }
      const Tiling want = it != a_.tuple.end() ? it->second[static_cast<size_t>(i)] : Planned(op);
      p.operand_wants[static_cast<size_t>(i)] = want;
      p.tuple.push_back(want);
    }
    return OkStatus();
  }

  Status PlanDot(const HloInstruction& inst, Plan& p) {
    const spmd::DotAxes ax = spmd::MakeDotAxes(inst);
    const Tiling d = spmd::ChooseDotTiling(inst, Planned(inst.operand(0)), Planned(inst.operand(1)),
                                           Assigned(&inst), n_);
    p.operand_wants[0] = spmd::Remap(d, ax.lhs);
    p.operand_wants[1] = spmd::Remap(d, ax.rhs);
    p.shard_as = spmd::Remap(d, ax.out);
    p.value.tiling = *p.shard_as;
    bool partial = false;
    for (int64_t a : ax.contracting) partial |= d.tiles[static_cast<size_t>(a)] > 1;
    if (partial) {
      p.value.partial_groups = spmd::GroupsAlong(d, ax.contracting);
      p.value.reducer = nullptr;  // the scalar add, made when the all-reduce is
    }
    return OkStatus();
  }

  Status PlanReduce(const HloInstruction& inst, Plan& p) {
    const HloInstruction* op = inst.operand(0);
    const Tiling& have = Planned(op);
    bool cuts_reduced = false;
    for (int64_t d : inst.dimensions()) cuts_reduced |= have.tiles[static_cast<size_t>(d)] > 1;
    p.operand_wants[1] = Tiling::Replicated(0, n_);
    if (cuts_reduced && spmd::ReduceCanAllReduce(inst)) {
      // Local reduce of each piece, then the all-reduce sums (maxes, ...) the pieces.
      p.operand_wants[0] = have;
      std::vector<int64_t> kept;
      for (int64_t d = 0; d < op->shape().rank(); ++d) {
        if (std::find(inst.dimensions().begin(), inst.dimensions().end(), d) ==
            inst.dimensions().end()) {
          kept.push_back(d);
        }
      }
      p.shard_as = spmd::Remap(have, kept);
      p.value.tiling = *p.shard_as;
      p.value.partial_groups = spmd::GroupsAlong(have, inst.dimensions());
      p.value.reducer = inst.to_apply();
      return OkStatus();
    }
    const Tiling& t = Assigned(&inst);
    std::optional<Tiling> want = spmd::OperandTilingFor(inst, 0, t);
    TPUSIM_CHECK(want.has_value()) << "reduce operand tiling for " << inst.name();
    p.operand_wants[0] = *want;
    p.shard_as = t;
    p.value.tiling = t;
    return OkStatus();
  }

  // A gather whose start indices are cut along batch dimensions: the operand whole on every
  // partition, each partition gathers the rows its indices name into its piece of the result, no
  // collective (XLA's gather handler for cut index-passthrough dimensions). The result is cut as
  // the indices' batch dimensions are; a cut the propagation gave its offset dimensions is left to
  // the users' resharding. Unsplit indices: the whole gather on every partition.
  Status PlanGather(const HloInstruction& inst, Plan& p) {
    const std::optional<std::vector<int64_t>> axes = spmd::GatherBatchAxes(inst);
    if (!axes) return PlanGeneric(inst, p);
    const HloInstruction* indices = inst.operand(1);
    std::optional<Tiling> want = spmd::OperandTilingFor(inst, 1, Assigned(&inst));
    if (!want || want->IsReplicated() ||
        !spmd::DividesEvenly(indices->shape().dimensions(), *want)) {
      return PlanGeneric(inst, p);
    }
    const Tiling out = spmd::Remap(*want, *axes);
    p.operand_wants[0] = Tiling::Replicated(inst.operand(0)->shape().rank(), n_);
    p.operand_wants[1] = *want;
    p.shard_as = out;
    p.value.tiling = out;
    return OkStatus();
  }

  // A scatter whose start indices and updates are cut along their scatter (batch) dimensions, into
  // a broadcast of its combiner's identity (ScatterBatchAxes): every partition scatters its own
  // updates into a whole operand, and the pieces are combined by an all-reduce with the combiner
  // when a user needs the value — the embedding gradient of a data-parallel step, which before was
  // computed whole on every partition after an all-gather of its updates. Otherwise the whole
  // scatter on every partition.
  Status PlanScatter(const HloInstruction& inst, Plan& p) {
    const std::optional<std::vector<int64_t>> axes = spmd::ScatterBatchAxes(inst);
    if (!axes) return PlanGeneric(inst, p);
    const HloInstruction* indices = inst.operand(1);
    const Tiling& have = Planned(indices);
    const int64_t ivd = inst.scatter_dimension_numbers().index_vector_dim;
    std::vector<int64_t> batch;
    for (int64_t d = 0; d < indices->shape().rank(); ++d) {
      if (d != ivd) batch.push_back(d);
    }
    const bool cuts_index_vector =
        ivd < indices->shape().rank() && have.tiles[static_cast<size_t>(ivd)] > 1;
    if (have.IsReplicated() || cuts_index_vector ||
        !spmd::DividesEvenly(indices->shape().dimensions(), have)) {
      return PlanGeneric(inst, p);
    }
    const Tiling updates = spmd::Remap(have, *axes);
    if (!spmd::DividesEvenly(inst.operand(2)->shape().dimensions(), updates)) {
      return PlanGeneric(inst, p);
    }
    p.operand_wants[0] = Tiling::Replicated(inst.operand(0)->shape().rank(), n_);
    p.operand_wants[1] = have;
    p.operand_wants[2] = updates;
    p.shard_as = Tiling::Replicated(inst.shape().rank(), n_);
    p.value.tiling = *p.shard_as;
    p.value.partial_groups = spmd::GroupsAlong(have, batch);
    p.value.reducer = inst.to_apply();
    return OkStatus();
  }

  // Ops that need no collective once their operands are cut to match: elementwise, broadcast,
  // transpose, reshape, slice / pad / concatenate / reverse / dynamic-slice /
  // dynamic-update-slice on uncut dimensions, and reduce-window / select-and-scatter on dimensions
  // their window does not span.
  Status PlanLocal(const HloInstruction& inst, Plan& p) {
    const Tiling& t = Assigned(&inst);
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const HloInstruction* op = inst.operand(i);
      if (!op->shape().IsArray()) continue;
      std::optional<Tiling> w = spmd::OperandTilingFor(inst, i, t);
      if (!w && spmd::KeepsTiling(inst) && op->shape().rank() == 0) {
        w = Tiling::Replicated(0, n_);  // scalar operand of clamp / select
      }
      if (!w || !spmd::DividesEvenly(op->shape().dimensions(), *w)) return PlanGeneric(inst, p);
      p.operand_wants[static_cast<size_t>(i)] = w;
    }
    if (inst.opcode() == HloOpcode::kReshape || inst.opcode() == HloOpcode::kBitcast) {
      auto back = spmd::ReshapeTiling(inst.operand(0)->shape().dimensions(),
                                      inst.shape().dimensions(), *p.operand_wants[0]);
      if (!back || !spmd::SameLayout(*back, t)) return PlanGeneric(inst, p);
    }
    p.shard_as = t;
    p.value.tiling = t;
    return OkStatus();
  }

  // Any other op runs on whole operands and produces a whole value on every partition.
  Status PlanGeneric(const HloInstruction& inst, Plan& p) {
    p.operand_wants.assign(static_cast<size_t>(inst.operand_count()), std::nullopt);
    p.shard_as.reset();
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      const HloInstruction* op = inst.operand(i);
      if (op->shape().IsArray()) {
        p.operand_wants[static_cast<size_t>(i)] = Tiling::Replicated(op->shape().rank(), n_);
        continue;
      }
      auto pt = plans_.find(op);
      if (pt == plans_.end()) continue;
      const std::vector<Tiling>& elements = pt->second.tuple;
      for (size_t e = 0; e < elements.size(); ++e) {
        if (!elements[e].IsReplicated()) {
          return Unimplemented(fmt::format(
              "{}: its tuple operand %{} has element {} split as {}; tpusim's SPMD partitioner "
              "does not partition tuple-shaped operands of {} yet",
              Where(inst), op->name(), e, elements[e].ToString(),
              hlo::HloOpcodeString(inst.opcode())));
        }
      }
    }
    p.value = Value{};
    p.value.tiling = Tiling::Replicated(inst.shape().IsArray() ? inst.shape().rank() : 0, n_);
    return OkStatus();
  }

  // A partial value whose users all want it cut along one more dimension, piece j on the j-th
  // member of each all-reduce group, is completed with a reduce-scatter instead.
  void PlanReduceScatter(const HloInstruction* inst, const HloInstruction* root) {
    Plan& plan = plans_.at(inst);
    Value& v = plan.value;
    if (v.partial_groups.empty()) return;
    std::optional<Tiling> want;
    auto agree = [&](const std::optional<Tiling>& w) {
      if (!w) return false;
      if (!want) want = w;
      return spmd::SameLayout(*want, *w);
    };
    for (const HloInstruction* user : inst->users()) {
      const Plan& up = plans_.at(user);
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == inst && !agree(up.operand_wants[static_cast<size_t>(i)])) return;
      }
    }
    if (inst == root && !agree(Assigned(root))) return;
    if (!want) return;
    const Tiling& have = v.tiling;
    const auto k = static_cast<int64_t>(v.partial_groups.front().size());
    int64_t dim = -1;
    for (int64_t d = 0; d < have.rank(); ++d) {
      const auto i = static_cast<size_t>(d);
      if (have.tiles[i] == want->tiles[i]) continue;
      if (dim >= 0 || have.tiles[i] != 1 || want->tiles[i] != k) return;
      dim = d;
    }
    if (dim < 0 || inst->shape().dimensions(dim) % k != 0) return;
    const auto want_index = want->Indices(), have_index = have.Indices();
    for (const auto& group : v.partial_groups) {
      for (size_t j = 0; j < group.size(); ++j) {
        const std::vector<int64_t>& w = want_index[static_cast<size_t>(group[j])];
        const std::vector<int64_t>& h = have_index[static_cast<size_t>(group[j])];
        for (int64_t d = 0; d < have.rank(); ++d) {
          const auto i = static_cast<size_t>(d);
          if (d == dim ? w[i] != static_cast<int64_t>(j) : w[i] != h[i]) return;
        }
      }
    }
    v.scatter_dim = dim;
    v.scatter_tiling = *want;
  }

  void Apply(HloInstruction* inst) {
    const Plan& p = plans_.at(inst);
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      const std::optional<Tiling>& want = p.operand_wants[static_cast<size_t>(i)];
      if (!want) continue;
      HloInstruction* v = Reshard(inst->operand(i), *want, inst);
      if (v != inst->operand(i)) inst->ReplaceOperandWith(i, v);
    }
    if (p.shard_as) {
      inst->mutable_shape().mutable_dimensions() =
          spmd::ShardDims(inst->shape().dimensions(), *p.shard_as);
      if (inst->opcode() == HloOpcode::kSlice) {
        // Cut dimensions are taken whole (ChangedDims): their limit is the piece's size.
        for (size_t d = 0; d < inst->slice_limits().size(); ++d) {
          if (p.shard_as->tiles[d] > 1)
            inst->mutable_slice_limits()[d] = inst->shape().dimensions()[d];
        }
      }
      if (inst->opcode() == HloOpcode::kDynamicSlice) {
        for (size_t d = 0; d < inst->dynamic_slice_sizes().size(); ++d) {
          if (p.shard_as->tiles[d] > 1)
            inst->mutable_dynamic_slice_sizes()[d] = inst->shape().dimensions()[d];
        }
      }
    }
    if (inst->opcode() == HloOpcode::kParameter && inst->shape().IsArray()) {
      inst->set_sharding(p.shard_as->ToHloSharding());
    }
    if (inst->opcode() == HloOpcode::kTuple) {
      std::vector<Shape> shapes;
      for (const HloInstruction* op : inst->operands()) shapes.push_back(op->shape());
      inst->mutable_shape() = Shape::Tuple(std::move(shapes));
    }
    if (inst->opcode() == HloOpcode::kGetTupleElement &&
        inst->operand(0)->opcode() == HloOpcode::kTuple) {
      inst->mutable_shape() = inst->operand(0)->shape().tuple_shapes(inst->tuple_index());
    }
    if (inst->shape().IsArray()) {
      Value v = p.value;
      v.inst = inst;
      if ((IsShardingAnnotation(*inst) && p.shard_as) || p.forward) {
        // custom-call "Sharding" only pins the cut, SPMDFullToShardShape / SPMDShardToFullShape
        // only change the view of a value: their users read the resharded operand, and the call
        // itself is removed once it has no users (it has no semantics to run or lower).
        v.inst = inst->operand(0);
        annotations_.push_back(inst);
      }
      values_[inst] = std::move(v);
    }
  }

  static bool IsShardingAnnotation(const HloInstruction& inst) {
    return inst.opcode() == HloOpcode::kCustomCall && inst.custom_call_target() == "Sharding" &&
           inst.operand_count() == 1;
  }

  void RemoveAnnotations() {
    for (HloInstruction* a : annotations_) {
      if (a->users().empty() && a != comp_.root_instruction()) comp_.RemoveInstruction(a);
    }
  }

  Status FinishRoot(HloInstruction* root) {
    if (root->opcode() == HloOpcode::kTuple) {
      HloSharding s;
      s.kind = HloSharding::Kind::kTuple;
      for (const Tiling& t : plans_.at(root).tuple) s.tuple_elements.push_back(t.ToHloSharding());
      root->set_sharding(s);
      return OkStatus();
    }
    if (!root->shape().IsArray()) return OkStatus();
    const Tiling& want = Assigned(root);
    HloInstruction* r = Reshard(root, want, nullptr);
    r->set_sharding(want.ToHloSharding());
    if (r != root) {
      root->set_sharding(std::nullopt);
      comp_.set_root_instruction(r);
    }
    return OkStatus();
  }

  hlo::HloModule& module_;
  HloComputation& comp_;
  const int64_t n_;
  spmd::Assignment a_;
  SpmdPartitionerOptions options_;
  int64_t next_channel_ = 1;
  HloInstruction* pid_ = nullptr;
  std::map<const HloInstruction*, Value> values_;
  std::map<const HloInstruction*, Plan> plans_;
  std::vector<HloInstruction*> annotations_;
  std::set<std::string> names_;  // instruction names in use in the computation  // custom-call
                                 // "Sharding" instructions
  std::map<std::pair<HloInstruction*, std::string>, HloInstruction*> cache_;
};

}  // namespace

SpmdSignature SpmdSignature::Of(const hlo::HloModule& partitioned) {
  SpmdSignature sig;
  sig.num_partitions = std::max<int64_t>(1, partitioned.num_partitions());
  const HloComputation* entry = partitioned.entry_computation();
  for (const HloInstruction* p : entry->parameter_instructions()) {
    sig.parameters.push_back(p->sharding().value_or(HloSharding{}));
  }
  sig.result = entry->root_instruction()->sharding().value_or(HloSharding{});
  return sig;
}

namespace {

// kTriage: what Run does with `module` before propagating; sets *offending to the first
// instruction outside ENTRY that splits a value (an error) if any.
enum class Triage { kLeave, kPartition };

Triage TriageModule(const hlo::HloModule& module, const HloInstruction** offending) {
  *offending = nullptr;
  if (module.num_partitions() <= 1) return Triage::kLeave;
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return Triage::kLeave;
  const std::string& name = entry->name();
  if (name.size() >= 5 && name.compare(name.size() - 5, 5, "_spmd") == 0) return Triage::kLeave;
  // Manual regions may hold the collectives their author wrote; XLA's partitioner leaves none of
  // their markers behind.
  const bool manual = spmd::HasManualSharding(module);
  bool splits = manual;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (!manual && hlo::IsCollective(inst->opcode())) return Triage::kLeave;  // XLA's
      if (inst->sharding().has_value() && SplitsValues(*inst->sharding())) {
        // A computation a manual region calls runs as written on every partition.
        const bool runs_as_written = spmd::IsManualSharding(*inst->sharding());
        if (comp.get() != entry && !runs_as_written && *offending == nullptr) {
          *offending = inst.get();
        }
        splits = true;
      }
    }
  }
  return splits ? Triage::kPartition : Triage::kLeave;
}

}  // namespace

bool NeedsSpmdPartitioning(const hlo::HloModule& module) {
  const HloInstruction* offending = nullptr;
  return TriageModule(module, &offending) == Triage::kPartition;
}

StatusOr<bool> SpmdPartitioner::Run(hlo::HloModule& module) {
  const HloInstruction* offending = nullptr;
  if (TriageModule(module, &offending) == Triage::kLeave) return false;
  if (module.num_partitions() > kMaxSpmdPartitions) {
    return Unimplemented(
        fmt::format("{}: num_partitions={} is more than tpusim's SPMD partitioner takes ({})",
                    module.source_name(), module.num_partitions(), kMaxSpmdPartitions));
  }
  if (offending != nullptr) {
    return Unimplemented(FormatDiagnostic(
        module.source_name(), "", offending->location(),
        fmt::format("%{} ({}) has sharding={} in computation %{}; tpusim's SPMD partitioner "
                    "splits values of the ENTRY computation only",
                    offending->name(), hlo::HloOpcodeString(offending->opcode()),
                    offending->sharding()->ToString(), offending->parent()->name())));
  }
  TPUSIM_ASSIGN_OR_RETURN(spmd::Assignment assignment, spmd::PropagateShardings(module));
  Partitioner p(module, std::move(assignment), options_);
  TPUSIM_RETURN_IF_ERROR(p.Run());
  return true;
}

}  // namespace tpusim::compiler
