// The HLO verifier: checks that every instruction's written shape agrees with the shape XLA's
// operation semantics give it (shape_inference.h), and that calls agree with their callees'
// signatures (while body/condition, call, fusion, conditional branches, reducers). Run after
// parsing and after every pass.
#pragma once

#include <string_view>
#include <vector>

#include "common/status.h"
#include "hlo/module.h"

namespace tpusim::hlo {

/// True for a dump printed after XLA's optimization passes: `is_scheduled=true` in the header (only
/// the scheduler sets it) or any `fusion` instruction (only the fusion passes create them). Such
/// modules are verified with mixed floating-point precision allowed: a written element type may
/// differ from the inferred one if both are floating point (XLA's allow_mixed_precision).
bool IsOptimizedDump(const HloModule& module);

/// Ok, or InvalidArgument `file:line:col: error: '%name' (opcode): ...` (with the source line and
/// caret when `source_text` — the text the module was parsed from — is given) for the first problem
/// found. Instructions whose shape cannot be inferred (see InstructionsWithoutShapeInference) are
/// accepted.
Status VerifyModule(const HloModule& module, std::string_view source_text = {});

/// The instructions whose result shape the verifier accepts as written because tpusim has no shape
/// inference for them (custom-call, infeed, all-gather with `replica_groups={}`, ...), in module
/// order.
std::vector<const HloInstruction*> InstructionsWithoutShapeInference(const HloModule& module);

}  // namespace tpusim::hlo
