// PlanHbm and the located error helpers (lowerer.h).
#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>
#include <vector>

#include "common/diagnostic.h"
#include "compiler/lower/constant_data.h"
#include "compiler/lower/device_types.h"
#include "compiler/lower/lowerer.h"
#include "compiler/lower/memory_space_assignment.h"
#include "compiler/passes/layout_assignment.h"
#include "compiler/passes/loop_region.h"
#include "compiler/passes/data_formatting.h"
#include "hlo/computation.h"

namespace tpusim::compiler {
namespace {

std::string Where(const hlo::HloInstruction& inst) {
  const hlo::HloComputation* comp = inst.parent();
  const hlo::HloModule* module = comp != nullptr ? comp->parent() : nullptr;
  const std::string file = module != nullptr ? module->source_name() : "";
  return FormatDiagnostic(
      file, "", inst.location(),
      fmt::format("%{} ({})", inst.name(), hlo::HloOpcodeString(inst.opcode())));
}

bool IsIdentityCustomCall(const hlo::HloInstruction& inst) {
  return inst.opcode() == hlo::HloOpcode::kCustomCall &&
         inst.custom_call_target() == "AwsNeuronTransferWithStaticRing" &&
         inst.operand_count() == 1 && inst.operand(0)->shape().Compatible(inst.shape());
}

}  // namespace

Status Unsupported(const hlo::HloInstruction& inst, const std::string& what) {
  return Unimplemented(Where(inst) + ": cannot lower: " + what);
}

Status DoesNotFit(const hlo::HloInstruction& inst, const std::string& what) {
  return ResourceExhausted(Where(inst) + ": does not fit: " + what);
}

// Whether every user of a virtual broadcast or iota `inst` reads it as an elementwise VPU operand
// of its own dimensions (clamp only a scalar one), so no reader needs it in HBM.
// Whether `inst` is a member of an elementwise group whose value only members of that group read.
static bool FusionInternal(const hlo::HloInstruction& inst, const ElementwiseGroups& groups) {
  auto g = groups.group_of.find(&inst);
  if (g == groups.group_of.end() || inst.users().empty() || inst.parent() == nullptr ||
      inst.parent()->root_instruction() == &inst) {
    return false;
  }
  for (const hlo::HloInstruction* u : inst.users()) {
    auto ug = groups.group_of.find(u);
    if (ug == groups.group_of.end() || ug->second != g->second) return false;
  }
  return true;
}

static bool VirtualUsers(const hlo::HloInstruction& inst,
                         isa::Broadcast kind = isa::Broadcast::kRow) {
  using isa::Broadcast;
  const hlo::Shape& out = inst.shape();
  for (const hlo::HloInstruction* user : inst.users()) {
    // vpu.binary (every binary elementwise op), vpu.compare and select (expanded on the VPU,
    // Lowerer::EmitVpuOp) read a broadcast operand; clamp only a scalar one.
    const hlo::HloOpcode op = user->opcode();
    const bool reads = VpuBinaryOp(op).has_value() || op == hlo::HloOpcode::kCompare ||
                       op == hlo::HloOpcode::kSelect ||
                       (op == hlo::HloOpcode::kClamp && kind == Broadcast::kScalar);
    if (!reads) return false;
    if (user->shape().dimensions() != out.dimensions()) return false;
  }
  return true;
}

isa::Broadcast VirtualBroadcastKind(const hlo::HloInstruction& inst) {
  using isa::Broadcast;
  const bool iota = inst.opcode() == hlo::HloOpcode::kIota;
  if ((inst.opcode() != hlo::HloOpcode::kBroadcast && !iota) || !inst.shape().IsArray() ||
      inst.shape().ElementCount() <= 1 || inst.users().empty() || inst.parent() == nullptr ||
      inst.parent()->root_instruction() == &inst) {
    return Broadcast::kNone;
  }
  const hlo::Shape& out = inst.shape();
  const int64_t rank = out.rank();
  // Rows/columns small enough that one of them always fits VMEM next to the other operands:
  // 2^18 elements (1 MiB of f32 per operand row; a vocabulary-sized row of 32316 qualifies).
  constexpr int64_t kMaxVector = int64_t{1} << 18;
  Broadcast kind = Broadcast::kNone;
  // An iota along the last dimension is the row [0, 1, .., cols - 1] repeated for every row: its
  // buffer holds that one row (Lowerer::LowerIota), which its readers load like a bias.
  if (iota) {
    return rank >= 2 && inst.iota_dimension() == rank - 1 &&
                   out.dimensions(rank - 1) <= kMaxVector && VirtualUsers(inst)
               ? Broadcast::kRow
               : Broadcast::kNone;
  }
  const hlo::Shape& in = inst.operand(0)->shape();
  std::vector<int64_t> leading(static_cast<size_t>(std::max<int64_t>(rank - 1, 0)));
  for (size_t i = 0; i < leading.size(); ++i) leading[i] = static_cast<int64_t>(i);
  if (in.ElementCount() == 1) {
    kind = Broadcast::kScalar;
  } else if (rank >= 2 && in.rank() == 1 && inst.dimensions() == std::vector<int64_t>{rank - 1} &&
             in.dimensions(0) <= kMaxVector) {
    kind = Broadcast::kRow;  // [cols] repeated for every row (a bias)
  } else if (rank >= 2 && inst.dimensions() == leading && out.dimensions(rank - 1) <= kMaxVector) {
    kind = Broadcast::kCol;  // one value per row (a per-row max or sum)
  }
  if (kind == Broadcast::kNone || !VirtualUsers(inst, kind)) return Broadcast::kNone;
  return kind;
}

bool IsVirtualBroadcast(const hlo::HloInstruction& inst) {
  return VirtualBroadcastKind(inst) != isa::Broadcast::kNone;
}

bool IsVirtualPad(const hlo::HloInstruction& inst) {
  if (inst.opcode() != hlo::HloOpcode::kPad || !inst.shape().IsArray() ||
      inst.shape().rank() != 2 || !inst.operand(0)->shape().IsArray() ||
      IsVirtualBroadcast(*inst.operand(0)) || inst.operand(1)->shape().ElementCount() != 1 ||
      inst.users().empty() || inst.parent() == nullptr ||
      inst.parent()->root_instruction() == &inst) {
    return false;
  }
  bool pads = false;
  for (const auto& p : inst.padding_config().dimensions) {
    if (p.interior_padding != 0 || p.edge_padding_low < 0 || p.edge_padding_high < 0) return false;
    pads = pads || p.edge_padding_low > 0 || p.edge_padding_high > 0;
  }
  if (!pads) return false;  // zero widths: an alias
  return ReadOnlyByVpu(inst);
}

bool ReadOnlyByVpu(const hlo::HloInstruction& v) {
  if (v.users().empty() || v.parent() == nullptr || v.parent()->root_instruction() == &v) {
    return false;
  }
  for (const hlo::HloInstruction* u : v.users()) {
    if (!u->shape().IsArray() || u->shape().dimensions() != v.shape().dimensions()) return false;
    if (HasVpuFunction(u->opcode())) continue;
    const bool same_dims_alias =
        u->operand(0) == &v && !IsVirtualBroadcast(*u) && !IsVirtualPad(*u) && IsAliasOfOperand(*u);
    if (!same_dims_alias || !ReadOnlyByVpu(*u)) return false;
  }
  return true;
}

const hlo::HloInstruction* VirtualPadOf(const hlo::HloInstruction* v) {
  while (!IsVirtualPad(*v)) {
    if (v->operand_count() == 0 || !IsAliasOfOperand(*v) || IsVirtualBroadcast(*v) ||
        v->shape().dimensions() != v->operand(0)->shape().dimensions()) {
      return nullptr;
    }
    v = v->operand(0);
  }
  return v;
}

int64_t ContiguousSliceOffset(const hlo::HloInstruction& inst) {
  if (inst.opcode() != hlo::HloOpcode::kSlice || !inst.shape().IsArray() ||
      !inst.operand(0)->shape().IsArray()) {
    return -1;
  }
  const hlo::Shape& in = inst.operand(0)->shape();
  const int64_t rank = in.rank();
  if (static_cast<int64_t>(inst.slice_starts().size()) != rank) return -1;
  auto dt = DeviceType(in.element_type());
  if (!dt) return -1;
  // Row-major contiguity: every dimension after the last partial one is whole (by definition)
  // and every dimension before it has one index.
  int64_t last_partial = -1;
  for (int64_t d = 0; d < rank; ++d) {
    const size_t u = static_cast<size_t>(d);
    if (inst.slice_strides()[u] != 1) return -1;
    if (inst.slice_limits()[u] - inst.slice_starts()[u] < in.dimensions(d)) last_partial = d;
  }
  int64_t offset = 0, stride = isa::DTypeBytes(*dt);
  for (int64_t d = rank - 1; d >= 0; --d) {
    const size_t u = static_cast<size_t>(d);
    if (d < last_partial && inst.slice_limits()[u] - inst.slice_starts()[u] != 1) return -1;
    offset += inst.slice_starts()[u] * stride;
    stride *= in.dimensions(d);
  }
  return offset;
}

bool HasNoCode(const hlo::HloInstruction& inst) {
  switch (inst.opcode()) {
    case hlo::HloOpcode::kParameter:
    case hlo::HloOpcode::kConstant:
    case hlo::HloOpcode::kTuple:
    case hlo::HloOpcode::kGetTupleElement:
    case hlo::HloOpcode::kAfterAll:
      return true;
    default:
      return IsAliasOfOperand(inst);
  }
}

bool IsAliasOfOperand(const hlo::HloInstruction& inst) {
  if (inst.opcode() == hlo::HloOpcode::kIota) return false;  // a virtual one owns its row
  if (IsVirtualBroadcast(inst) || IsVirtualPad(inst)) return true;
  if (ContiguousSliceOffset(inst) >= 0) return true;
  switch (inst.opcode()) {
    case hlo::HloOpcode::kBroadcast: {  // same shape, dimensions={0,1,...}: a copy (JAX emits
                                        // these)
      const hlo::Shape& in = inst.operand(0)->shape();
      if (!in.IsArray() || !inst.shape().IsArray() ||
          in.dimensions() != inst.shape().dimensions()) {
        return false;
      }
      for (size_t i = 0; i < inst.dimensions().size(); ++i) {
        if (inst.dimensions()[i] != static_cast<int64_t>(i)) return false;
      }
      return true;
    }
    case hlo::HloOpcode::kPad: {  // no padding anywhere (jnp.pad of zero widths): a copy
      for (const auto& p : inst.padding_config().dimensions) {
        if (p.edge_padding_low != 0 || p.edge_padding_high != 0 || p.interior_padding != 0) {
          return false;
        }
      }
      return inst.shape().IsArray() && inst.operand(0)->shape().IsArray();
    }
    case hlo::HloOpcode::kReverse: {  // no reversed dimension longer than 1 (XLA's algebraic
                                      // simplifier replaces it by its operand)
      for (int64_t d : inst.dimensions()) {
        if (inst.shape().dimensions(d) > 1) return false;
      }
      return inst.shape().IsArray();
    }
    case hlo::HloOpcode::kBitcastConvert: {  // same-width types: the same bits read as another type
      const hlo::Shape& in = inst.operand(0)->shape();
      const auto from = DeviceType(in.element_type());
      const auto to = DeviceType(inst.shape().element_type());
      return in.IsArray() && inst.shape().IsArray() && from && to &&
             isa::DTypeBytes(*from) == isa::DTypeBytes(*to) &&
             hlo::BitWidth(in.element_type()) == hlo::BitWidth(inst.shape().element_type());
    }
    case hlo::HloOpcode::kReal:  // of a real value: the value (complex values have no device type)
      return inst.shape().IsArray() && !hlo::IsComplex(inst.operand(0)->shape().element_type());
    case hlo::HloOpcode::kCopy:
    case hlo::HloOpcode::kReshape:  // unless it moves data (data_formatting.h, LowerCopy)
      return !MovesData(inst);
    case hlo::HloOpcode::kBitcast:
    case hlo::HloOpcode::kOptimizationBarrier:
    case hlo::HloOpcode::kAddDependency:
    case hlo::HloOpcode::kDomain:  // a sharding domain's boundary: no data movement
      return true;
    case hlo::HloOpcode::kCustomCall:
      return IsIdentityCustomCall(inst);
    default:
      return false;
  }
}

namespace {

// First-fit allocator over [0, inf) with coalescing free blocks (64-byte granules).
class FirstFit {
 public:
  int64_t Allocate(int64_t bytes) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= bytes) {
        const int64_t at = it->first, left = it->second - bytes;
        free_.erase(it);
        if (left > 0) free_[at + bytes] = left;
        return at;
      }
    }
    const int64_t at = top_;
    top_ += bytes;
    return at;
  }
  void Free(int64_t at, int64_t bytes) {
    auto [it, ok] = free_.emplace(at, bytes);
    TPUSIM_CHECK(ok) << "double free at " << at;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t top() const { return top_; }

 private:
  std::map<int64_t, int64_t> free_;
  int64_t top_ = 0;
};

}  // namespace

