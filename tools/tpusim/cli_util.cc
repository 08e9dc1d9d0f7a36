#include "tools/tpusim/cli_util.h"

#include <spdlog/spdlog.h>

#include <iostream>

#include "config/config_loader.h"

namespace tpusim::cli {

void Fail(const Status& status) {
  std::cerr << "tpusim: error: " << status.message() << std::endl;
  throw CLI::RuntimeError(ExitCodeFor(status.code()));
}

void ConfigOptions::AddTo(CLI::App* cmd) {
  config = config::kDefaultConfigName;
  cmd->add_option("-c,--config", config,
                  "chip config: a YAML path or a name in configs/ (default: tpu-v4)");
  cmd->add_option("--set", overrides, "override a config key, e.g. --set core.mxu.rows=256")
      ->take_all()
      ->allow_extra_args(false);
}

config::ChipConfig ConfigOptions::Load() const {
  return OrFail(config::LoadChipConfig(config, overrides));
}

}  // namespace tpusim::cli
