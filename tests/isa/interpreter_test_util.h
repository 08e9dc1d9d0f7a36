// Helpers for interpreter tests: a small chip, assembling + running a program, reading values back.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "isa/assembler.h"
#include "isa/interpreter.h"
#include "isa/numerics.h"
#include "isa/verifier.h"

namespace tpusim::isa::testing {

/// A 4-core system (2 chips x 2 cores, HBM shared per chip), 1 MiB VMEM, 2 MXUs of 8x8, 64 acc
/// rows.
inline MemorySizes SmallChip() {
  MemorySizes s;
  s.cores = 4;
  s.tensorcores_per_chip = 2;
  s.vmem_bytes = 1 << 20;
  s.smem_bytes = 16 << 10;
  s.hbm_bytes_per_chip = 64 << 20;
  s.hbm_shared_by_cores = true;
  s.mxu_count = 2;
  s.mxu_rows = 8;
  s.mxu_cols = 8;
  s.accumulator_rows = 64;
  return s;
}

/// Assembles, verifies and runs `text`; fails the test on any error.
inline void RunAsm(Interpreter& interp, const std::string& text) {
  auto p = Assemble(text, "test.tasm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  Status v = Verify(*p, interp.sizes());
  ASSERT_TRUE(v.ok()) << v.message();
  Status l = interp.Load(*p);
  ASSERT_TRUE(l.ok()) << l.message();
  Status r = interp.Run();
  ASSERT_TRUE(r.ok()) << r.message();
}

/// Assembles and runs, returning the Load/Run status (for expected runtime errors).
inline Status RunAsmStatus(Interpreter& interp, const std::string& text) {
  auto p = Assemble(text, "test.tasm");
  if (!p.ok()) return p.status();
  TPUSIM_RETURN_IF_ERROR(interp.Load(*p));
  return interp.Run();
}

inline std::vector<float> ReadF32(SparseMemory& m, uint64_t addr, size_t n) {
  std::vector<float> v(n);
  EXPECT_TRUE(m.Read(addr, v.data(), n * 4).ok());
  return v;
}
inline std::vector<float> ReadBf16(SparseMemory& m, uint64_t addr, size_t n) {
  std::vector<uint16_t> b(n);
  EXPECT_TRUE(m.Read(addr, b.data(), n * 2).ok());
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = Bf16BitsToF32(b[i]);
  return v;
}
inline std::vector<int32_t> ReadS32(SparseMemory& m, uint64_t addr, size_t n) {
  std::vector<int32_t> v(n);
  EXPECT_TRUE(m.Read(addr, v.data(), n * 4).ok());
  return v;
}
inline std::vector<int8_t> ReadS8(SparseMemory& m, uint64_t addr, size_t n) {
  std::vector<int8_t> v(n);
  EXPECT_TRUE(m.Read(addr, v.data(), n).ok());
  return v;
}
inline void WriteF32(SparseMemory& m, uint64_t addr, const std::vector<float>& v) {
  ASSERT_TRUE(m.Write(addr, v.data(), v.size() * 4).ok());
}

}  // namespace tpusim::isa::testing
