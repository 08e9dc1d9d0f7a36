// Internal to the HLO parser (parser.cc: module / computation / instruction structure;
// parser_attributes.cc: attribute values; parser_literal.cc: shapes and constants). Not part of the
// public API — use parser.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "hlo/lexer.h"
#include "hlo/module.h"

namespace tpusim::hlo::internal {

/// Nesting cap for tuple shapes, literals, shardings and bracket groups (hostile input must not
/// blow the stack).
inline constexpr int kMaxNestingDepth = 256;
/// Rank cap for array shapes.
inline constexpr int64_t kMaxRank = 64;

/// A computation named by an instruction attribute, resolved once all computations are parsed.
struct PendingComputationRef {
  enum class Role {
    kToApply,
    kCondition,
    kBody,
    kSelect,
    kScatter,
    kCalls,
    kTrue,
    kFalse,
    kBranch
  };
  HloInstruction* instruction;
  Role role;
  std::string name;
  size_t offset;
};

/// An operand as written, resolved when its computation's closing brace is reached.
struct PendingOperand {
  std::string name;
  size_t offset;
  std::optional<Shape> written_shape;
};

class HloParserImpl {
 public:
  HloParserImpl(std::string_view text, std::string_view filename);

  StatusOr<std::unique_ptr<HloModule>> ParseModule();
  StatusOr<Shape> ParseShapeOnly();

 private:
  // ---- Errors and tokens (parser.cc) ----
  Status ErrorAt(size_t offset, std::string_view message) const;
  Status ErrorAtToken(const Token& tok, std::string_view message) const;
  /// Consumes a token of `kind` or fails with "expected <what>, got <token>".
  Status Expect(TokKind kind, std::string_view what);
  bool ConsumeIf(TokKind kind);
  /// A name token (kName or kIdent); its text without '%'.
  StatusOr<std::string> ExpectName(std::string_view what);
  static std::string Describe(const Token& tok);

  // ---- Structure (parser.cc) ----
  Status ParseHeader(HloModule& module);
  Status ParseComputation(HloModule& module, bool* is_entry);
  Status ParseParameterSignature(std::vector<Shape>* shapes);
  struct ParsedInstruction {
    std::unique_ptr<HloInstruction> instruction;
    std::vector<PendingOperand> operands;
    bool is_root = false;
    /// No result shape was written (`c = add(a, b)`): XLA infers it from the operands.
    bool infer_shape = false;
  };
  /// `FileNames ... FunctionNames ... FileLocations ... StackFrames ...`: the stack-frame tables
  /// XLA prints after the module header (kept by nothing in tpusim; parsed to be skipped).
  Status ParseStackFrameIndex();
  /// '{' instruction* '}' of the computation `name` (for error messages).
  Status ParseInstructionList(const std::string& name, std::vector<ParsedInstruction>* parsed);
  /// A computation written inline as an attribute value (`to_apply={ ... }`, XLA's
  /// ParseHloComputation): added to the module as "<instruction>.computation"; returns its name.
  StatusOr<std::string> ParseInlineComputation(const HloInstruction& inst);
  Status ParseInstruction(ParsedInstruction* out);
  /// `opcode(operands)` after the name and optional shape; `name` is the instruction's name.
  Status ParseInstructionRhs(std::string name, size_t name_offset, std::optional<Shape> shape,
                             bool allow_attributes, ParsedInstruction* out);
  /// `<op>-start` / `-update` / `-done` of an opcode without its own async pair: the opcode tpusim
  /// runs in its place (see the definition); may change `shape`. Error: unknown opcode.
  StatusOr<HloOpcode> AsyncWrappedOpcode(const Token& op_tok, std::optional<Shape>* shape);
  /// The next token starts a shape (`f32[...]`, `token[]`, `(...)` tuple), not an opcode.
  bool LooksLikeShape();
  Status ParseOperands(HloInstruction& inst, std::vector<PendingOperand>* operands);
  /// Shapes the instructions written without one (in def-before-use `order`).
  Status InferMissingShapes(std::vector<ParsedInstruction>& parsed,
                            const std::vector<size_t>& order);
  Status FinishComputation(HloComputation& comp, std::vector<ParsedInstruction> parsed,
                           size_t open_offset, const Shape* result_shape, size_t result_offset);
  Status ResolveComputationRefs(HloModule& module);
  Status CheckCallGraphAcyclic(const HloModule& module);

