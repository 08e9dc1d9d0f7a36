#include "compiler/passes/collective_expander.h"

#include <memory>
#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/sharding.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::PrimitiveType;
using hlo::Shape;

// all-gather / reduce-scatter with one array operand along a dimension that has a non-trivial
// dimension before it.
bool NeedsTranspose(const HloInstruction& inst) {
  if ((inst.opcode() != HloOpcode::kAllGather && inst.opcode() != HloOpcode::kReduceScatter) ||
      inst.operand_count() != 1 || !inst.shape().IsArray() || inst.dimensions().size() != 1) {
    return false;
  }
  const int64_t d = inst.dimensions()[0];
  const Shape& s = inst.operand(0)->shape();
  if (d <= 0 || d >= s.rank()) return false;
  for (int64_t i = 0; i < d; ++i) {
    if (s.dimensions(i) != 1) return true;
  }
  return false;
}

void TransposeCollective(hlo::HloComputation& comp, HloInstruction* inst) {
  HloBuilder b(&comp, inst);
  const int64_t d = inst->dimensions()[0];
  const int64_t rank = inst->shape().rank();
  std::vector<int64_t> perm = {d}, inverse(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) {
    if (i != d) perm.push_back(i);
  }
  for (int64_t i = 0; i < rank; ++i) inverse[static_cast<size_t>(perm[static_cast<size_t>(i)])] = i;
  HloInstruction* t = b.Transpose(inst->operand(0), perm, "to_outer");
  std::vector<int64_t> dims;
  for (int64_t p : perm) dims.push_back(inst->shape().dimensions(p));
  auto c = CloneInstruction(*inst, {t}, b.UniqueName(inst->name() + ".outer"));
  c->mutable_shape() = Shape(inst->shape().element_type(), dims);
  c->mutable_dimensions() = {0};
  HloInstruction* outer = b.Add(std::move(c));
  inst->ReplaceAllUsesWith(b.Transpose(outer, inverse, "from_outer"));
  comp.RemoveInstruction(inst);
}

class AllToAll {
 public:
  AllToAll(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* a2a)
      : module_(module), b_(&comp, a2a), a2a_(a2a) {}

  // The groups (every group the same size > 1), or empty if the op is outside the contract.
  std::vector<std::vector<int64_t>> Groups() const {
    const int64_t devices = module_.replica_count() * module_.num_partitions();
    auto g = hlo::ExpandReplicaGroups(a2a_->replica_groups(), devices);
    if (!g.ok() || g->empty()) return {};
    for (const auto& group : *g) {
      if (group.size() != (*g)[0].size() || group.size() < 2) return {};
    }
    return *g;
  }

  // Array all-to-all of `x` along `d` in `groups`: the exchanged array, x's shape.
  HloInstruction* Exchange(HloInstruction* x, int64_t d,
                           const std::vector<std::vector<int64_t>>& groups) {
    const int64_t n = static_cast<int64_t>(groups[0].size());
    const Shape& s = x->shape();
    const int64_t chunk = s.dimensions(d) / n;
    std::vector<int64_t> chunk_dims = s.dimensions();
    chunk_dims[static_cast<size_t>(d)] = chunk;
    HloInstruction* id = DeviceId();
    HloInstruction* zero_index = b_.ScalarConstant(PrimitiveType::kS32, 0, "zero_index");
    auto starts = [&](HloInstruction* at) {
      std::vector<HloInstruction*> v(static_cast<size_t>(s.rank()), zero_index);
      v[static_cast<size_t>(d)] = at;
      return v;
    };
    HloInstruction* acc = b_.Broadcast(b_.ScalarConstant(s.element_type(), 0, "zero"),
                                       Shape(s.element_type(), s.dimensions()), {}, "exchanged");
    HloInstruction* own = Offset(groups, chunk, 0, id);
    acc = b_.DynamicUpdateSlice(acc, b_.DynamicSlice(x, starts(own), chunk_dims, "own"),
                                starts(own), "keep_own");
    for (int64_t k = 1; k < n; ++k) {
      HloInstruction* piece =
          b_.DynamicSlice(x, starts(Offset(groups, chunk, k, id)), chunk_dims, "send");
      auto cp = std::make_unique<HloInstruction>(HloOpcode::kCollectivePermute,
                                                 Shape(s.element_type(), chunk_dims),
                                                 b_.UniqueName(a2a_->name() + ".round"));
      for (const auto& g : groups) {
        for (int64_t i = 0; i < n; ++i) {
          cp->mutable_source_target_pairs().emplace_back(g[static_cast<size_t>(i)],
                                                         g[static_cast<size_t>((i + k) % n)]);
        }
      }
      cp->set_channel_id(a2a_->channel_id());
      cp->AppendOperand(piece);
      HloInstruction* got = b_.Add(std::move(cp));
      acc = b_.DynamicUpdateSlice(acc, got, starts(Offset(groups, chunk, n - k, id)), "place");
    }
    return acc;
  }

