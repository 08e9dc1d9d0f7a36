// HloPass: one rewrite (or analysis) of an HloModule, as XLA's HloPassInterface. A pass's header
// states its contract: what it requires of its input, what its output guarantees, and what it never
// touches. Pass knobs are constructor arguments; a pass holds no state between Run() calls.
#pragma once

#include <string_view>

#include "common/status.h"
#include "hlo/module.h"

namespace tpusim::compiler {

class HloPass {
 public:
  virtual ~HloPass() = default;
  /// The pass's name as `--dump-after=NAME` spells it ("canonicalize").
  virtual std::string_view name() const = 0;
  /// Runs the pass. Returns true if the module changed, false if not, or an error Status (the
  /// user's module is not supported / is malformed; the message names the instruction and its
  /// location).
  virtual StatusOr<bool> Run(hlo::HloModule& module) = 0;
};

}  // namespace tpusim::compiler
