// The shape rules of the asynchronous forms' start and update halves (copy-start,
// collective-permute-start, all-gather-start, async-start, async-update), following XLA's
// ShapeVerifier (HandleCopyStart, HandleCollectivePermuteStart, HandleAllGatherStart,
// HandleAsyncStart, HandleAsyncUpdate). The -done halves take their result from the start's tuple
// (InferShape), so an unchecked start let a wrong shape through to async-to-sync, which rebuilt an
// invalid synchronous op ("HLO verifier failed after pass", an internal error; issue 21).
// Messages carry no location (the verifier adds it).
#pragma once

#include <cstdint>

#include "common/status.h"
#include "hlo/instruction.h"

namespace tpusim::hlo {

/// The written shape of a -start instruction when it is consistent with its operands, else
/// InvalidArgument naming the rule:
/// - copy-start(x), collective-permute-start(x): a tuple whose elements 0 and 1 are x's shape
///   (the context elements after them are free);
/// - all-gather-start(x), dimensions={d}: (x's shape, the gathered shape): x's dimensions but d,
///   which is x's times `group_size` (0 = unknown: any positive multiple);
/// - async-start(operands...), calls=c: a tuple whose element 0 is the tuple of the operands'
///   shapes and element 1 c's result shape.
/// Forms with several operands (in-place collective-permute-start, combined all-gather-start)
/// are taken as written.
StatusOr<Shape> InferAsyncStart(const HloInstruction& inst, int64_t group_size);

/// async-update(start): its operand's shape.
StatusOr<Shape> InferAsyncUpdate(const HloInstruction& inst);

}  // namespace tpusim::hlo
