#include "compiler/compile.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "compiler/lower/fusion.h"
#include "compiler/lower/lowerer.h"
#include "compiler/lower/memory_space_assignment.h"
#include "compiler/passes/annotation_custom_calls.h"
#include "compiler/pipeline.h"
#include "hlo/clone.h"
#include "hlo/verify_devices.h"
#include "hlo/while_loop.h"

namespace tpusim::compiler {
namespace {

std::string LeafName(const std::string& base, const std::vector<int64_t>& index) {
  if (index.empty()) return base;
  std::string s = base + "{";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(index[i]);
  }
  s += '}';
  return s;
}

// Tuple indices of every array leaf of `shape`, depth first (the order of Shape::Leaves()).
void LeafIndices(const hlo::Shape& shape, std::vector<int64_t>& prefix,
                 std::vector<std::vector<int64_t>>& out) {
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_shapes_size(); ++i) {
      prefix.push_back(i);
      LeafIndices(shape.tuple_shapes(i), prefix, out);
      prefix.pop_back();
    }
  } else if (shape.IsArray()) {
    out.push_back(prefix);
  }
}

std::vector<BufferPlacement> Placements(const hlo::HloInstruction& inst,
                                        const std::vector<HbmBuffer>& bufs, int64_t param,
                                        int32_t core) {
  std::vector<std::vector<int64_t>> indices;
  std::vector<int64_t> prefix;
  LeafIndices(inst.shape(), prefix, indices);
  const auto leaves = inst.shape().Leaves();
  std::vector<BufferPlacement> out;
  for (size_t i = 0; i < bufs.size() && i < leaves.size(); ++i) {
    BufferPlacement p;
    p.name = LeafName(inst.name(), indices[i]);
    p.parameter_number = param;
    p.tuple_index = indices[i];
    p.core = core;
    p.hbm_address = bufs[i].address;
    p.shape = *leaves[i];
    p.dtype = bufs[i].dtype;
    p.bytes = bufs[i].bytes();
    out.push_back(std::move(p));
  }
  return out;
}

// The placements of complex leaves keep their complex type: complex-expander stores a c64
// [dims] array as f32 [dims, 2] (the same bytes), and drivers read and write the leaves as the
// module's (pre-pass) entry interface declares them. `original` is the module before the passes.
void KeepComplexLeaves(const hlo::HloModule& original, std::vector<BufferPlacement>& placements) {
  const hlo::HloComputation* entry = original.entry_computation();
  for (BufferPlacement& p : placements) {
    const hlo::HloInstruction* inst = p.parameter_number >= 0
                                          ? entry->parameter_instruction(p.parameter_number)
                                          : entry->root_instruction();
    if (inst == nullptr) continue;
    const hlo::Shape* leaf = &inst->shape();
    for (const int64_t i : p.tuple_index) {
      if (!leaf->IsTuple() || i >= leaf->tuple_shapes_size()) break;
      leaf = &leaf->tuple_shapes(i);
    }
    if (!hlo::IsComplex(leaf->element_type()) || p.shape.rank() < 1 ||
        hlo::IsComplex(p.shape.element_type())) {
      continue;
    }
    std::vector<int64_t> dims = p.shape.dimensions();
    dims.pop_back();
    p.shape = hlo::Shape(leaf->element_type(), std::move(dims));
  }
}

// Every --trip-count names a while of the module and gives a count >= 0.
Status CheckTripCounts(const hlo::HloModule& module, const CompileOptions& options) {
  for (const auto& [name, trips] : options.trip_counts) {
    bool found = false;
    for (const auto& comp : module.computations()) {
      const hlo::HloInstruction* w = comp->FindInstruction(name);
      found = found || (w != nullptr && hlo::IsLoopByName(*w));
    }
    if (!found || trips < 0) {
      return InvalidArgument(
          fmt::format("--trip-count {}={}: {}", name, trips,
                      found ? "the count must be >= 0" : "the module has no while of that name"));
    }
  }
  return OkStatus();
}

