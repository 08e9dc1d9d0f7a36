#include "hlo/eval/evaluator.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <optional>
#include <limits>
#include <map>
#include <unordered_map>

#include "common/diagnostic.h"
#include "hlo/eval/collectives.h"
#include "hlo/eval/evaluator_ops.h"
#include "hlo/eval/kernels/called_computation.h"
#include "hlo/eval/kernels/rng.h"

namespace tpusim::hlo {

void EvaluatorOptions::RecordLoopTrips(const std::string& name, int64_t trips) const {
  if (while_trips != nullptr) {
    auto [it, inserted] = while_trips->emplace(name, trips);
    if (!inserted && it->second != trips) it->second = -1;
  }
  if (while_most_trips != nullptr) {
    int64_t& most = (*while_most_trips)[name];
    most = std::max(most, trips);
  }
}

// The per-module state of one evaluation: the device grid, the cache of recognized called
// computations. Values live in Run()'s frame, so nested computations (while bodies, reducers) are
// re-entrant.
class EvaluatorImpl {
 public:
  using DeviceValues = std::vector<Literal>;  // one value per device being evaluated

  EvaluatorImpl(const HloModule& module, const EvaluatorOptions& options, DeviceGrid grid)
      : module_(module), options_(options), grid_(grid) {
    kopt_.threads = options.threads;
    kopt_.max_bytes = options.max_bytes;
    kopt_.f32_accumulation = options.f32_accumulation;
    kopt_.tpu_expansions = options.tpu_default_precision;
  }

  /// Evaluates `comp` for `devices`; params[i][k] is parameter i's value on devices[k].
  StatusOr<DeviceValues> Run(const HloComputation& comp, const std::vector<int64_t>& devices,
                             std::vector<DeviceValues> params);

 private:
  StatusOr<DeviceValues> EvalInstruction(const HloInstruction& inst,
                                         const std::vector<int64_t>& devices,
                                         const std::vector<const DeviceValues*>& ops);
  StatusOr<DeviceValues> EvalWhile(const HloInstruction& inst, const std::vector<int64_t>& devices,
                                   const DeviceValues& init);
  StatusOr<DeviceValues> EvalConditional(const HloInstruction& inst,
                                         const std::vector<int64_t>& devices,
                                         const std::vector<const DeviceValues*>& ops);
  StatusOr<DeviceValues> EvalCollective(const HloInstruction& inst,
                                        const std::vector<int64_t>& devices,
                                        const std::vector<const DeviceValues*>& ops);
  const CalledComputation& Called(const HloComputation* c);
  Status Annotate(const Status& st, const HloInstruction& inst) const;
  /// The generator state u64[2] {kRngKey, counter} an rng or rng-get-and-update-state of `inst`
  /// draws, advancing the counter by its words (rng) or its delta= (rng-get-and-update-state).
  StatusOr<Literal> TakeRngState(const HloInstruction& inst);

