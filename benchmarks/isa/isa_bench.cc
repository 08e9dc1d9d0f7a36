// Speed of the ISA layer's hot paths: instruction encode/decode, assembling, and the interpreter's
// MXU (one M x 128 x 128 bf16 matmul per iteration) and VPU (an elementwise add over a VMEM
// region).
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "isa/assembler.h"
#include "isa/disassembler.h"
#include "isa/encoding.h"
#include "isa/interpreter.h"

namespace tpusim::isa {
namespace {

MemorySizes Chip128() {
  MemorySizes s;
  s.vmem_bytes = 16 << 20;
  s.smem_bytes = 16 << 10;
  s.hbm_bytes_per_chip = 1 << 30;
  s.mxu_rows = s.mxu_cols = 128;
  s.accumulator_rows = 2048;
  return s;
}

void BM_EncodeDecode(benchmark::State& state) {
  op::MxuMatmul mm;
  mm.m = 8;
  mm.k = mm.n = 128;
  mm.stride = 128;
  mm.dtype = DType::kBF16;
  Instruction inst = mm.ToInstruction();
  for (auto _ : state) {
    Word w = EncodeInstruction(inst);
    benchmark::DoNotOptimize(DecodeInstruction(w));
  }
}
BENCHMARK(BM_EncodeDecode);

void BM_AssembleLine(benchmark::State& state) {
  const std::string line =
      "mxu.matmul mxu=0, lhs=0x4000, stride=128, m=8, k=128, n=128, dtype=bf16, acc=0, latch=1";
  for (auto _ : state) benchmark::DoNotOptimize(AssembleInstruction(line));
}
BENCHMARK(BM_AssembleLine);

void BM_InterpreterMatmul(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  auto p = Assemble(fmt::format(R"(
mxu.load_weights mxu=0, addr=0x0, k=128, n=128, stride=128, dtype=bf16
mxu.matmul mxu=0, lhs=0x10000, stride=128, m={0}, k=128, n=128, dtype=bf16, acc=0, latch=1
mxu.pop mxu=0, acc=0, m={0}, n=128, acc_dtype=f32, dst=0x100000, stride=128, dtype=f32
)",
                                m));
  Interpreter in(Chip128());
  for (auto _ : state) {
    (void)in.Load(*p);
    benchmark::DoNotOptimize(in.Run());
  }
  state.counters["MAC/s"] = benchmark::Counter(static_cast<double>(m) * 128 * 128,
                                               benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_InterpreterMatmul)->Arg(8)->Arg(128);

void BM_InterpreterVpuAdd(benchmark::State& state) {
  auto p = Assemble(
      "vpu.binary op=add, dtype=f32, dst=0x200000, a=0x0, b=0x100000, rows=256, cols=1024\n");
  Interpreter in(Chip128());
  for (auto _ : state) {
    (void)in.Load(*p);
    benchmark::DoNotOptimize(in.Run());
  }
  state.counters["elem/s"] =
      benchmark::Counter(256.0 * 1024, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_InterpreterVpuAdd);

}  // namespace
}  // namespace tpusim::isa

BENCHMARK_MAIN();