namespace {

// True if the scatter / dynamic-update-slice `inst` may write its result into operand 0's buffer
// (XLA updates a donated KV cache in place: input_output_alias): operand 0 is one array whose
// buffer is not a constant's, and no instruction reads the old value after `inst` nor returns it.
// The readers are found through the instructions that share the buffer (reshape, bitcast, copy,
// identity custom-calls, tuple, get-tuple-element); `use_at` is a reader's position.
bool UpdatesInPlace(const hlo::HloInstruction& inst, const hlo::HloInstruction* root,
                    const std::function<int64_t(const hlo::HloInstruction*)>& use_at,
                    const LoopRegions& regions) {
  const bool scatter = inst.opcode() == hlo::HloOpcode::kScatter && inst.operand_count() == 3;
  const bool dus = inst.opcode() == hlo::HloOpcode::kDynamicUpdateSlice;
  if ((!scatter && !dus) || !inst.shape().IsArray()) return false;
  const hlo::HloInstruction* owner = inst.operand(0);
  while (IsAliasOfOperand(*owner)) owner = owner->operand(0);
  if (owner->opcode() == hlo::HloOpcode::kConstant || !owner->shape().IsArray() ||
      owner->opcode() == hlo::HloOpcode::kGetTupleElement) {
    return false;
  }
  // A value from outside the loop region is read again by the next trip: never update it in place.
  if (regions.InnermostOf(owner) != regions.InnermostOf(&inst)) return false;
  const int64_t at = use_at(&inst);
  std::vector<const hlo::HloInstruction*> work{owner};
  std::set<const hlo::HloInstruction*> seen{owner};
  while (!work.empty()) {
    const hlo::HloInstruction* v = work.back();
    work.pop_back();
    if (v == root) return false;  // the old value is (part of) the result
    for (const hlo::HloInstruction* u : v->users()) {
      if (u == &inst || !seen.insert(u).second) continue;
      const bool shares = u->opcode() == hlo::HloOpcode::kTuple ||
                          u->opcode() == hlo::HloOpcode::kGetTupleElement ||
                          (IsAliasOfOperand(*u) && u->operand(0) == v);
      if (shares) {
        work.push_back(u);
      } else if (use_at(u) > at) {
        return false;  // read after the update
      }
    }
  }
  return true;
}

// A loop body's result that may be computed straight into its state buffer (loop_region.h), so
// loop_end copies nothing: instruction -> (loop_begin, leaf index of the state). For state element
// i whose result's buffer is owned by an instruction X of the same region (following aliases and
// in-place updates back to the owner): every reader of the old element i runs before X, or is an
// elementwise op of X's fused group reading it at X's shape (chunk c is loaded before chunk c is
// stored). Conservative: a state with users other than get-tuple-elements and the loop_end gets no
// direct writes.
std::map<const hlo::HloInstruction*, std::pair<const hlo::HloInstruction*, size_t>> StateWriters(
    const LoopRegions& regions, const ElementwiseGroups& groups,
    const std::function<bool(const hlo::HloInstruction&)>& in_place,
    const std::function<int64_t(const hlo::HloInstruction*)>& def_at,
    const std::function<int64_t(const hlo::HloInstruction*)>& use_at) {
  std::map<const hlo::HloInstruction*, std::pair<const hlo::HloInstruction*, size_t>> out;
  auto group = [&](const hlo::HloInstruction* i) -> int64_t {
    auto it = groups.group_of.find(i);
    return it == groups.group_of.end() ? -1 : static_cast<int64_t>(it->second);
  };
  for (const auto& [begin, end] : regions.end_of) {
    const hlo::HloInstruction* root = end->operand(1);
    if (root->opcode() != hlo::HloOpcode::kTuple || !begin->shape().IsTuple()) continue;
    // Readers of each state element: users of get-tuple-element(begin, i), of its aliases, and of
    // get-tuple-elements of tuples it is put into. The body's root tuple reads it only where it is
    // passed on as another element (a pass-through as itself needs no copy).
    std::map<int64_t,
             std::vector<std::pair<const hlo::HloInstruction*, const hlo::HloInstruction*>>>
        readers;  // element -> (reader, the operand it reads through)
    bool ok = true;
    for (const hlo::HloInstruction* u : begin->users()) {
      if (u == end) continue;
      if (u->opcode() != hlo::HloOpcode::kGetTupleElement) {
        ok = false;
        break;
      }
      const int64_t i = u->tuple_index();
      std::vector<const hlo::HloInstruction*> work{u};
      std::set<const hlo::HloInstruction*> seen{u};
      while (!work.empty()) {
        const hlo::HloInstruction* v = work.back();
        work.pop_back();
        for (const hlo::HloInstruction* r : v->users()) {
          if (IsAliasOfOperand(*r) && r->operand(0) == v) {
            if (seen.insert(r).second) work.push_back(r);
          } else if (r == root) {
            for (int64_t j = 0; j < r->operand_count(); ++j) {
              if (r->operand(j) == v && j != i) readers[i].push_back({r, v});
            }
          } else if (r->opcode() == hlo::HloOpcode::kTuple) {
            for (const hlo::HloInstruction* g : r->users()) {
              if (g->opcode() != hlo::HloOpcode::kGetTupleElement) {
                readers[i].push_back({g, v});  // the whole tuple is read (e.g. an inner loop)
              } else if (r->operand(g->tuple_index()) == v && seen.insert(g).second) {
                work.push_back(g);
              }
            }
          } else {
            readers[i].push_back({r, v});
          }
        }
      }
    }
    if (!ok) continue;
    size_t leaf = 0;
    std::set<const hlo::HloInstruction*> claimed;
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      const size_t first = leaf;
      leaf += begin->shape().tuple_shapes(i).Leaves().size();
      const hlo::HloInstruction* x = root->operand(i);
      if (!x->shape().IsArray() || !begin->shape().tuple_shapes(i).IsArray()) continue;
      while (IsAliasOfOperand(*x) || in_place(*x)) x = x->operand(0);
      if (regions.InnermostOf(x) != begin || IsLoopBegin(*x) || IsLoopEnd(*x) ||
          x->opcode() == hlo::HloOpcode::kConstant || x->opcode() == hlo::HloOpcode::kParameter ||
          x->opcode() == hlo::HloOpcode::kGetTupleElement || !x->shape().IsArray() ||
          x->shape().dimensions() != begin->shape().tuple_shapes(i).dimensions() ||
          !claimed.insert(x).second) {
        continue;
      }
      bool safe = true;
      for (const auto& [r, via] : readers[i]) {
        if (use_at(r) < def_at(x)) continue;
        const bool same_group = r == x || (group(r) >= 0 && group(r) == group(x));
        safe = safe && same_group && HasVpuFunction(r->opcode()) &&
               via->shape().dimensions() == x->shape().dimensions();
      }
      if (safe) out[x] = {begin, first};
    }
  }
  return out;
}

