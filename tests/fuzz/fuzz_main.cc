// The libFuzzer driver of one target, chosen at compile time by TPUSIM_FUZZ_TARGET (a
// tpusim::fuzz::Target enumerator): fuzz_hlo, fuzz_asm, fuzz_decode, fuzz_config. Built only with
// -DTPUSIM_FUZZ=ON and clang; scripts/fuzz.sh builds and runs them.
//
// A Status is the layer's answer and is fine, except kInternal: the entry points use it for a
// broken round trip (print -> parse, encode -> decode, disassemble -> assemble), which is a bug and
// must stop the fuzzer like a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_entry_points.h"

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
