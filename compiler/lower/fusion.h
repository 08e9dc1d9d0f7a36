// Elementwise fusion for the lowering (DESIGN.md §5 "elementwise chains: fused onto the VPU"): runs
// of elementwise ops of one shape, consecutive in program order, become one kernel that streams its
// external operands through VMEM once and keeps the intermediates there, storing only the values
// used outside the run. XLA's kLoop fusion in spirit; formed here rather than as an HLO `fusion`
// because the lowering, not the IR, decides what stays in VMEM.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/module.h"

namespace tpusim::compiler {

struct ElementwiseGroups {
  /// Groups of >= 2 members, each in program order.
  std::vector<std::vector<const hlo::HloInstruction*>> groups;
  /// Member -> index into `groups`.
  std::map<const hlo::HloInstruction*, size_t> group_of;
};

/// Forms the groups of the entry computation. A group is a maximal run of elementwise ops with a
/// VPU function and the same result dimensions; instructions without code (parameters, constants,
/// tuples, aliases, virtual broadcasts) in between do not end it, anything else does. An op joins
/// only if none of its non-member operands is an alias of a member, or a get-tuple-element of a
/// tuple holding one (it would read HBM the group has not written yet). At most `max_members` per
/// group (VMEM holds every member's chunk).
ElementwiseGroups FormElementwiseGroups(const hlo::HloModule& module, size_t max_members = 16);

}  // namespace tpusim::compiler
