// The streaming trace (sim/trace/trace_writer.h): every trace written here is validated by
// sim/trace/trace_check.h (whose own rules trace_check_test.cc tests).
#include <gtest/gtest.h>

#include <random>
#include <sstream>
#include <string>

#include "common/file_util.h"
#include "isa/assembler.h"
#include "sim/simulator.h"
#include "sim/trace/trace_check.h"
#include "sim/trace/trace_writer.h"
#include "tests/sim/random_program.h"
#include "tests/sim/sim_test_util.h"

namespace tpusim::sim {
namespace {

// A pipelined MXU: the second tile's weights load while the first matmul streams (the overlap
// Perfetto cannot show on one thread), DMAs and a VPU op, two HLO ops.
isa::Program Pipelined() {
  isa::Program p = testing::Asm(R"(
    .hlo_name 0 "dot.3"
    .hlo_name 1 "fusion.7"
    .hlo 0
    dma.hbm_to_vmem flag=0, src=0, dst=0, elem_bytes=2, n0=128
    dma.hbm_to_vmem flag=0, src=4096, dst=1024, elem_bytes=2, n0=512
    sync.wait flag=0, value=2
    mxu.load_weights mxu=0, addr=0, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=64, k=8, n=8, dtype=bf16, acc=0, latch=1
    mxu.load_weights mxu=0, addr=128, k=8, n=8, stride=8, dtype=bf16
    mxu.matmul mxu=0, lhs=1024, stride=8, m=64, k=8, n=8, dtype=bf16, acc=64, latch=1
    mxu.pop mxu=0, acc=0, m=64, n=8, acc_dtype=f32, dst=8192, stride=8, dtype=f32
    mxu.pop mxu=0, acc=64, m=64, n=8, acc_dtype=f32, dst=12288, stride=8, dtype=f32
    .hlo 1
    vpu.unary op=tanh, dtype=f32, dst=8192, src=8192, count=512
    dma.vmem_to_hbm flag=1, src=8192, dst=65536, elem_bytes=4, n0=1024
    sync.wait flag=1
    ctrl.halt
  )");
  std::mt19937_64 rng(3);
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kHbm, 0, 0, testing::RandomFloats(rng, 128)));
  p.data.push_back(
      testing::Bf16Segment(isa::MemSpace::kHbm, 0, 4096, testing::RandomFloats(rng, 512)));
  return p;
}

std::string TraceOf(const isa::Program& p, TraceWriterOptions options, TraceSummary* summary,
                    const config::ChipConfig& chip = testing::TinyChip()) {
  std::ostringstream out;
  TraceWriter writer(out, options);
  SimOptions o;
  o.trace_sink = &writer;
  auto r = Simulator(chip, o).Run(p);
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (summary != nullptr) *summary = writer.summary();
  return out.str();
}

TEST(TraceWriter, PipelinedMxuIsValidWithOwnThreadsCountersAndHloOps) {
  TraceSummary summary;
  const std::string t = TraceOf(Pipelined(), {}, &summary);
  auto check = CheckChromeTrace(t);
  ASSERT_TRUE(check.ok()) << check.status().message() << "\n" << t.substr(0, 3000);
  EXPECT_FALSE(summary.truncated);
  EXPECT_EQ(check->slices + check->counters, summary.events_written);
  for (const char* thread : {"\"HLO ops\"", "\"mxu0 weight loads\"", "\"mxu0 matmuls\"",
                             "\"mxu0 pops\"", "\"vpu\"", "\"dma0\""}) {
    EXPECT_NE(t.find(thread), std::string::npos) << thread;
  }
  EXPECT_NE(t.find("\"name\":\"chip0.hbm bandwidth\""), std::string::npos);
  EXPECT_NE(t.find("\"name\":\"VMEM in use\""), std::string::npos);
  EXPECT_NE(t.find("\"name\":\"dot.3\",\"ph\":\"X\""), std::string::npos);
  EXPECT_NE(t.find("\"truncated\":false"), std::string::npos);
}

TEST(TraceWriter, MaxEventsTruncatesAndSaysSo) {
  TraceSummary full, cut;
  TraceOf(Pipelined(), {}, &full);
  TraceWriterOptions o;
  o.max_events = 5;
  const std::string t = TraceOf(Pipelined(), o, &cut);
  EXPECT_TRUE(cut.truncated);
  EXPECT_EQ(cut.events_written, 5u);
  EXPECT_EQ(cut.events_written + cut.events_dropped, full.events_written);
  EXPECT_NE(t.find("\"truncated\":true"), std::string::npos);
  auto check = CheckChromeTrace(t);
  EXPECT_TRUE(check.ok()) << check.status().message();
}

TEST(TraceWriter, WindowKeepsOnlyWhatOverlapsIt) {
  TraceSummary full;
  TraceOf(Pipelined(), {}, &full);
  TraceWriterOptions o;
  o.window_start = full.cycles / 3;
  o.window_end = 2 * full.cycles / 3;
  TraceSummary part;
  const std::string t = TraceOf(Pipelined(), o, &part);
  auto check = CheckChromeTrace(t);
  ASSERT_TRUE(check.ok()) << check.status().message();
  EXPECT_LT(part.events_written, full.events_written);
  EXPECT_GT(part.events_written, 0u);
}

// examples/matmul_relu.tasm once gave an MXU track with overlapping, non-nested slices.
TEST(TraceWriter, ExampleProgramIsValid) {
  auto text = ReadFile("examples/matmul_relu.tasm");
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto p = isa::Assemble(*text, "matmul_relu.tasm");
  ASSERT_TRUE(p.ok()) << p.status().message();
  const std::string t = TraceOf(*p, {}, nullptr);
  auto check = CheckChromeTrace(t);
  EXPECT_TRUE(check.ok()) << check.status().message();
}

// Many cores, random programs: every trace keeps the rules.
TEST(TraceWriter, RandomMultiCoreProgramsAreValid) {
  for (uint64_t seed : {5u, 6u, 7u}) {
    const std::string t =
        TraceOf(testing::RandomProgram(seed, 4, 120), {}, nullptr, testing::TinyChip(4, 1));
    auto check = CheckChromeTrace(t);
    EXPECT_TRUE(check.ok()) << "seed " << seed << ": " << check.status().message();
  }
}

}  // namespace
}  // namespace tpusim::sim
