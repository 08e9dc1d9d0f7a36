#include "compiler/hlo/parser.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <unordered_map>

#include "common/diagnostic.h"
#include "common/file_util.h"
#include "compiler/hlo/parser_impl.h"

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

StatusOr<std::unique_ptr<HloModule>> HloParserImpl::ParseModule() {
  const Token& first = lex_.Peek();
  if (first.kind != TokKind::kIdent || first.text != "HloModule") {
    if (first.kind == TokKind::kEof)
      return ErrorAt(first.offset, "empty input: expected 'HloModule'");
    return ErrorAtToken(first, fmt::format("expected 'HloModule', got {}", Describe(first)));
  }
  lex_.Next();
  TPUSIM_ASSIGN_OR_RETURN(std::string name, ExpectName("module name"));
  auto module = std::make_unique<HloModule>(name);
  module->set_source_name(filename_);
  TPUSIM_RETURN_IF_ERROR(ParseHeader(*module));

  HloComputation* entry = nullptr;
  size_t entry_offset = 0;
  while (true) {
    const Token& tok = lex_.Peek();
    if (tok.kind == TokKind::kEof) break;
    if (tok.kind == TokKind::kIdent && (tok.text == "FileNames" || tok.text == "FunctionNames" ||
                                        tok.text == "FileLocations" || tok.text == "StackFrames")) {
      break;  // Trailing stack-frame tables (2024+ dumps): not needed by tpusim.
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
  TPUSIM_RETURN_IF_ERROR(ResolveComputationRefs(*module));
  TPUSIM_RETURN_IF_ERROR(CheckCallGraphAcyclic(*module));
  return module;
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
  std::vector<Shape> signature;
  bool has_signature = false;
  if (lex_.Peek().kind == TokKind::kLparen) {
    has_signature = true;
    TPUSIM_RETURN_IF_ERROR(ParseParameterSignature(&signature));
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kArrow, "'->' after the parameter list"));
    Shape result;
    TPUSIM_RETURN_IF_ERROR(ParseShape(&result));
  }
  const Token open = lex_.Peek();
  TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kLbrace, "'{' to open the computation body"));

  auto comp = std::make_unique<HloComputation>(name);
  comp->set_location(lex_.LocationOf(name_tok.offset));
  std::vector<ParsedInstruction> parsed;
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
    parsed.push_back(std::move(pi));
  }
  lex_.Next();  // '}'
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
  return FinishComputation(*raw, std::move(parsed), open.offset,
                           has_signature ? &signature : nullptr);
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
  Shape shape;
  TPUSIM_RETURN_IF_ERROR(ParseShape(&shape));
  const Token op_tok = lex_.Peek();
  if (op_tok.kind != TokKind::kIdent) {
    if (op_tok.kind == TokKind::kEof) {
      return ErrorAt(op_tok.offset, "unexpected end of file: expected an opcode");
    }
    return ErrorAtToken(op_tok, fmt::format("expected an opcode, got {}", Describe(op_tok)));
  }
  std::optional<HloOpcode> opcode = ParseHloOpcode(op_tok.text);
  if (!opcode.has_value()) {
    return ErrorAt(op_tok.offset, fmt::format("unknown opcode '{}'", op_tok.text));
  }
  lex_.Next();
  auto inst = std::make_unique<HloInstruction>(*opcode, std::move(shape), name);
  inst->set_location(lex_.LocationOf(name_tok.offset));
  TPUSIM_RETURN_IF_ERROR(ParseOperands(*inst, &out->operands));
  TPUSIM_RETURN_IF_ERROR(ParseAttributes(*inst));
  out->instruction = std::move(inst);
  out->is_root = is_root;
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
    TPUSIM_ASSIGN_OR_RETURN(op.name, ExpectName("operand name"));
    operands->push_back(std::move(op));
    if (ConsumeIf(TokKind::kRparen)) return OkStatus();
    TPUSIM_RETURN_IF_ERROR(Expect(TokKind::kComma, "',' or ')' in the operand list"));
  }
}

Status HloParserImpl::FinishComputation(HloComputation& comp, std::vector<ParsedInstruction> parsed,
                                        size_t open_offset, const std::vector<Shape>* signature) {
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
  // Resolve operand names; check written operand shapes against the definitions.
  std::vector<std::vector<size_t>> deps(parsed.size());
  bool in_order = true;
  for (size_t i = 0; i < parsed.size(); ++i) {
    for (size_t k = 0; k < parsed[i].operands.size(); ++k) {
      const PendingOperand& op = parsed[i].operands[k];
      auto it = index.find(op.name);
      if (it == index.end()) {
        return ErrorAt(op.offset, fmt::format("use of undefined instruction '%{}' in computation "
                                              "'%{}'",
                                              op.name, comp.name()));
      }
      HloInstruction* def = parsed[it->second].instruction.get();
      if (op.written_shape.has_value() && !op.written_shape->Compatible(def->shape())) {
        return ErrorAt(
            op.offset,
            fmt::format("operand {} of '%{}' is written as {} but '%{}' is defined as {}", k,
                        parsed[i].instruction->name(), op.written_shape->ToString(), op.name,
                        def->shape().ToString()));
      }
      parsed[i].instruction->AppendOperand(def);
      deps[i].push_back(it->second);
      if (it->second >= i) in_order = false;
    }
  }
  // Order: text order when it is already def-before-use (the normal case); otherwise a stable
  // topological order, or an error naming an instruction on a cycle.
  std::vector<size_t> order;
  order.reserve(parsed.size());
  if (in_order) {
    for (size_t i = 0; i < parsed.size(); ++i) order.push_back(i);
  } else {
    // Iterative DFS post-order, visiting roots in text order: 0 = new, 1 = on stack, 2 = done.
    std::vector<int> state(parsed.size(), 0);
    for (size_t start = 0; start < parsed.size(); ++start) {
      if (state[start] != 0) continue;
      std::vector<std::pair<size_t, size_t>> stack = {{start, 0}};
      state[start] = 1;
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < deps[node].size()) {
          const size_t d = deps[node][next++];
          if (state[d] == 1) {
            const HloInstruction& a = *parsed[d].instruction;
            const HloInstruction& b = *parsed[node].instruction;
            return LocatedError(filename_, text_, b.location(),
                                d == node ? fmt::format("cyclic use: '%{}' uses itself", a.name())
                                          : fmt::format("cyclic use: '%{}' uses '%{}', which "
                                                        "depends on '%{}'",
                                                        b.name(), a.name(), b.name()));
          }
          if (state[d] == 0) {
            state[d] = 1;
            stack.emplace_back(d, 0);
          }
          continue;
        }
        state[node] = 2;
        order.push_back(node);
        stack.pop_back();
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
  if (signature != nullptr) {
    if (static_cast<int64_t>(signature->size()) != comp.num_parameters()) {
      return LocatedError(filename_, text_, comp.location(),
                          fmt::format("computation '%{}' declares {} parameters but defines {}",
                                      comp.name(), signature->size(), comp.num_parameters()));
    }
    for (size_t i = 0; i < signature->size(); ++i) {
      const HloInstruction* p = comp.parameter_instruction(static_cast<int64_t>(i));
      if (!(*signature)[i].Compatible(p->shape())) {
        return LocatedError(
            filename_, text_, p->location(),
            fmt::format("parameter {} of '%{}' is {} but the signature says {}", i, comp.name(),
                        p->shape().ToString(), (*signature)[i].ToString()));
      }
    }
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
