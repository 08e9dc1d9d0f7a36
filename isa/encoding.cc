#include "isa/encoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

namespace tpusim::isa {
namespace {

constexpr char kMagic[4] = {'T', 'P', 'U', 'S'};
constexpr char kEndMagic[4] = {'S', 'U', 'P', 'T'};

void PutBits(Word& w, int offset, int bits, uint64_t value) {
  for (int done = 0; done < bits;) {
    int pos = offset + done;
    int word = pos / 64, shift = pos % 64;
    int take = std::min(bits - done, 64 - shift);
    uint64_t mask = take == 64 ? ~uint64_t{0} : ((uint64_t{1} << take) - 1);
    w[word] |= ((value >> done) & mask) << shift;
    done += take;
  }
}

uint64_t GetBits(const Word& w, int offset, int bits) {
  uint64_t value = 0;
  for (int done = 0; done < bits;) {
    int pos = offset + done;
    int word = pos / 64, shift = pos % 64;
    int take = std::min(bits - done, 64 - shift);
    uint64_t mask = take == 64 ? ~uint64_t{0} : ((uint64_t{1} << take) - 1);
    value |= ((w[word] >> shift) & mask) << done;
    done += take;
  }
  return value;
}

uint64_t LowMask(int bits) { return bits >= 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1); }

}  // namespace

int FieldBitOffset(Opcode op, int field_index) {
  const auto& fields = Info(op).fields;
  TPUSIM_CHECK(field_index >= 0 && field_index <= static_cast<int>(fields.size()));
  int offset = kOpcodeBits;
  for (int i = 0; i < field_index; ++i) offset += fields[i].bits;
  return offset;
}

Status CheckFieldValue(const FieldSpec& spec, uint64_t raw) {
  auto bad = [&](std::string why) {
    return InvalidArgument(fmt::format("field '{}' = {}: {}", spec.name, raw, why));
  };
  switch (spec.kind) {
    case FieldKind::kS: {
      int64_t v = static_cast<int64_t>(raw);
      int64_t lo =
          spec.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (spec.bits - 1));
      int64_t hi = spec.bits >= 64 ? std::numeric_limits<int64_t>::max()
                                   : (int64_t{1} << (spec.bits - 1)) - 1;
      if (v < lo || v > hi) {
        return InvalidArgument(
            fmt::format("field '{}' = {}: outside the signed {}-bit range [{}, {}]", spec.name, v,
                        spec.bits, lo, hi));
      }
      return OkStatus();
    }
    case FieldKind::kBool:
      if (raw > 1) return bad("must be 0 or 1");
      return OkStatus();
    case FieldKind::kU:
    case FieldKind::kImm:
      if ((raw & ~LowMask(spec.bits)) != 0) {
        return bad(fmt::format("does not fit in {} bits (max {})", spec.bits, LowMask(spec.bits)));
      }
      return OkStatus();
    default: {
      int n = EnumCardinality(spec.kind);
      if (raw >= static_cast<uint64_t>(n)) {
        return bad(fmt::format("not a {} (0..{})", FieldKindName(spec.kind), n - 1));
      }
      return OkStatus();
    }
  }
}

Status CheckInstructionFields(const Instruction& inst) {
  if (static_cast<int>(inst.opcode) >= kNumOpcodes) {
    return InvalidArgument(fmt::format("unknown opcode {}", static_cast<int>(inst.opcode)));
  }
  const auto& fields = Info(inst.opcode).fields;
  for (size_t i = 0; i < inst.fields.size(); ++i) {
    if (i < fields.size()) {
      TPUSIM_RETURN_IF_ERROR(CheckFieldValue(fields[i], inst.fields[i]));
    } else if (inst.fields[i] != 0) {
      return InvalidArgument(
          fmt::format("{}: unused field slot {} is not zero", Mnemonic(inst.opcode), i));
    }
  }
  return OkStatus();
}

