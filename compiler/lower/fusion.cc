#include "compiler/lower/fusion.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "compiler/lower/lowerer.h"
#include "hlo/computation.h"
#include "hlo/convolution_form.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

bool IsFusible(const HloInstruction& inst) {
  if (!HasVpuFunction(inst.opcode()) || !inst.shape().IsArray()) return false;
  for (const HloInstruction* op : inst.operands()) {
    if (!op->shape().IsArray()) return false;
  }
  return true;
}

// The instruction whose buffer `inst` reads (through reshapes, bitcasts, copies, virtual
// broadcasts, ..., and get-tuple-elements of tuples, which share their element's buffer).
const HloInstruction* Producer(const HloInstruction* inst) {
  while (true) {
    if (IsAliasOfOperand(*inst)) {
      inst = inst->operand(0);
    } else if (inst->opcode() == HloOpcode::kGetTupleElement &&
               inst->operand(0)->opcode() == HloOpcode::kTuple) {
      inst = inst->operand(0)->operand(inst->tuple_index());
    } else {
      return inst;
    }
  }
}

// Input fusion (XLA's kInput: a reduce with its elementwise producers): a reduce of the last
// member of a run over its last dimension only (a softmax's row sum, a cross-entropy's row
// reduction of a one-hot select) of rows of at most 2^18 elements, in f32 with add/maximum/minimum
// and a one-element init defined before the run, joins the run as its last member and reduces
// each chunk of whole rows in VMEM (Lowerer::LowerFusedElementwise), so the reduced operand is
// never stored unless something else reads it.
bool IsRowReductionOf(const HloInstruction& r, const HloInstruction& last,
                      const std::map<const HloInstruction*, size_t>& position,
                      const HloInstruction* front) {
  if (r.opcode() != HloOpcode::kReduce || r.operand_count() != 2 || r.operand(0) != &last ||
      !r.shape().IsArray() || r.shape().element_type() != hlo::PrimitiveType::kF32 ||
      last.shape().element_type() != hlo::PrimitiveType::kF32 || !ReducerOp(r)) {
    return false;
  }
  const int64_t rank = last.shape().rank();
  // Whole rows must fit a chunk of the kernel next to the other members' (2^18 elements, as the
  // virtual row vectors); longer rows are reduced in chunks by the reduce's own kernel.
  constexpr int64_t kMaxRow = int64_t{1} << 18;
  if (rank < 2 || r.dimensions() != std::vector<int64_t>{rank - 1} ||
      last.shape().dimensions(rank - 1) > kMaxRow) {
    return false;
  }
  const HloInstruction* init = r.operand(1);
  return init->shape().ElementCount() == 1 &&
         (HasNoCode(*init) || position.at(init) < position.at(front));
}

}  // namespace

ElementwiseGroups FormElementwiseGroups(const hlo::HloModule& module, size_t max_members) {
  ElementwiseGroups out;
  std::vector<const HloInstruction*> current;
  auto close = [&] {
    if (current.size() >= 2) {
      for (const HloInstruction* m : current) out.group_of[m] = out.groups.size();
      out.groups.push_back(current);
    }
    current.clear();
  };
  auto member = [&](const HloInstruction* i) {
    return std::find(current.begin(), current.end(), i) != current.end();
  };
  const auto& list = module.entry_computation()->instructions();
  std::map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < list.size(); ++i) position[list[i].get()] = i;
  for (const auto& up : list) {
    const HloInstruction* inst = up.get();
    // Virtual broadcasts emit no code either: their readers load the source vector themselves.
    if (HasNoCode(*inst) || IsVirtualBroadcast(*inst)) continue;
    if (!current.empty() && IsRowReductionOf(*inst, *current.back(), position, current.front())) {
      current.push_back(inst);  // an input fusion ends the run
      close();
      continue;
    }
    if (!IsFusible(*inst)) {
      close();
      continue;
    }
    bool joins = !current.empty() && current.size() < max_members &&
                 inst->shape().dimensions() == current.front()->shape().dimensions();
    for (const HloInstruction* op : inst->operands()) {
      if (!joins) break;
      joins = member(op) || !member(Producer(op));
      // A virtual iota is skipped above, but it does have code: LowerIota writes its one stored
      // row at the iota's own place in the program. The group's kernel runs at its first member,
      // so a member may not read an iota placed after that member (it would read the row before
      // it is written).
      const HloInstruction* src = Producer(op);
      if (src->opcode() == HloOpcode::kIota && position.at(src) > position.at(current.front())) {
        joins = false;
      }
    }
    if (!joins) close();
    current.push_back(inst);
  }
  close();
  return out;
}

