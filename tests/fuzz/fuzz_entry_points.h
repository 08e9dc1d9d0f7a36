// The bodies of tpusim's fuzz targets, shared by the libFuzzer binaries (fuzz_*.cc, built under
// -DTPUSIM_FUZZ=ON with clang) and by fuzz_regression_test (the normal GoogleTest build), which
// replays every input kept in tests/data/fuzz_regressions/<target>/.
//
// Contract of each entry point: any byte string is accepted; the layer under test must return OK or
// an error Status and never crash, hang, leak or hit undefined behaviour (the sanitizers and
// libFuzzer's timeout/rss limits report those). The returned Status is what the layer said, so the
// regression test can also assert that error messages name a location.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace tpusim::fuzz {

/// The fuzz targets, by the name used for their corpus and regression folders.
enum class Target { kHlo, kAsm, kDecode, kConfig, kPipeline, kOutputPaths };

/// "hlo", "asm", "decode", "config", "pipeline", "outputs".
std::string_view TargetName(Target target);

/// hlo: hlo::ParseHloModule, then hlo::VerifyModule, then (when both succeed) the `tpusim inspect`
/// summary (cost analysis) and printing the module and parsing the printout again (the printer must
/// produce text that parses to an equal module).
Status FuzzHlo(std::string_view text);

/// asm: isa::Assemble; on success isa::Verify against the `tiny` chip's sizes and an encode ->
/// decode round trip, which must give back the same program.
Status FuzzAsm(std::string_view text);

/// decode: isa::DecodeProgram of program-file bytes; on success isa::Verify against the `tiny`
/// chip's sizes and a re-encoding, which must give back the same bytes.
Status FuzzDecode(std::string_view bytes);

/// config: config::LoadChipConfigFromString (filename "configs/fuzz.yaml", so `base: tpu-v4`
/// resolves to the real configs), then the derived figures of an accepted config.
Status FuzzConfig(std::string_view yaml);

/// Dispatches to the entry point of `target`.
Status RunFuzzTarget(Target target, std::string_view input);

}  // namespace tpusim::fuzz