Word EncodeInstruction(const Instruction& inst) {
  Status st = CheckInstructionFields(inst);
  TPUSIM_CHECK(st.ok()) << "EncodeInstruction: " << st.message();
  Word w{};
  PutBits(w, 0, kOpcodeBits, static_cast<uint64_t>(inst.opcode));
  int offset = kOpcodeBits;
  const auto& fields = Info(inst.opcode).fields;
  for (size_t i = 0; i < fields.size(); ++i) {
    PutBits(w, offset, fields[i].bits, inst.fields[i]);
    offset += fields[i].bits;
  }
  return w;
}

StatusOr<Instruction> DecodeInstruction(const Word& word) {
  uint64_t opcode = GetBits(word, 0, kOpcodeBits);
  if (opcode >= static_cast<uint64_t>(kNumOpcodes)) {
    return InvalidArgument(fmt::format("unknown opcode number {}", opcode));
  }
  Instruction inst;
  inst.opcode = static_cast<Opcode>(opcode);
  const auto& fields = Info(inst.opcode).fields;
  int offset = kOpcodeBits;
  for (size_t i = 0; i < fields.size(); ++i) {
    uint64_t raw = GetBits(word, offset, fields[i].bits);
    if (fields[i].kind == FieldKind::kS && fields[i].bits < 64 &&
        (raw >> (fields[i].bits - 1)) & 1) {
      raw |= ~LowMask(fields[i].bits);  // sign-extend
    }
    Status st = CheckFieldValue(fields[i], raw);
    if (!st.ok())
      return InvalidArgument(fmt::format("{}: {}", Mnemonic(inst.opcode), st.message()));
    inst.fields[i] = raw;
    offset += fields[i].bits;
  }
  for (int b = offset; b < kWordBits; b += 64) {
    int take = std::min(64, kWordBits - b);
    // Only the bits at or after `offset` are checked; fold the partial first word.
    uint64_t bits = GetBits(word, b, take);
    if (bits != 0) {
      return InvalidArgument(fmt::format("{}: non-zero bits after the last field (bit {} or later)",
                                         Mnemonic(inst.opcode), b));
    }
  }
  return inst;
}

Status CheckProgramStructure(const Program& p) {
  // Cores sharing one copy of their code (CoreList::Share) are checked once, at the lowest such
  // core: the first error found is the same, and a run of thousands of replicas does not check
  // the same code thousands of times.
  std::set<const CoreProgram*> checked;
  for (int c = 0; c < p.num_cores(); ++c) {
    const CoreProgram& core = p.cores[c];
    if (!checked.insert(&core).second) continue;
    size_t n = core.instructions.size();
    if (!core.source_lines.empty() && core.source_lines.size() != n) {
      return InvalidArgument(fmt::format("core {}: {} source lines for {} instructions", c,
                                         core.source_lines.size(), n));
    }
    if (!core.hlo_tags.empty() && core.hlo_tags.size() != n) {
      return InvalidArgument(
          fmt::format("core {}: {} HLO tags for {} instructions", c, core.hlo_tags.size(), n));
    }
    for (size_t i = 0; i < core.hlo_tags.size(); ++i) {
      int32_t t = core.hlo_tags[i];
      if (t != kNoHloTag && (t < 0 || t >= static_cast<int32_t>(p.hlo_names.size()))) {
        return InvalidArgument(
            fmt::format("core {} instruction {}: HLO tag {} is not in the name "
                        "table ({} names)",
                        c, i, t, p.hlo_names.size()));
      }
    }
    for (size_t i = 0; i < n; ++i) {
      Status st = CheckInstructionFields(core.instructions[i]);
      if (!st.ok()) {
        return InvalidArgument(fmt::format("core {} instruction {}: {}", c, i, st.message()));
      }
    }
  }
  for (const Symbol& s : p.symbols) {
    if (s.core < 0 || s.core >= p.num_cores() || s.index < 0 ||
        static_cast<size_t>(s.index) > p.cores[s.core].instructions.size()) {
      return InvalidArgument(fmt::format("symbol '{}' points outside the program", s.name));
    }
  }
  return OkStatus();
}