namespace {

// Output fusion with reductions (XLA's multi-output kOutput/kInput fusions: a convolution with the
// batch-norm sums of its result): the reduces right after the epilogue's members (instructions
// without code aside) that reduce the dot or a member, in f32, over every dimension but the last
// or over the last only, with add/maximum/minimum and a one-element init defined before the dot,
// join the epilogue (Lowerer::Epilogue::Reduction).
void AddEpilogueReductions(const std::vector<std::unique_ptr<HloInstruction>>& list,
                           const std::map<const HloInstruction*, size_t>& position,
                           const HloInstruction* dot, const HloInstruction* after,
                           std::vector<const HloInstruction*>* members) {
  const size_t pos = position.at(after);
  const size_t dot_pos = position.at(dot);
  const int64_t rank = dot->shape().rank();
  for (size_t j = pos + 1; j < list.size(); ++j) {
    const HloInstruction* r = list[j].get();
    if (HasNoCode(*r)) continue;
    if (r->opcode() != HloOpcode::kReduce || r->operand_count() != 2 || !r->shape().IsArray() ||
        r->shape().element_type() != hlo::PrimitiveType::kF32 || !ReducerOp(*r)) {
      break;
    }
    const HloInstruction* src = r->operand(0);
    const bool on_fusion =
        Producer(src) == dot || std::find(members->begin(), members->end(), src) != members->end();
    const HloInstruction* init = r->operand(1);
    const bool init_ok =
        init->shape().ElementCount() == 1 && (HasNoCode(*init) || position.at(init) < dot_pos);
    std::vector<int64_t> all_but_last, last{rank - 1};
    for (int64_t d = 0; d + 1 < rank; ++d) all_but_last.push_back(d);
    const bool shape_ok = src->shape().dimensions() == dot->shape().dimensions() &&
                          (r->dimensions() == all_but_last || r->dimensions() == last);
    if (!on_fusion || !init_ok || !shape_ok || rank < 1 ||
        src->shape().element_type() != hlo::PrimitiveType::kF32) {
      break;
    }
    members->push_back(r);
  }
}

}  // namespace

int64_t EpilogueElementsPerBatch(const HloInstruction& dot) {
  const auto& d = dot.shape().dimensions();
  if (dot.opcode() == HloOpcode::kDot && d.size() == 3) return d[1] * d[2];
  return dot.shape().ElementCount();
}

bool IsEpilogueBatchBroadcast(const HloInstruction& b, const HloInstruction& dot) {
  if (b.opcode() != HloOpcode::kBroadcast || !b.shape().IsArray() ||
      !b.operand(0)->shape().IsArray() || b.operand(0)->shape().ElementCount() < 2 ||
      b.shape().ElementCount() != dot.shape().ElementCount() ||
      b.parent()->root_instruction() == &b) {
    return false;
  }
  const auto& kept = b.dimensions();
  for (size_t i = 0; i < kept.size(); ++i) {
    if (kept[i] != static_cast<int64_t>(i)) return false;  // a prefix, in order
  }
  int64_t repeat = 1;  // elements each operand value covers
  for (int64_t d = static_cast<int64_t>(kept.size()); d < b.shape().rank(); ++d) {
    repeat *= b.shape().dimensions(d);
  }
  const int64_t per_batch = EpilogueElementsPerBatch(dot);
  return per_batch > 0 && repeat % per_batch == 0;
}