// What an HBM buffer of the plan needs while its addresses are being chosen.
struct OwnedBuffer {
  int64_t bytes = 0;
  int64_t def = 0;       // instruction index that writes it
  int64_t last_use = 0;  // last instruction index that reads it
  bool pinned = false;   // parameters, constants, outputs: live for the whole program
  const hlo::HloInstruction* inst = nullptr;
  std::string what;
  bool isolated = false;  // placed before anything and never shared (PlanHbm's isolate_shared)
};

// An fft's operands are complex: name the fft, not the first complex value planned. An op that
// computes on f64 (F64ComputedOn): name it, whatever its place in the plan.
Status RejectComputationsOffDevice(const hlo::HloComputation& entry) {
  for (const auto& up : entry.instructions()) {
    if (F64ComputedOn(*up)) return Unsupported(*up, NoDeviceTypeReason(hlo::PrimitiveType::kF64));
    if (up->opcode() == hlo::HloOpcode::kFft) {
      return Unsupported(*up,
                         "fft computes on complex values (c64 / c128), which tpusim's device "
                         "does not hold; not lowered (supported: real-valued ops on f32, "
                         "bf16, f16 and the integer types; a DFT written as dots of its "
                         "real and imaginary parts runs on the MXU)");
    }
  }
  return OkStatus();
}

