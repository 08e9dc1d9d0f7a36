// The report writers: the JSON keys of docs/report-schema.md, the per-op CSV, the table, the trace.
#include "sim/report/report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "common/file_util.h"
#include "sim/simulator.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

isa::Program TaggedGemm() {
  isa::Program p = testing::Asm(R"(
    .hlo_name 0 "dot.3"
    .hlo_name 1 "fusion.7"
    .hlo 0
    dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=2, n0=64
    dma.hbm_to_vmem flag=0, src=4096, dst=1024, elem_bytes=2, n0=512
    sync.wait flag=0, value=2
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=64, k=8, n=8, dtype=bf16, acc=0, latch=1
    mxu.pop mxu=0, acc=0, m=64, n=8, acc_dtype=f32, dst=8192, stride=8, dtype=f32
    .hlo 1
    vpu.unary op=tanh, dtype=f32, dst=8192, src=8192, count=512
    dma.vmem_to_hbm flag=1, src=8192, dst=65536, elem_bytes=4, n0=512
    sync.wait flag=1
    ctrl.halt
  )");
  std::mt19937_64 rng(5);
  p.data.push_back(testing::Bf16Segment(isa::MemSpace::kHbm, 0, 0, testing::RandomFloats(rng, 64)));
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kHbm, 0, 4096, testing::RandomFloats(rng, 512)));
  return p;
}

TEST(ReportTest, JsonHasTheDocumentedKeysAndConsistentTotals) {
  isa::Program p = TaggedGemm();
  SimOptions options;
  options.instruction_profile = true;  // per-instruction cycles and CSV below
  auto r = Simulator(testing::TinyChip(), options).Run(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Json j = BuildReportJson(*r, p);
  for (const char* key :
       {"cycles", "seconds", "clock_hz", "flops", "achieved_flops_per_s", "peak_flops_per_s",
        "mxu_utilization", "hbm", "cores", "ops", "stalls", "ici", "units"}) {
    EXPECT_NE(j.Find(key), nullptr) << key;
  }
  for (const char* key : {"bytes_read", "bytes_written", "bandwidth_bytes_per_s"}) {
    EXPECT_NE(j.Find("hbm")->Find(key), nullptr) << key;
  }
  // HBM: 128 + 1024 bytes read, 2048 written.
  std::string dump = j.Dump(0);
  EXPECT_NE(dump.find("\"bytes_read\":1152"), std::string::npos) << dump.substr(0, 600);
  EXPECT_NE(dump.find("\"bytes_written\":2048"), std::string::npos);
  // Ops: the matmul's 2*64*8*8 FLOP go to dot.3, the tanh's 512 to fusion.7; the cycles of both
  // ops (and of nothing else: every instruction is tagged) sum to the core's cycles.
  std::vector<OpSummary> ops = SummarizeOps(*r, p);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "dot.3");
  EXPECT_EQ(ops[0].opcode, "dot");
  EXPECT_EQ(ops[0].flops, 2u * 64 * 8 * 8);
  EXPECT_EQ(ops[1].opcode, "fusion");
  EXPECT_EQ(ops[1].flops, 512u);
  EXPECT_EQ(ops[0].cycles + ops[1].cycles, r->cycles.value());
  std::string csv = BuildOpsCsv(*r, p);
  EXPECT_EQ(csv.rfind("name,opcode,cycles,flops,bytes,instructions,compiler_inserted\n", 0), 0u);
  EXPECT_NE(csv.find("dot.3,dot,"), std::string::npos);
  std::string insts = BuildInstructionsCsv(*r, p);
  EXPECT_NE(insts.find("0,4,mxu.matmul,dot.3,1,"), std::string::npos) << insts;
  std::string table = BuildReportTable(*r, p);
  EXPECT_NE(table.find("array_active"), std::string::npos);
}

// A run keeps its profile per HLO op (a few hundred bytes per op and core); the 40-byte record per
// instruction and core only on request: the op table is the same either way.
TEST(ReportTest, OpTableNeedsNoPerInstructionProfile) {
  isa::Program p = TaggedGemm();
  auto lean = Simulator(testing::TinyChip()).Run(p);
  ASSERT_TRUE(lean.ok()) << lean.status().message();
  EXPECT_TRUE(lean->cores[0].instructions.empty());
  SimOptions options;
  options.instruction_profile = true;
  auto full = Simulator(testing::TinyChip(), options).Run(p);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->cores[0].instructions.size(), p.cores[0].instructions.size());
  EXPECT_EQ(BuildOpsCsv(*lean, p), BuildOpsCsv(*full, p));
  EXPECT_EQ(BuildReportJson(*lean, p).Dump(0), BuildReportJson(*full, p).Dump(0));
}

TEST(ReportTest, CollectorKeepsAnEventPerInstruction) {
  isa::Program p = TaggedGemm();
  SimOptions o;
  o.trace = true;
  auto r = Simulator(testing::TinyChip(), o).Run(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->trace_events.size(), 10u);  // every instruction, halt included
  EXPECT_FALSE(r->trace_truncated);
  o.trace_max_events = 4;
  auto cut = Simulator(testing::TinyChip(), o).Run(p);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->trace_events.size(), 4u);
  EXPECT_TRUE(cut->trace_truncated);
}

}  // namespace
}  // namespace tpusim::sim