void AddDotEpilogues(const hlo::HloModule& module, int64_t min_split_n, ElementwiseGroups* groups) {
  const auto& list = module.entry_computation()->instructions();
  std::map<const HloInstruction*, size_t> position;
  for (size_t i = 0; i < list.size(); ++i) position[list[i].get()] = i;
  for (size_t i = 0; i < list.size(); ++i) {
    const HloInstruction* dot = list[i].get();
    // A convolution reaching the lowering is a direct one in canonical dim_labels (its result
    // [N, OH, OW, O] is an [N*OH*OW, O] matrix popped block by block, like a dot's). Grouped ones
    // (direct per group, or on the VPU) store their result whole; their consumers run apart.
    const bool direct_conv =
        dot->opcode() == HloOpcode::kConvolution && dot->feature_group_count() == 1 &&
        dot->convolution_dimension_numbers().output_batch_dimension == 0 &&
        dot->convolution_dimension_numbers().input_feature_dimension == dot->shape().rank() - 1 &&
        dot->convolution_dimension_numbers().output_feature_dimension == dot->shape().rank() - 1;
    const bool mxu_op = dot->opcode() == HloOpcode::kDot || direct_conv;
    if (!mxu_op || !dot->shape().IsArray() || groups->group_of.count(dot) > 0 ||
        dot->shape().rank() < 1 || dot->shape().dimensions().back() >= min_split_n) {
      continue;
    }
    // The next instruction that emits code, past broadcasts the epilogue may absorb.
    std::vector<const HloInstruction*> batch_broadcasts;
    size_t j = i + 1;
    for (; j < list.size(); ++j) {
      if (HasNoCode(*list[j])) continue;
      if (!IsEpilogueBatchBroadcast(*list[j], *dot)) break;
      batch_broadcasts.push_back(list[j].get());
    }
    if (j == list.size()) continue;
    const HloInstruction* next = list[j].get();
    // The members compute on the dot's result or on a view of it (a reshape: the same elements in
    // the same row-major order, e.g. a canonical [B, M, N] dot read as the module's rank-5 result).
    const auto& view = next->shape().dimensions();
    const bool same_dims = view == dot->shape().dimensions();
    if (!IsFusible(*next) || next->shape().ElementCount() != dot->shape().ElementCount() ||
        view.empty() || view.back() != dot->shape().dimensions().back()) {
      if (!batch_broadcasts.empty()) continue;  // only reductions would remain; keep it simple
      // No elementwise consumer: the dot's own result may still be reduced as it is popped.
      std::vector<const HloInstruction*> reductions;
      AddEpilogueReductions(list, position, dot, dot, &reductions);
      if (reductions.empty()) continue;
      groups->epilogue_of_dot[dot] = reductions;
      for (const HloInstruction* m : reductions) groups->dot_of_epilogue[m] = dot;
      continue;
    }
    std::vector<const HloInstruction*> members{next};
    if (auto g = groups->group_of.find(next); g != groups->group_of.end()) {
      members = groups->groups[g->second];
    }
    auto is_member = [&](const HloInstruction* x) {
      return std::find(members.begin(), members.end(), x) != members.end();
    };
    std::set<const HloInstruction*> absorbed;
    bool reads_dot = false, ok = true;
    for (const HloInstruction* m : members) {
      if (m->shape().dimensions() != view) ok = false;
      for (const HloInstruction* op : m->operands()) {
        // The dot itself, or a view of it (an identity custom-call, a bitcast, a reshape).
        if (Producer(op) == dot) {
          if (op->shape().ElementCount() != dot->shape().ElementCount()) ok = false;
          reads_dot = true;
          continue;
        }
        if (is_member(op)) continue;
        // A batch broadcast, between the dot and the ops or earlier (scheduled before the dot as
        // independent of it): one value per block, loaded as the block is popped.
        if (IsEpilogueBatchBroadcast(*op, *dot)) {
          absorbed.insert(op);
          continue;
        }
        // An external operand: in VMEM per block as a scalar, a row or column vector, or a block of
        // an array of the members' dimensions. Only instructions without code lie between the dot
        // and the ops, so every external operand exists before the dot runs.
        const bool small = IsVirtualBroadcast(*op) || op->shape().ElementCount() == 1;
        if (op->shape().dimensions() != view && !small) ok = false;
        if (VirtualPadOf(op) != nullptr) ok = false;  // the epilogue loads whole arrays only
      }
    }
    // An absorbed broadcast emits no code of its own: nothing outside may read it.
    for (const HloInstruction* b : absorbed) {
      for (const HloInstruction* u : b->users()) ok = ok && is_member(u);
    }
    if (!ok || !reads_dot) continue;
    if (same_dims && absorbed.empty()) {
      AddEpilogueReductions(list, position, dot, members.back(), &members);
    }
    members.insert(members.begin(), absorbed.begin(), absorbed.end());
    std::sort(members.begin(), members.end(),
              [&](const HloInstruction* a, const HloInstruction* b) {
                return position.at(a) < position.at(b);
              });
    groups->epilogue_of_dot[dot] = members;
    for (const HloInstruction* m : members) groups->dot_of_epilogue[m] = dot;
  }
}

