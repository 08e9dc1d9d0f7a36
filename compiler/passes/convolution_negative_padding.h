// convolution-negative-padding: a convolution whose window has negative edge padding (and no base
// dilation along that dimension) reads a slice of its input: the rows a negative pad cuts off
// never reach any output. JAX writes such windows for the kernel gradient of a strided
// convolution whose input is not covered exactly by the stride (a ResNet's 1x1/2 projection
// shortcut on an even-sized input: `pad=0_-1`), and the MXU forms (direct, filter-gradient,
// im2col) take only non-negative padding.
//
// Contract. For every spatial dimension d with padding_low < 0 or padding_high < 0 and
// base_dilation 1: the input is sliced to [-min(low, 0), size + min(high, 0)) along d and the
// padding becomes (max(low, 0), max(high, 0)). The output (shape and values) is unchanged: the
// same products in the same order. A dimension with base dilation and negative padding, or one the
// slice would leave empty, is left for the lowering to report.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class ConvolutionNegativePadding : public HloPass {
 public:
  std::string_view name() const override { return "convolution-negative-padding"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
