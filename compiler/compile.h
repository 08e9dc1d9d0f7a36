// Compile: HLO module -> isa::Program for a chip config, plus where every input and output lives,
// so a driver can write inputs into HBM before running the program and read outputs after.
//
// Memory model (what the driver must follow):
//  * Every HLO array is stored in its core's HBM in ROW-MAJOR logical order (index order of the HLO
//    dimensions), whatever the HLO layout says; tiled layouts and memory spaces are not modelled
//    yet.
//  * Element storage is the ISA type `dtype` of the same name (little-endian, its own width): f32
//    4 bytes, bf16/f16 2, s8/u8 1, s16/u16 2, s32/u32 4, s64/u64 8, pred 1 (0/1); the bytes of the
//    evaluator's Literal (device_literal.h). Other types (f64, complex, f8, s4/u4) are rejected
//    naming the instruction and the type (lower/device_types.h).
//  * Replicas: core r runs replica r (global core id = r); every core's HBM uses the same
//    addresses.
//  * Megacore (TPU v4 / v5p: the two TensorCores of a chip share its HBM and act as one device
//    [Jouppi et al., ISCA 2023, §2; Cloud TPU docs "TPU v4"]): a single-device module on such a
//    chip runs on all of the chip's cores. Core 0 runs the whole program; every dot whose N
//    dimension gives each core at least one full set of MXU tiles (N >= tensorcores * mxu.count *
//    mxu.cols) is split by N columns over the cores, between two sync.barriers; the other cores run
//    only their dot shares. Other ops are not split (a documented limitation). The placements are
//    core 0's.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "compiler/pass/hlo_pass_pipeline.h"
#include "compiler/passes/spmd_partitioner.h"
#include "config/chip_config.h"
#include "hlo/kernel_cost_estimate.h"
#include "hlo/module.h"
#include "hlo/shape.h"
#include "isa/program.h"