namespace {

// The members of the prologue computing `dot`'s operand `index`, in program order (empty when
// there is none), decided in reverse program order so that every user of a candidate is decided
// before it.
std::vector<const HloInstruction*> PrologueMembers(
    const std::vector<std::unique_ptr<HloInstruction>>& list, size_t dot_pos, int index,
    const ElementwiseGroups& groups) {
  const HloInstruction* dot = list[dot_pos].get();
  const HloInstruction* w = dot->operand(index);
  std::set<const HloInstruction*> members;
  auto candidate = [&](const HloInstruction* x) {
    if (!IsFusible(*x) || IsVirtualBroadcast(*x) || HasNoCode(*x) ||
        x->shape().dimensions() != w->shape().dimensions() || groups.dot_of_epilogue.count(x) > 0 ||
        groups.dot_of_prologue.count(x) > 0 || x->parent()->root_instruction() == x ||
        x->users().empty()) {
      return false;
    }
    for (const HloInstruction* u : x->users()) {
      if (x == w ? u != dot : members.count(u) == 0) return false;
    }
    return true;
  };
  if (!candidate(w)) return {};
  members.insert(w);
  std::vector<const HloInstruction*> ordered;
  for (size_t j = dot_pos; j-- > 0;) {
    const HloInstruction* x = list[j].get();
    if (x != w && (members.count(x) > 0 || !candidate(x))) continue;
    bool read_by_member = x == w;
    for (const HloInstruction* u : x->users()) read_by_member = read_by_member || members.count(u);
    if (!read_by_member) continue;
    members.insert(x);
    ordered.push_back(x);
  }
  std::reverse(ordered.begin(), ordered.end());
  // Whole groups only; external operands the prologue can load block by block.
  for (const HloInstruction* m : ordered) {
    if (auto g = groups.group_of.find(m); g != groups.group_of.end()) {
      for (const HloInstruction* other : groups.groups[g->second]) {
        if (members.count(other) == 0) return {};
      }
    }
    for (const HloInstruction* op : m->operands()) {
      if (members.count(op) > 0) continue;
      if (Producer(op) == dot) return {};
      const bool same_dims = op->shape().dimensions() == w->shape().dimensions();
      const bool small = IsVirtualBroadcast(*op) || op->shape().ElementCount() == 1;
      if ((!same_dims && !small) || VirtualPadOf(op) != nullptr) return {};
    }
  }
  return ordered;
}

}  // namespace

void AddDotPrologues(const hlo::HloModule& module, int64_t min_split_n, ElementwiseGroups* groups) {
  const auto& list = module.entry_computation()->instructions();
  for (size_t i = 0; i < list.size(); ++i) {
    const HloInstruction* dot = list[i].get();
    if (dot->opcode() != HloOpcode::kDot || !dot->shape().IsArray() || dot->shape().rank() < 1 ||
        dot->shape().dimensions().back() >= min_split_n) {
      continue;
    }
    const auto& dn = dot->dot_dimension_numbers();
    const int64_t rank = dot->operand(0)->shape().rank();
    if ((rank != 2 && rank != 3) || dot->operand(1)->shape().rank() != rank ||
        static_cast<int64_t>(dn.lhs_batch_dimensions.size()) != rank - 2 ||
        dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1) {
      continue;
    }
    // MK LHS and KN weights: the forms loaded without a transpose.
    const bool canonical[2] = {dn.lhs_contracting_dimensions[0] == rank - 1,
                               dn.rhs_contracting_dimensions[0] == rank - 2};
    for (int index = 0; index < 2; ++index) {
      if (!canonical[index]) continue;
      if (index == 1 && dot->operand(1) == dot->operand(0)) continue;
      std::vector<const HloInstruction*> members = PrologueMembers(list, i, index, *groups);
      if (members.empty()) continue;
      for (const HloInstruction* m : members) groups->dot_of_prologue[m] = dot;
      groups->prologue_of_dot[{dot, index}] = std::move(members);
    }
  }
}