namespace {

class Writer {
 public:
  void U32(uint32_t v) { Raw(&v, 4); }
  void I32(int32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void Bytes(std::string_view s) { out_.append(s); }
  std::string Take() { return std::move(out_); }

 private:
  void Raw(const void* p, size_t n) {
    // The file format is little-endian; so is every host tpusim supports (x86-64, aarch64).
    static_assert(std::endian::native == std::endian::little);
    out_.append(static_cast<const char*>(p), n);
  }
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view bytes, std::string_view name) : bytes_(bytes), name_(name) {}
  Status Need(uint64_t n, std::string_view what) {
    if (n > bytes_.size() - pos_) {
      return InvalidArgument(
          fmt::format("{}: truncated program file: {} needs {} bytes at offset "
                      "{}, only {} left",
                      name_, what, n, pos_, bytes_.size() - pos_));
    }
    return OkStatus();
  }
  StatusOr<uint32_t> U32(std::string_view what) {
    TPUSIM_RETURN_IF_ERROR(Need(4, what));
    uint32_t v;
    std::memcpy(&v, bytes_.data() + pos_, 4);
    pos_ += 4;
    return v;
  }
  StatusOr<uint64_t> U64(std::string_view what) {
    TPUSIM_RETURN_IF_ERROR(Need(8, what));
    uint64_t v;
    std::memcpy(&v, bytes_.data() + pos_, 8);
    pos_ += 8;
    return v;
  }
  StatusOr<std::string> Bytes(uint64_t n, std::string_view what) {
    TPUSIM_RETURN_IF_ERROR(Need(n, what));
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  StatusOr<std::string> Str(std::string_view what) {
    TPUSIM_ASSIGN_OR_RETURN(uint32_t n, U32(what));
    return Bytes(n, what);
  }
  // A count of items that each take at least `min_item_bytes`: rejects counts the file cannot hold,
  // so a corrupt count never triggers a huge allocation.
  StatusOr<uint64_t> Count(uint64_t n, uint64_t min_item_bytes, std::string_view what) {
    if (min_item_bytes > 0 && n > (bytes_.size() - pos_) / min_item_bytes) {
      return InvalidArgument(fmt::format(
          "{}: corrupt program file: {} count {} exceeds the file size", name_, what, n));
    }
    return n;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return bytes_.size() - pos_; }
  std::string_view name() const { return name_; }

 private:
  std::string_view bytes_;
  std::string_view name_;
  size_t pos_ = 0;
};

}  // namespace

std::string EncodeProgram(const Program& p) {
  Status st = CheckProgramStructure(p);
  TPUSIM_CHECK(st.ok()) << "EncodeProgram: " << st.message();
  Writer w;
  w.Bytes(std::string_view(kMagic, 4));
  w.U32(p.version);
  w.U32(static_cast<uint32_t>(p.cores.size()));
  w.U32(kWordBytes);
  for (const CoreProgram& c : p.cores) w.U64(c.instructions.size());
  w.U32(static_cast<uint32_t>(p.replica_groups.size()));
  for (const ReplicaGroups& rg : p.replica_groups) {
    w.U32(static_cast<uint32_t>(rg.groups.size()));
    for (const auto& g : rg.groups) {
      w.U32(static_cast<uint32_t>(g.size()));
      for (int32_t id : g) w.I32(id);
    }
  }
  w.U32(static_cast<uint32_t>(p.permutations.size()));
  for (const Permutation& perm : p.permutations) {
    w.U32(static_cast<uint32_t>(perm.pairs.size()));
    for (const auto& [s, t] : perm.pairs) {
      w.I32(s);
      w.I32(t);
    }
  }
  w.U32(static_cast<uint32_t>(p.hlo_names.size()));
  for (const std::string& n : p.hlo_names) w.Str(n);
  w.Str(p.source_file);
  w.U32(static_cast<uint32_t>(p.symbols.size()));
  for (const Symbol& s : p.symbols) {
    w.I32(s.core);
    w.I32(s.index);
    w.Str(s.name);
  }
  w.U32(static_cast<uint32_t>(p.data.size()));
  for (const DataSegment& d : p.data) {
    w.U32(static_cast<uint32_t>(d.space));
    w.I32(d.core);
    w.U64(d.address);
    w.U64(d.bytes.size());
    w.Bytes(d.bytes);
  }
  for (const CoreProgram& c : p.cores) {
    for (const Instruction& inst : c.instructions) {
      Word word = EncodeInstruction(inst);
      for (uint64_t u : word) w.U64(u);
    }
    w.U32(c.source_lines.empty() ? 0 : 1);
    for (int32_t l : c.source_lines) w.I32(l);
    w.U32(c.hlo_tags.empty() ? 0 : 1);
    for (int32_t t : c.hlo_tags) w.I32(t);
  }
  w.Bytes(std::string_view(kEndMagic, 4));
  return w.Take();
}

StatusOr<Program> DecodeProgram(std::string_view bytes, std::string_view name) {
  Reader r(bytes, name);
  if (bytes.size() < 4 || std::memcmp(bytes.data(), kMagic, 4) != 0) {
    return InvalidArgument(
        fmt::format("{}: not a tpusim program (bad magic; expected \"TPUS\")", name));
  }
  TPUSIM_RETURN_IF_ERROR(r.Bytes(4, "magic").status());
  Program p;
  TPUSIM_ASSIGN_OR_RETURN(p.version, r.U32("version"));
  if (p.version != kProgramVersion) {
    return InvalidArgument(
        fmt::format("{}: program version {} is not supported (this tpusim reads "
                    "version {})",
                    name, p.version, kProgramVersion));
  }
  TPUSIM_ASSIGN_OR_RETURN(uint32_t num_cores, r.U32("core count"));
  TPUSIM_ASSIGN_OR_RETURN(uint32_t word_bytes, r.U32("instruction size"));
  if (word_bytes != kWordBytes) {
    return InvalidArgument(
        fmt::format("{}: instruction size {} bytes, expected {}", name, word_bytes, kWordBytes));
  }
  TPUSIM_RETURN_IF_ERROR(r.Count(num_cores, 8, "core").status());
  std::vector<uint64_t> counts(num_cores);
  for (uint32_t c = 0; c < num_cores; ++c) {
    TPUSIM_ASSIGN_OR_RETURN(counts[c], r.U64("instruction count"));
    TPUSIM_RETURN_IF_ERROR(r.Count(counts[c], kWordBytes, "instruction").status());
  }
  TPUSIM_ASSIGN_OR_RETURN(uint32_t n_rg, r.U32("replica group table size"));
  TPUSIM_RETURN_IF_ERROR(r.Count(n_rg, 4, "replica group table").status());
  p.replica_groups.resize(n_rg);
  for (auto& rg : p.replica_groups) {
    TPUSIM_ASSIGN_OR_RETURN(uint32_t n_groups, r.U32("group count"));
    TPUSIM_RETURN_IF_ERROR(r.Count(n_groups, 4, "group").status());
    rg.groups.resize(n_groups);
    for (auto& g : rg.groups) {
      TPUSIM_ASSIGN_OR_RETURN(uint32_t size, r.U32("group size"));
      TPUSIM_RETURN_IF_ERROR(r.Count(size, 4, "group member").status());
      g.resize(size);
      for (auto& id : g) {
        TPUSIM_ASSIGN_OR_RETURN(uint32_t v, r.U32("core id"));
        id = static_cast<int32_t>(v);
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(uint32_t n_perm, r.U32("permutation table size"));
  TPUSIM_RETURN_IF_ERROR(r.Count(n_perm, 4, "permutation table").status());
  p.permutations.resize(n_perm);
  for (auto& perm : p.permutations) {
    TPUSIM_ASSIGN_OR_RETURN(uint32_t n_pairs, r.U32("pair count"));
    TPUSIM_RETURN_IF_ERROR(r.Count(n_pairs, 8, "pair").status());
    perm.pairs.resize(n_pairs);
    for (auto& [s, t] : perm.pairs) {
      TPUSIM_ASSIGN_OR_RETURN(uint32_t a, r.U32("pair source"));
      TPUSIM_ASSIGN_OR_RETURN(uint32_t b, r.U32("pair target"));
      s = static_cast<int32_t>(a);
      t = static_cast<int32_t>(b);
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(uint32_t n_names, r.U32("HLO name count"));
  TPUSIM_RETURN_IF_ERROR(r.Count(n_names, 4, "HLO name").status());
  p.hlo_names.resize(n_names);
  for (auto& n : p.hlo_names) {
    TPUSIM_ASSIGN_OR_RETURN(n, r.Str("HLO name"));
  }
  TPUSIM_ASSIGN_OR_RETURN(p.source_file, r.Str("source file name"));
  TPUSIM_ASSIGN_OR_RETURN(uint32_t n_sym, r.U32("symbol count"));
  TPUSIM_RETURN_IF_ERROR(r.Count(n_sym, 12, "symbol").status());
  p.symbols.resize(n_sym);
  for (auto& s : p.symbols) {
    TPUSIM_ASSIGN_OR_RETURN(uint32_t core, r.U32("symbol core"));
    TPUSIM_ASSIGN_OR_RETURN(uint32_t index, r.U32("symbol index"));
    s.core = static_cast<int32_t>(core);
    s.index = static_cast<int32_t>(index);
    TPUSIM_ASSIGN_OR_RETURN(s.name, r.Str("symbol name"));
  }
  TPUSIM_ASSIGN_OR_RETURN(uint32_t n_data, r.U32("data segment count"));
  TPUSIM_RETURN_IF_ERROR(r.Count(n_data, 24, "data segment").status());
  p.data.resize(n_data);
  for (auto& d : p.data) {
    TPUSIM_ASSIGN_OR_RETURN(uint32_t space, r.U32("data space"));
    if (space >= static_cast<uint32_t>(EnumCardinality(FieldKind::kMemSpace))) {
      return InvalidArgument(
          fmt::format("{}: data segment has unknown memory space {}", name, space));
    }
    d.space = static_cast<MemSpace>(space);
    TPUSIM_ASSIGN_OR_RETURN(uint32_t core, r.U32("data core"));
    d.core = static_cast<int32_t>(core);
    TPUSIM_ASSIGN_OR_RETURN(d.address, r.U64("data address"));
    TPUSIM_ASSIGN_OR_RETURN(uint64_t len, r.U64("data length"));
    TPUSIM_ASSIGN_OR_RETURN(d.bytes, r.Bytes(len, "data bytes"));
  }
  p.cores.resize(num_cores);
  for (uint32_t c = 0; c < num_cores; ++c) {
    CoreProgram& core = p.cores[c];
    TPUSIM_RETURN_IF_ERROR(r.Count(counts[c], kWordBytes, "instruction").status());
    core.instructions.reserve(counts[c]);
    for (uint64_t i = 0; i < counts[c]; ++i) {
      Word word;
      for (auto& u : word) {
        TPUSIM_ASSIGN_OR_RETURN(u, r.U64("instruction word"));
      }
      auto inst = DecodeInstruction(word);
      if (!inst.ok()) {
        return InvalidArgument(
            fmt::format("{}: core {} instruction {}: {}", name, c, i, inst.status().message()));
      }
      core.instructions.push_back(*inst);
    }
    for (auto* vec : {&core.source_lines, &core.hlo_tags}) {
      TPUSIM_ASSIGN_OR_RETURN(uint32_t has, r.U32("metadata flag"));
      if (has > 1) return InvalidArgument(fmt::format("{}: corrupt metadata flag {}", name, has));
      if (has) {
        TPUSIM_RETURN_IF_ERROR(r.Count(counts[c], 4, "metadata").status());
        vec->resize(counts[c]);
        for (auto& v : *vec) {
          TPUSIM_ASSIGN_OR_RETURN(uint32_t u, r.U32("metadata"));
          v = static_cast<int32_t>(u);
        }
      }
    }
  }
  TPUSIM_ASSIGN_OR_RETURN(std::string end, r.Bytes(4, "end marker"));
  if (std::memcmp(end.data(), kEndMagic, 4) != 0) {
    return InvalidArgument(fmt::format("{}: corrupt program file: missing end marker", name));
  }
  if (r.remaining() != 0) {
    return InvalidArgument(
        fmt::format("{}: {} unexpected bytes after the end of the program", name, r.remaining()));
  }
  Status st = CheckProgramStructure(p);
  if (!st.ok()) return InvalidArgument(fmt::format("{}: {}", name, st.message()));
  return p;
}

}  // namespace tpusim::isa
