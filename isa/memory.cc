#include "isa/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>

namespace tpusim::isa {

std::string ByteRangeText(uint64_t address, uint64_t bytes) {
  if (bytes > std::numeric_limits<uint64_t>::max() - address) {
    // address + bytes (< 2^65) as 2^64 + the wrapped remainder.
    return fmt::format("[{:#x}, 2^64 + {:#x})", address, address + bytes);
  }
  return fmt::format("[{:#x}, {:#x})", address, address + bytes);
}

Status SparseMemory::CheckRange(uint64_t address, uint64_t bytes) const {
  if (address > capacity_ || bytes > capacity_ - address) {
    return InvalidArgument(fmt::format("bytes {} are outside {} ({} bytes)",
                                       ByteRangeText(address, bytes), name_, capacity_));
  }
  return OkStatus();
}

Status SparseMemory::Read(uint64_t address, void* out, uint64_t bytes) const {
  TPUSIM_RETURN_IF_ERROR(CheckRange(address, bytes));
  auto* dst = static_cast<uint8_t*>(out);
  while (bytes > 0) {
    uint64_t page = address / kPageBytes, offset = address % kPageBytes;
    uint64_t take = std::min(bytes, kPageBytes - offset);
    auto it = pages_.find(page);
    if (it == pages_.end()) {
      std::memset(dst, 0, take);
    } else {
      std::memcpy(dst, it->second.get() + offset, take);
    }
    dst += take;
    address += take;
    bytes -= take;
  }
  return OkStatus();
}

Status SparseMemory::Write(uint64_t address, const void* in, uint64_t bytes) {
  TPUSIM_RETURN_IF_ERROR(CheckRange(address, bytes));
  const auto* src = static_cast<const uint8_t*>(in);
  while (bytes > 0) {
    uint64_t page = address / kPageBytes, offset = address % kPageBytes;
    uint64_t take = std::min(bytes, kPageBytes - offset);
    auto& p = pages_[page];
    if (!p) {
      p = std::make_unique<uint8_t[]>(kPageBytes);
      std::memset(p.get(), 0, kPageBytes);
    }
    std::memcpy(p.get() + offset, src, take);
    src += take;
    address += take;
    bytes -= take;
  }
  return OkStatus();
}

}  // namespace tpusim::isa