void AddConvPrologues(const hlo::HloModule& module, int64_t mxu_rows, ElementwiseGroups* groups) {
  const auto& list = module.entry_computation()->instructions();
  for (size_t i = 0; i < list.size(); ++i) {
    const HloInstruction* conv = list[i].get();
    if (conv->opcode() != HloOpcode::kConvolution || !conv->shape().IsArray()) continue;
    const auto& cd = conv->convolution_dimension_numbers();
    const int64_t rank = conv->shape().rank();
    // The input f01b, or read in place with its images minor (convolution_lowering.cc,
    // FilterGradInputInPlace).
    const bool image_minor = cd.input_feature_dimension == rank - 1;
    if ((cd.input_feature_dimension != 0 && !image_minor) ||
        cd.output_feature_dimension != rank - 1 ||
        !hlo::PlanFilterGradientConvolution(
            conv->operand(0)->shape().dimensions(), conv->operand(1)->shape().dimensions(),
            conv->shape().dimensions(), conv->window(), cd, conv->feature_group_count(),
            conv->batch_group_count(), mxu_rows)) {
      continue;
    }
    for (int index = 0; index < 2; ++index) {
      if (index == 1 && conv->operand(1) == conv->operand(0)) continue;
      // An image-minor input's prologue runs on [rows x W x B, 1] columns of its [H*W*B, F]
      // view: only when it is stored [H, W, B, F] (01bf).
      if (index == 0 && image_minor && !hlo::FilterGradInputIsSpatialBatchImage(cd)) continue;
      std::vector<const HloInstruction*> members = PrologueMembers(list, i, index, *groups);
      if (members.empty()) continue;
      for (const HloInstruction* m : members) groups->dot_of_prologue[m] = conv;
      groups->prologue_of_dot[{conv, index}] = std::move(members);
    }
  }
}

std::string DescribeFusions(const hlo::HloModule& module, const ElementwiseGroups& groups) {
  auto names = [](const std::vector<const HloInstruction*>& ops) {
    std::string out;
    for (const HloInstruction* op : ops) out += (out.empty() ? "" : ", ") + op->name();
    return out;
  };
  std::string out = "fusion decisions of the lowering (lower/fusion.h), in program order:\n";
  for (const auto& up : module.entry_computation()->instructions()) {
    const HloInstruction* inst = up.get();
    if (inst->opcode() == HloOpcode::kDot || inst->opcode() == HloOpcode::kConvolution) {
      auto epi = groups.epilogue_of_dot.find(inst);
      auto lhs = groups.prologue_of_dot.find({inst, 0});
      auto rhs = groups.prologue_of_dot.find({inst, 1});
      if (epi == groups.epilogue_of_dot.end() && lhs == groups.prologue_of_dot.end() &&
          rhs == groups.prologue_of_dot.end()) {
        continue;
      }
      out += "  kOutput  " + inst->name();
      if (lhs != groups.prologue_of_dot.end()) out += "; LHS as loaded: " + names(lhs->second);
      if (rhs != groups.prologue_of_dot.end()) out += "; weights as loaded: " + names(rhs->second);
      if (epi != groups.epilogue_of_dot.end()) out += "; on popped blocks: " + names(epi->second);
      out += "\n";
      continue;
    }
    auto g = groups.group_of.find(inst);
    if (g == groups.group_of.end() || groups.dot_of_epilogue.count(inst) > 0 ||
        groups.dot_of_prologue.count(inst) > 0) {
      continue;
    }
    const auto& members = groups.groups[g->second];
    if (members.front() != inst) continue;
    const bool input = members.back()->opcode() == HloOpcode::kReduce;
    out += std::string(input ? "  kInput   " : "  kLoop    ") + names(members) + "\n";
  }
  return out;
}

}  // namespace tpusim::compiler
