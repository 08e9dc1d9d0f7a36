// Whole-command resource limits: --max-seconds covers every phase of a command (reading, parsing,
// verifying, compiling, evaluating, interpreting, simulating, writing) and --max-memory caps the
// process's address space, so no input can make tpusim run or grow without bound.
#pragma once

#include <cstdint>

namespace tpusim::driver {

/// The phase a command is in, named in the --max-seconds message ("compile", "simulate", ...).
/// `phase` must be a string literal (it is read from the watchdog thread).
void SetPhase(const char* phase);

/// The phase last set (SetPhase; "start-up" before any): named in the out-of-memory message.
const char* CurrentPhase();

/// Starts the --max-seconds watchdog: one grace second after `seconds` of wall-clock time (0:
/// none; the simulator checks the limit itself and stops first with its own message) it prints
/// "tpusim: error: --max-seconds S: still running 1 s past the limit, in phase 'PHASE' ...",
/// removes the temporaries of outputs being written (no output is committed) and exits 2. Outputs
/// already being committed are let finish first, so a run leaves all its outputs or none.
void StartDeadline(double seconds);

/// Caps the address space at `bytes` (setrlimit RLIMIT_AS; 0: none): an allocation past it is
/// std::bad_alloc, which `tpusim` reports as out of memory, exit 2.
void SetMemoryLimit(int64_t bytes);

}  // namespace tpusim::driver
