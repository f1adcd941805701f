// `pagedchat-cli template`: renders a conversation with a chat template and prints the prompt
// exactly as the engine would tokenize it (with --json, also its token ids). The template is the
// model's own (--model), a built-in or a .jinja file (--chat-template); the messages come from a
// JSON file in OpenAI's shape.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/input_file.h"
#include "cli/json_output.h"
#include "engine/loader/chat_template_source.h"
#include "engine/text/chat_template.h"
#include "engine/text/tokenizer.h"

namespace pagedchat::cli {

namespace {

struct TemplateOptions {
  std::string model;
  std::string chat_template = "auto";
  std::string messages;
  std::optional<std::string> bos_token, eos_token;
  std::string enable_thinking;  // "", "true" or "false"
  std::string reasoning;        // "", on, off, low, medium, high (as `chat --reasoning`)
  bool add_generation_prompt = false;
  bool continue_final_message = false;
  bool json = false;
};

int run_template(const TemplateOptions& opt) {
  if (opt.model.empty() && (opt.chat_template.empty() || opt.chat_template == "auto"))
    throw std::invalid_argument("pass --model (its own chat template) or --chat-template NAME|FILE.jinja");
  // The messages: a JSON array, or an object holding "messages" and further template variables
  // (e.g. "tools", "documents"), as transformers' apply_chat_template takes them.
  nlohmann::ordered_json input;
  try {
    input = nlohmann::ordered_json::parse(read_input_file(opt.messages, "the messages file"));
  } catch (const nlohmann::ordered_json::exception& e) {
    throw std::runtime_error("'" + opt.messages + "' is not valid JSON: " + e.what());
  }
  nlohmann::ordered_json messages, extra = nlohmann::ordered_json::object();
  if (input.is_array()) {
    messages = input;
  } else if (input.is_object() && input.contains("messages")) {
    messages = input["messages"];
    for (const auto& [k, v] : input.items())
      if (k != "messages") extra[k] = v;
  } else {
    throw std::runtime_error("'" + opt.messages +
                             "': expected a JSON array of messages or an object with \"messages\"");
  }

  std::unique_ptr<Tokenizer> tokenizer;
  std::string model_template;
  if (!opt.model.empty()) {
    tokenizer = load_tokenizer(opt.model);
    model_template = read_model_chat_template(opt.model);
  }
  std::string warning;
  const ChatTemplate tmpl = resolve_chat_template(opt.chat_template, model_template, "'" + opt.model + "'", &warning);
  if (!warning.empty()) std::fprintf(stderr, "pagedchat-cli: warning: %s\n", warning.c_str());

  ChatEncodeOptions enc;
  if (tokenizer) enc = chat_encode_options(*tokenizer, tokenizer->add_bos(), tokenizer->bos_id());
  enc.continue_final_message = opt.continue_final_message;
  if (opt.enable_thinking == "true") enc.enable_thinking = true;
  if (opt.enable_thinking == "false") enc.enable_thinking = false;
  if (!extra.empty()) enc.extra_variables_json = extra.dump();
  // After the messages file's variables: a reasoning_effort it sets stays.
  if (!opt.reasoning.empty() && !apply_reasoning_choice(enc, tmpl.reasoning_controls(), opt.reasoning))
    std::fprintf(stderr, "pagedchat-cli: warning: the chat template has no %s switch: --reasoning %s does nothing\n",
                 opt.reasoning == "on" || opt.reasoning == "off" ? "thinking (enable_thinking)"
                                                                 : "reasoning effort (reasoning_effort)",
                 opt.reasoning.c_str());
  ChatRenderOptions render = tokenizer ? chat_render_options(*tokenizer, opt.add_generation_prompt, enc)
                                       : ChatRenderOptions{};
  if (!tokenizer) {
    render.add_generation_prompt = opt.add_generation_prompt;
    render.continue_final_message = enc.continue_final_message;
    render.enable_thinking = enc.enable_thinking;
    render.extra_variables_json = enc.extra_variables_json;
  }
  if (opt.bos_token) render.bos_token = opt.bos_token;
  if (opt.eos_token) render.eos_token = opt.eos_token;
  render.fallback_to_builtin = false;  // show what the template itself does

  const TemplatedText prompt = tmpl.render(messages, render);
  if (!opt.json) {
    std::fwrite(prompt.text.data(), 1, prompt.text.size(), stdout);
    return 0;
  }
  nlohmann::json out = {{"text", prompt.text}};
  if (tokenizer) out["ids"] = encode_rendered_prompt(*tokenizer, prompt, enc);
  std::cout << dump(out) << "\n";
  return 0;
}

}  // namespace

Command add_template_command(CLI::App& app) {
  auto opt = std::make_shared<TemplateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "template", "Render a conversation with a chat template and print the prompt exactly (--json: text and ids)");
  cmd->add_option("--model", opt->model,
                  "model file or folder: its chat template and tokenizer (no weights are loaded)");
  cmd->add_option(
      "--chat-template", opt->chat_template,
      "a built-in (llama-2, mistral, chatml, zephyr, vicuna, llama3, deepseek-r1, phi3, gemma, gemma4, none), "
      "a .jinja file, or auto (the model's own; default)");
  cmd->add_option("--messages", opt->messages,
                  "JSON file ('-' = stdin): an array of {role, content, ...}, or {\"messages\": [...], \"tools\": ...}")
      ->required();
  cmd->add_flag("--add-generation-prompt", opt->add_generation_prompt, "end with the assistant's header");
  cmd->add_flag("--continue-final-message", opt->continue_final_message,
                "end inside the last (assistant) message, as transformers' continue_final_message");
  cmd->add_option("--enable-thinking", opt->enable_thinking, "the template variable enable_thinking (true or false)")
      ->check(CLI::IsMember({"true", "false"}));
  cmd->add_option("--reasoning", opt->reasoning,
                  "as chat's: on or off (enable_thinking), low, medium or high (reasoning_effort), where the "
                  "template has the switch")
      ->check(CLI::IsMember({"on", "off", "low", "medium", "high"}))
      ->excludes("--enable-thinking");
  cmd->add_option("--bos-token", opt->bos_token, "the bos_token text (default: the model's)");
  cmd->add_option("--eos-token", opt->eos_token, "the eos_token text (default: the model's)");
  cmd->add_flag("--json", opt->json, "print {\"text\": ..., \"ids\": [...]} (ids need --model)");
  return [opt]() { return run_template(*opt); };
}

}  // namespace pagedchat::cli
