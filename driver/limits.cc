#include "driver/limits.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "common/output_set.h"

namespace tpusim::driver {
namespace {

std::atomic<const char*> g_phase{"start-up"};
constexpr double kGraceSeconds = 1;

}  // namespace

void SetPhase(const char* phase) { g_phase.store(phase); }

const char* CurrentPhase() { return g_phase.load(); }

void StartDeadline(double seconds) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return;
  // A grace second: the phases that check the limit themselves (the simulator) stop first, with
  // their own message; this catches every other phase. A limit too large for the clock's range
  // (about 292 years) means no limit, as in the simulator: converting it would overflow.
  const std::chrono::duration<double> wait(seconds + kGraceSeconds);
  const auto now = std::chrono::steady_clock::now();
  if (!(wait < std::chrono::steady_clock::time_point::max() - now)) return;
  const auto until = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait);
  std::thread([seconds, until] {
    std::this_thread::sleep_until(until);
    char message[256];
    std::snprintf(message, sizeof message,
                  "tpusim: error: --max-seconds %g: still running %g s past the limit, in phase "
                  "'%s' (a time limit, not a result); no output was written\n",
                  seconds, kGraceSeconds, g_phase.load());
    // Outputs already committed: the run is complete but for printing; let it end by itself.
    ExitUnlessCommitted(2, message);
  }).detach();
}

void SetMemoryLimit(int64_t bytes) {
  if (bytes <= 0) return;
  struct rlimit limit {};
  limit.rlim_cur = static_cast<rlim_t>(bytes);
  limit.rlim_max = RLIM_INFINITY;
  if (::getrlimit(RLIMIT_AS, &limit) == 0) {
    limit.rlim_cur = std::min<rlim_t>(static_cast<rlim_t>(bytes), limit.rlim_max);
    ::setrlimit(RLIMIT_AS, &limit);
  }
}

}  // namespace tpusim::driver
