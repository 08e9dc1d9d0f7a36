// Uses the installed tpusim libraries: loads an installed chip config, assembles a small ISA
// program and simulates it cycle by cycle. Prints "consumer: N cycles on tiny" (exit 0) or the error
// (exit 1).
#include <cstdio>

#include "config/config_loader.h"
#include "isa/assembler.h"
#include "sim/simulator.h"

int main() {
  auto chip = tpusim::config::LoadChipConfig(std::string(CONFIG_DIR) + "/tiny.yaml");
  if (!chip.ok()) return std::printf("consumer: %s\n", chip.status().message().c_str()), 1;
  auto program = tpusim::isa::Assemble(R"(
    dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=2, n0=64
    sync.wait flag=0
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=0, stride=8, m=8, k=8, n=8, dtype=bf16, acc=0, latch=1
    mxu.pop mxu=0, acc=0, m=8, n=8, acc_dtype=f32, dst=4096, stride=8, dtype=f32
    ctrl.halt
  )");
  if (!program.ok()) return std::printf("consumer: %s\n", program.status().message().c_str()), 1;
  auto r = tpusim::sim::Simulator(*chip).Run(*program);
  if (!r.ok()) return std::printf("consumer: %s\n", r.status().message().c_str()), 1;
  std::printf("consumer: %llu cycles on %s\n",
              static_cast<unsigned long long>(r->cycles.value()), chip->name.c_str());
  return 0;
}
