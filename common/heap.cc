#include "common/heap.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tpusim {

void ReleaseFreeHeap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace tpusim
