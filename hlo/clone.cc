#include "hlo/clone.h"

#include "hlo/parser.h"
#include "hlo/printer.h"

namespace tpusim::hlo {

StatusOr<std::unique_ptr<HloModule>> CloneModule(const HloModule& module) {
  auto clone = ParseHloModule(PrintModule(module), module.source_name());
  if (!clone.ok()) {
    return Internal("re-parsing the printed module failed: " + clone.status().message());
  }
  std::unique_ptr<HloModule> m = std::move(clone).value();
  m->set_source_name(module.source_name());
  for (const auto& comp : m->computations()) {
    const HloComputation* orig = module.FindComputation(comp->name());
    if (orig == nullptr) continue;
    comp->set_location(orig->location());
    for (const auto& inst : comp->instructions()) {
      const HloInstruction* o = orig->FindInstruction(inst->name());
      if (o != nullptr) inst->set_location(o->location());
    }
  }
  return m;
}

}  // namespace tpusim::hlo
