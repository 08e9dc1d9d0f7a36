// rng-bit-generator-expander: XLA's RngBitGeneratorExpander
// (xla/service/rng_bit_generator_expander.cc) for algorithm=rng_three_fry and rng_philox. Each
// such rng-bit-generator becomes the elementwise HLO of XLA's ThreeFryBitGenerator /
// PhiloxBitGenerator (xla/hlo/builder/lib/prng.cc): u32 rotations, adds and xors for
// Threefry-2x32-20, u64 multiplies split into u32 halves for Philox-4x32-10, iota counters with
// the 128-bit carry, and the concatenates, reshapes and slices that lay the words out as XLA does;
// the result is tuple(new state, bits). The evaluator computes the same bits directly
// (hlo/eval/kernels/rng_xla.h, whose comment gives the layout), so a device run is checked bit for
// bit. rng_default stays (tpusim's generator, vpu.rng_bits); a state or bits type XLA's expansion
// does not take (XlaRngUnsupported) stays for the lowering's located error.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class RngBitGeneratorExpander : public HloPass {
 public:
  std::string_view name() const override { return "rng-bit-generator-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
