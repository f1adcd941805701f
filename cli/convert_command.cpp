#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "engine/loader/gguf/gguf_file_writer.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/loader/hf/hf_writer.h"
#include "engine/loader/model_loader.h"

namespace pagedchat::cli {

namespace {
struct ConvertOptions {
  EngineConfig engine;
  std::string to, out, type;
};

int run_convert(const ConvertOptions& opt, std::stop_token stop) {
  ModelBundle b = load_model(opt.engine);
  if (stop.stop_requested()) throw std::runtime_error("stopped while the model was read");
  if (!b.tokenizer) throw std::runtime_error("'" + opt.engine.model + "' has no tokenizer; pass --tokenizer");
  if (opt.to == "gguf") {
    const std::string type = opt.type.empty() ? "f32" : opt.type;
    write_gguf(b.model, *b.tokenizer, opt.out, type, b.chat_template, stop);
    std::cerr << "wrote " << opt.out << " (GGUF, " << type << ", " << std::filesystem::file_size(opt.out)
              << " bytes)\n";
  } else {
    const std::string type = opt.type.empty() ? "f32" : opt.type;
    const std::string& tok = b.tokenizer->path();
    const std::string ext = std::filesystem::path(tok).extension().string();
    if (ext != ".model" && ext != ".json")
      throw std::runtime_error(
          "a Hugging Face folder needs a sentencepiece tokenizer.model or a tokenizer.json; this "
          "model's tokenizer comes from '" +
          tok + "'" + (ext == ".gguf" ? " (a GGUF's vocabulary is not written as one)" : "") +
          ": pass the model's tokenizer.json or tokenizer.model with --tokenizer");
    write_hf_folder(b.model, tok, opt.out, type, stop);
    std::cerr << "wrote " << opt.out << "/ (Hugging Face folder, " << type << ")\n";
  }
  return 0;
}
}  // namespace

Command add_convert_command(CLI::App& app) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* cmd = app.add_subcommand(
      "convert",
      "Write a model (llama2.c checkpoint, GGUF, Hugging Face folder; Llama, Qwen2, "
      "Qwen3, Qwen3-MoE, Gemma 3, Phi-3, SmolLM3, EXAONE 4) as GGUF (llama.cpp's layout) "
      "or as a Hugging Face folder");
  cmd->add_option("--model", opt->engine.model, "the model to read")->required();
  cmd->add_option("--tokenizer", opt->engine.tokenizer,
                  "tokenizer: sentencepiece .model, tokenizer.json, or a GGUF file");
  cmd->add_option("--to", opt->to, "output format: gguf or hf")->required()->check(CLI::IsMember({"gguf", "hf"}));
  cmd->add_option("--out", opt->out, "output file (gguf) or folder (hf: a new or empty one)")->required();
  cmd->add_option("--type", opt->type,
                  "gguf: f32 (default), f16, q8_0, q4_k_m (llama.cpp's Q4_K/Q6_K mix); hf: f32 (default), bf16")
      ->check(CLI::IsMember({"f32", "f16", "q8_0", "q4_k_m", "bf16"}, CLI::ignore_case));
  return [opt]() {
    // Accepted in any case (llama.cpp's tools say Q4_K_M); written lower case.
    std::transform(opt->type.begin(), opt->type.end(), opt->type.begin(),
                   [](unsigned char ch) { return char(std::tolower(ch)); });
    if (opt->to == "gguf" && opt->type == "bf16")
      throw std::invalid_argument("--to gguf takes --type f32, f16, q8_0 or q4_k_m");
    if (opt->to == "hf" && (opt->type == "f16" || opt->type == "q8_0" || opt->type == "q4_k_m"))
      throw std::invalid_argument("--to hf takes --type f32 or bf16");
    // Ctrl+C (or SIGTERM, SIGHUP) while the weights are written: the writer stops between rows
    // and removes its partial output (OUT.tmp, OUT.partial-PID), instead of leaving it behind.
    static StopOnSignal signals;  // before load_model starts any thread
    // A second signal quits before the writer gets to clean up: its staging output goes first.
    const std::string staging = opt->to == "gguf" ? gguf_staging_file(opt->out) : hf_staging_folder(opt->out);
    signals.on_quit(
        [staging] {
          std::error_code ec;
          std::filesystem::remove_all(staging, ec);
        },
        "pagedchat-cli: convert quit; '" + opt->out + "' was not written\n");
    try {
      return run_convert(*opt, signals.token());
    } catch (const std::exception& e) {
      if (!signals.signal()) throw;
      std::cerr << "pagedchat-cli: convert stopped by SIG" << sigabbrev_np(signals.signal()) << "; '" << opt->out
                << "' was not written\n";
      return 128 + signals.signal();
    }
  };
}

}  // namespace pagedchat::cli
