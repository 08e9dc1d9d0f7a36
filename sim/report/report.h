// Report writers: the JSON report (schema in docs/report-schema.md), the per-HLO-op CSV and the
// readable table. They only read a finished SimResult (and walk its stat registry); no unit prints.
#pragma once

#include <string>
#include <vector>

#include "common/json.h"
#include "common/status.h"
#include "isa/program.h"
#include "sim/sim_result.h"

namespace tpusim::sim {

/// The report's `schema_version` (docs/report-schema.md). 2: `provenance` added.
inline constexpr int kReportSchemaVersion = 2;

struct ReportOptions {
  /// Optional HLO opcode per HLO tag (same indexing as Program::hlo_names), e.g. from the HLO
  /// module. When absent, an op's opcode is its name without XLA's ".N" suffix ("dot.3" -> "dot").
  std::vector<std::string> hlo_opcodes;
  /// Optional, same indexing: true for an op the compiler inserted (not in the input module).
  std::vector<bool> compiler_inserted;
};

/// The fraction of the MXUs' multiply-accumulate capacity used: `useful_macs` over
/// mxu_rows * mxu_cols * mxus_per_core * `cores` * the run's cycles (0 for an empty run).
double MxuUtilization(const SimResult& result, uint64_t useful_macs, size_t cores);
/// Over every core of the run: the sum of the cores' useful_macs over all their MXUs' capacity.
double MxuUtilization(const SimResult& result);

/// One row per HLO tag (and one "(untagged)" row for instructions without a tag), in tag order.
struct OpSummary {
  std::string name;
  std::string opcode;
  uint64_t cycles = 0;        // attributed cycles, summed over cores
  uint64_t flops = 0;         // FLOP (MXU 2*M*K*N + VPU arithmetic)
  uint64_t bytes = 0;         // bytes moved by the op's instructions (DMA, ICI, VMEM traffic)
  uint64_t hbm_bytes = 0;     // of which HBM <-> VMEM DMA bytes (a roofline's memory traffic)
  uint64_t instructions = 0;  // instructions executed
  bool compiler_inserted = false;  // added by the compiler's passes (ReportOptions)
};
std::vector<OpSummary> SummarizeOps(const SimResult& result, const isa::Program& program,
                                    const ReportOptions& options = {});

/// The report as a JSON value (docs/report-schema.md).
Json BuildReportJson(const SimResult& result, const isa::Program& program,
                     const ReportOptions& options = {});
/// "name,opcode,cycles,flops,bytes,instructions,compiler_inserted" + one line per op.
std::string BuildOpsCsv(const SimResult& result, const isa::Program& program,
                        const ReportOptions& options = {});
/// "core,pc,mnemonic,hlo,executions,cycles,unit_cycles,flops,bytes" + one line per executed
/// instruction: the cycles attributed to each instruction (in-order retirement, sim_result.h).
std::string BuildInstructionsCsv(const SimResult& result, const isa::Program& program);
/// A readable summary for stdout: totals, stalls, per core, top ops, HBM and ICI.
std::string BuildReportTable(const SimResult& result, const isa::Program& program,
                             const ReportOptions& options = {});

/// Writers (WriteFileAtomic); InvalidArgument naming the path if it cannot be written.
Status WriteReportJson(const std::string& path, const SimResult& result,
                       const isa::Program& program, const ReportOptions& options = {});
Status WriteOpsCsv(const std::string& path, const SimResult& result, const isa::Program& program,
                   const ReportOptions& options = {});

}  // namespace tpusim::sim