  const HloModule& module_;
  EvaluatorOptions options_;
  DeviceGrid grid_;
  KernelOptions kopt_;
  std::map<const HloComputation*, std::unique_ptr<CalledComputation>> called_;
  // Per while: more trips than max_while_iterations by its known count (KnownTripCount, once).
  std::map<const HloInstruction*, bool> known_too_long_;
  int depth_ = 0;
  int applied_depth_ = 0;  // > 0 inside an applied computation (no on_instruction reports)
  uint64_t rng_counter_ = 0;  // the module's generator state's counter (kernels/rng.h)
};

StatusOr<Literal> EvaluatorImpl::TakeRngState(const HloInstruction& inst) {
  int64_t delta = 0;
  if (inst.opcode() == HloOpcode::kRng) {
    delta = RngWords(inst.distribution(), inst.shape());
  } else {
    const std::string* d = inst.FindRawAttribute("delta");
    const auto parsed =
        d == nullptr ? std::from_chars_result{nullptr, std::errc::invalid_argument}
                     : std::from_chars(d->data(), d->data() + d->size(), delta);
    if (d == nullptr || parsed.ec != std::errc() || parsed.ptr != d->data() + d->size() ||
        delta < 0) {
      return InvalidArgument("rng-get-and-update-state needs delta=N (N >= 0)");
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(Literal state, Literal::Create(Shape(PrimitiveType::kU64, {2})));
  state.mutable_data<uint64_t>()[0] = kRngKey;
  state.mutable_data<uint64_t>()[1] = rng_counter_;
  rng_counter_ += static_cast<uint64_t>(delta);
  return state;
}

namespace {

constexpr int kMaxCallDepth = 256;

bool IsCollectiveOp(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectiveBroadcast:
    case HloOpcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

// Recognizes `ROOT op(p0, p1)` / `ROOT p0|p1` (see CalledComputation).
void Recognize(const HloComputation& c, CalledComputation& cc) {
  const HloInstruction* root = c.root_instruction();
  if (root == nullptr || c.num_parameters() < 2) return;
  const HloInstruction* p0 = c.parameter_instruction(0);
  const HloInstruction* p1 = c.parameter_instruction(1);
  if (c.num_parameters() == 2 && root == p0) cc.fast = CalledComputation::Fast::kReturnFirst;
  if (c.num_parameters() == 2 && root == p1) cc.fast = CalledComputation::Fast::kReturnSecond;
  if (root->operand_count() != 2) return;
  // op(p1, p0) is op(p0, p1) bit for bit for add, multiply, and, or (XLA's GPU tests write
  // add(b, a)); compare, maximum and minimum (signed zeros) must read (p0, p1).
  const bool in_order = root->operand(0) == p0 && root->operand(1) == p1;
  const bool swapped = root->operand(0) == p1 && root->operand(1) == p0;
  if (!in_order && !swapped) return;
  if (!p0->shape().IsArray() || p0->shape().rank() != 0) return;
  if (root->opcode() == HloOpcode::kCompare) {
    if (!in_order) return;
    cc.fast = CalledComputation::Fast::kCompare;
    cc.direction = root->comparison_direction();
    cc.total_order = root->comparison_type() == ComparisonType::kTotalOrder;
    return;
  }
  if (c.num_parameters() != 2 || root->shape().element_type() != p0->shape().element_type()) return;
  const HloOpcode op = root->opcode();
  if (swapped && op != HloOpcode::kAdd && op != HloOpcode::kMultiply && op != HloOpcode::kAnd &&
      op != HloOpcode::kOr) {
    return;
  }
  switch (op) {
    case HloOpcode::kAdd:
      cc.fast = CalledComputation::Fast::kAdd;
      break;
    case HloOpcode::kMultiply:
      cc.fast = CalledComputation::Fast::kMultiply;
      break;
    case HloOpcode::kMaximum:
      cc.fast = CalledComputation::Fast::kMaximum;
      break;
    case HloOpcode::kMinimum:
      cc.fast = CalledComputation::Fast::kMinimum;
      break;
    case HloOpcode::kAnd:
      cc.fast = CalledComputation::Fast::kAnd;
      break;
    case HloOpcode::kOr:
      cc.fast = CalledComputation::Fast::kOr;
      break;
    default:
      break;
  }
}

Status CheckArgument(const Literal& arg, const HloInstruction& param) {
  if (!arg.shape().Compatible(param.shape())) {
    return InvalidArgument(fmt::format("argument for parameter {} ('{}') has shape {}, expected {}",
                                       param.parameter_number(), param.name(),
                                       arg.shape().ToString(false), param.shape().ToString(false)));
  }
  return OkStatus();
}

}  // namespace

Status EvaluatorImpl::Annotate(const Status& st, const HloInstruction& inst) const {
  if (st.ok()) return st;
  const SourceLocation loc = inst.location();
  const std::string& file = module_.source_name();
  const std::string where =
      loc.line > 0 ? LocationPrefix(file.empty() ? "<string>" : file, loc) : std::string();
  return Status(st.code(), fmt::format("{}in '{}': {}", where, inst.name(), st.message()));
}

const CalledComputation& EvaluatorImpl::Called(const HloComputation* c) {
  auto it = called_.find(c);
  if (it != called_.end()) return *it->second;
  auto cc = std::make_unique<CalledComputation>();
  Recognize(*c, *cc);
  cc->fn = [this, c](const std::vector<Literal>& args) -> StatusOr<Literal> {
    std::vector<DeviceValues> params;
    for (const Literal& a : args) params.push_back({a});
    ++applied_depth_;
    StatusOr<DeviceValues> r = Run(*c, {0}, std::move(params));
    --applied_depth_;
    if (!r.ok()) return r.status();
    return std::move(r.value()[0]);
  };
  return *called_.emplace(c, std::move(cc)).first->second;
}

StatusOr<EvaluatorImpl::DeviceValues> EvaluatorImpl::Run(const HloComputation& comp,
                                                         const std::vector<int64_t>& devices,
                                                         std::vector<DeviceValues> params) {
  if (depth_ >= kMaxCallDepth) {
    return ResourceExhausted(
        fmt::format("computation '{}': calls nested deeper than {}", comp.name(), kMaxCallDepth));
  }
  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& depth) : d(depth) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth_);
  if (static_cast<int64_t>(params.size()) != comp.num_parameters()) {
    return InvalidArgument(fmt::format("computation '{}' takes {} parameter(s), got {}",
                                       comp.name(), comp.num_parameters(), params.size()));
  }
  const HloInstruction* root = comp.root_instruction();
  if (root == nullptr)
    return InvalidArgument(fmt::format("computation '{}' has no root", comp.name()));

  // Reachability from the root and remaining-use counts (for releasing values early).
  std::unordered_map<const HloInstruction*, int64_t> uses;
  {
    std::vector<const HloInstruction*> stack{root};
    uses[root] = 1;  // the root is never released
    while (!stack.empty()) {
      const HloInstruction* i = stack.back();
      stack.pop_back();
      for (const HloInstruction* op : i->operands()) {
        auto [it, inserted] = uses.emplace(op, 0);
        ++it->second;
        if (inserted) stack.push_back(op);
      }
    }
  }
  std::unordered_map<const HloInstruction*, DeviceValues> values;
  for (const auto& owned : comp.instructions()) {
    const HloInstruction& inst = *owned;
    if (!uses.count(&inst)) continue;
    if (inst.opcode() == HloOpcode::kParameter) {
      const int64_t n = inst.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(params.size())) {
        return Annotate(InvalidArgument("parameter number out of range"), inst);
      }
      values[&inst] = std::move(params[static_cast<size_t>(n)]);
      continue;
    }
    std::vector<const DeviceValues*> ops;
    for (const HloInstruction* op : inst.operands()) {
      auto it = values.find(op);
      if (it == values.end()) {
        return Annotate(Internal(fmt::format("operand '{}' has no value", op->name())), inst);
      }
      ops.push_back(&it->second);
    }
    const bool timed = options_.on_instruction && applied_depth_ == 0;
    const auto t0 =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    StatusOr<DeviceValues> r = EvalInstruction(inst, devices, ops);
    if (!r.ok()) return Annotate(r.status(), inst);
    if (timed) {
      options_.on_instruction(
          inst, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    values[&inst] = std::move(r).value();
    for (const HloInstruction* op : inst.operands()) {
      if (--uses[op] == 0) values.erase(op);
    }
  }
  auto it = values.find(root);
  if (it == values.end()) return Internal("root was not evaluated");
  return std::move(it->second);
}

StatusOr<EvaluatorImpl::DeviceValues> EvaluatorImpl::EvalInstruction(
    const HloInstruction& inst, const std::vector<int64_t>& devices,
    const std::vector<const DeviceValues*>& ops) {
  const HloOpcode op = inst.opcode();
  if (IsCollectiveOp(op)) return EvalCollective(inst, devices, ops);
  auto params_from_operands = [&]() {
    std::vector<DeviceValues> params;
    for (const DeviceValues* v : ops) params.push_back(*v);
    return params;
  };
  switch (op) {
    case HloOpcode::kWhile:
      if (ops.size() != 1) return InvalidArgument("while takes one operand");
      return EvalWhile(inst, devices, *ops[0]);
    case HloOpcode::kConditional:
      return EvalConditional(inst, devices, ops);
    case HloOpcode::kCall:
    case HloOpcode::kFusion: {
      // call: `to_apply=` (XLA's spelling) or `calls=`; fusion: `calls=`.
      const HloComputation* c =
          inst.called_computation() ? inst.called_computation() : inst.to_apply();
      if (c == nullptr) return InvalidArgument("needs exactly one called computation");
      return Run(*c, devices, params_from_operands());
    }
    case HloOpcode::kAsyncStart: {
      const HloComputation* c = inst.called_computation();
      if (c == nullptr) return InvalidArgument("async-start needs calls=");
      // A collective wrapped in an async computation still needs the other devices: Run is
      // lockstep.
      TPUSIM_ASSIGN_OR_RETURN(DeviceValues r, Run(*c, devices, params_from_operands()));
      DeviceValues out;
      for (size_t k = 0; k < devices.size(); ++k) {
        std::vector<Literal> operand_tuple;
        for (const DeviceValues* v : ops) operand_tuple.push_back((*v)[k]);
        std::vector<Literal> elems{Literal::MakeTuple(std::move(operand_tuple)), std::move(r[k])};
        if (inst.shape().IsTuple()) {
          for (int64_t e = 2; e < inst.shape().tuple_shapes_size(); ++e) {
            TPUSIM_ASSIGN_OR_RETURN(Literal z, Literal::Create(inst.shape().tuple_shapes(e)));
            elems.push_back(std::move(z));
          }
        }
        out.push_back(Literal::MakeTuple(std::move(elems)));
      }
      return out;
    }
    case HloOpcode::kAsyncUpdate:
      return *ops[0];
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kAllReduceDone: {
      DeviceValues out;
      for (const Literal& v : *ops[0]) {
        bool unwrap = v.IsTuple() && v.tuple_size() >= 2 && op != HloOpcode::kAllReduceDone;
        out.push_back(unwrap ? v.element(1) : v);
      }
      return out;
    }
    case HloOpcode::kRngGetAndUpdateState: {
      TPUSIM_ASSIGN_OR_RETURN(Literal state, TakeRngState(inst));
      return DeviceValues(devices.size(), state);
    }
    default:
      break;
  }
  // Purely local instructions: evaluate per device.
  DeviceValues out;
  out.reserve(devices.size());
  LocalContext ctx;
  std::optional<Literal> rng_state;
  if (op == HloOpcode::kRng) {  // one draw of the module's state, the same on every device
    TPUSIM_ASSIGN_OR_RETURN(rng_state, TakeRngState(inst));
    ctx.rng_state = &*rng_state;
  }
  ctx.options = &options_;
  ctx.kernel_options = &kopt_;
  ctx.called = [this](const HloComputation* c) -> const CalledComputation& { return Called(c); };
  for (size_t k = 0; k < devices.size(); ++k) {
    std::vector<const Literal*> args;
    for (const DeviceValues* v : ops) args.push_back(&(*v)[k]);
    ctx.replica_id = devices[k] / grid_.partitions;
    ctx.partition_id = devices[k] % grid_.partitions;
    TPUSIM_ASSIGN_OR_RETURN(Literal r, EvaluateLocalInstruction(inst, args, ctx));
    out.push_back(std::move(r));
  }
  return out;
}

StatusOr<EvaluatorImpl::DeviceValues> EvaluatorImpl::EvalWhile(const HloInstruction& inst,
                                                               const std::vector<int64_t>& devices,
                                                               const DeviceValues& init) {
  const HloComputation* cond = inst.while_condition();
  const HloComputation* body = inst.while_body();
  if (cond == nullptr || body == nullptr)
    return InvalidArgument("while needs condition= and body=");
  // A count known at compile time past the bound is refused before the first trip, as the
  // compiler refuses it (one rule: hlo::kMaxWhileTrips).
  auto [known, first] = known_too_long_.emplace(&inst, false);
  if (first) {
    const TripCount t = KnownTripCount(inst);
    known->second = t.over_limit || (t.trips && *t.trips > options_.max_while_iterations);
  }
  if (known->second) {
    return ResourceExhausted(TooManyTripsReason(options_.max_while_iterations));
  }
  DeviceValues state = init;
  for (int64_t iter = 0;; ++iter) {
    TPUSIM_ASSIGN_OR_RETURN(DeviceValues c, Run(*cond, devices, {state}));
    int trues = 0;
    for (const Literal& v : c) {
      if (!v.IsArray() || v.element_type() != PrimitiveType::kPred || v.element_count() != 1) {
        return InvalidArgument("while condition must return pred[]");
      }
      trues += v.data<bool>()[0] ? 1 : 0;
    }
    if (trues == 0) {
      options_.RecordLoopTrips(inst.name(), iter);
      return state;
    }
    if (trues != static_cast<int>(c.size())) {
      return Unimplemented(
          fmt::format("while loop: devices disagree on the condition in iteration {} "
                      "(divergent loops are not evaluated in lockstep)",
                      iter));
    }
    if (iter >= options_.max_while_iterations) {
      return ResourceExhausted(TooManyTripsReason(options_.max_while_iterations));
    }
    TPUSIM_ASSIGN_OR_RETURN(state, Run(*body, devices, {std::move(state)}));
  }
}

StatusOr<EvaluatorImpl::DeviceValues> EvaluatorImpl::EvalConditional(
    const HloInstruction& inst, const std::vector<int64_t>& devices,
    const std::vector<const DeviceValues*>& ops) {
  const auto& branches = inst.branch_computations();
  if (branches.empty() || ops.size() != branches.size() + 1) {
    return InvalidArgument("conditional needs one operand per branch plus the selector");
  }
  const int64_t nb = static_cast<int64_t>(branches.size());
  std::vector<std::vector<size_t>> members(branches.size());
  for (size_t k = 0; k < devices.size(); ++k) {
    const Literal& sel = (*ops[0])[k];
    int64_t b;
    if (sel.element_type() == PrimitiveType::kPred && sel.element_count() == 1) {
      b = sel.data<bool>()[0] ? 0 : 1;  // {true_computation, false_computation}
    } else if (IsInteger(sel.element_type()) && sel.element_count() == 1) {
      b = sel.GetAsInt64(0);
      if (b < 0 || b >= nb) b = nb - 1;  // XLA: an out-of-range index runs the last branch
    } else {
      return InvalidArgument("conditional selector must be pred[] or s32[]");
    }
    if (b >= nb) return InvalidArgument("pred conditional needs two branches");
    members[static_cast<size_t>(b)].push_back(k);
  }
  DeviceValues out(devices.size());
  for (size_t b = 0; b < branches.size(); ++b) {
    if (members[b].empty()) continue;
    std::vector<int64_t> sub;
    DeviceValues arg;
    for (size_t k : members[b]) {
      sub.push_back(devices[k]);
      arg.push_back((*ops[b + 1])[k]);
    }
    TPUSIM_ASSIGN_OR_RETURN(DeviceValues r, Run(*branches[b], sub, {std::move(arg)}));
    for (size_t i = 0; i < members[b].size(); ++i) out[members[b][i]] = std::move(r[i]);
  }
  return out;
}

StatusOr<EvaluatorImpl::DeviceValues> EvaluatorImpl::EvalCollective(
    const HloInstruction& inst, const std::vector<int64_t>& devices,
    const std::vector<const DeviceValues*>& ops) {
  const HloOpcode op = inst.opcode();
  std::vector<std::vector<const Literal*>> operands(devices.size());
  for (size_t k = 0; k < devices.size(); ++k) {
    for (const DeviceValues* v : ops) operands[k].push_back(&(*v)[k]);
  }
  const bool wrapped =
      (op == HloOpcode::kAllGatherStart || op == HloOpcode::kCollectivePermuteStart) &&
      inst.shape().IsTuple() && inst.shape().tuple_shapes_size() >= 2;
  const Shape& result_shape = wrapped ? inst.shape().tuple_shapes(1) : inst.shape();
  const CalledComputation* reducer = inst.to_apply() ? &Called(inst.to_apply()) : nullptr;
  TPUSIM_ASSIGN_OR_RETURN(DeviceValues r, EvaluateCollective(inst, grid_, devices, operands,
                                                             reducer, result_shape, kopt_));
  if (!wrapped) return r;
  DeviceValues out;
  for (size_t k = 0; k < devices.size(); ++k) {
    std::vector<Literal> elems;
    if (operands[k].size() == 1) {
      elems.push_back(*operands[k][0]);
    } else {
      std::vector<Literal> t;
      for (const Literal* l : operands[k]) t.push_back(*l);
      elems.push_back(Literal::MakeTuple(std::move(t)));
    }
    elems.push_back(std::move(r[k]));
    for (int64_t e = 2; e < inst.shape().tuple_shapes_size(); ++e) {
      TPUSIM_ASSIGN_OR_RETURN(Literal z, Literal::Create(inst.shape().tuple_shapes(e)));
      elems.push_back(std::move(z));
    }
    out.push_back(Literal::MakeTuple(std::move(elems)));
  }
  return out;
}

Evaluator::Evaluator(EvaluatorOptions options) : options_(options) {}
Evaluator::~Evaluator() = default;

StatusOr<Literal> Evaluator::Evaluate(const HloModule& module, const std::vector<Literal>& args) {
  TPUSIM_ASSIGN_OR_RETURN(std::vector<Literal> r, EvaluateReplicated(module, 1, 1, {args}));
  return std::move(r[0]);
}

StatusOr<std::vector<Literal>> Evaluator::EvaluateReplicated(
    const HloModule& module, int64_t num_replicas, int64_t num_partitions,
    const std::vector<std::vector<Literal>>& args) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return InvalidArgument("module has no entry computation");
  if (num_replicas < 1 || num_partitions < 1 || num_replicas * num_partitions > 4096) {
    return InvalidArgument(fmt::format("bad device grid: {} replica(s) x {} partition(s)",
                                       num_replicas, num_partitions));
  }
  DeviceGrid grid{num_replicas, num_partitions};
  if (static_cast<int64_t>(args.size()) != grid.size()) {
    return InvalidArgument(
        fmt::format("{} argument list(s) for {} device(s)", args.size(), grid.size()));
  }
  std::vector<std::vector<Literal>> params(static_cast<size_t>(entry->num_parameters()));
  for (int64_t d = 0; d < grid.size(); ++d) {
    const auto& a = args[static_cast<size_t>(d)];
    if (static_cast<int64_t>(a.size()) != entry->num_parameters()) {
      return InvalidArgument(fmt::format("device {}: {} argument(s) for {} ENTRY parameter(s)", d,
                                         a.size(), entry->num_parameters()));
    }
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      TPUSIM_RETURN_IF_ERROR(
          CheckArgument(a[static_cast<size_t>(i)], *entry->parameter_instruction(i)));
      params[static_cast<size_t>(i)].push_back(a[static_cast<size_t>(i)]);
    }
  }
  std::vector<int64_t> devices;
  for (int64_t d = 0; d < grid.size(); ++d) devices.push_back(d);
  EvaluatorImpl impl(module, options_, grid);
  return impl.Run(*entry, devices, std::move(params));
}

StatusOr<std::vector<Literal>> Evaluator::MakeRandomArguments(const HloModule& module,
                                                              uint64_t seed, int64_t device,
                                                              int64_t max_bytes) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return InvalidArgument("module has no entry computation");
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* p = entry->parameter_instruction(i);
    StatusOr<Literal> lit = Literal::Create(p->shape(), max_bytes);
    if (!lit.ok()) {
      return Status(lit.status().code(),
                    fmt::format("parameter {} ('{}'): {}", i, p->name(), lit.status().message()));
    }
    std::string salt =
        device == 0 ? fmt::format("param_{}", i) : fmt::format("param_{}/device_{}", i, device);
    FillRandom(*lit, seed, salt);
    args.push_back(std::move(lit).value());
  }
  return args;
}