namespace tpusim::compiler {

struct CompileOptions {
  /// Devices (cores) to compile for. 0 = inferred (see the file comment).
  int64_t num_replicas = 0;
  /// Record the HLO text after this pass in CompiledModule::dump ("" = none); "fusion" records
  /// the lowering's fusion decisions instead (DescribeFusions, lower/fusion.h).
  std::string dump_after;
  /// Timing-only: elided constants and other initial data are not materialized (DataSegments are
  /// left out), so huge modules compile without allocating their values.
  bool timing_only = false;
  /// A module the SPMD partitioner splits: keep a copy of it right after spmd-partitioner
  /// (CompiledModule::partitioned), the program the value check may evaluate
  /// (driver/partition_check.h).
  bool keep_partitioned = false;
  /// Double-buffer DMA with compute in the dot kernel (prefetch the next LHS block while the MXUs
  /// run).
  bool double_buffer = true;
  /// Run chains of same-shape elementwise ops as one VPU kernel with the intermediates kept in
  /// VMEM, and the elementwise ops right after a dot on its result blocks as they are popped
  /// (lower/fusion.h); off = one kernel (and one HBM round trip) per op.
  bool fuse_elementwise = true;
  /// Split large dots over the TensorCores of a chip that share its HBM when the module is one
  /// device (see the file comment); off = one core per device.
  bool megacore = true;
  /// Custom-call targets the user gave a cost for (--custom-call-cost TARGET=CYCLES): such a
  /// custom-call keeps its core's sequencer busy for CYCLES cycles (a spin of nops) and computes
  /// nothing, so a module using one runs timing-only. Unknown targets without an entry are an
  /// Unimplemented error naming them (DESIGN.md §5).
  std::map<std::string, int64_t> custom_call_cycles;
  /// while-lowering's budget: loops are unrolled while the copies add at most this many HLO
  /// instructions; longer loops become ISA loops (ctrl.loop). 0 = every loop an ISA loop.
  int64_t max_unrolled_instructions = 100000;
  /// Trip counts of data-dependent whiles by name (--trip-count NAME=N): a while whose count
  /// while-lowering's pattern cannot find runs as real control flow, like a branch_trip_counts
  /// loop, and a timing-only simulation assumes N trips: N + 1 conditions and N bodies
  /// (while_lowering.h). A name that is not a while of the module is an InvalidArgument error.
  std::map<std::string, int64_t> trip_counts;
  /// Data-dependent whiles (no count found, none given) to run as real control flow, by name: an
  /// ISA loop that computes the condition each trip and leaves on a false one (ctrl.break_unless;
  /// while_lowering.h), with the trips a timing-only simulation assumes (the evaluator's count on
  /// the run's inputs). A data-dependent while in neither map is an Unimplemented error.
  std::map<std::string, int64_t> branch_trip_counts;
};

/// Where one array leaf of an entry parameter or of the entry result lives.
struct BufferPlacement {
  std::string name;  // "p3.28" or "p0.1{1}" (tuple leaf), or "tuple.365{2}" for outputs
  int64_t parameter_number = -1;  // for parameters; -1 for outputs
  std::vector<int64_t>
      tuple_index;           // leaf index within the parameter / result tuple ({} for arrays)
  int32_t core = 0;          // global core id (= replica id)
  uint64_t hbm_address = 0;  // byte address in that core's HBM
  hlo::Shape shape;          // the HLO shape of the leaf (logical dims, HLO element type)
  isa::DType dtype = isa::DType::kF32;  // how the elements are stored (see the file comment)
  int64_t bytes = 0;                    // element count * DTypeBytes(dtype)
};

struct CompiledModule {
  isa::Program program;
  std::vector<BufferPlacement> parameters;  // every parameter leaf of every replica
  std::vector<BufferPlacement> outputs;     // every result leaf of every replica, flattened order
  int64_t hbm_bytes_used = 0;               // per core: highest allocated HBM byte + 1
  int64_t peak_vmem_bytes = 0;              // largest VMEM working set of any kernel
  std::string dump;                         // HLO text after CompileOptions::dump_after
  std::string pass_names;                   // the pipeline's passes, comma separated
  std::vector<PassTiming> pass_timings;     // per pass: wall-clock seconds (logs only), changed
  double lowering_seconds = 0;              // wall clock of lowering to the ISA (logs only)
  int64_t devices = 1;                      // replicas x partitions
  int64_t cores_per_device = 1;  // > 1 with megacore: device d runs on cores d*n .. d*n+n-1
  /// Custom-calls lowered from CompileOptions::custom_call_cycles (their values are not computed).
  std::vector<std::string> estimated_custom_calls;
  /// Pallas TPU kernels (tpu_custom_call) timed from their cost (compiler/lower/
  /// lower_kernel_estimate.cc), one per kernel: its name, the FLOP, transcendentals, bytes
  /// accessed and ICI bytes (the last not modelled), and whether the kernel declared them
  /// (cost_estimate) or declares none and is timed as hlo::LeastKernelCost, a lower bound. Their
  /// values are not computed: the Mosaic body is not run.
  struct CostEstimatedKernel {
    std::string name;
    hlo::KernelCostEstimate estimate;
    bool declared = true;
  };
  std::vector<CostEstimatedKernel> cost_estimated_kernels;
  /// Conditionals of the module (any computation): if-converted (call_inliner.h), every branch runs
  /// and its cycles count, so their cost is an upper bound on a TPU's, which runs one branch.
  std::vector<std::string> if_converted_conditionals;
  /// Host-offload annotations of the module (MoveToHost, MoveToDevice, annotate_device_placement),
  /// which annotation-custom-calls runs as identities: their names, and the bytes XLA's host
  /// offloader would move over the host link for them (each annotation's array once), which the
  /// cycles do not include (compiler/passes/annotation_custom_calls.h).
  std::vector<std::string> host_offloads;
  int64_t host_offload_bytes = 0;
  /// Whiles whose trip count the user gave (CompileOptions::trip_counts) because it is not known
  /// at compile time, as "name=N": a timing-only run's cycles are those of N trips (N + 1
  /// conditions, N bodies).
  std::vector<std::string> given_trip_counts;
  /// Whiles run as branch loops (CompileOptions::branch_trip_counts), as "name=N" with N the trips
  /// a timing-only simulation assumes.
  std::vector<std::string> branch_loops;
  /// HLO opcode of every Program::hlo_names entry, read from the compiled (post-pass) module, so
  /// instructions the passes added (collectives, combined all-reduces) have one too.
  std::vector<std::string> hlo_opcodes;
  /// Per Program::hlo_names entry: true for an op the compiler's passes added (a transpose, copy,
  /// pad, collective or combined op with no instruction of that name in the input module), which
  /// the reports mark as such.
  std::vector<bool> hlo_compiler_inserted;
  /// Set when the pipeline's SpmdPartitioner split a module XLA had not partitioned: how its
  /// parameters and result are cut per partition (the driver feeds and checks shards,
  /// spmd_check.h).
  std::optional<SpmdSignature> spmd;
  /// With CompileOptions::keep_partitioned: the module as spmd-partitioner left it (every device's
  /// program; null otherwise).
  std::shared_ptr<const hlo::HloModule> partitioned;
};

/// Compiles `module` (unchanged: the passes run on a copy) for `config`.
/// Errors: Unimplemented for an HLO op, type or attribute the lowering does not support (the
/// message names the instruction, its file:line:col and what is supported); ResourceExhausted when
/// a kernel's working set does not fit core.vmem.capacity_bytes or the buffers do not fit
/// chip.hbm.capacity_bytes (naming the instruction and the sizes); InvalidArgument for a bad option
/// (unknown --dump-after).
StatusOr<CompiledModule> Compile(const hlo::HloModule& module, const config::ChipConfig& config,
                                 const CompileOptions& options = {});

}  // namespace tpusim::compiler