  HloBuilder& b() { return b_; }

 private:
  // s32[] global device id: replica-id * num_partitions + partition-id.
  HloInstruction* DeviceId() {
    if (device_id_ != nullptr) return device_id_;
    auto rid =
        std::make_unique<HloInstruction>(HloOpcode::kReplicaId, Shape::Scalar(PrimitiveType::kU32),
                                         b_.UniqueName(a2a_->name() + ".replica"));
    auto pid = std::make_unique<HloInstruction>(HloOpcode::kPartitionId,
                                                Shape::Scalar(PrimitiveType::kU32),
                                                b_.UniqueName(a2a_->name() + ".partition"));
    HloInstruction* r = b_.Add(std::move(rid));
    HloInstruction* p = b_.Add(std::move(pid));
    HloInstruction* parts = b_.ScalarConstant(
        PrimitiveType::kU32, static_cast<double>(module_.num_partitions()), "partitions");
    HloInstruction* g =
        b_.Binary(HloOpcode::kAdd, b_.Binary(HloOpcode::kMultiply, r, parts, "rp"), p, "gid");
    auto cv =
        std::make_unique<HloInstruction>(HloOpcode::kConvert, Shape::Scalar(PrimitiveType::kS32),
                                         b_.UniqueName(a2a_->name() + ".device"));
    cv->AppendOperand(g);
    device_id_ = b_.Add(std::move(cv));
    return device_id_;
  }

  // s32[]: on each device, ((rank + k) mod n) * chunk, looked up in a constant table by device id.
  HloInstruction* Offset(const std::vector<std::vector<int64_t>>& groups, int64_t chunk, int64_t k,
                         HloInstruction* id) {
    const int64_t devices = module_.replica_count() * module_.num_partitions();
    const int64_t n = static_cast<int64_t>(groups[0].size());
    auto table = std::make_unique<HloInstruction>(HloOpcode::kConstant,
                                                  Shape(PrimitiveType::kS32, {devices}),
                                                  b_.UniqueName(a2a_->name() + ".offsets"));
    std::vector<int64_t>& v = table->mutable_literal().int_values;
    v.assign(static_cast<size_t>(devices), 0);
    for (const auto& g : groups) {
      for (int64_t i = 0; i < n; ++i) {
        v[static_cast<size_t>(g[static_cast<size_t>(i)])] = ((i + k) % n) * chunk;
      }
    }
    HloInstruction* t = b_.Add(std::move(table));
    HloInstruction* one = b_.DynamicSlice(t, {id}, {1}, "offset");
    return b_.Reshape(one, {}, "offset_scalar");
  }

  hlo::HloModule& module_;
  HloBuilder b_;
  HloInstruction* a2a_;
  HloInstruction* device_id_ = nullptr;
};