ModuleFootprint ComputeFootprint(const HloModule& module) {
  ModuleFootprint f;
  if (const HloComputation* entry = module.entry_computation()) {
    for (const HloInstruction* p : entry->parameter_instructions()) {
      // Saturating: sizes near 2^63 must not wrap into a small "fits" figure (issue 8).
      if (p && __builtin_add_overflow(f.parameter_bytes, p->shape().ByteSize(), &f.parameter_bytes))
        f.parameter_bytes = std::numeric_limits<int64_t>::max();
    }
  }
  for (const auto& c : module.computations()) {
    for (const auto& i : c->instructions()) {
      int64_t b = i->shape().ByteSize();
      if (b > f.largest_value_bytes) {
        f.largest_value_bytes = b;
        f.largest_value_name = i->name();
      }
    }
  }
  return f;
}

int64_t EstimateCheckBytes(const HloModule& module, int64_t devices) {
  const ModuleFootprint f = ComputeFootprint(module);
  int64_t bytes = 0;
  if (__builtin_add_overflow(f.largest_value_bytes, f.largest_value_bytes, &bytes) ||
      __builtin_add_overflow(bytes, f.parameter_bytes, &bytes) ||
      __builtin_mul_overflow(bytes, devices, &bytes)) {
    return std::numeric_limits<int64_t>::max();
  }
  return bytes;
}

}  // namespace tpusim::hlo
