// Each `tpusim` subcommand registers itself on the CLI11 app; main.cc calls these in order.
#pragma once

#include <CLI/CLI.hpp>

namespace tpusim::cli {

void RegisterConfigCommand(CLI::App& app);
void RegisterAsmCommand(CLI::App& app);      // cmd_asm.cc (ISA)
void RegisterDisasmCommand(CLI::App& app);   // cmd_disasm.cc (ISA)
void RegisterExecCommand(CLI::App& app);     // cmd_exec.cc (ISA interpreter)
void RegisterInspectCommand(CLI::App& app);  // cmd_inspect.cc (HLO summary)
void RegisterCompileCommand(CLI::App& app);  // cmd_compile.cc (HLO -> ISA)
void RegisterRunCommand(CLI::App& app);      // cmd_run.cc (the main job)
void RegisterCpuCommand(CLI::App& app);      // cmd_cpu.cc (CPU evaluator; links tpusim_eval)
void RegisterCompareCommand(CLI::App& app);  // cmd_compare.cc (TPU vs CPU time, per op)
void RegisterReportSchemaCommand(CLI::App& app);  // cmd_report_schema.cc (docs/report-schema.md)
void RegisterTraceCheckCommand(CLI::App& app);    // cmd_trace_check.cc (--trace validation)
void RegisterSweepCommand(CLI::App& app);         // cmd_sweep.cc (design-space sweeps)

}  // namespace tpusim::cli
