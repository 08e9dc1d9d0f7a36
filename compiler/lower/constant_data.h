// The bytes of a `constant` as stored in HBM (row-major, device element type). Elided constants
// (`{...}` in the dump) get deterministic pseudo-random values from the same generator and seed the
// CPU evaluator uses (hlo/eval/literal.h FillRandom: SplitMix64 seeded with
// kElidedConstantSeed ^ FNV-1a(instruction name); floats uniform in [-1, 1), signed ints in [-8,
// 8), pred with probability 1/2), so simulated and reference values agree.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "hlo/instruction.h"
#include "isa/types.h"

namespace tpusim::compiler {

inline constexpr uint64_t kElidedConstantSeed = 0;

/// Bytes of array constant `inst` stored as `dtype`. InvalidArgument if the literal has the wrong
/// number of values.
StatusOr<std::string> ConstantBytes(const hlo::HloInstruction& inst, isa::DType dtype);

}  // namespace tpusim::compiler
