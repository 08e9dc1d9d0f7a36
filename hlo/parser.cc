#include "hlo/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "common/diagnostic.h"
#include "common/file_util.h"
#include "hlo/gpu_gemm.h"
#include "hlo/parser_impl.h"
#include "hlo/shape_inference.h"
#include "hlo/shard_map.h"

namespace tpusim::hlo {
namespace internal {

HloParserImpl::HloParserImpl(std::string_view text, std::string_view filename)
    : text_(text), filename_(filename.empty() ? "<string>" : filename), lex_(text) {}

Status HloParserImpl::ErrorAt(size_t offset, std::string_view message) const {
  return LocatedError(filename_, text_, lex_.LocationOf(offset), message);
}

Status HloParserImpl::ErrorAtToken(const Token& tok, std::string_view message) const {
  if (tok.kind == TokKind::kError) {
    return ErrorAt(tok.offset, tok.error_message);
  }
  return ErrorAt(tok.offset, message);
}

std::string HloParserImpl::Describe(const Token& tok) {
  switch (tok.kind) {
    case TokKind::kEof:
      return "end of file";
    case TokKind::kName:
      return fmt::format("'%{}'", tok.text);
    case TokKind::kString:
      return "a string";
    default:
      return fmt::format("'{}'", tok.text.substr(0, 40));
  }
}

Status HloParserImpl::Expect(TokKind kind, std::string_view what) {
  const Token& tok = lex_.Peek();
  if (tok.kind != kind) {
    if (tok.kind == TokKind::kEof) {
      return ErrorAt(tok.offset, fmt::format("unexpected end of file: expected {}", what));
    }
    return ErrorAtToken(tok, fmt::format("expected {}, got {}", what, Describe(tok)));
  }
  lex_.Next();
  return OkStatus();
}

bool HloParserImpl::ConsumeIf(TokKind kind) {
  if (lex_.Peek().kind != kind) return false;
  lex_.Next();
  return true;
}

StatusOr<std::string> HloParserImpl::ExpectName(std::string_view what) {
  const Token& tok = lex_.Peek();
  if (tok.kind != TokKind::kName && tok.kind != TokKind::kIdent) {
    if (tok.kind == TokKind::kEof) {
      return ErrorAt(tok.offset, fmt::format("unexpected end of file: expected {}", what));
    }
    return ErrorAtToken(tok, fmt::format("expected {}, got {}", what, Describe(tok)));
  }
  return std::string(lex_.Next().text);
}

// ---------------------------------------------------------------------------------------------------
// Module

namespace {

constexpr std::string_view kMlirHelp =
    "this is MLIR text (StableHLO / MHLO), not HLO text: tpusim reads the HLO text XLA prints. "
    "From JAX: jax.jit(f).lower(*args).compiler_ir('hlo').as_hlo_text(); from PyTorch/XLA: "
    "torch_xla._XLAC._get_xla_tensors_hlo([tensors]) or XLA_FLAGS=--xla_dump_to=DIR "
    "--xla_dump_hlo_as_text; from TensorFlow: "
    "tf.function(f, jit_compile=True).experimental_get_compiler_ir(*args)(stage='hlo'). "
    "See README, 'Getting your HLO'";

// The first `limit` characters of `text` that are not on a whole-line `//` comment: test files
// (XLA's FileCheck tests among them) carry MLIR in their CHECK comments, which says nothing about
// the text itself.
std::string CodeHead(std::string_view text, size_t limit) {
  std::string head;
  size_t pos = 0;
  while (pos < text.size() && head.size() < limit) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line.substr(first, 2) != "//") {
      head.append(line);
      head.push_back('\n');
    }
    pos = end + 1;
  }
  return head;
}

// MLIR module text: `module @name ... {`, `func.func`, or `stablehlo.` / `mhlo.` ops near the top
// (outside comments).
bool LooksLikeMlir(std::string_view text) {
  const std::string code = CodeHead(text, 4096);
  const std::string_view head = code;
  size_t p = head.find_first_not_of(" \t\r\n");
  if (p != std::string_view::npos && head.substr(p, 7) == "module ") return true;
  if (p != std::string_view::npos && head.substr(p, 5) == "#loc") return true;
  return head.find("func.func") != std::string_view::npos ||
         head.find("stablehlo.") != std::string_view::npos ||
         head.find("mhlo.") != std::string_view::npos;
}

}  // namespace