// What the report says about how the module was compiled: custom-calls given estimated cycles,
// if-converted conditionals, loops whose trip count the options gave, host-offload annotations.
void RecordLoweringNotes(const hlo::HloModule& module, const hlo::HloModule& m,
                         const CompileOptions& options, CompiledModule& result) {
  for (const auto& inst : m.entry_computation()->instructions()) {
    if (inst->opcode() == hlo::HloOpcode::kCustomCall &&
        options.custom_call_cycles.count(inst->custom_call_target()) > 0) {
      result.estimated_custom_calls.push_back(inst->name());
    }
  }
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (hlo::IsMosaicKernel(*inst) &&
          options.custom_call_cycles.count(inst->custom_call_target()) == 0) {
        StatusOr<std::optional<hlo::KernelCostEstimate>> e = hlo::ReadKernelCostEstimate(*inst);
        if (e.ok()) {
          result.cost_estimated_kernels.push_back(
              {inst->name(), e->value_or(hlo::LeastKernelCost(*inst)), e->has_value()});
        }
      }
      if (inst->opcode() == hlo::HloOpcode::kConditional) {
        result.if_converted_conditionals.push_back(inst->name());
      }
      if (IsHostOffloadAnnotation(*inst)) {
        result.host_offloads.push_back(inst->name());
        result.host_offload_bytes += inst->shape().ByteSize();
      }
      // A while of unknown count, or a call expanded into one (Eigh's sweeps).
      const bool loop = hlo::IsLoopByName(*inst) && (inst->opcode() != hlo::HloOpcode::kWhile ||
                                                      !hlo::KnownTripCount(*inst).trips);
      auto given = options.trip_counts.find(inst->name());
      if (loop && given != options.trip_counts.end()) {
        result.given_trip_counts.push_back(fmt::format("{}={}", inst->name(), given->second));
      } else if (auto b = options.branch_trip_counts.find(inst->name());
                 loop && b != options.branch_trip_counts.end()) {
        result.branch_loops.push_back(fmt::format("{}={}", inst->name(), b->second));
      }
    }
  }
}

// For each HLO name of the program: its opcode ("" if the passes removed it) and whether the
// compiler inserted it (not in the input module).
void RecordHloNames(const hlo::HloModule& module, const hlo::HloModule& m,
                    CompiledModule& result) {
  std::map<std::string, std::string> opcode_of;
  for (const auto& comp : m.computations()) {
    for (const auto& inst : comp->instructions()) {
      opcode_of[inst->name()] = std::string(hlo::HloOpcodeString(inst->opcode()));
    }
  }
  for (const std::string& name : result.program.hlo_names) {
    auto it = opcode_of.find(name);
    result.hlo_opcodes.push_back(it == opcode_of.end() ? "" : it->second);
  }
  std::set<std::string> input_names;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) input_names.insert(inst->name());
  }
  for (const std::string& name : result.program.hlo_names) {
    result.hlo_compiler_inserted.push_back(input_names.count(name) == 0);
  }
}

// Megacore with no dot large enough to split: the cores other than the first only open and close
// loops and halt, so the device is one core after all.
void CollapseIdleMegacore(CompiledModule& result) {
  isa::Program& program = result.program;
  const bool idle = std::all_of(
      program.cores[1].instructions.begin(), program.cores[1].instructions.end(),
      [](const isa::Instruction& i) { return isa::Info(i.opcode).unit == isa::Unit::kScalar; });
  if (idle) {
    program.cores.resize(1);
    result.cores_per_device = 1;
    // The barriers a branch loop's break put before the other cores read the pred (lower_loop.cc)
    // have nobody to meet now: each becomes a nop (same issue slot, no operands).
    for (isa::Instruction& inst : program.cores[0].instructions) {
      if (inst.opcode != isa::Opcode::kSyncBarrier) continue;
      const uint64_t g = inst.As<isa::op::SyncBarrier>().group;
      const auto& groups = program.replica_groups;
      const bool others =
          g < groups.size() &&
          std::any_of(groups[g].groups.begin(), groups[g].groups.end(),
                      [](const std::vector<int32_t>& ids) { return ids.size() > 1; });
      if (others) inst = isa::op::Nop{}.ToInstruction();
    }
    // ... and the replica groups name core 0 alone, so the one-core program still verifies
    // (isa/verifier.cc: every id a core of the program); entries keep their indices.
    for (isa::ReplicaGroups& entry : program.replica_groups) {
      for (std::vector<int32_t>& ids : entry.groups) {
        std::erase_if(ids, [](int32_t id) { return id != 0; });
      }
      std::erase_if(entry.groups, [](const std::vector<int32_t>& ids) { return ids.empty(); });
      if (entry.groups.empty()) entry.groups = {{0}};
    }
  }
}