bool ExpandAllToAll(hlo::HloModule& module, hlo::HloComputation& comp, HloInstruction* a2a) {
  AllToAll x(module, comp, a2a);
  const auto groups = x.Groups();
  if (groups.empty()) return false;
  const int64_t n = static_cast<int64_t>(groups[0].size());
  if (a2a->shape().IsArray()) {
    if (a2a->operand_count() != 1 || a2a->dimensions().size() != 1) return false;
    const int64_t d = a2a->dimensions()[0];
    const Shape& s = a2a->operand(0)->shape();
    if (d < 0 || d >= s.rank() || s.dimensions(d) % n != 0) return false;
    if (s.ElementCount() == 0) {  // nothing to exchange: the result is the (empty) operand
      a2a->ReplaceAllUsesWith(a2a->operand(0));
      comp.RemoveInstruction(a2a);
      return true;
    }
    a2a->ReplaceAllUsesWith(x.Exchange(a2a->operand(0), d, groups));
    comp.RemoveInstruction(a2a);
    return true;
  }
  // Tuple form: operand j goes to participant j; stack them along a new dimension 0.
  if (a2a->operand_count() != n) return false;
  const Shape& s = a2a->operand(0)->shape();
  std::vector<HloInstruction*> rows;
  std::vector<int64_t> row_dims = {1};
  row_dims.insert(row_dims.end(), s.dimensions().begin(), s.dimensions().end());
  for (HloInstruction* op : a2a->operands()) {
    if (!op->shape().IsArray() || op->shape().dimensions() != s.dimensions() ||
        op->shape().element_type() != s.element_type()) {
      return false;
    }
    rows.push_back(x.b().Reshape(op, row_dims, "row"));
  }
  HloBuilder& b = x.b();
  HloInstruction* stacked = b.Concatenate(rows, 0, "stacked");
  HloInstruction* out = x.Exchange(stacked, 0, groups);
  std::vector<HloInstruction*> parts;
  for (int64_t j = 0; j < n; ++j) {
    std::vector<int64_t> start(row_dims.size(), 0), limit = row_dims, step(row_dims.size(), 1);
    start[0] = j;
    limit[0] = j + 1;
    limit[0] = j + 1;
    std::vector<int64_t> full = row_dims;
    full[0] = n;
    for (size_t i = 1; i < full.size(); ++i) limit[i] = full[i];
    parts.push_back(b.Reshape(b.Slice(out, start, limit, step, "part"), s.dimensions(), "element"));
  }
  a2a->ReplaceAllUsesWith(b.Tuple(parts, "exchanged"));
  comp.RemoveInstruction(a2a);
  return true;
}

// collective-broadcast of one array x: an all-gather of x as [1, ...] along a new dimension 0 into
// [N, ...] in the same groups of N, of which every member keeps row 0 — its group's first member's
// x, the broadcast's source. Only when the groups cover every replica (or, with
// use_global_device_ids, every device) in groups of one size: a replica outside every group would
// get zeros, which an all-gather does not give.
bool ExpandCollectiveBroadcast(const hlo::HloModule& module, hlo::HloComputation& comp,
                               HloInstruction* cb) {
  if (cb->operand_count() != 1 || !cb->shape().IsArray()) return false;
  if (module.num_partitions() > 1 && !cb->use_global_device_ids()) return false;
  const int64_t devices = module.replica_count() * module.num_partitions();
  auto groups = hlo::ExpandReplicaGroups(cb->replica_groups(), devices);
  if (!groups.ok() || groups->empty()) return false;
  const size_t n = (*groups)[0].size();
  for (const auto& g : *groups) {
    if (g.size() != n) return false;
  }
  if (static_cast<int64_t>(n * groups->size()) != devices) return false;
  HloBuilder b(&comp, cb);
  const Shape& s = cb->shape();
  std::vector<int64_t> row = {1}, gathered = {static_cast<int64_t>(n)};
  row.insert(row.end(), s.dimensions().begin(), s.dimensions().end());
  gathered.insert(gathered.end(), s.dimensions().begin(), s.dimensions().end());
  auto ag = CloneInstructionAs(*cb, HloOpcode::kAllGather, Shape(s.element_type(), gathered),
                               {b.Reshape(cb->operand(0), row, "row")},
                               b.UniqueName(cb->name() + ".gathered"));
  ag->mutable_dimensions() = {0};
  HloInstruction* all = b.Add(std::move(ag));
  std::vector<int64_t> start(row.size(), 0), step(row.size(), 1);
  cb->ReplaceAllUsesWith(
      b.Reshape(b.Slice(all, start, row, step, "source"), s.dimensions(), "value"));
  comp.RemoveInstruction(cb);
  return true;
}

}  // namespace

StatusOr<bool> CollectiveExpander::Run(hlo::HloModule& module) {
  return RewriteEach(
      module,
      [](const HloInstruction& i) {
        return NeedsTranspose(i) || i.opcode() == HloOpcode::kAllToAll ||
               i.opcode() == HloOpcode::kCollectiveBroadcast;
      },
      [&module](hlo::HloComputation& comp, HloInstruction* inst) {
        if (inst->opcode() == HloOpcode::kAllToAll) return ExpandAllToAll(module, comp, inst);
        if (inst->opcode() == HloOpcode::kCollectiveBroadcast) {
          return ExpandCollectiveBroadcast(module, comp, inst);
        }
        TransposeCollective(comp, inst);
        return true;
      });
}

}  // namespace tpusim::compiler
