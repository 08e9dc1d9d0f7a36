// `tpusim config show [CONFIG] [--json]` and `tpusim config schema [--markdown]`.
#include <iostream>

#include "config/config_loader.h"
#include "config/derived.h"
#include "config/schema.h"
#include "tools/tpusim/cli_util.h"
#include "tools/tpusim/commands.h"

namespace tpusim::cli {

void RegisterConfigCommand(CLI::App& app) {
  CLI::App* config = app.add_subcommand("config", "show chip configs and their schema");
  config->require_subcommand(1);

  struct ShowArgs {
    std::string name;
    std::vector<std::string> overrides;
    bool json = false;
  };
  auto show_args = std::make_shared<ShowArgs>();
  show_args->name = config::kDefaultConfigName;
  CLI::App* show =
      config->add_subcommand("show", "print a config's derived figures: peaks, bandwidths, ridge");
  show->add_option("config", show_args->name, "YAML path or name in configs/ (default: tpu-v4)");
  show->add_option("--set", show_args->overrides, "override a key: --set core.mxu.rows=256");
  show->add_flag("--json", show_args->json, "print JSON");
  show->callback([show_args] {
    config::ChipConfig c = OrFail(config::LoadChipConfig(show_args->name, show_args->overrides));
    config::DerivedFigures d = config::Derive(c);
    if (show_args->json) {
      std::cout << config::DerivedToJson(c, d).Dump();
    } else {
      std::cout << config::DerivedToText(c, d);
    }
  });

  auto markdown = std::make_shared<bool>(false);
  CLI::App* schema =
      config->add_subcommand("schema", "print every config key: unit, default, meaning");
  schema->add_flag("--markdown", *markdown, "print the table as Markdown (docs/config.md)");
  schema->callback([markdown] {
    if (*markdown) {
      std::cout << config::SchemaMarkdown();
      return;
    }
    for (const config::FieldSpec& f : config::ConfigSchema()) {
      std::cout << f.path << "  (" << config::FieldTypeName(f.type);
      if (!f.unit.empty()) std::cout << ", " << f.unit;
      std::cout << ", " << (f.required() ? "required" : "default " + f.default_value) << ")\n    "
                << f.description << "\n";
    }
  });
}

}  // namespace tpusim::cli
