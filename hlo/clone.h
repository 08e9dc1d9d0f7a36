// A deep copy of a module for passes to rewrite, the one way tpusim makes one: printed and parsed
// back (the printer and parser are each other's inverse, tests/hlo), then every computation and
// instruction gets its source location in the original again, so diagnostics about the copy point
// into the user's file and not into the printed text.
#pragma once

#include <memory>

#include "common/status.h"
#include "hlo/module.h"

namespace tpusim::hlo {

/// A copy of `module` (same source name, locations of `module`). Errors: Internal if the printed
/// module does not parse back (a printer/parser disagreement, not bad input).
StatusOr<std::unique_ptr<HloModule>> CloneModule(const HloModule& module);

}  // namespace tpusim::hlo
