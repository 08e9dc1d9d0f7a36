// Static traffic analysis of a program: the bytes its DMAs move between HBM and VMEM, summed over
// every core and every ctrl.loop trip, found by walking the instructions (loop counts are
// immediates) without executing them.
#pragma once

#include "isa/program.h"

namespace tpusim::isa {

/// Bytes the program's dma.hbm_to_vmem, dma.vmem_to_hbm, dma.gather and dma.scatter move, over
/// every core and every loop trip (DmaBytesMovedDouble per execution). A loop left by
/// ctrl.break_unless counts the trips its `trips` field assumes + 1 (the one that leaves), as a
/// timing-only run does, when that is fewer than its count: for such a loop the total is an upper
/// bound. In double: exact below 2^53, never wraps. Computing values is work in proportion to these
/// bytes, for the functional simulator and for the evaluator alike (`tpusim run
/// --max-check-traffic` bounds it).
double ProgramDmaBytes(const Program& program);

}  // namespace tpusim::isa