// The leaves of the tuple `inst` reads element tuple_index() of: a run of its operand's leaves.
std::vector<HbmBuffer> TupleElementLeaves(const hlo::HloInstruction& inst,
                                          const std::vector<HbmBuffer>& tuple) {
  const hlo::Shape& ts = inst.operand(0)->shape();
  size_t first = 0;
  for (int64_t j = 0; j < inst.tuple_index(); ++j) first += ts.tuple_shapes(j).Leaves().size();
  const size_t count = ts.tuple_shapes(inst.tuple_index()).Leaves().size();
  return {tuple.begin() + static_cast<std::ptrdiff_t>(first),
          tuple.begin() + static_cast<std::ptrdiff_t>(first + count)};
}

// The leaves of an alias of its operand (IsAliasOfOperand): the operand's, seen at the alias's
// offset, dimensions and type.
std::vector<HbmBuffer> AliasLeaves(const hlo::HloInstruction& inst,
                                   std::vector<HbmBuffer> leaves) {
  if (const int64_t off = ContiguousSliceOffset(inst); off > 0) {
    leaves[0].view_offset += static_cast<uint64_t>(off);
  }
  // A virtual broadcast keeps its 1-element source: consumers read it with bcast=scalar.
  if (inst.shape().IsArray() && leaves.size() == 1 && !IsVirtualBroadcast(inst)) {
    leaves[0].dims = inst.shape().dimensions();
  }
  if (inst.opcode() == hlo::HloOpcode::kBitcastConvert) {
    leaves[0].dtype = *DeviceType(inst.shape().element_type());
  }
  return leaves;
}

