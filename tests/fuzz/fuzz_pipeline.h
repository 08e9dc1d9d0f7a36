// The fuzz targets at the level users hit (issue 21): the whole `tpusim run --timing-only` pipeline
// on a mutated module, and the CLI's output-path handling (common/output_set.h) on a sandbox of
// hostile paths. Shared by the libFuzzer binaries, the standalone driver (fuzz_standalone.cc, for
// machines without clang) and fuzz_regression_test.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tpusim::fuzz {

/// pipeline: parse -> verify -> compile -> timing-only simulation on the `tiny` chip (or the slice
/// it grows into, at most 8 devices), under limits: 1e6 simulated cycles, 2 s of simulation,
/// unrolling budget 1000. Returns the pipeline's Status; Internal only for a broken invariant
/// (tpusim's own internal errors are Internal too, which is what the fuzzer must find).
Status FuzzPipeline(std::string_view text);

/// outputs: interprets `script` as a small program over a fresh sandbox folder — create regular
/// files, symlinks (to files, to nothing, to a folder, to /dev/null), folders and FIFOs, then
/// declare 1..4 outputs on sandbox paths (or /dev/null, /dev/full) with some contents and commit —
/// and checks OutputSet's contract: a commit that succeeds wrote each output's contents to the
/// file its path finally names, left symlinks, devices and FIFOs what they were, and left no
/// temporary; a commit that fails changed no file and left no temporary; two outputs never share a
/// regular file. Internal on a violation.
Status FuzzOutputPaths(std::string_view script);

/// A structure-aware mutation of HLO text for the pipeline target: replaces a number with an
/// extreme value (0, -1, 2^31-1, 2^31, 2^63-1, 2^62, 1e400, ...), deletes or duplicates a line,
/// renames an operand, swaps an opcode for another, or changes an attribute's list. Deterministic
/// in `seed`; the result may be any text.
std::string MutateHlo(std::string_view text, uint32_t seed);

}  // namespace tpusim::fuzz
