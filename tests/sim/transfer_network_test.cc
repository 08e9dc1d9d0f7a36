#include "sim/chip/transfer_network.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "config/chip_config.h"
#include "sim/engine/engine.h"

namespace tpusim::sim {
namespace {

// Sends scripted requests at given cycles and records when each completion arrives.
class Requester : public Unit {
 public:
  struct Job {
    uint64_t at;
    TransferRequest req;
  };
  Requester(TransferNetwork::Connection conn, std::vector<Job> jobs)
      : conn_(conn), jobs_(std::move(jobs)) {}
  const std::string& path() const override { return path_; }
  void Step(Cycles now) override {
    while (next_ < jobs_.size() && jobs_[next_].at == now.value()) {
      conn_.request->Send(now, jobs_[next_].req);
      ++next_;
    }
    while (conn_.done->HasReady(now)) done_[conn_.done->Pop(now).tag] = now.value();
  }
  Cycles NextWork(Cycles) const override {
    Cycles t = conn_.done->NextArrival();
    if (next_ < jobs_.size()) t = EarliestOf(t, Cycles(jobs_[next_].at));
    return t;
  }
  std::map<uint64_t, uint64_t> done_;

 private:
  std::string path_ = "requester";
  TransferNetwork::Connection conn_;
  std::vector<Job> jobs_;
  size_t next_ = 0;
};

TransferRequest Req(uint64_t tag, uint64_t bytes, std::vector<int> res, uint64_t latency) {
  TransferRequest r;
  r.tag = tag;
  r.bytes = Bytes(bytes);
  for (int id : res) r.uses.push_back({id, UseKind::kRead});
  r.latency = Cycles(latency);
  return r;
}

TEST(TransferNetworkTest, OneTransferCostsIssuePlusBytesOverBandwidthPlusLatency) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  int hbm = net.AddResource("hbm", 64.0);
  Requester r(net.Connect(Cycles(3)), {{0, Req(1, 6400, {hbm}, 20)}});
  Engine e;
  e.AddUnit(&r);
  e.AddUnit(&net);
  ASSERT_TRUE(e.Run(Cycles(100000)).ok());
  // issue 3 + 6400 B / 64 B/cycle = 100 + latency 20 = 123.
  EXPECT_EQ(r.done_[1], 123u);
  EXPECT_EQ(*stats.Get("hbm", "busy_cycles"), 100u);
  EXPECT_EQ(*stats.Get("hbm", "bytes_read"), 6400u);
}

TEST(TransferNetworkTest, FractionalRateIsExact) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  int r25 = net.AddResource("r", 2.5);
  Requester r(net.Connect(Cycles(1)), {{0, Req(1, 10, {r25}, 1)}, {0, Req(2, 1000001, {r25}, 1)}});
  Engine e;
  e.AddUnit(&r);
  e.AddUnit(&net);
  ASSERT_TRUE(e.Run(Cycles(10000000)).ok());
  // Both share 2.5 B/cycle: 1.25 B/cycle each, so 10 B take ceil(10 / 1.25) = 8 cycles (1..8), done
  // at 1 + 8 + 1 = 10. The second then moved 8 * 1.25 = 10 B and has 999991 B left at 2.5 B/cycle:
  // ceil(999991 / 2.5) = 399997 cycles more, last byte before cycle 9 + 399997, done one cycle
  // later.
  EXPECT_EQ(r.done_[1], 10u);
  EXPECT_EQ(r.done_[2], 9u + 399997u + 1u);
}

TEST(TransferNetworkTest, ConcurrentTransfersShareFairly) {
  StatRegistry stats;
  TransferNetwork net("net", stats);
  int hbm = net.AddResource("hbm", 100.0);
  Requester r(
      net.Connect(Cycles(1)),
      {{0, Req(1, 1000, {hbm}, 1)}, {0, Req(2, 1000, {hbm}, 1)}, {0, Req(3, 1000, {hbm}, 1)}});
  Engine e;
  e.AddUnit(&r);
  e.AddUnit(&net);
  ASSERT_TRUE(e.Run(Cycles(100000)).ok());
  // 3000 B at 100 B/cycle = 30 cycles, all three finish together: 1 + 30 + 1.
  EXPECT_EQ(r.done_[1], 32u);
  EXPECT_EQ(r.done_[3], 32u);
}

}  // namespace
}  // namespace tpusim::sim