// Plans the entry computation's buffers in two passes: AssignBuffers gives every value its leaf
// buffers (ids into `owned_`) and each buffer its live range; AssignAddresses places them.
class HbmPlanner {
 public:
  HbmPlanner(const hlo::HloComputation& entry, const ElementwiseGroups& groups,
             const LoopRegions& regions, int64_t hbm_capacity, const hlo::TileRule& tiles)
      : entry_(entry),
        groups_(groups),
        regions_(regions),
        hbm_capacity_(hbm_capacity),
        tiles_(tiles),
        layouts_(AssignTpuLayouts(entry, tiles)) {
    for (const auto& up : entry.instructions()) {
      position_[up.get()] = static_cast<int64_t>(position_.size());
    }
  }

  // Pass 1: buffer ids. Every instruction that computes a value owns new leaf buffers; aliases
  // (reshape, tuple, get-tuple-element, ...) reuse their operand's. `address` holds the id for now.
  Status AssignBuffers(HbmPlan& plan);
  // Pass 2: addresses from `base`, in program order; a buffer's bytes are reused after its last
  // reader. Returns the bytes used.
  StatusOr<int64_t> AssignAddresses(HbmPlan& plan, uint64_t base) const;
  // The buffers of values that something besides this core's program reads or writes (the
  // result, and ValueSharedBeyondKernels values and their operands: parameters, constants,
  // collectives, send/recv) are placed first and never share their bytes with another value.
  void IsolateSharedValues(HbmPlan& plan);

