// rng-bit-generator on the VPU's counter-based generator (vpu.rng_bits, Philox-4x32-10): the
// state is staged in VMEM, the bits are generated in VMEM blocks of whole Philox blocks (four
// words, so the stream is the same as one call over all of them) and stored, and the advanced
// state is stored last. The evaluator's rng-bit-generator uses the same Philox stream
// (hlo/eval/kernels/rng.h), so the check compares bits. The state is XLA's u64[n] (key, counter,
// ...), used in full. rng_three_fry / rng_philox reach here only where
// rng-bit-generator-expander could not write XLA's expansion (rng_xla.h says which).
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "compiler/lower/lowerer.h"
#include "hlo/eval/kernels/rng_xla.h"

namespace tpusim::compiler {

using hlo::HloInstruction;
using hlo::PrimitiveType;

Status Lowerer::LowerRngBitGenerator(const HloInstruction& inst) {
  if (inst.rng_algorithm() != hlo::RandomAlgorithm::kDefault) {  // rng-bit-generator-expander's
    const std::string why = inst.shape().IsTuple() && inst.shape().tuple_shapes_size() == 2
                                ? hlo::XlaRngUnsupported(inst.rng_algorithm(),
                                                         inst.operand(0)->shape(),
                                                         inst.shape().tuple_shapes(1))
                                : "the result is not a (state, bits) tuple";
    return Unsupported(inst, fmt::format("algorithm={}: {}",
                                         hlo::RandomAlgorithmName(inst.rng_algorithm()),
                                         why.empty() ? "not expanded" : why));
  }
  const hlo::Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes_size() != 2) {
    return Unsupported(inst, "the result is not a (state, bits) tuple");
  }
  const PrimitiveType bits_type = shape.tuple_shapes(1).element_type();
  const int bits = hlo::BitWidth(bits_type);
  if (!hlo::IsInteger(bits_type) || (bits != 32 && bits != 64)) {
    return Unsupported(inst, fmt::format("{} random values (32- and 64-bit integers only, as XLA's "
                                         "generator)",
                                         hlo::PrimitiveTypeName(bits_type)));
  }
  const HbmBuffer& state = Buffer(inst.operand(0));
  const std::vector<HbmBuffer>& outs = Buffers(&inst);
  if (state.elements() < 2 || outs.size() != 2 || outs[0].elements() != state.elements()) {
    return Unsupported(inst, "the state must be u64[n >= 2]");
  }
  const int64_t words = outs[1].elements() * (bits / 32);  // a 64-bit value takes two words
  const int64_t state_bytes = state.bytes();
  TPUSIM_ASSIGN_OR_RETURN(uint64_t st, Vmem(inst, state_bytes, "generator state"));
  em_.DmaContiguous(isa::Opcode::kDmaHbmToVmem, state.address, st, state_bytes, 4, kLoadFlag);
  em_.Wait(kLoadFlag, 1);
  if (words > 0) {
    const int64_t room = (em_.vmem_free() / 4) / 4 * 4;  // whole Philox blocks of 4 words
    if (room < 4) return DoesNotFit(inst, "VMEM: no room for one block of random words");
    const int64_t block = std::min<int64_t>(room, (words + 3) / 4 * 4);
    TPUSIM_ASSIGN_OR_RETURN(uint64_t buf, Vmem(inst, block * 4, "random words"));
    for (int64_t w0 = 0; w0 < words; w0 += block) {
      const int64_t n = std::min(block, words - w0);
      em_.Emit(isa::op::VpuRngBits{.state = st, .dst = buf, .count = static_cast<uint64_t>(n)});
      em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, buf,
                        outs[1].address + static_cast<uint64_t>(w0 * 4), n * 4, 4, kStoreFlag);
      em_.Wait(kStoreFlag, 1);  // the next block overwrites the buffer
      TPUSIM_RETURN_IF_ERROR(em_.CheckSize());
    }
  }
  em_.DmaContiguous(isa::Opcode::kDmaVmemToHbm, st, outs[0].address, state_bytes, 4, kStoreFlag);
  em_.Wait(kStoreFlag, 1);
  return OkStatus();
}

}  // namespace tpusim::compiler
