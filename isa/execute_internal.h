// Memory helpers shared by the execute_*.cc files (not a public header).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "common/status.h"
#include "isa/memory.h"
#include "isa/types.h"

namespace tpusim::isa::internal {

/// Reads n elements of t at addr, refusing (before allocating) anything the memory cannot hold.
inline StatusOr<std::string> ReadElems(const SparseMemory& m, uint64_t addr, uint64_t n, DType t,
                                       std::string_view what) {
  const uint64_t eb = static_cast<uint64_t>(DTypeBytes(t));
  if (n > m.capacity() / eb) {
    return InvalidArgument(fmt::format("{}: {} {} elements do not fit in {} ({} bytes)", what, n,
                                       Name(t), m.name(), m.capacity()));
  }
  std::string buf(n * eb, '\0');
  Status st = m.Read(addr, buf.data(), buf.size());
  if (!st.ok()) return InvalidArgument(fmt::format("{}: {}", what, st.message()));
  return buf;
}

inline Status WriteBytes(SparseMemory& m, uint64_t addr, const std::string& bytes,
                         std::string_view what) {
  Status st = m.Write(addr, bytes.data(), bytes.size());
  if (!st.ok()) return InvalidArgument(fmt::format("{}: {}", what, st.message()));
  return OkStatus();
}

}  // namespace tpusim::isa::internal
