// bitcast-convert-expander: a bitcast-convert between element types of different bit widths
// (XLA operation semantics, BitcastConvertType: to a wider type the operand's last dimension,
// of size wide / narrow, is absorbed; to a narrower type the result gets a last dimension of that
// size) becomes same-width bitcast-converts and integer ops the VPU runs, in the byte order of a
// little-endian memory copy (the evaluator's, EvaluateBitcastConvert; element 0 of the narrow
// dimension holds the wide value's low bits):
//  * narrow [..., k] -> wide [...]: u_w = bitcast-convert(x) to the unsigned type of x's width;
//    wide = OR over j < k of convert(u_w[..., j]) << (j * narrow bits), as the unsigned wide type;
//  * wide [...] -> narrow [..., k]: piece j = convert((u_W >> (j * narrow bits)) & mask), the k
//    pieces concatenated along a new last dimension.
// JAX's rbg and unsafe_rbg PRNG keys (u32[2, 2] read as the u64[2] state of rng-bit-generator) are
// the case that led here. Widths of 8, 16, 32 and 64 bits; other bitcast-converts (same width,
// sub-byte types, pred) are left unchanged.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class BitcastConvertExpander : public HloPass {
 public:
  std::string_view name() const override { return "bitcast-convert-expander"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
