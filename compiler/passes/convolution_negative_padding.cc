#include "compiler/passes/convolution_negative_padding.h"

#include <vector>

#include "compiler/passes/hlo_builder.h"
#include "hlo/convolution_form.h"

namespace tpusim::compiler {

StatusOr<bool> ConvolutionNegativePadding::Run(hlo::HloModule& module) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    std::vector<hlo::HloInstruction*> convs;
    for (const auto& i : comp->instructions()) {
      if (i->opcode() == hlo::HloOpcode::kConvolution && i->operand_count() == 2) {
        convs.push_back(i.get());
      }
    }
    for (hlo::HloInstruction* conv : convs) {
      const auto sliced =
          hlo::SliceNegativePadding(conv->operand(0)->shape().dimensions(), conv->window(),
                                    conv->convolution_dimension_numbers());
      if (!sliced) continue;
      HloBuilder b(comp.get(), conv);
      hlo::HloInstruction* in = b.Slice(conv->operand(0), sliced->start, sliced->limit,
                                        std::vector<int64_t>(sliced->lhs.size(), 1), "unpadded");
      conv->ReplaceOperandWith(0, in);
      conv->mutable_window() = sliced->window;
      changed = true;
    }
  }
  return changed;
}

}  // namespace tpusim::compiler
