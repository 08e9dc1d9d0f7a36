// async-to-sync: rewrites the asynchronous start/done pairs of dumps taken after XLA's optimization
// passes into the synchronous ops they split (XLA's ConvertAsyncCollectivesToSync in reverse of
// its async conversion): all-reduce-start/done -> all-reduce, all-gather-start/done -> all-gather,
// collective-permute-start/done -> collective-permute, copy-start/done -> copy, and a generic
// async-start/done pair (calls=C), through any async-updates between them, -> call(C). tpusim's
// ISA schedule decides the overlap itself, so nothing is lost. A start or update with a user other
// than the next of its chain is left as is for the lowering to report by name.
#pragma once

#include "compiler/pass/hlo_pass.h"

namespace tpusim::compiler {

class AsyncToSync : public HloPass {
 public:
  std::string_view name() const override { return "async-to-sync"; }
  StatusOr<bool> Run(hlo::HloModule& module) override;
};

}  // namespace tpusim::compiler