// The cores lowered so far, by the hash of their code: a core whose code equals an earlier one's
// shares that copy (isa::CoreList::Share). Replicas at the same position of their chips lower to
// the same instructions, so N replicas keep tensorcores copies, not N.
class IdenticalCores {
 public:
  void ShareIfSeen(isa::CoreList& cores, size_t c) {
    const isa::CoreList& read = cores;
    const uint64_t h = isa::Hash(read[c]);
    auto [first, last] = seen_.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (read[it->second] == read[c]) {
        cores.Share(c, it->second);
        return;
      }
    }
    seen_.emplace(h, c);
  }

 private:
  std::unordered_multimap<uint64_t, size_t> seen_;
};

}  // namespace

StatusOr<CompiledModule> Compile(const hlo::HloModule& module, const config::ChipConfig& config,
                                 const CompileOptions& options) {
  TPUSIM_RETURN_IF_ERROR(CheckTripCounts(module, options));
  TPUSIM_ASSIGN_OR_RETURN(std::unique_ptr<hlo::HloModule> m, hlo::CloneModule(module));
  CompiledModule result;
  HloPassPipeline pipeline = BuildHloPipeline(config, options.max_unrolled_instructions,
                                              options.trip_counts, options.branch_trip_counts);
  // `fusion` is not an HLO pass: it prints the lowering's fusion decisions (below).
  const bool dump_fusions = options.dump_after == "fusion";
  pipeline.set_dump_after(dump_fusions ? "" : options.dump_after);
  const bool spmd = NeedsSpmdPartitioning(module);
  if (spmd && options.keep_partitioned) pipeline.set_keep_after("spmd-partitioner");
  TPUSIM_ASSIGN_OR_RETURN(bool changed, pipeline.Run(*m));
  (void)changed;
  if (spmd) result.spmd = SpmdSignature::Of(*m);
  result.partitioned = pipeline.TakeKept();
  result.dump = pipeline.dump();
  result.pass_timings = pipeline.timings();
  const auto lowering_started = std::chrono::steady_clock::now();
  for (const std::string& n : pipeline.PassNames()) {
    if (!result.pass_names.empty()) result.pass_names += ',';
    result.pass_names += n;
  }

  TPUSIM_ASSIGN_OR_RETURN(const int64_t replicas, hlo::DevicesToRun(*m, options.num_replicas));
  if (replicas > config.total_cores()) {
    return InvalidArgument(
        fmt::format("{}: {} replicas need {} cores but config '{}' has {} "
                    "(chips x tensorcores)",
                    module.source_name(), replicas, replicas, config.name, config.total_cores()));
  }
  // Cores that share their chip's HBM (chip.hbm.shared_by_cores) each get an equal, disjoint share
  // of it; cores that own their HBM use it all (from address 0). A megacore device has its chip's
  // HBM to itself.
  const int64_t tc = std::max<int64_t>(1, config.tensorcores);
  const bool megacore = options.megacore && config.hbm.shared_by_cores && tc > 1 && replicas == 1 &&
                        config.total_cores() >= tc;
  const int64_t per_device = megacore ? tc : 1;
  const int64_t hbm_per_core =
      megacore ? config.hbm.capacity_bytes : config.hbm.capacity_bytes / tc;
  ElementwiseGroups groups =
      options.fuse_elementwise ? FormElementwiseGroups(*m) : ElementwiseGroups{};
  if (options.fuse_elementwise) {
    // Dots that megacore splits by columns (lower_dot.cc, DotColumnShare) keep their ops separate.
    const int64_t split_n =
        megacore ? tc * std::max<int64_t>(1, config.core.mxu.count) * config.core.mxu.cols
                 : std::numeric_limits<int64_t>::max();
    AddDotEpilogues(*m, split_n, &groups);
    AddDotPrologues(*m, split_n, &groups);
    AddConvPrologues(*m, config.core.mxu.rows, &groups);
  }
  if (dump_fusions) result.dump = DescribeFusions(*m, groups);
  // Buffers kept in VMEM between kernels (memory_space_assignment.h): the VMEM above the kernels'
  // scoped limit, on cores that do not share their values with another core of their device.
  const int64_t kernel_vmem = config.core.KernelVmemBytes();
  const int64_t kept_vmem = per_device == 1 ? config.core.vmem_bytes - kernel_vmem : 0;
  auto plan_for = [&](int32_t core) {
    const uint64_t base = config.hbm.shared_by_cores && !megacore
                              ? static_cast<uint64_t>((core % tc) * hbm_per_core)
                              : 0;
    return PlanHbm(*m, groups, base, hbm_per_core, options.timing_only,
                   hlo::TileRule{.lanes = config.core.vpu.lanes,
                                 .sublanes = config.core.vpu.sublanes,
                                 .min_tile_bytes = config.hbm.tile_min_bytes},
                   /*isolate_shared=*/kept_vmem > 0);
  };
  isa::Program& program = result.program;
  program.cores.resize(static_cast<size_t>(replicas * per_device));
  result.devices = replicas;
  result.cores_per_device = per_device;
  std::map<std::string, int32_t> tags;
  IdenticalCores identical;
  for (int32_t r = 0; r < replicas; ++r) {
    TPUSIM_ASSIGN_OR_RETURN(HbmPlan plan, plan_for(r));
    result.hbm_bytes_used = std::max(result.hbm_bytes_used, plan.bytes_used);
    const std::vector<HbmRange> keepable =
        kept_vmem > 0 ? VmemResidencyCandidates(*m, plan) : std::vector<HbmRange>{};
    for (int32_t k = 0; k < per_device; ++k) {
      const int32_t core = static_cast<int32_t>(r * per_device + k);
      Lowerer lowerer(*m, config, plan, &program, core, replicas, &tags, options.double_buffer,
                      groups, MegacoreRole{static_cast<int>(k), static_cast<int>(per_device)});
      lowerer.set_custom_call_cycles(&options.custom_call_cycles);
      TPUSIM_RETURN_IF_ERROR(lowerer.Run());
      result.peak_vmem_bytes = std::max(result.peak_vmem_bytes, lowerer.peak_vmem());
      if (!keepable.empty()) {
        const std::vector<KeptBuffer> kept =
            AssignVmemResidency(program, core, keepable, lowerer.kernel_starts(),
                                static_cast<uint64_t>(kernel_vmem), kept_vmem);
        for (const KeptBuffer& k : kept) {
          const int64_t top = kernel_vmem + static_cast<int64_t>(k.vmem_address) + k.hbm.bytes;
          result.peak_vmem_bytes = std::max(result.peak_vmem_bytes, top);
        }
      }
      identical.ShareIfSeen(program.cores, static_cast<size_t>(core));
    }
    for (const isa::DataSegment& seg : plan.constants) {
      isa::DataSegment s = seg;
      s.core = static_cast<int32_t>(r * per_device);
      program.data.push_back(std::move(s));
    }
    const int32_t core = static_cast<int32_t>(r * per_device);
    const hlo::HloComputation* entry = m->entry_computation();
    for (const hlo::HloInstruction* p : entry->parameter_instructions()) {
      auto ps = Placements(*p, plan.values.at(p), p->parameter_number(), core);
      result.parameters.insert(result.parameters.end(), ps.begin(), ps.end());
    }
    const hlo::HloInstruction* root = entry->root_instruction();
    auto os = Placements(*root, plan.values.at(root), -1, core);
    result.outputs.insert(result.outputs.end(), os.begin(), os.end());
  }
  KeepComplexLeaves(module, result.parameters);
  KeepComplexLeaves(module, result.outputs);
  RecordLoweringNotes(module, *m, options, result);
  RecordHloNames(module, *m, result);
  if (megacore) CollapseIdleMegacore(result);
  program.source_file = module.source_name();
  result.lowering_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - lowering_started).count();
  return result;
}

}  // namespace tpusim::compiler
