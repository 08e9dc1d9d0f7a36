#include "isa/program.h"

#include <algorithm>
#include <unordered_set>

namespace tpusim::isa {
namespace {

// FNV-1a over 64-bit words.
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
uint64_t Mix(uint64_t h, uint64_t word) { return (h ^ word) * kFnvPrime; }

}  // namespace

uint64_t Hash(const CoreProgram& code) {
  uint64_t h = kFnvOffset;
  h = Mix(h, code.instructions.size());
  for (const Instruction& inst : code.instructions) {
    h = Mix(h, static_cast<uint64_t>(inst.opcode));
    for (uint64_t f : inst.fields) h = Mix(h, f);
  }
  h = Mix(h, code.source_lines.size());
  for (int32_t l : code.source_lines) h = Mix(h, static_cast<uint32_t>(l));
  h = Mix(h, code.hlo_tags.size());
  for (int32_t t : code.hlo_tags) h = Mix(h, static_cast<uint32_t>(t));
  return h;
}

void CoreList::resize(size_t n) {
  const size_t old = cores_.size();
  cores_.resize(n);
  for (size_t c = old; c < n; ++c) cores_[c] = std::make_shared<CoreProgram>();
}

CoreProgram& CoreList::operator[](size_t c) {
  if (cores_[c].use_count() > 1) cores_[c] = std::make_shared<CoreProgram>(*cores_[c]);
  return *cores_[c];
}

size_t CoreList::copies() const {
  std::unordered_set<const CoreProgram*> distinct;
  for (const auto& p : cores_) distinct.insert(p.get());
  return distinct.size();
}

bool CoreList::operator==(const CoreList& other) const {
  return std::equal(cores_.begin(), cores_.end(), other.cores_.begin(), other.cores_.end(),
                    [](const auto& a, const auto& b) { return a == b || *a == *b; });
}

}  // namespace tpusim::isa
