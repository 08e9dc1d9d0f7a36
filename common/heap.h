// ReleaseFreeHeap: hands the memory allocator's free pages back to the operating system.
#pragma once

namespace tpusim {

/// Returns the heap's free pages to the OS (glibc: malloc_trim(0), which also releases whole free
/// pages inside the heap, not only at its top), so the resident set follows what is live once a
/// phase has freed a large working set of small blocks — the simulated memories' 64 KiB pages
/// before the check's evaluation (driver/run_module.cc). No effect with other C libraries.
void ReleaseFreeHeap();

}  // namespace tpusim
