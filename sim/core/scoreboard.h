// Scoreboard: the memory regions (isa/footprint.h) read and written by a core's in-flight
// instructions. The sequencer
// issues an instruction only when its reads do not overlap an in-flight write (RAW), its writes do
// not overlap an in-flight read (WAR) or write (WAW). Regions are byte ranges of one memory space
// of one core (an accumulator region is a row range of one MXU); a strided access is covered by its
// bounding range (conservative: it may add a false dependence, never miss one).
//
// One exception, by design: matmuls accumulating into the same accumulator rows of one MXU do not
// wait for each other — the array applies them in order (TPU v1's accumulate flag; a K loop
// pipelines at one LHS row per cycle). Their accumulator writes are marked `in_order_chain`, and
// two such regions never conflict. A pop reading those rows does not wait for them either: its read
// is a `result_stream` (results stream out of the array as rows finish, HC32's "LHS streams in,
// results stream out", tpu-specs.md §3.2) and the MXU's result path times it row by row
// (mxu_unit.h). A matmul overwriting rows an earlier pop reads still waits (WAR).
//
// Storage: the entries' sequence numbers and all their regions in flat arrays ordered by
// sequence number (entries are added in increasing order), so the conflict check, which runs at
// every issue attempt, walks contiguous memory rather than one heap node per entry and region (a
// run of thousands of cores steps each core's sequencer between those of all the others, so its
// state is rarely in cache). The check walks 24-byte keys (space, core, MXU, bounding range), and
// reads the rest of a region (its row structure) only where the keys say it may overlap; a region
// takes 56 bytes in all. A removed entry's regions are marked dead in place and the arrays are
// compacted once the dead outnumber the live, so a removal costs O(1) amortized instead of moving
// every younger entry's regions (the oldest entry, the one usually removed, is at the front).
#pragma once

#include <cstdint>
#include <vector>

#include "isa/footprint.h"
#include "sim/engine/snapshot.h"

namespace tpusim::sim {

class Scoreboard {
 public:
  /// "No conflict" (FirstConflict).
  static constexpr uint64_t kNone = UINT64_MAX;
  /// The oldest in-flight entry an instruction with footprint `f` conflicts with, or kNone if it
  /// may issue now. The conflict lasts as long as that entry is in the scoreboard.
  uint64_t FirstConflict(const isa::Footprint& f) const;
  /// True if an instruction with footprint `f` may issue now.
  bool CanIssue(const isa::Footprint& f) const { return FirstConflict(f) == kNone; }
  bool Contains(uint64_t seq) const;
  /// Adds the entry `seq` (greater than every sequence number added before) with footprint `f`.
  void Add(uint64_t seq, const isa::Footprint& f);
  void Remove(uint64_t seq);
  bool empty() const { return seqs_.empty(); }
  /// Fast-forward: the in-flight entries' sequence numbers (their footprints are functions of
  /// their instructions, which the sequencer writes).
  void Save(StateWriter& w, int core) const {
    w.Value(seqs_.size());
    for (uint64_t seq : seqs_) w.Seq(core, seq);
  }

 private:
  // What the check reads first: a necessary condition of isa::Region::Overlaps (same space, core
  // and MXU — the MXU index truncated, the full record decides — and overlapping bounding ranges).
  struct Key {
    uint64_t lo = 0, hi = 0;
    int32_t core = 0;
    uint16_t mxu = 0;
    uint8_t space = 0;
    uint8_t flags = 0;  // kWrite | kDead | kChain
    static Key Of(const isa::Region& r, uint8_t flags);
    bool MayOverlap(const Key& o) const {
      return space == o.space && core == o.core && mxu == o.mxu && lo < o.hi && o.lo < hi &&
             (flags & o.flags & kChain) == 0;
    }
  };
  static constexpr uint8_t kWrite = 1;  // a region the entry writes (else reads)
  static constexpr uint8_t kDead = 2;   // its entry was removed (skipped until the compaction)
  static constexpr uint8_t kChain = 4;  // isa::Region::in_order_chain (two never overlap)
  // The rest of an in-flight region (the row structure and the full MXU index): with its key, all
  // that isa::Region::Overlaps reads.
  struct Rest {
    uint64_t stride = 0, width = 0;
    int32_t mxu = 0;
  };
  // In-flight region `i` as an isa::Region (result_stream, which Overlaps does not read, false).
  isa::Region RegionAt(size_t i) const;
  // Whether footprint region `r` (read or written per `r_write`) conflicts with the in-flight
  // region `i`.
  bool Conflicts(size_t i, const isa::Region& r, bool r_write) const;

  std::vector<uint64_t> seqs_;         // the entries, increasing
  std::vector<Key> keys_;              // by entry (increasing seq): its writes, then its reads
  std::vector<uint64_t> region_seqs_;  // keys_[i]'s entry
  std::vector<Rest> rests_;            // keys_[i]'s row structure and MXU
  size_t dead_ = 0;                    // keys_ marked dead
};

}  // namespace tpusim::sim
