// The logic behind `tpusim asm`, `tpusim disasm` and `tpusim exec`, kept in the ISA layer so the
// CLI files only parse options: load a program from assembly or binary, verify it against a chip,
// run it on the Interpreter and format memory dumps.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "config/chip_config.h"
#include "isa/interpreter.h"
#include "isa/program.h"

namespace tpusim::isa {

/// Reads `path`: a program file when it starts with "TPUS", else assembly text. Errors name the
/// file (assembly errors as file:line:col with a caret).
StatusOr<Program> LoadProgramFile(const std::string& path);

/// A `--dump` request: SPACE[.CORE]:ADDR:COUNT:DTYPE, e.g. "vmem:0x100:8:f32" or "hbm.1:0:4:s32".
struct DumpSpec {
  MemSpace space = MemSpace::kVmem;
  int core = 0;
  uint64_t address = 0;
  uint64_t count = 0;
  DType dtype = DType::kF32;
};
/// InvalidArgument naming the bad part for a malformed spec (acc is not dumpable; count <= 2^24).
StatusOr<DumpSpec> ParseDumpSpec(std::string_view text);
/// "vmem.0[0x100] f32 x 4: 1, 2.5, -3, 0" (floats in shortest round-trip form).
StatusOr<std::string> FormatDump(Interpreter& interp, const DumpSpec& spec);

/// Verifies `program` against `chip` and runs it on a fresh Interpreter; returns the finished
/// interpreter (its memories for ExecReport and sim::RunAndCheck). Errors: the verifier's;
/// ResourceExhausted before running when the program surely does more work than
/// options.max_instructions (MinimumWorkUnits); the interpreter's.
StatusOr<std::unique_ptr<Interpreter>> RunProgram(const Program& program,
                                                  const config::ChipConfig& chip,
                                                  const InterpreterOptions& options = {});

/// The report text of a finished run of `program` on `interp`: a summary line ("executed N
/// instructions on C core(s) of CHIP (interpreter, no timing)"), then one line per dump.
/// InvalidArgument for a bad dump.
StatusOr<std::string> ExecReport(Interpreter& interp, const Program& program,
                                 const config::ChipConfig& chip,
                                 const std::vector<DumpSpec>& dumps);

/// RunProgram, then ExecReport.
StatusOr<std::string> ExecProgram(const Program& program, const config::ChipConfig& chip,
                                  const std::vector<DumpSpec>& dumps,
                                  const InterpreterOptions& options = {});

}  // namespace tpusim::isa
