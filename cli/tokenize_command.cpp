// `pagedchat-cli tokenize`: the ids and pieces of a text under a model's tokenizer. Loads only the
// tokenizer (load_tokenizer: no weights), so it works on vocabulary-only GGUF files,
// tokenizer.json, Hugging Face folders and sentencepiece .model files alike.
#include <CLI/CLI.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "cli/commands.h"
#include "cli/input_file.h"
#include "cli/json_output.h"
#include "engine/text/tokenizer.h"

namespace pagedchat::cli {

namespace {
struct TokenizeOptions {
  std::string model, text, file;
  bool json = false, add_bos = false, parse_special = false;
};

int run_tokenize(const TokenizeOptions& o) {
  const auto tok = load_tokenizer(o.model);
  const std::string text = o.file.empty() ? o.text : read_input_file(o.file, "the text file");
  const std::vector<int> ids = o.parse_special ? tok->encode_with_special_tokens(text, o.add_bos)
                                               : tok->encode(text, o.add_bos);
  if (o.json) {
    nlohmann::json j;
    j["ids"] = ids;
    j["pieces"] = nlohmann::json::array();
    for (int id : ids) j["pieces"].push_back(tok->id_to_piece(id));
    std::cout << dump(j, -1) << "\n";
  } else {
    for (int id : ids) std::cout << id << '\t' << tok->id_to_piece(id) << '\n';
  }
  return 0;
}
}  // namespace

Command add_tokenize_command(CLI::App& app) {
  auto opt = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Print the token ids and pieces of a text (loads only the tokenizer)");
  cmd->add_option("--model", opt->model,
                  "tokenizer source: GGUF file (vocabulary-only too), tokenizer.json, Hugging Face or llama2.c folder, "
                  "sentencepiece .model")
      ->required();
  auto* text = cmd->add_option("--text", opt->text, "the text");
  auto* file = cmd->add_option("--file", opt->file, "read the text from this file (bytes as they are)");
  text->excludes(file);
  cmd->add_flag("--json", opt->json, "print {\"ids\": [...], \"pieces\": [...]}");
  cmd->add_flag("--add-bos", opt->add_bos, "prepend the BOS token (none by default)");
  cmd->add_flag("--parse-special", opt->parse_special,
                "match special (control) tokens written in the text, e.g. <|eot_id|> (by default they are text)");
  return [opt, text, file]() {
    if (text->count() == 0 && file->count() == 0) throw std::invalid_argument("tokenize needs --text or --file");
    return run_tokenize(*opt);
  };
}

}  // namespace pagedchat::cli