StatusOr<std::unique_ptr<HloModule>> HloParserImpl::ParseModule() {
  const Token& first = lex_.Peek();
  // XLA's parse_module_without_header: a text that starts with a computation (`ENTRY`, or a name
  // followed by its signature or body) is a module named after its entry computation.
  const bool headerless =
      (first.kind == TokKind::kIdent && first.text == "ENTRY") ||
      ((first.kind == TokKind::kIdent || first.kind == TokKind::kName) &&
       (lex_.PeekNext().kind == TokKind::kLbrace || lex_.PeekNext().kind == TokKind::kLparen) &&
       first.text != "HloModule" && !LooksLikeMlir(text_));
  if (!headerless && (first.kind != TokKind::kIdent || first.text != "HloModule")) {
    if (first.kind == TokKind::kEof)
      return ErrorAt(first.offset, "empty input: expected 'HloModule'");
    if (LooksLikeMlir(text_)) {
      return ErrorAt(lex_.SkipTrivia(0), kMlirHelp);
    }
    return ErrorAtToken(first, fmt::format("expected 'HloModule', got {}", Describe(first)));
  }
  auto module = std::make_unique<HloModule>("");
  module->set_source_name(filename_);
  module_ = module.get();
  if (!headerless) {
    lex_.Next();
    TPUSIM_ASSIGN_OR_RETURN(std::string name, ExpectName("module name"));
    module->set_name(name);
    TPUSIM_RETURN_IF_ERROR(ParseHeader(*module));
  }

  HloComputation* entry = nullptr;
  size_t entry_offset = 0;
  while (true) {
    const Token& tok = lex_.Peek();
    if (tok.kind == TokKind::kEof) break;
    if (tok.kind == TokKind::kIdent && (tok.text == "FileNames" || tok.text == "FunctionNames" ||
                                        tok.text == "FileLocations" || tok.text == "StackFrames")) {
      // Stack-frame tables: XLA prints them between the header and the computations; older
      // tools appended them at the end. Either way they carry nothing tpusim uses.
      TPUSIM_RETURN_IF_ERROR(ParseStackFrameIndex());
      continue;
    }
    const size_t offset = tok.offset;
    bool is_entry = false;
    TPUSIM_RETURN_IF_ERROR(ParseComputation(*module, &is_entry));
    if (is_entry) {
      if (entry != nullptr) {
        return ErrorAt(offset, fmt::format("second ENTRY computation (the first is '%{}' at {}:{})",
                                           entry->name(), lex_.LocationOf(entry_offset).line,
                                           lex_.LocationOf(entry_offset).column));
      }
      entry = module->computations().back().get();
      entry_offset = offset;
    }
  }
  if (module->computations().empty()) {
    return ErrorAt(text_.size(), "module has no computations");
  }
  module->set_entry_computation(entry != nullptr ? entry : module->computations().back().get());
  if (headerless) module->set_name("module_" + module->entry_computation()->name());
  TPUSIM_RETURN_IF_ERROR(ResolveComputationRefs(*module));
  TPUSIM_RETURN_IF_ERROR(CheckCallGraphAcyclic(*module));
  // A fully manual shard_map (JAX's pmap) is its body run on every device of the mesh as replicas,
  // each on its own shard; a JAX module sharded on a Mesh runs on the mesh's devices (jax.jit
  // compiles it with num_partitions = the mesh size, which the text leaves out).
  if (HloComputation* body = FullyManualShardMapBody(*module)) {
    const int64_t n = LargestShardyMesh(*module).devices;
    if (n > kMaxDevices) {
      return ErrorAt(0, fmt::format("the module's Shardy mesh has {} devices, over {}", n,
                                    kMaxDevices));
    }
    HloComputation* global = module->entry_computation();
    module->set_entry_computation(body);
    module->RemoveComputation(global);
    module->set_entry_computation_layout("");
    module->set_replica_count(n);
    ManualBodyCollectivesToReplicas(*module);
  } else if (const auto unsupported = FindUnsupportedShardMap(*module)) {
    return Unimplemented(std::string(
        LocatedError(filename_, text_, unsupported->at->location(), unsupported->why).message()));
  } else if (const int64_t n = ShardyMeshPartitions(*module); n > 1) {
    if (n > kMaxDevices) {
      return ErrorAt(0, fmt::format("the module's Shardy mesh has {} devices, over {}", n,
                                    kMaxDevices));
    }
    module->set_num_partitions(n);
  }
  return module;
}