  // ---- Shapes and literals (parser_literal.cc) ----
  Status ParseShape(Shape* out, int depth = 0);
  Status ParseLayoutAttributes(size_t colon_offset, Layout* layout);
  Status ParseLiteral(const Shape& shape, LiteralValues* out, int depth = 0);
  Status ParseArrayLiteral(const Shape& shape, LiteralValues* out);
  Status ParseScalarValue(PrimitiveType type, LiteralValues* out);

  // ---- Attributes (parser_attributes.cc) ----
  Status ParseAttributes(HloInstruction& inst);
  Status ParseAttribute(HloInstruction& inst, const Token& name_tok);
  // One family of attributes each: the value parsed (its status), or nullopt if `name` is not one
  // of the family's for this opcode. `vtok` is the value's first token.
  std::optional<Status> ParseIndexingAttribute(HloInstruction& inst, std::string_view name,
                                               const Token& vtok);
  std::optional<Status> ParseOpAttribute(HloInstruction& inst, std::string_view name,
                                         const Token& vtok);
  std::optional<Status> ParseCollectiveAttribute(HloInstruction& inst, std::string_view name,
                                                 const Token& vtok);
  std::optional<Status> ParseCalledComputationAttribute(HloInstruction& inst,
                                                        std::string_view name, const Token& vtok);
  std::optional<Status> ParseBackendAttribute(HloInstruction& inst, std::string_view name,
                                              const Token& vtok);
  Status ParseIntAttribute(const std::function<void(int64_t)>& set);
  Status ParseBoolAttribute(const std::function<void(bool)>& set);
  /// Consumes an identifier `parse` accepts; an error naming attribute `name` otherwise.
  Status ParseEnumAttribute(const Token& vtok, std::string_view name,
                            const std::function<bool(std::string_view)>& parse);
  Status ParseIntList(std::vector<int64_t>* out);  // {1,2,3} / {}
  StatusOr<int64_t> ParseInt();
  StatusOr<bool> ParseBool();
  StatusOr<double> ParseNumber();
  Status ParseWindow(Window* out);
  Status ParseDimLabels(ConvolutionDimensionNumbers* out);
  Status ParseSlice(HloInstruction& inst);
  Status ParsePadding(PaddingConfig* out);
  Status ParseReplicaGroups(ReplicaGroups* out);
  Status ParseIotaTail(IotaTileAssignment* out);  // after the leading [dims]: <=[...]T(...)
  Status ParseSharding(HloSharding* out, int depth = 0);
  Status ParseMetadata(OpMetadata* out);
  Status ParseFrontendAttributes(std::vector<std::pair<std::string, std::string>>* out);
  Status ParseComputationRef(HloInstruction& inst, PendingComputationRef::Role role);
  Status ParseComputationRefList(HloInstruction& inst, PendingComputationRef::Role role);
  /// Character-level scan of an attribute value starting at the current token: a balanced run that
  /// ends at depth 0 before ',', newline, or an unmatched '}' / ')'. Returns the trimmed text and
  /// moves the lexer past it.
  StatusOr<std::string> ScanRawValue();
  /// The text of one balanced group starting at the current '{' (inclusive of both braces).
  StatusOr<std::string> ScanBalancedGroup();
  Status CheckRequiredAttributes(const HloInstruction& inst,
                                 const std::vector<std::string>& seen) const;

  std::string_view text_;
  std::string filename_;
  Lexer lex_;
  std::vector<PendingComputationRef> pending_refs_;
  /// Instructions written inline as operands (`add(f32[] a, multiply(b, c))`), named by the parser
  /// and added to the computation before the instruction that uses them.
  std::vector<ParsedInstruction> nested_;
  int64_t nested_count_ = 0;
  int nested_depth_ = 0;
  HloModule* module_ = nullptr;  // the module being parsed (for inline computations)
  int inline_depth_ = 0;
};

}  // namespace tpusim::hlo::internal