 private:
  // Where each instruction defines its result and reads its operands (fused groups: all at once).
  int64_t DefAt(const hlo::HloInstruction* i) const;
  int64_t UseAt(const hlo::HloInstruction* i) const;
  bool InPlace(const hlo::HloInstruction& i) const {
    return UpdatesInPlace(
        i, entry_.root_instruction(),
        [this](const hlo::HloInstruction* x) { return UseAt(x); }, regions_);
  }
  // The leaf buffers of `inst`'s value: its operand's for aliases, new ones otherwise.
  StatusOr<std::vector<HbmBuffer>> LeavesOf(const hlo::HloInstruction& inst,
                                            const HbmPlan& plan);
  // New buffers for each leaf of the value `inst` computes.
  StatusOr<std::vector<HbmBuffer>> NewBuffers(const hlo::HloInstruction& inst);
  // Extends the live range of every buffer `inst` reads to `inst` (and to the loop_end of each
  // loop region around it that the buffer was defined before).
  void ExtendLiveRanges(const hlo::HloInstruction& inst, const HbmPlan& plan);

  const hlo::HloComputation& entry_;
  const ElementwiseGroups& groups_;
  const LoopRegions& regions_;
  const int64_t hbm_capacity_;
  const hlo::TileRule& tiles_;
  // The layouts of the arrays the module leaves free (passes/layout_assignment.h).
  const TpuLayouts layouts_;
  std::map<const hlo::HloInstruction*, int64_t> position_;
  std::map<const hlo::HloInstruction*, std::pair<const hlo::HloInstruction*, size_t>>
      state_writers_;
  std::vector<OwnedBuffer> owned_;
};

int64_t HbmPlanner::DefAt(const hlo::HloInstruction* i) const {
  // A dot's epilogue ops write their results while the dot runs (fusion.h, AddDotEpilogues);
  // its prologue ops read their operands and compute while it runs (AddDotPrologues).
  if (auto d = groups_.dot_of_epilogue.find(i); d != groups_.dot_of_epilogue.end()) {
    return position_.at(d->second);
  }
  if (auto d = groups_.dot_of_prologue.find(i); d != groups_.dot_of_prologue.end()) {
    return position_.at(d->second);
  }
  auto g = groups_.group_of.find(i);
  return g == groups_.group_of.end() ? position_.at(i)
                                     : position_.at(groups_.groups[g->second].front());
}

int64_t HbmPlanner::UseAt(const hlo::HloInstruction* i) const {
  if (auto d = groups_.dot_of_prologue.find(i); d != groups_.dot_of_prologue.end()) {
    return position_.at(d->second);
  }
  // An epilogue op reads its operands while the dot runs — later than its own place when it is
  // a broadcast scheduled before the dot and absorbed (fusion.h, IsEpilogueBatchBroadcast).
  if (auto d = groups_.dot_of_epilogue.find(i); d != groups_.dot_of_epilogue.end()) {
    return std::max(position_.at(i), position_.at(d->second));
  }
  auto g = groups_.group_of.find(i);
  return g == groups_.group_of.end() ? position_.at(i)
                                     : position_.at(groups_.groups[g->second].back());
}

Status HbmPlanner::AssignBuffers(HbmPlan& plan) {
  state_writers_ = StateWriters(
      regions_, groups_, [this](const hlo::HloInstruction& i) { return InPlace(i); },
      [this](const hlo::HloInstruction* i) { return DefAt(i); },
      [this](const hlo::HloInstruction* i) { return UseAt(i); });
  for (const auto& up : entry_.instructions()) {
    const hlo::HloInstruction& inst = *up;
    TPUSIM_ASSIGN_OR_RETURN(std::vector<HbmBuffer> leaves, LeavesOf(inst, plan));
    ExtendLiveRanges(inst, plan);
    plan.values[&inst] = std::move(leaves);
  }
  for (const HbmBuffer& b : plan.values.at(entry_.root_instruction())) {
    owned_[b.address].pinned = true;
  }
  return OkStatus();
}

void HbmPlanner::IsolateSharedValues(HbmPlan& plan) {
  auto isolate = [&](const hlo::HloInstruction* v) {
    for (const HbmBuffer& b : plan.values.at(v)) {
      if (b.fusion_internal) continue;
      owned_[b.address].pinned = true;
      owned_[b.address].isolated = true;
    }
  };
  for (const auto& up : entry_.instructions()) {
    const hlo::HloInstruction& inst = *up;
    if (&inst == entry_.root_instruction()) isolate(&inst);
    if (!ValueSharedBeyondKernels(inst)) continue;
    isolate(&inst);
    for (const hlo::HloInstruction* op : inst.operands()) isolate(op);
  }
}