Status HloParserImpl::ParseStackFrameIndex() {
  // FileNames (int "string")* FunctionNames (int "string")* FileLocations (int {attrs})*
  // StackFrames (int {attrs})* — each section optional here, in this order.
  static constexpr std::string_view kSections[] = {"FileNames", "FunctionNames", "FileLocations",
                                                   "StackFrames"};
  bool any = false;
  for (std::string_view section : kSections) {
    const Token head = lex_.Peek();
    if (head.kind != TokKind::kIdent || head.text != section) continue;
    any = true;
    lex_.Next();
    while (lex_.Peek().kind == TokKind::kInt) {
      lex_.Next();
      const Token v = lex_.Peek();
      if (v.kind == TokKind::kString) {
        lex_.Next();
      } else if (v.kind == TokKind::kLbrace) {
        TPUSIM_RETURN_IF_ERROR(ScanBalancedGroup().status());
      } else {
        return ErrorAtToken(v, fmt::format("expected a string or a {{...}} entry in the {} table, "
                                           "got {}",
                                           section, Describe(v)));
      }
    }
  }
  if (!any) {
    return ErrorAtToken(lex_.Peek(), fmt::format("stack-frame tables out of order: expected "
                                                 "FileNames, FunctionNames, FileLocations, "
                                                 "StackFrames, got {}",
                                                 Describe(lex_.Peek())));
  }
  return OkStatus();
}

Status HloParserImpl::ParseHeader(HloModule& module) {
  std::set<std::string> seen;
  while (lex_.Peek().kind == TokKind::kComma) {
    lex_.Next();
    const Token name_tok = lex_.Peek();
    TPUSIM_ASSIGN_OR_RETURN(std::string key, ExpectName("module attribute name"));
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kEqual, "'=' after module attribute name"));
    if (!seen.insert(key).second) {
      return ErrorAt(name_tok.offset, fmt::format("duplicate module attribute '{}'", key));
    }
    if (key == "replica_count" || key == "num_partitions") {
      const Token vtok = lex_.Peek();
      TPUSIM_ASSIGN_OR_RETURN(int64_t v, ParseInt());
      if (v < 1 || v > kMaxDevices) {
        return ErrorAt(vtok.offset,
                       fmt::format("{} must be in [1, {}], got {}", key, kMaxDevices, v));
      }
      if (key == "replica_count") {
        module.set_replica_count(v);
      } else {
        module.set_num_partitions(v);
      }
    } else if (key == "is_scheduled") {
      TPUSIM_ASSIGN_OR_RETURN(bool v, ParseBool());
      module.set_is_scheduled(v);
    } else {
      TPUSIM_ASSIGN_OR_RETURN(std::string raw, ScanRawValue());
      if (key == "input_output_alias") {
        module.set_input_output_alias(raw);
      } else if (key == "entry_computation_layout") {
        module.set_entry_computation_layout(raw);
      } else {
        module.mutable_other_attributes().emplace_back(key, raw);
      }
    }
  }
  return OkStatus();
}

// ---------------------------------------------------------------------------------------------------
// Computations

Status HloParserImpl::ParseParameterSignature(std::vector<Shape>* shapes) {
  // '(' [name ':' shape (',' name ':' shape)*] ')'
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLparen, "'('"));
  if (ConsumeIf(TokKind::kRparen)) return OkStatus();
  while (true) {
    TPUSIM_ASSIGN_OR_RETURN(std::string pname, ExpectName("parameter name"));
    (void)pname;
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kColon, "':' after parameter name"));
    Shape s;
    TPUSIM_RETURN_IF_ERROR(ParseShape(&s));
    shapes->push_back(std::move(s));
    if (ConsumeIf(TokKind::kRparen)) return OkStatus();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ')' in the parameter list"));
  }
}

Status HloParserImpl::ParseComputation(HloModule& module, bool* is_entry) {
  const Token& first = lex_.Peek();
  if (first.kind == TokKind::kIdent && first.text == "ENTRY") {
    *is_entry = true;
    lex_.Next();
  }
  const Token name_tok = lex_.Peek();
  TPUSIM_ASSIGN_OR_RETURN(std::string name, ExpectName("computation name"));
  if (HloComputation* prev = module.FindComputation(name)) {
    const SourceLocation loc = prev->location();
    return ErrorAt(name_tok.offset,
                   fmt::format("duplicate computation name '%{}' (first defined at "
                               "{}:{})",
                               name, loc.line, loc.column));
  }
  // As XLA's ParseParamListToShape: the parameter list is parsed and discarded (the body's
  // parameter(N) instructions define the parameters); the result shape must match the root.
  std::vector<Shape> signature;
  bool has_signature = false;
  Shape result;
  size_t result_offset = 0;
  if (lex_.Peek().kind == TokKind::kLparen) {
    has_signature = true;
    TPUSIM_RETURN_IF_ERROR(ParseParameterSignature(&signature));
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kArrow, "'->' after the parameter list"));
    result_offset = lex_.Peek().offset;
    TPUSIM_RETURN_IF_ERROR(ParseShape(&result));
  }
  const Token open = lex_.Peek();
  auto comp = std::make_unique<HloComputation>(name);
  comp->set_location(lex_.LocationOf(name_tok.offset));
  std::vector<ParsedInstruction> parsed;
  TPUSIM_RETURN_IF_ERROR(ParseInstructionList(name, &parsed));
  if (lex_.Peek().kind == TokKind::kComma && lex_.PeekNext().kind == TokKind::kIdent &&
      lex_.PeekNext().text == "execution_thread") {
    lex_.Next();
    lex_.Next();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kEqual, "'=' after execution_thread"));
    const Token& v = lex_.Peek();
    if (v.kind != TokKind::kString)
      return ErrorAtToken(v, "expected a string for execution_thread");
    comp->set_execution_thread(lex_.Next().string_value);
  }
  HloComputation* raw = module.AddComputation(std::move(comp));
  return FinishComputation(*raw, std::move(parsed), open.offset, has_signature ? &result : nullptr,
                           result_offset);
}

