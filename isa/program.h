// Program: what the compiler emits, the assembler produces, the binary format stores, and the
// interpreter and the simulator run. One instruction list per core (core i of the program runs on
// global core i = chip * tensorcores + tensorcore; cores with identical code may share one copy:
// CoreList), plus the program-level tables the instructions index into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "isa/types.h"

namespace tpusim::isa {

/// Version of the binary format and of the instruction table's meaning (header field `version`).
inline constexpr uint32_t kProgramVersion = 1;
/// An absent HLO tag / source line.
inline constexpr int32_t kNoHloTag = -1;
inline constexpr int32_t kNoSourceLine = 0;

/// One core's code. `source_lines` and `hlo_tags` are either empty or exactly one entry per
/// instruction: the 1-based line in Program::source_file the instruction came from (kNoSourceLine
/// if unknown), and an index into Program::hlo_names (kNoHloTag if none) so reports can attribute
/// cycles to the HLO instruction the code was lowered from.
struct CoreProgram {
  std::vector<Instruction> instructions;
  std::vector<int32_t> source_lines;
  std::vector<int32_t> hlo_tags;

  /// Appends an instruction with its metadata, keeping source_lines and hlo_tags one per
  /// instruction.
  void Append(const Instruction& inst, int32_t hlo_tag = kNoHloTag,
              int32_t source_line = kNoSourceLine) {
    source_lines.resize(instructions.size(), kNoSourceLine);
    hlo_tags.resize(instructions.size(), kNoHloTag);
    instructions.push_back(inst);
    source_lines.push_back(source_line);
    hlo_tags.push_back(hlo_tag);
  }
  int32_t source_line(size_t i) const { return i < source_lines.size() ? source_lines[i] : 0; }
  int32_t hlo_tag(size_t i) const { return i < hlo_tags.size() ? hlo_tags[i] : kNoHloTag; }
  bool operator==(const CoreProgram&) const = default;
};

/// A hash of a core's code (instructions, source lines and HLO tags): equal programs hash equal.
uint64_t Hash(const CoreProgram& code);

/// The cores' code, one CoreProgram per core, where cores that run identical code can hold one
/// shared copy (Share): the replicas of a data-parallel module at the same position of their chips
/// differ in nothing, and a slice of thousands of cores then holds a few copies, not thousands.
/// Reading (const operator[], iteration) returns the shared copy; the non-const operator[] first
/// gives a shared core a copy of its own (copy on write), so writing one core never changes
/// another. Otherwise used like a std::vector: size, empty, resize, front, [], range-for.
class CoreList {
 public:
  size_t size() const { return cores_.size(); }
  bool empty() const { return cores_.empty(); }
  /// New cores get empty programs of their own.
  void resize(size_t n);
  const CoreProgram& operator[](size_t c) const { return *cores_[c]; }
  /// Core `c`'s code, writable: a copy of its own first if it shares one.
  CoreProgram& operator[](size_t c);
  const CoreProgram& front() const { return *cores_.front(); }

  /// Core `c` drops its code and shares core `with`'s; the caller has checked they are equal.
  void Share(size_t c, size_t with) { cores_[c] = cores_[with]; }
  /// Whether cores `a` and `b` hold the same copy.
  bool Shared(size_t a, size_t b) const { return cores_[a] == cores_[b]; }
  /// How many distinct copies the cores hold.
  size_t copies() const;

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = CoreProgram;
    using difference_type = std::ptrdiff_t;
    using pointer = const CoreProgram*;
    using reference = const CoreProgram&;
    const_iterator() = default;
    explicit const_iterator(std::vector<std::shared_ptr<CoreProgram>>::const_iterator it)
        : it_(it) {}
    const CoreProgram& operator*() const { return **it_; }
    const CoreProgram* operator->() const { return it_->get(); }
    const_iterator& operator++() {
      ++it_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++it_;
      return old;
    }
    bool operator==(const const_iterator&) const = default;

   private:
    std::vector<std::shared_ptr<CoreProgram>>::const_iterator it_;
  };
  /// Iteration only reads (a loop that writes indexes the cores: operator[]).
  const_iterator begin() const { return const_iterator(cores_.begin()); }
  const_iterator end() const { return const_iterator(cores_.end()); }

  /// Equal when every core's code is equal, shared or not.
  bool operator==(const CoreList& other) const;

 private:
  // Never null. A copy reachable from more than one entry is never written (operator[] detaches).
  std::vector<std::shared_ptr<CoreProgram>> cores_;
};

/// XLA's replica_groups: disjoint lists of global core ids. A collective or barrier naming this
/// entry runs, on each core, over the group that contains that core; rank = position in that group.
struct ReplicaGroups {
  std::vector<std::vector<int32_t>> groups;
  bool operator==(const ReplicaGroups&) const = default;
};

/// XLA's source_target_pairs of a collective-permute: (source core, target core), global core ids.
struct Permutation {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  bool operator==(const Permutation&) const = default;
};

/// Initial memory contents loaded before execution (inputs, constants). `core` selects the core
/// whose HBM/VMEM/SMEM is meant (ignored for kHost).
struct DataSegment {
  MemSpace space = MemSpace::kHbm;
  int32_t core = 0;
  uint64_t address = 0;
  std::string bytes;
  bool operator==(const DataSegment&) const = default;
};

/// A named instruction position (assembly labels; informational — loops are structured).
struct Symbol {
  std::string name;
  int32_t core = 0;
  int32_t index = 0;  // instruction index the label precedes
  bool operator==(const Symbol&) const = default;
};

struct Program {
  uint32_t version = kProgramVersion;
  CoreList cores;
  std::vector<ReplicaGroups> replica_groups;  // indexed by the `group` fields
  std::vector<Permutation> permutations;      // indexed by ici.collective_permute's `pairs`
  std::vector<std::string> hlo_names;         // indexed by CoreProgram::hlo_tags
  std::vector<DataSegment> data;
  std::vector<Symbol> symbols;
  std::string source_file;  // what source_lines refer to ("" if none)

  int num_cores() const { return static_cast<int>(cores.size()); }
  /// The hlo_names index of `name`, appending it if new (the tag to pass to CoreProgram::Append).
  int32_t AddHloName(const std::string& name) {
    for (size_t i = 0; i < hlo_names.size(); ++i) {
      if (hlo_names[i] == name) return static_cast<int32_t>(i);
    }
    hlo_names.push_back(name);
    return static_cast<int32_t>(hlo_names.size() - 1);
  }
  bool operator==(const Program&) const = default;
};

}  // namespace tpusim::isa
