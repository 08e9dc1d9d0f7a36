// call-inliner: replaces every `call` and `fusion` in the entry computation by a copy of the called
// computation's instructions (XLA's CallInliner; for fusions this gives up XLA's fusion decision —
// each fused op becomes its own kernel — until the lowering learns to run a fused computation out
// of VMEM as one kernel, DESIGN.md §5), and if-converts every `conditional`: a copy of each branch
// (branch k on operand k + 1), then per result leaf a chain of selects keeping the branch XLA takes
// (a pred selects branch 0 when true; an s32 index selects branch k when it equals k, the last
// branch when out of range). The ISA has no branches; every branch's cycles count, so a
// conditional's cost is an upper bound (CompiledModule::if_converted_conditionals says so).
//
// Contract.
//  * After the pass the entry computation contains no call, fusion or conditional (nested ones are
//    inlined too), except conditionals whose result holds a token or whose branches do not take
//    exactly one parameter (left for the lowering to report).
//  * Copies keep the callee's instruction names (made unique with a numeric suffix), metadata and
//    source locations; callee parameters become the call's operands; uses of the call use the copy
//    of the callee's root. Callees stay in the module (unused).
//  * Values are unchanged.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class CallInliner : public HloPass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