Status HloParserImpl::ParseInstructionList(const std::string& name,
                                           std::vector<ParsedInstruction>* parsed) {
  const Token open = lex_.Peek();
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open the computation body"));
  while (true) {
    const Token& tok = lex_.Peek();
    if (tok.kind == TokKind::kRbrace) break;
    if (tok.kind == TokKind::kEof) {
      const SourceLocation loc = lex_.LocationOf(open.offset);
      return ErrorAt(tok.offset, fmt::format("unexpected end of file: computation '%{}' opened at "
                                             "{}:{} is not closed with '}}'",
                                             name, loc.line, loc.column));
    }
    ParsedInstruction pi;
    TPUSIM_RETURN_IF_ERROR(ParseInstruction(&pi));
    for (ParsedInstruction& n : nested_) parsed->push_back(std::move(n));
    nested_.clear();
    parsed->push_back(std::move(pi));
  }
  lex_.Next();  // '}'
  return OkStatus();
}

StatusOr<std::string> HloParserImpl::ParseInlineComputation(const HloInstruction& inst) {
  const Token open = lex_.Peek();
  if (module_ == nullptr || inline_depth_ >= kMaxNestingDepth) {
    return ErrorAt(open.offset, "computations written inline nest too deep");
  }
  std::string name = inst.name() + ".computation";
  for (int i = 1; module_->FindComputation(name) != nullptr; ++i) {
    name = fmt::format("{}.computation.{}", inst.name(), i);
  }
  // The enclosing instruction's nested operands wait while the inline body is parsed.
  std::vector<ParsedInstruction> saved;
  std::swap(saved, nested_);
  std::vector<ParsedInstruction> parsed;
  ++inline_depth_;
  Status st = ParseInstructionList(name, &parsed);
  --inline_depth_;
  std::swap(saved, nested_);
  TPUSIM_RETURN_IF_ERROR(st);
  auto comp = std::make_unique<HloComputation>(name);
  comp->set_location(lex_.LocationOf(open.offset));
  HloComputation* raw = module_->AddComputation(std::move(comp));
  TPUSIM_RETURN_IF_ERROR(FinishComputation(*raw, std::move(parsed), open.offset, nullptr, 0));
  return name;
}

Status HloParserImpl::ParseInstruction(ParsedInstruction* out) {
  bool is_root = false;
  {
    const Token& tok = lex_.Peek();
    if (tok.kind == TokKind::kIdent && tok.text == "ROOT" &&
        lex_.PeekNext().kind != TokKind::kEqual) {
      is_root = true;
      lex_.Next();
    }
  }
  const Token name_tok = lex_.Peek();
  TPUSIM_ASSIGN_OR_RETURN(std::string name, ExpectName("instruction name"));
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kEqual, "'=' after the instruction name"));
  std::optional<Shape> shape;
  if (LooksLikeShape()) {
    shape.emplace();
    TPUSIM_RETURN_IF_ERROR(ParseShape(&*shape));
  }
  TPUSIM_RETURN_IF_ERROR(ParseInstructionRhs(std::move(name), name_tok.offset, std::move(shape),
                                             /*allow_attributes=*/true, out));
  out->is_root = is_root;
  return OkStatus();
}

