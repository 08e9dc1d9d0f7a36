// TPUSIM_CHECK: for broken internal invariants only (tpusim's own bugs), never for user input,
// which gets a Status (status.h). A failed check prints the condition, the location and the
// streamed message to stderr and aborts; the `tpusim` command turns an abort into exit code 3 only
// by crashing, so checks must be impossible to reach from any input — the fuzzers (tests/fuzz) look
// for exactly that.
#pragma once

#include <cstdlib>
#include <iostream>
#include <sstream>

namespace tpusim::internal {

class CheckFailure {
 public:
  CheckFailure(const char* cond, const char* file, int line) {
    stream_ << file << ":" << line << ": TPUSIM_CHECK(" << cond << ") failed: ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << stream_.str() << std::endl;
    std::abort();
  }
  std::ostream& stream() { return stream_; }

 private:
  std::ostringstream stream_;
};

}  // namespace tpusim::internal

#define TPUSIM_CHECK(cond) \
  if (cond) {              \
  } else                   \
    ::tpusim::internal::CheckFailure(#cond, __FILE__, __LINE__).stream()
