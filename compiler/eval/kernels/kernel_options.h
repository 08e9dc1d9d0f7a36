// Options every CPU kernel takes: the thread count (results never depend on it; see parallel.h) and
// the byte limit for any one value the kernel allocates (Literal::Create refuses bigger ones).
#pragma once

#include <cstdint>

#include "compiler/eval/literal.h"

namespace tpusim::hlo {

struct KernelOptions {
  int threads = 1;
  int64_t max_bytes = Literal::kDefaultMaxBytes;
};

}  // namespace tpusim::hlo