StatusOr<HloOpcode> HloParserImpl::AsyncWrappedOpcode(const Token& op_tok,
                                                      std::optional<Shape>* shape) {
  // XLA's async wrapping: `<op>-start`, `<op>-update`, `<op>-done` for any opcode without its own
  // start/done pair (custom-call-start, fusion-start, reduce-scatter-start, ...). tpusim runs the
  // op synchronously: `-start` is the op itself, its result the written ((operands), result,
  // context...) tuple's element 1; `-update` and `-done` pass that result on (a copy).
  const std::string_view text = op_tok.text;
  for (std::string_view suffix : {"-start", "-update", "-done"}) {
    if (text.size() <= suffix.size() || text.substr(text.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::optional<HloOpcode> wrapped =
        ParseHloOpcode(text.substr(0, text.size() - suffix.size()));
    if (!wrapped.has_value()) break;
    if (suffix == "-start") {
      if (shape->has_value() && (*shape)->IsTuple() && (*shape)->tuple_shapes_size() >= 2) {
        *shape = (*shape)->tuple_shapes(1);
      }
      return *wrapped;
    }
    if (suffix == "-update") shape->reset();  // the start's result, inferred from the operand
    return HloOpcode::kCopy;
  }
  return ErrorAt(op_tok.offset, fmt::format("unknown opcode '{}'", text));
}

bool HloParserImpl::LooksLikeShape() {
  const Token& tok = lex_.Peek();
  return tok.kind == TokKind::kLparen ||
         (tok.kind == TokKind::kIdent && lex_.PeekNext().kind == TokKind::kLsquare);
}

Status HloParserImpl::ParseInstructionRhs(std::string name, size_t name_offset,
                                          std::optional<Shape> shape, bool allow_attributes,
                                          ParsedInstruction* out) {
  const Token op_tok = lex_.Peek();
  if (op_tok.kind != TokKind::kIdent) {
    if (op_tok.kind == TokKind::kEof) {
      return ErrorAt(op_tok.offset, "unexpected end of file: expected a shape or an opcode");
    }
    return ErrorAtToken(op_tok,
                        fmt::format("expected a shape or an opcode, got {}", Describe(op_tok)));
  }
  std::optional<HloOpcode> opcode = ParseHloOpcode(op_tok.text);
  if (!opcode.has_value()) {
    TPUSIM_ASSIGN_OR_RETURN(opcode, AsyncWrappedOpcode(op_tok, &shape));
  }
  lex_.Next();
  out->infer_shape = !shape.has_value();
  auto inst = std::make_unique<HloInstruction>(*opcode, shape ? std::move(*shape) : Shape(), name);
  inst->set_location(lex_.LocationOf(name_offset));
  TPUSIM_RETURN_IF_ERROR(ParseOperands(*inst, &out->operands));
  if (allow_attributes) {
    TPUSIM_RETURN_IF_ERROR(ParseAttributes(*inst));
    // A GPU GEMM custom-call (XLA's cuBLAS/hipBLAS call for a dot) is read as its dot.
    if (inst->opcode() == HloOpcode::kCustomCall && IsGpuGemmTarget(inst->custom_call_target()) &&
        std::none_of(pending_refs_.begin(), pending_refs_.end(),
                     [&](const PendingComputationRef& r) { return r.instruction == inst.get(); })) {
      if (std::unique_ptr<HloInstruction> dot = GpuGemmAsDot(*inst, out->operands.size())) {
        inst = std::move(dot);
      }
    }
  } else {
    // A nested instruction has no attributes (a comma after it separates operands).
    TPUSIM_RETURN_IF_ERROR(CheckRequiredAttributes(*inst, {}));
  }
  out->instruction = std::move(inst);
  return OkStatus();
}

Status HloParserImpl::ParseOperands(HloInstruction& inst, std::vector<PendingOperand>* operands) {
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLparen, "'(' after the opcode"));
  if (inst.opcode() == HloOpcode::kParameter) {
    const Token tok = lex_.Peek();
    TPUSIM_ASSIGN_OR_RETURN(int64_t n, ParseInt());
    if (n < 0 || n > (int64_t{1} << 24)) {
      return ErrorAt(tok.offset, fmt::format("parameter number {} is out of range", n));
    }
    inst.set_parameter_number(n);
    return Expect(TokKind::kRparen, "')' after the parameter number");
  }
  if (inst.opcode() == HloOpcode::kConstant) {
    TPUSIM_RETURN_IF_ERROR(ParseLiteral(inst.shape(), &inst.mutable_literal()));
    return Expect(TokKind::kRparen, "')' after the constant's value");
  }
  if (ConsumeIf(TokKind::kRparen)) return OkStatus();
  while (true) {
    PendingOperand op;
    const Token& tok = lex_.Peek();
    const bool has_shape =
        tok.kind == TokKind::kLparen ||
        (tok.kind == TokKind::kIdent && lex_.PeekNext().kind == TokKind::kLsquare);
    if (has_shape) {
      Shape s;
      TPUSIM_RETURN_IF_ERROR(ParseShape(&s));
      op.written_shape = std::move(s);
    }
    op.offset = lex_.Peek().offset;
    const Token& head = lex_.Peek();
    if (head.kind == TokKind::kIdent && lex_.PeekNext().kind == TokKind::kLparen &&
        ParseHloOpcode(head.text).has_value()) {
      // A nested instruction, `(shape)? opcode(operands)` without attributes: XLA names it
      // `<opcode>.anon` and adds it before its user.
      if (nested_depth_ >= kMaxNestingDepth) {
        return ErrorAt(op.offset,
                       fmt::format("instructions nested deeper than {} levels", kMaxNestingDepth));
      }
      op.name = fmt::format("{}.anon.{}", head.text, nested_count_++);
      ParsedInstruction nested;
      ++nested_depth_;
      Status st = ParseInstructionRhs(op.name, op.offset, std::move(op.written_shape),
                                      /*allow_attributes=*/false, &nested);
      --nested_depth_;
      TPUSIM_RETURN_IF_ERROR(st);
      op.written_shape.reset();
      nested_.push_back(std::move(nested));
    } else {
      TPUSIM_ASSIGN_OR_RETURN(op.name, ExpectName("operand name"));
    }
    operands->push_back(std::move(op));
    if (ConsumeIf(TokKind::kRparen)) return OkStatus();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ')' in the operand list"));
  }
}

