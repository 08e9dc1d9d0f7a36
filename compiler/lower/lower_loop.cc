// Loop regions (compiler/passes/loop_region.h): loop_begin copies the initial state into the state
// buffers and opens ctrl.loop; a branch loop's loop_break leaves it on a false condition
// (ctrl.break_unless); loop_end copies the body's results into them and closes it.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "compiler/lower/lowerer.h"
#include "compiler/passes/loop_region.h"
#include "compiler/passes/while_lowering.h"

namespace tpusim::compiler {

using hlo::HloInstruction;

namespace {

bool Overlap(const HbmBuffer& a, const HbmBuffer& b) {
  const uint64_t a_end = a.address + static_cast<uint64_t>(std::max<int64_t>(a.bytes(), 1));
  const uint64_t b_end = b.address + static_cast<uint64_t>(std::max<int64_t>(b.bytes(), 1));
  return a.address < b_end && b.address < a_end;
}

}  // namespace

Status Lowerer::LowerLoopBegin(const HloInstruction& inst) {
  const int64_t trips = LoopTrips(inst);
  if (trips < 0 || trips > int64_t{0xFFFFFFFF}) {
    return Unsupported(
        inst, fmt::format("the trip count \"{}\" is not in [0, 2^32)", inst.backend_config()));
  }
  if (loop_depth_ >= kMaxLoopRegionDepth) {
    return Unsupported(inst, fmt::format("ISA loops nest at most {} deep", kMaxLoopRegionDepth));
  }
  if (megacore_.rank == 0) {
    const std::vector<HbmBuffer>& init = Buffers(inst.operand(0));
    const std::vector<HbmBuffer>& state = Buffers(&inst);
    TPUSIM_CHECK(init.size() == state.size()) << "%" << inst.name() << ": state leaf count";
    for (size_t i = 0; i < state.size(); ++i) {
      em_.ResetVmem();
      TPUSIM_RETURN_IF_ERROR(LowerCopyValue(inst, init[i], state[i]));
    }
  }
  em_.Emit(isa::op::CtrlLoop{.count = static_cast<uint64_t>(trips)});
  ++loop_depth_;
  return OkStatus();
}

Status Lowerer::LowerLoopBreak(const HloInstruction& inst) {
  const std::vector<HbmBuffer>& pred = Buffers(inst.operand(0));
  if (pred.size() != 1 || pred[0].dtype != isa::DType::kPred || loop_depth_ == 0) {
    return Unsupported(inst, "a loop break needs one pred inside a loop region");
  }
  int64_t trips = -1;
  const std::string& hint = inst.backend_config();
  auto [end, ec] = std::from_chars(hint.data(), hint.data() + hint.size(), trips);
  if (ec != std::errc() || end != hint.data() + hint.size() || trips < 0 ||
      trips > int64_t{0xFFFFFFFF}) {
    return Unsupported(inst, fmt::format("the trip count \"{}\" is not in [0, 2^32)", hint));
  }
  // Every core of a megacore device leaves together: the first core computed the pred.
  if (megacore_.size > 1) MegacoreBarrier();
  em_.Emit(isa::op::CtrlBreakUnless{.space = isa::MemSpace::kHbm,
                                    .addr = pred[0].address,
                                    .trips = static_cast<uint64_t>(trips)});
  return OkStatus();
}

Status Lowerer::LowerLoopEnd(const HloInstruction& inst) {
  if (megacore_.rank == 0) {
    const std::vector<HbmBuffer>& state = Buffers(inst.operand(0));
    const std::vector<HbmBuffer>& result = Buffers(inst.operand(1));
    TPUSIM_CHECK(result.size() == state.size()) << "%" << inst.name() << ": state leaf count";
    // Copy result[i] -> state[i] where they differ. A result that is another state buffer (a body
    // that passes element j on as element i) must be copied before that buffer is overwritten.
    std::vector<size_t> pending;
    for (size_t i = 0; i < state.size(); ++i) {
      if (result[i].address != state[i].address) pending.push_back(i);
    }
    while (!pending.empty()) {
      bool progress = false;
      for (size_t k = 0; k < pending.size(); ++k) {
        const size_t i = pending[k];
        // (A result may be a view into another state buffer: compare byte ranges.)
        bool read_later = false;
        for (size_t j : pending) {
          read_later = read_later || (j != i && Overlap(result[j], state[i]));
        }
        if (read_later) continue;
        em_.ResetVmem();
        TPUSIM_RETURN_IF_ERROR(LowerCopyValue(inst, result[i], state[i]));
        pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(k));
        progress = true;
        break;
      }
      if (!progress) {
        return Unsupported(inst,
                           "the loop body permutes its state elements in a cycle (e.g. "
                           "returns (b, a) for state (a, b)); not supported yet");
      }
    }
  }
  em_.Emit(isa::op::CtrlEndLoop{});
  --loop_depth_;
  return OkStatus();
}

}  // namespace tpusim::compiler
