// Binary encoding of instructions and programs.
//
// Instruction word: 512 bits = kWordU64s little-endian u64 (64 bytes). Bits [0,8) hold the opcode
// number (its row in opcodes.def); the opcode's fields follow in table order, LSB first, each
// exactly FieldSpec::bits wide, packed across u64 boundaries; every other bit is zero. Bit b lives
// in word[b / 64] at bit (b % 64). docs/isa.md lists each opcode's bit offsets (FieldBitOffset).
//
// Program file (.tbin), all integers little-endian:
//   "TPUS" | u32 version | u32 num_cores | u32 instruction_bytes (64)
//   u64 instruction count per core
//   replica groups: u32 n; per entry u32 groups; per group u32 size, size x u32 core id
//   permutations:   u32 n; per entry u32 pairs; per pair u32 source, u32 target
//   hlo names:      u32 n; per name u32 length + bytes
//   source file:    u32 length + bytes
//   symbols:        u32 n; per symbol u32 core, u32 index, u32 length + bytes
//   data segments:  u32 n; per segment u32 space, u32 core, u64 address, u64 length + bytes
//   per core: its instruction words, then u32 has_lines, [count x i32 line], u32 has_tags,
//             [count x i32 tag]
//   "SUPT" end marker; nothing may follow.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "isa/instruction.h"
#include "isa/program.h"

namespace tpusim::isa {

inline constexpr int kWordU64s = 8;
inline constexpr int kWordBits = 64 * kWordU64s;
inline constexpr int kWordBytes = 8 * kWordU64s;
inline constexpr int kOpcodeBits = 8;
using Word = std::array<uint64_t, kWordU64s>;

/// Bit offset of field `field_index` of `op` in the instruction word.
int FieldBitOffset(Opcode op, int field_index);

/// OK if `raw` is a legal value of `spec` (fits its width; enum in range; Bool 0/1; S
/// sign-extended), else InvalidArgument naming the field and the value.
Status CheckFieldValue(const FieldSpec& spec, uint64_t raw);
/// CheckFieldValue for every field, and unused slots zero.
Status CheckInstructionFields(const Instruction& inst);

/// Encodes an instruction whose fields pass CheckInstructionFields (TPUSIM_CHECKs otherwise:
/// callers construct instructions through the assembler, the decoder or the compiler, which all
/// check).
Word EncodeInstruction(const Instruction& inst);
/// Decodes one word. InvalidArgument for an unknown opcode, an out-of-range field value or a
/// non-zero unused bit.
StatusOr<Instruction> DecodeInstruction(const Word& word);

/// The program file bytes (see the layout above). Program must satisfy CheckProgramStructure.
std::string EncodeProgram(const Program& program);
/// Parses program file bytes. InvalidArgument ("<name>: ...") for a bad magic, a wrong version, a
/// truncated or oversized file, an unknown opcode or an out-of-range field (naming core and index).
StatusOr<Program> DecodeProgram(std::string_view bytes, std::string_view name = "<binary>");

/// Table/metadata consistency that every Program must have: source_lines/hlo_tags empty or one per
/// instruction, HLO tags index hlo_names, fields legal. InvalidArgument naming the first problem.
Status CheckProgramStructure(const Program& program);

}  // namespace tpusim::isa