namespace {

// XLA's CanInferShape: opcodes whose result shape the text must always write (element type or
// sizes chosen by the writer, or by XLA's convention for collectives and slices).
bool XlaInfersShapeOf(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAsyncStart:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kAllGatherDone:
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllReduceDone:
    case HloOpcode::kAllToAll:
    case HloOpcode::kCollectivePermute:
    case HloOpcode::kCollectivePermuteStart:
    case HloOpcode::kCollectivePermuteDone:
    case HloOpcode::kCopyDone:
    case HloOpcode::kCopyStart:
    case HloOpcode::kDynamicReshape:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kDynamicUpdateSlice:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kReduceScatter:
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kSlice:
    case HloOpcode::kBitcast:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kConstant:
    case HloOpcode::kConvert:
    case HloOpcode::kCustomCall:
    case HloOpcode::kFusion:
    case HloOpcode::kInfeed:
    case HloOpcode::kIota:
    case HloOpcode::kOutfeed:
    case HloOpcode::kParameter:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kReshape:
    case HloOpcode::kRng:
    case HloOpcode::kRngBitGenerator:
    case HloOpcode::kRngGetAndUpdateState:
    case HloOpcode::kStochasticConvert:
    case HloOpcode::kCollectiveReduce:
    case HloOpcode::kScaledDot:
    case HloOpcode::kScan:
    case HloOpcode::kShuffle:
      return false;
    default:
      return true;
  }
}

}  // namespace

Status HloParserImpl::InferMissingShapes(std::vector<ParsedInstruction>& parsed,
                                         const std::vector<size_t>& order) {
  for (size_t i : order) {
    if (!parsed[i].infer_shape) continue;
    HloInstruction& inst = *parsed[i].instruction;
    StatusOr<std::optional<Shape>> inferred =
        XlaInfersShapeOf(inst.opcode()) ? InferShape(inst) : std::optional<Shape>();
    if (!inferred.ok()) {
      return LocatedError(filename_, text_, inst.location(),
                          fmt::format("cannot infer the shape of '%{}' ({}): {}", inst.name(),
                                      HloOpcodeString(inst.opcode()), inferred.status().message()));
    }
    if (!inferred->has_value()) {
      return LocatedError(filename_, text_, inst.location(),
                          fmt::format("'%{}' ({}) has no result shape and XLA cannot infer one "
                                      "for this opcode: write it, e.g. `{} = f32[4] {}(...)`",
                                      inst.name(), HloOpcodeString(inst.opcode()), inst.name(),
                                      HloOpcodeString(inst.opcode())));
    }
    inst.mutable_shape() = std::move(**inferred);
  }
  return OkStatus();
}