StatusOr<std::vector<HbmBuffer>> HbmPlanner::LeavesOf(const hlo::HloInstruction& inst,
                                                      const HbmPlan& plan) {
  switch (inst.opcode()) {
    case hlo::HloOpcode::kTuple: {
      std::vector<HbmBuffer> leaves;
      for (const hlo::HloInstruction* op : inst.operands()) {
        const auto& v = plan.values.at(op);
        leaves.insert(leaves.end(), v.begin(), v.end());
      }
      return leaves;
    }
    case hlo::HloOpcode::kGetTupleElement:
      return TupleElementLeaves(inst, plan.values.at(inst.operand(0)));
    case hlo::HloOpcode::kAfterAll:
      return std::vector<HbmBuffer>{};
    case hlo::HloOpcode::kInfeed:
    case hlo::HloOpcode::kOutfeed:
    case hlo::HloOpcode::kSend:
    case hlo::HloOpcode::kSendDone:
    case hlo::HloOpcode::kRecv:
    case hlo::HloOpcode::kRecvDone:
      return Unsupported(inst,
                         "infeed, outfeed, send and recv move data between the device and the "
                         "host or another program, which tpusim does not model (supported: "
                         "values enter as ENTRY parameters and leave as its result; pass the "
                         "fed data as a parameter and return what is sent)");
    default:
      break;
  }
  if (IsLoopEnd(inst)) return plan.values.at(inst.operand(0));  // the loop state: loop_begin's
  if (auto w = state_writers_.find(&inst); w != state_writers_.end()) {
    // loop_end copies none
    return std::vector<HbmBuffer>{plan.values.at(w->second.first).at(w->second.second)};
  }
  if (InPlace(inst)) {
    std::vector<HbmBuffer> leaves = plan.values.at(inst.operand(0));
    leaves[0].dims = inst.shape().dimensions();
    return leaves;
  }
  if (IsAliasOfOperand(inst)) return AliasLeaves(inst, plan.values.at(inst.operand(0)));
  return NewBuffers(inst);
}

StatusOr<std::vector<HbmBuffer>> HbmPlanner::NewBuffers(const hlo::HloInstruction& inst) {
  std::vector<HbmBuffer> leaves;
  for (const hlo::Shape* leaf : inst.shape().Leaves()) {
    auto dt = DeviceType(leaf->element_type());
    if (!dt) {
      return Unsupported(inst, NoDeviceTypeReason(leaf->element_type()));
    }
    for (int64_t i = 0; i < leaf->rank(); ++i) {
      if (leaf->is_dynamic_dimension(i)) {
        return Unsupported(inst, "dynamic dimensions are not supported");
      }
    }
    HbmBuffer b;
    b.dtype = *dt;
    b.dims = leaf->dimensions();
    if (inst.opcode() == hlo::HloOpcode::kIota && IsVirtualBroadcast(inst)) {
      b.dims = {b.dims.back()};  // its one row (VirtualBroadcastKind)
    }
    b.address = owned_.size();
    // A value that lives only inside its fusion (read by members of its elementwise group
    // alone) never reaches HBM and takes no HBM capacity, at any logical size.
    if (FusionInternal(inst, groups_)) {
      b.fusion_internal = true;
      owned_.push_back(
          OwnedBuffer{64, DefAt(&inst), DefAt(&inst), false, &inst, leaf->ToString(false)});
      leaves.push_back(std::move(b));
      continue;
    }
    // Tiles of what the buffer stores (an iota's one row is a 1-D array of its own), in the
    // layout XLA's TPU layout assignment gives it (passes/layout_assignment.h).
    hlo::Shape stored =
        b.dims == leaf->dimensions() ? *leaf : hlo::Shape(leaf->element_type(), b.dims);
    if (auto l = layouts_.find(&inst); l != layouts_.end() && stored.rank() == inst.shape().rank()) {
      stored = InLayout(stored, l->second);
    }
    if (const std::vector<int64_t> tile = hlo::TpuTile(stored, tiles_); !tile.empty()) {
      b.tiled_bytes = hlo::TiledByteSize(stored, tile);
    }
    const int64_t footprint = std::max(b.bytes(), b.tiled_bytes);
    // One buffer larger than HBM can never fit; rejecting it here also keeps the 64-byte
    // rounding and the heap's running total far from int64 overflow (issue 8).
    if (footprint > hbm_capacity_) {
      const bool by_tiles = b.bytes() <= hbm_capacity_;
      return DoesNotFit(inst, fmt::format("HBM: a {} of {} bytes{}, over this core's share "
                                          "of chip.hbm.capacity_bytes = {}",
                                          leaf->ToString(false), by_tiles ? footprint : b.bytes(),
                                          by_tiles ? " in its TPU tiles" : "", hbm_capacity_));
    }
    const bool pinned = inst.opcode() == hlo::HloOpcode::kParameter ||
                        inst.opcode() == hlo::HloOpcode::kConstant;
    owned_.push_back(OwnedBuffer{(std::max<int64_t>(footprint, 1) + 63) / 64 * 64, DefAt(&inst),
                                 DefAt(&inst), pinned, &inst, leaf->ToString(false)});
    leaves.push_back(std::move(b));
  }
  return leaves;
}

