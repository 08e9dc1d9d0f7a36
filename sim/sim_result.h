// SimResult: everything one simulation run produces — the cycle count, the final memories (to
// compare with isa::Interpreter), the stat registry, and the per-core / per-instruction attribution
// the report writers (sim/report/) turn into JSON, CSV, a table and a Perfetto trace.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/units.h"
#include "isa/machine_state.h"
#include "isa/opcode.h"
#include "sim/engine/stats.h"
#include "sim/trace/trace_sink.h"

namespace tpusim::sim {

/// Where each cycle of a core's run went: TPU v1's performance-counter categories (ISCA 2017 §7,
/// Table 3: array active, weight stall, weight shift, non-matrix, RAW stall, input data stall) plus
/// the HBM-, ICI- and VPU-bound split of the non-matrix time. The categories partition [0, core
/// end):
///  1. array_active: some MXU of the core streams LHS rows (a matmul's M cycles).
///  2. weight_shift: no MXU streams, some MXU shifts a weight tile in (exposed weight load).
///  3. weight_stall: no MXU streams or shifts, some MXU holds a matmul waiting for its weights.
///  Otherwise the MXUs are idle, and the cycle goes to the oldest unfinished instruction of the
///  core (the one in-order retirement waits for):
///  4. hbm_bound: an HBM <-> VMEM DMA.           5. input_data_stall: a host <-> HBM DMA (PCIe).
///  6. ici_bound: a remote DMA or a collective.  7. vpu_bound: a VPU / XLU instruction, an
///  mxu.pop or a dma.vmem_to_vmem (the VMEM ports).
///  8. raw_sync_stall: sync.wait / sync.barrier (waiting on another core or flag).
///  9. non_matrix: anything else (sequencer issue of scalar instructions, matmul fill/drain tails).
enum class StallCategory : int {
  kArrayActive,
  kWeightShift,
  kWeightStall,
  kHbmBound,
  kInputDataStall,
  kIciBound,
  kVpuBound,
  kRawSyncStall,
  kNonMatrix,
};
inline constexpr int kNumStallCategories = 9;
/// "array_active", "weight_shift", ... (the JSON keys).
const char* StallCategoryName(StallCategory c);
/// The category the retirement attribution charges to an instruction of resource class `r`
/// (isa::ResourceOf) before the MXU overlay splits MXU time into array_active / weight_shift /
/// weight_stall: kMxu and kScalar -> non_matrix, kHbm -> hbm_bound, kHost -> input_data_stall,
/// kIci -> ici_bound, kVpu -> vpu_bound, kSync -> raw_sync_stall.
StallCategory StallCategoryOf(isa::Resource r);

/// What the instructions of one HLO op did on one core, summed over their executions (the report's
/// per-op table and op-bound column). `cycles` are the in-order retirement charges (sequencer.h)
/// by the resource of the instruction charged (isa::ResourceOf): summed over a core's ops, its
/// cycle count.
struct OpProfile {
  uint64_t executions = 0;
  std::array<uint64_t, isa::kResourceCount> cycles{};
  uint64_t flop = 0;       // MXU: 2*M*K*N per execution; VPU: 1 per arithmetic element
  uint64_t bytes = 0;      // bytes moved: DMA/ICI bytes, VPU/MXU VMEM bytes read + written
  uint64_t hbm_bytes = 0;  // of `bytes`, those of DMAs to or from HBM (gathers, scatters included)
  uint64_t total_cycles() const {
    uint64_t t = 0;
    for (const uint64_t c : cycles) t += c;
    return t;
  }
};

/// Per static instruction (core, index) totals over all its executions.
struct InstructionProfile {
  uint64_t executions = 0;
  uint64_t cycles = 0;  // cycles attributed by in-order retirement (sum over a core = its cycles)
  uint64_t unit_cycles = 0;  // sum of (complete - issue) over executions
  uint64_t flop = 0;         // MXU: 2*M*K*N per execution; VPU: 1 per arithmetic element
  uint64_t bytes = 0;        // bytes moved: DMA/ICI bytes, VPU/MXU VMEM bytes read + written
};

struct CoreResult {
  int core = 0;      // global core id
  std::string path;  // "chip0.core1"
  Cycles cycles;     // cycle at which the core's last instruction completed
  std::array<uint64_t, kNumStallCategories> stalls{};
  /// Per HLO tag of the program (CoreProgram::hlo_tag; index Program::hlo_names.size() holds the
  /// untagged instructions).
  std::vector<OpProfile> ops;
  /// Per instruction, indexed like CoreProgram::instructions: only with
  /// SimOptions::instruction_profile (40 bytes per instruction and core; empty otherwise).
  std::vector<InstructionProfile> instructions;
  uint64_t mxu_flop = 0;
  uint64_t vpu_flop = 0;
  uint64_t useful_macs = 0;  // sum over the core's MXUs of M*K*N
};

struct SimResult {
  Cycles cycles;  // the run's length: the last event on the timeline
  double clock_hz = 0;
  std::string config_name;
  double peak_flops_per_s = 0;  // all simulated cores: tensorcores * chips (used) * per-core peak
  double hbm_bytes_per_s = 0;   // configured, all chips
  int64_t mxu_rows = 0, mxu_cols = 0, mxus_per_core = 0;
  uint64_t events = 0;  // engine event cycles (for benchmarks)
  // Fast-forward (sim/fast_forward.h): loop trips skipped (of the loops it was sampling) and the
  // simulated cycles they span; 0 without fast-forward. Not statistics of the simulated chip.
  uint64_t fast_forward_trips = 0;
  uint64_t fast_forward_cycles = 0;
  uint64_t instructions_executed = 0;

  isa::MachineState final_state;  // memories after the run
  std::shared_ptr<const StatRegistry> stats;
  std::vector<CoreResult> cores;
  std::vector<std::string> ici_links;   // stat paths of the ICI link directions
  std::vector<std::string> hbm_paths;   // stat paths of the HBM servers
  std::vector<std::string> host_paths;  // stat paths of the host links
  std::vector<std::string> hlo_names;   // the program's HLO tags

  // With SimOptions::trace and no SimOptions::trace_sink: the instruction events, in memory
  // (TraceCollector), up to SimOptions::trace_max_events.
  std::vector<TraceTrack> trace_tracks;
  std::vector<TraceEvent> trace_events;
  bool trace_truncated = false;

  double seconds() const {
    return clock_hz > 0 ? static_cast<double>(cycles.value()) / clock_hz : 0;
  }
};

}  // namespace tpusim::sim