namespace {

// Def-before-use order of `deps` (deps[i] = indices i uses): text order when it already is one
// (the normal case), else a stable topological order. Returns false and the (user, used) pair of a
// cycle if there is one.
bool OrderDefBeforeUse(const std::vector<std::vector<size_t>>& deps, bool in_order,
                       std::vector<size_t>* order, std::pair<size_t, size_t>* cycle) {
  const size_t n = deps.size();
  order->reserve(n);
  if (in_order) {
    for (size_t i = 0; i < n; ++i) order->push_back(i);
    return true;
  }
  // Iterative DFS post-order, visiting roots in text order: 0 = new, 1 = on stack, 2 = done.
  std::vector<int> state(n, 0);
  for (size_t start = 0; start < n; ++start) {
    if (state[start] != 0) continue;
    std::vector<std::pair<size_t, size_t>> stack = {{start, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < deps[node].size()) {
        const size_t d = deps[node][next++];
        if (state[d] == 1) {
          *cycle = {node, d};
          return false;
        }
        if (state[d] == 0) {
          state[d] = 1;
          stack.emplace_back(d, 0);
        }
        continue;
      }
      state[node] = 2;
      order->push_back(node);
      stack.pop_back();
    }
  }
  return true;
}

}  // namespace

Status HloParserImpl::FinishComputation(HloComputation& comp, std::vector<ParsedInstruction> parsed,
                                        size_t open_offset, const Shape* result_shape,
                                        size_t result_offset) {
  if (parsed.empty()) {
    return ErrorAt(open_offset, fmt::format("computation '%{}' has no instructions", comp.name()));
  }
  // Names -> index; duplicates are errors.
  std::unordered_map<std::string, size_t> index;
  size_t root = parsed.size() - 1;
  bool root_marked = false;
  for (size_t i = 0; i < parsed.size(); ++i) {
    const HloInstruction& inst = *parsed[i].instruction;
    auto [it, inserted] = index.emplace(inst.name(), i);
    if (!inserted) {
      const SourceLocation first = parsed[it->second].instruction->location();
      const SourceLocation here = inst.location();
      return LocatedError(filename_, text_, here,
                          fmt::format("duplicate instruction name '%{}' (first defined at {}:{})",
                                      inst.name(), first.line, first.column));
    }
    if (parsed[i].is_root) {
      if (root_marked) {
        return LocatedError(filename_, text_, inst.location(),
                            fmt::format("second ROOT in computation '%{}'", comp.name()));
      }
      root_marked = true;
      root = i;
    }
  }
  // Resolve operand names.
  std::vector<std::vector<size_t>> deps(parsed.size());
  bool in_order = true;
  for (size_t i = 0; i < parsed.size(); ++i) {
    for (const PendingOperand& op : parsed[i].operands) {
      auto it = index.find(op.name);
      if (it == index.end()) {
        return ErrorAt(op.offset, fmt::format("use of undefined instruction '%{}' in computation "
                                              "'%{}'",
                                              op.name, comp.name()));
      }
      parsed[i].instruction->AppendOperand(parsed[it->second].instruction.get());
      deps[i].push_back(it->second);
      if (it->second >= i) in_order = false;
    }
  }
  std::vector<size_t> order;
  std::pair<size_t, size_t> cycle;
  if (!OrderDefBeforeUse(deps, in_order, &order, &cycle)) {
    const HloInstruction& b = *parsed[cycle.first].instruction;
    const HloInstruction& a = *parsed[cycle.second].instruction;
    return LocatedError(filename_, text_, b.location(),
                        cycle.first == cycle.second
                            ? fmt::format("cyclic use: '%{}' uses itself", a.name())
                            : fmt::format("cyclic use: '%{}' uses '%{}', which depends on '%{}'",
                                          b.name(), a.name(), b.name()));
  }
  TPUSIM_RETURN_IF_ERROR(InferMissingShapes(parsed, order));
  // Written operand shapes against the definitions (as XLA's FindInstruction).
  for (size_t i = 0; i < parsed.size(); ++i) {
    for (size_t k = 0; k < parsed[i].operands.size(); ++k) {
      const PendingOperand& op = parsed[i].operands[k];
      const HloInstruction* def = parsed[i].instruction->operand(static_cast<int64_t>(k));
      if (op.written_shape.has_value() && !op.written_shape->Compatible(def->shape())) {
        return ErrorAt(
            op.offset,
            fmt::format("operand {} of '%{}' is written as {} but '%{}' is defined as {}", k,
                        parsed[i].instruction->name(), op.written_shape->ToString(), op.name,
                        def->shape().ToString()));
      }
    }
  }
  HloInstruction* root_ptr = parsed[root].instruction.get();
  std::set<int64_t> param_numbers;
  for (size_t i : order) {
    HloInstruction& inst = *parsed[i].instruction;
    if (inst.opcode() == HloOpcode::kParameter &&
        !param_numbers.insert(inst.parameter_number()).second) {
      return LocatedError(filename_, text_, inst.location(),
                          fmt::format("duplicate parameter number {} in computation '%{}'",
                                      inst.parameter_number(), comp.name()));
    }
    comp.AddInstruction(std::move(parsed[i].instruction));
  }
  for (int64_t i = 0; i < comp.num_parameters(); ++i) {
    if (comp.parameter_instruction(i) == nullptr) {
      return LocatedError(filename_, text_, comp.location(),
                          fmt::format("computation '%{}' has parameter {} but no parameter({})",
                                      comp.name(), comp.num_parameters() - 1, i));
    }
  }
  if (result_shape != nullptr && !result_shape->Compatible(root_ptr->shape())) {
    return ErrorAt(result_offset,
                   fmt::format("computation '%{}' is declared to return {} but its root '%{}' is "
                               "{}",
                               comp.name(), result_shape->ToString(), root_ptr->name(),
                               root_ptr->shape().ToString()));
  }
  comp.set_root_instruction(root_ptr);
  return OkStatus();
}