void HbmPlanner::ExtendLiveRanges(const hlo::HloInstruction& inst, const HbmPlan& plan) {
  // A loop region runs again after its last instruction: what it reads from before it stays
  // live until its loop_end.
  const std::vector<const hlo::HloInstruction*> enclosing = regions_.Enclosing(&inst);
  // A virtual pad's readers also read its padding value.
  std::vector<const hlo::HloInstruction*> reads(inst.operands().begin(), inst.operands().end());
  for (const hlo::HloInstruction* op : inst.operands()) {
    if (const hlo::HloInstruction* pad = VirtualPadOf(op)) reads.push_back(pad->operand(1));
  }
  for (const hlo::HloInstruction* op : reads) {
    for (const HbmBuffer& b : plan.values.at(op)) {
      OwnedBuffer& o = owned_[b.address];
      o.last_use = std::max(o.last_use, UseAt(&inst));
      for (const hlo::HloInstruction* r : enclosing) {
        if (position_.at(r) > o.def) {
          o.last_use = std::max(o.last_use, position_.at(regions_.end_of.at(r)));
        }
      }
    }
  }
}

StatusOr<int64_t> HbmPlanner::AssignAddresses(HbmPlan& plan, uint64_t base) const {
  const size_t steps = position_.size() + 1;
  std::vector<std::vector<size_t>> dies(steps);
  std::vector<std::vector<size_t>> born(steps);
  // Parameters and constants hold their values from the start (the driver and the DataSegments
  // write them before the program runs), so they are placed before anything else.
  for (size_t id = 0; id < owned_.size(); ++id) {
    const hlo::HloOpcode op = owned_[id].inst->opcode();
    const bool initial = op == hlo::HloOpcode::kParameter || op == hlo::HloOpcode::kConstant ||
                         owned_[id].isolated;
    born[initial ? 0 : static_cast<size_t>(owned_[id].def)].push_back(id);
    if (!owned_[id].pinned) dies[static_cast<size_t>(owned_[id].last_use)].push_back(id);
  }
  std::vector<int64_t> address(owned_.size(), 0);
  FirstFit heap;
  for (size_t i = 0; i < born.size(); ++i) {
    for (size_t id : born[i]) {
      address[id] = heap.Allocate(owned_[id].bytes);
      if (heap.top() > hbm_capacity_) {
        return DoesNotFit(*owned_[id].inst,
                          fmt::format("HBM: {} bytes of live buffers needed here (a {} of {} "
                                      "bytes), over this core's share of chip.hbm.capacity_bytes "
                                      "= {}",
                                      heap.top(), owned_[id].what, owned_[id].bytes,
                                      hbm_capacity_));
      }
    }
    for (size_t id : dies[i]) heap.Free(address[id], owned_[id].bytes);
  }
  for (auto& [inst, leaves] : plan.values) {
    for (HbmBuffer& b : leaves) {
      const OwnedBuffer& o = owned_[b.address];
      b.live_from = o.pinned ? 0 : o.def;
      b.live_to = o.pinned ? static_cast<int64_t>(position_.size()) : o.last_use;
      b.address = base + static_cast<uint64_t>(address[b.address]) + b.view_offset;
    }
  }
  return heap.top();
}

// The values of the entry computation's constants, at their planned addresses.
StatusOr<std::vector<isa::DataSegment>> ConstantSegments(const hlo::HloComputation& entry,
                                                         const HbmPlan& plan) {
  std::vector<isa::DataSegment> segments;
  for (const auto& up : entry.instructions()) {
    const hlo::HloInstruction& inst = *up;
    if (inst.opcode() != hlo::HloOpcode::kConstant) continue;
    if (!inst.shape().IsArray()) return Unsupported(inst, "tuple constants");
    const HbmBuffer& b = plan.values.at(&inst)[0];
    TPUSIM_ASSIGN_OR_RETURN(std::string bytes, ConstantBytes(inst, b.dtype));
    segments.push_back(isa::DataSegment{
        .space = isa::MemSpace::kHbm, .core = 0, .address = b.address, .bytes = std::move(bytes)});
  }
  return segments;
}

}  // namespace

StatusOr<HbmPlan> PlanHbm(const hlo::HloModule& module, const ElementwiseGroups& groups,
                          uint64_t base, int64_t hbm_capacity, bool timing_only,
                          const hlo::TileRule& tiles, bool isolate_shared) {
  const hlo::HloComputation& entry = *module.entry_computation();
  TPUSIM_RETURN_IF_ERROR(RejectComputationsOffDevice(entry));
  TPUSIM_ASSIGN_OR_RETURN(const LoopRegions regions, FindLoopRegions(entry));
  HbmPlanner planner(entry, groups, regions, hbm_capacity, tiles);
  HbmPlan plan;
  TPUSIM_RETURN_IF_ERROR(planner.AssignBuffers(plan));
  if (isolate_shared) planner.IsolateSharedValues(plan);
  TPUSIM_ASSIGN_OR_RETURN(plan.bytes_used, planner.AssignAddresses(plan, base));
  if (!timing_only) {
    TPUSIM_ASSIGN_OR_RETURN(plan.constants, ConstantSegments(entry, plan));
  }
  return plan;
}

}  // namespace tpusim::compiler
