#include "common/heap.h"

// <cstdlib> first: __GLIBC__ is defined by the C library's own headers (<features.h>), not by the
// compiler, so it must be included before the test below or the trim is silently compiled out.
#include <cstdlib>

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