Status HloParserImpl::ResolveComputationRefs(HloModule& module) {
  using Role = PendingComputationRef::Role;
  for (const PendingComputationRef& ref : pending_refs_) {
    HloComputation* c = module.FindComputation(ref.name);
    if (c == nullptr) {
      return ErrorAt(ref.offset, fmt::format("unknown computation '%{}'", ref.name));
    }
    HloInstruction& inst = *ref.instruction;
    if (c == inst.parent()) {
      return ErrorAt(ref.offset,
                     fmt::format("'%{}' calls its own computation '%{}'", inst.name(), ref.name));
    }
    switch (ref.role) {
      case Role::kToApply:
        inst.set_to_apply(c);
        break;
      case Role::kCondition:
        inst.set_while_condition(c);
        break;
      case Role::kBody:
        inst.set_while_body(c);
        break;
      case Role::kSelect:
        inst.set_select(c);
        break;
      case Role::kScatter:
        inst.set_scatter(c);
        break;
      case Role::kCalls:
        inst.mutable_calls().push_back(c);
        break;
      case Role::kTrue:
      case Role::kFalse: {
        auto& b = inst.mutable_branch_computations();
        if (b.size() < 2) b.resize(2, nullptr);
        b[ref.role == Role::kTrue ? 0 : 1] = c;
        break;
      }
      case Role::kBranch:
        inst.mutable_branch_computations().push_back(c);
        break;
    }
  }
  return OkStatus();
}

Status HloParserImpl::CheckCallGraphAcyclic(const HloModule& module) {
  // Iterative DFS over the call graph; a back edge is recursion, which HLO does not allow.
  std::map<const HloComputation*, int> state;  // 1 on stack, 2 done
  for (const auto& start : module.computations()) {
    if (state[start.get()] != 0) continue;
    struct Frame {
      const HloComputation* comp;
      std::vector<std::pair<const HloInstruction*, const HloComputation*>> edges;
      size_t next = 0;
    };
    auto edges_of = [](const HloComputation* c) {
      std::vector<std::pair<const HloInstruction*, const HloComputation*>> e;
      for (const auto& inst : c->instructions()) {
        for (const HloComputation* callee : inst->called_computations()) {
          if (callee != nullptr) e.emplace_back(inst.get(), callee);
        }
      }
      return e;
    };
    std::vector<Frame> stack;
    stack.push_back({start.get(), edges_of(start.get())});
    state[start.get()] = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.next < f.edges.size()) {
        auto [inst, callee] = f.edges[f.next++];
        if (state[callee] == 1) {
          return LocatedError(filename_, text_, inst->location(),
                              fmt::format("cyclic call: '%{}' calls '%{}', which (transitively) "
                                          "calls '%{}'",
                                          inst->name(), callee->name(), f.comp->name()));
        }
        if (state[callee] == 0) {
          state[callee] = 1;
          stack.push_back({callee, edges_of(callee)});
        }
        continue;
      }
      state[f.comp] = 2;
      stack.pop_back();
    }
  }
  return OkStatus();
}

StatusOr<Shape> HloParserImpl::ParseShapeOnly() {
  Shape s;
  TPUSIM_RETURN_IF_ERROR(ParseShape(&s));
  const Token& tok = lex_.Peek();
  if (tok.kind != TokKind::kEof) {
    return ErrorAtToken(tok, fmt::format("unexpected {} after the shape", Describe(tok)));
  }
  return s;
}

}  // namespace internal

StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text,
                                                    std::string_view filename) {
  internal::HloParserImpl parser(text, filename);
  return parser.ParseModule();
}

StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path) {
  TPUSIM_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseHloModule(text, path);
}

StatusOr<Shape> ParseShape(std::string_view text) {
  internal::HloParserImpl parser(text, "<shape>");
  return parser.ParseShapeOnly();
}

}  // namespace tpusim::hlo
