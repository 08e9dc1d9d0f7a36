// The libFuzzer driver of one target, chosen at compile time by TPUSIM_FUZZ_TARGET (a
// tpusim::fuzz::Target enumerator): fuzz_hlo, fuzz_asm, fuzz_decode, fuzz_config. Built only with
// -DTPUSIM_FUZZ=ON and clang; scripts/fuzz.sh builds and runs them.
//
// A Status is the layer's answer and is fine, except kInternal: the entry points use it for a
// broken round trip (print -> parse, encode -> decode, disassemble -> assemble), which is a bug and
// must stop the fuzzer like a crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_entry_points.h"
#include "tests/fuzz/fuzz_pipeline.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using tpusim::fuzz::Target;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  tpusim::Status status = tpusim::fuzz::RunFuzzTarget(Target::TPUSIM_FUZZ_TARGET, input);
  if (status.code() == tpusim::StatusCode::kInternal) {
    std::fprintf(stderr, "fuzz: internal error: %s\n", status.message().c_str());
    std::abort();
  }
  return 0;
}

#define TPUSIM_FUZZ_IS_PIPELINE_kPipeline 1
#define TPUSIM_FUZZ_IS_PIPELINE(t) TPUSIM_FUZZ_IS_PIPELINE_##t
#define TPUSIM_FUZZ_PIPELINE_TARGET(t) TPUSIM_FUZZ_IS_PIPELINE(t)
#if TPUSIM_FUZZ_PIPELINE_TARGET(TPUSIM_FUZZ_TARGET) == 1
// Structure-aware mutations for the pipeline target (half of the time; libFuzzer's byte-level
// mutations the other half): numbers to extremes, lines deleted or duplicated, opcodes and
// operands swapped, list attributes replaced (fuzz_pipeline.h MutateHlo).
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  if (seed % 2 == 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::string out =
      tpusim::fuzz::MutateHlo(std::string_view(reinterpret_cast<const char*>(data), size), seed);
  const size_t n = std::min(out.size(), max_size);
  std::memcpy(data, out.data(), n);
  return n;
}
#endif
