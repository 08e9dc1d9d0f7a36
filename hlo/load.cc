#include "hlo/load.h"

#include "common/file_util.h"
#include "hlo/parser.h"
#include "hlo/verifier.h"

namespace tpusim::hlo {

StatusOr<LoadedHloModule> LoadHloModule(const std::string& path) {
  LoadedHloModule out;
  TPUSIM_ASSIGN_OR_RETURN(out.text, ReadFile(path));
  TPUSIM_ASSIGN_OR_RETURN(out.module, ParseHloModule(out.text, path));
  TPUSIM_RETURN_IF_ERROR(VerifyModule(*out.module, out.text));
  return out;
}

}  // namespace tpusim::hlo
