// SparseMemory: a byte-addressed, little-endian memory of a fixed capacity whose pages are
// allocated on first write (bytes never written read as 0). It lets the interpreter model a 16 GiB
// HBM or a 128 MiB VMEM per core without allocating them. Iteration order is by address (std::map),
// so dumps are deterministic.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tpusim::isa {

/// "[0x100, 0x140)": the half-open byte range of `bytes` bytes from `address`, for messages; a
/// range that runs past 2^64 ends at "2^64 + 0x..." instead of a wrapped (smaller) end address.
std::string ByteRangeText(uint64_t address, uint64_t bytes);

class SparseMemory {
 public:
  static constexpr uint64_t kPageBytes = 64 * 1024;

  /// `name` is used in error messages ("VMEM of core 1").
  SparseMemory(std::string name, uint64_t capacity_bytes)
      : name_(std::move(name)), capacity_(capacity_bytes) {}

  uint64_t capacity() const { return capacity_; }
  const std::string& name() const { return name_; }

  /// OK if [address, address + bytes) lies inside the memory; else InvalidArgument naming the
  /// range.
  Status CheckRange(uint64_t address, uint64_t bytes) const;
  Status Read(uint64_t address, void* out, uint64_t bytes) const;
  Status Write(uint64_t address, const void* in, uint64_t bytes);
  /// Bytes allocated so far (pages touched by writes).
  uint64_t allocated_bytes() const { return pages_.size() * kPageBytes; }

 private:
  std::string name_;
  uint64_t capacity_;
  std::map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
};

}  // namespace tpusim::isa
