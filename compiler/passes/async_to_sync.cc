#include "compiler/passes/async_to_sync.h"

#include <optional>
#include <vector>

#include "compiler/passes/hlo_builder.h"

namespace tpusim::compiler {
namespace {

using hlo::HloInstruction;
using hlo::HloOpcode;

// The synchronous opcode of a start/done pair, keyed by the done's opcode and checked against the
// start's.
std::optional<HloOpcode> SyncOpcode(HloOpcode done, HloOpcode start) {
  switch (done) {
    case HloOpcode::kAllReduceDone:
      if (start == HloOpcode::kAllReduceStart) return HloOpcode::kAllReduce;
      break;
    case HloOpcode::kAllGatherDone:
      if (start == HloOpcode::kAllGatherStart) return HloOpcode::kAllGather;
      break;
    case HloOpcode::kCollectivePermuteDone:
      if (start == HloOpcode::kCollectivePermuteStart) return HloOpcode::kCollectivePermute;
      break;
    case HloOpcode::kCopyDone:
      if (start == HloOpcode::kCopyStart) return HloOpcode::kCopy;
      break;
    case HloOpcode::kAsyncDone:
      if (start == HloOpcode::kAsyncStart) return HloOpcode::kCall;
      break;
    default:
      break;
  }
  return std::nullopt;
}

// The start of `done`'s pair: its operand, through the async-updates an async-done's chain may
// hold (async-start -> async-update* -> async-done, each read only by the next).
HloInstruction* StartOf(const HloInstruction& done) {
  HloInstruction* x = done.operand(0);
  while (done.opcode() == HloOpcode::kAsyncDone && x->opcode() == HloOpcode::kAsyncUpdate &&
         x->operand_count() == 1 && x->users().size() == 1) {
    x = x->operand(0);
  }
  return x;
}

}  // namespace

StatusOr<bool> AsyncToSync::Run(hlo::HloModule& module) {
  return RewriteEach(
      module,
      [](const HloInstruction& i) {
        return i.operand_count() == 1 && i.operand(0)->users().size() == 1 &&
               SyncOpcode(i.opcode(), StartOf(i)->opcode()) && StartOf(i)->users().size() == 1;
      },
      [](hlo::HloComputation& comp, HloInstruction* done) {
        HloInstruction* start = StartOf(*done);
        HloBuilder b(&comp, done);
        const HloOpcode op = *SyncOpcode(done->opcode(), start->opcode());
        // copy-start(x) holds (destination, source, context); the copy reads x. The others keep
        // the start's operands and attributes; the result is the done's.
        std::vector<HloInstruction*> operands(start->operands().begin(), start->operands().end());
        HloInstruction* sync = b.Add(
            CloneInstructionAs(*start, op, done->shape(), operands, b.UniqueName(done->name())));
        done->ReplaceAllUsesWith(sync);
        if (comp.root_instruction() == done) comp.set_root_instruction(sync);
        for (HloInstruction* x = done; x != start;) {
          HloInstruction* next = x->operand(0);
          comp.RemoveInstruction(x);
          x = next;
        }
        comp.RemoveInstruction(start);
      });
}

}  // namespace tpusim::compiler
