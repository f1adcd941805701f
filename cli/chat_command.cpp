// `pagedchat-cli chat`: an interactive conversation on stdin/stdout. Each user line becomes a
// turn; the whole conversation so far is rendered with the model's chat template and sent again
// (automatic prefix caching makes the repeated part cheap), and the reply streams to stdout.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/chat_tools.h"
#include "cli/commands.h"
#include "cli/engine_options.h"
#include "cli/interrupt.h"
#include "cli/sampling_options.h"
#include "cli/timings.h"
#include "engine/llm_engine.h"
#include "engine/multimodal/image_decode.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/text/chat_template.h"
#include "engine/vision/vision_encoder.h"

namespace pagedchat::cli {

namespace {

struct ChatOptions {
  EngineConfig engine;
  SamplingParams sampling;
  SamplingOptions given;  ///< which sampling options the command line set
  std::string system;
  std::string chat_template = "auto";
  long long seed = -1;
  std::string reasoning;       ///< "" (the template's default), on, off, low, medium, high
  std::string reasoning_flag;  ///< how the command line said it, for messages
  bool verbose = false;
  bool timings = false;
  bool tint_drafts = false;  ///< accepted draft text in colour (ANSI)
  ChatToolOptions tools;
};

/// An engine step failed while a reply ran (the message is skipped; the chat goes on).
struct StepFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// Runs one request to completion, streaming its text to stdout (Ctrl+C stops it: `interrupts`).
// Returns the reply text (what was shown, when stopped); `last` gets its final output (metrics,
// cached tokens) and `stopped` whether Ctrl+C ended it.
std::string stream_reply(LLMEngine& engine, InterruptWatch& interrupts, const std::string& id, const ChatPrompt& prompt,
                         const std::vector<MultiModalPlaceholder>& images, const SamplingParams& params,
                         bool tint_drafts, RequestOutput& last, bool& stopped) {
  RequestOptions options;
  options.stable_prefix_tokens = prompt.stable_prefix_tokens;
  options.images = images;
  engine.add_request(id, prompt.token_ids, params, options);
  interrupts.begin_reply(engine, id);
  std::string reply;
  try {
    while (engine.has_unfinished_requests())
      for (RequestOutput& out : engine.step()) {
        for (const CompletionOutput& c : out.outputs) {
          write_text(std::cout, c, tint_drafts);
          reply += c.text;
        }
        std::cout.flush();
        last = std::move(out);
      }
  } catch (const std::exception& e) {
    // A step that throws (a broken model's NaN logits): the request is aborted and its abort
    // output drained, so the engine is clean for the next message.
    engine.abort_request(id);
    try {
      engine.step();
    } catch (const std::exception&) {
    }
    interrupts.end_reply();
    std::cout << "\n";
    std::cout.flush();
    throw StepFailed(e.what());
  }
  stopped = interrupts.end_reply();
  std::cout << "\n";
  std::cout.flush();
  return reply;
}

int run_chat(ChatOptions& opt) {
  // Before the engine's threads start, so that they leave SIGINT to the watcher.
  static InterruptWatch interrupts;
  if (opt.seed >= 0) opt.sampling.seed = static_cast<uint64_t>(opt.seed);
  opt.sampling.output_kind = RequestOutputKind::kDelta;
  opt.sampling.n = 1;
  opt.sampling.validate();
  // An unknown --chat-template fails before the (possibly slow) model load.
  if (opt.chat_template != "auto" && !opt.chat_template.empty()) resolve_chat_template(opt.chat_template, "");
  LLMEngine engine(opt.engine);
  if (opt.tint_drafts && engine.speculative_methods().empty())
    std::cerr << "pagedchat-cli: warning: --tint-drafts: nothing proposes draft tokens (--speculative-config sets "
                 "who does), so nothing will be tinted\n";
  apply_sampling_defaults(engine.sampling_defaults(), opt.sampling, opt.given.given());
  opt.sampling.validate();
  const Tokenizer& tokenizer = engine.tokenizer();
  std::string warning;
  const ChatTemplate tmpl = resolve_chat_template(opt.chat_template, engine.chat_template(),
                                                  "'" + opt.engine.model + "'", &warning);
  if (!warning.empty()) std::fprintf(stderr, "pagedchat-cli: warning: %s\n", warning.c_str());
  if (tmpl.name() == "none" && (opt.chat_template.empty() || opt.chat_template == "auto"))  // not asked for
    std::fprintf(stderr,
                 "pagedchat-cli: warning: the model has no chat template: each turn joins the messages' text as "
                 "it is (give --chat-template NAME or a .jinja file for a chat format)\n");
  if (opt.verbose)
    std::fprintf(stderr, "[chat template: %s]\n",
                 tmpl.is_builtin() ? tmpl.name().c_str() : ("the model's (" + tmpl.family() + " format)").c_str());
  const ChatStopConditions stops = chat_stop_conditions(tmpl, tokenizer);
  opt.sampling.stop.insert(opt.sampling.stop.end(), stops.stop.begin(), stops.stop.end());
  opt.sampling.stop_token_ids.insert(opt.sampling.stop_token_ids.end(), stops.stop_token_ids.begin(),
                                     stops.stop_token_ids.end());

  const ModelConfig& mc = engine.model_config();
  ChatEncodeOptions encode = chat_encode_options(tokenizer, mc.add_bos, mc.bos_id);
  const ReasoningControls& reasoning = tmpl.reasoning_controls();
  if (!opt.reasoning.empty() && !apply_reasoning_choice(encode, reasoning, opt.reasoning))
    std::fprintf(stderr, "pagedchat-cli: warning: the chat template has no %s switch: %s does nothing\n",
                 opt.reasoning == "on" || opt.reasoning == "off" ? "thinking (enable_thinking)"
                                                                 : "reasoning effort (reasoning_effort)",
                 opt.reasoning_flag.c_str());
  // A model that reasons writes its thinking first: the reply may use the context left (as the
  // app does), unless --max-tokens or the model's generation_config.json says otherwise.
  if (reasoning.reasons && !opt.given.given().max_tokens && !engine.sampling_defaults().max_new_tokens)
    opt.sampling.max_tokens = engine.engine_config().max_model_len;
  encode.find_stable_prefix = mc.num_recurrent_layers() > 0;  // where the next turn resumes
  // MCP tools: their definitions go to the template as `tools`, as the server passes a request's.
  std::unique_ptr<ChatTools> tools;
  if (opt.tools.mcp_config.empty() && (opt.tools.tool_choice != "auto" || !opt.tools.allow_tools.empty()))
    std::fprintf(stderr, "pagedchat-cli: warning: --tool-choice and --allow-tools need --mcp-config: no tools\n");
  if (!opt.tools.mcp_config.empty()) {
    try {
      tools = std::make_unique<ChatTools>(opt.tools, tmpl);
    } catch (const mcp::McpError& e) {
      std::fprintf(stderr, "pagedchat-cli: %s\n", e.what());
      return 1;
    }
    if (tools->any()) {
      nlohmann::json vars = encode.extra_variables_json.empty() ? nlohmann::json::object()
                                                                : nlohmann::json::parse(encode.extra_variables_json);
      vars["tools"] = tools->tools();
      encode.extra_variables_json = vars.dump();
    }
  }
  bool warned = false;
  const int max_model_len = engine.engine_config().max_model_len;
  const bool interactive = isatty(STDIN_FILENO) != 0;
  std::vector<ChatMessage> history;  // user/assistant turns, oldest first; the system message apart
  using Images = std::vector<std::shared_ptr<const RgbImage>>;
  std::vector<Images> history_images;  // per message of `history`: the images its text holds markers for
  Images pending;                      // /image: attached to the next message
  std::string line;
  for (int turn = 1;; ++turn) {
    if (interactive) std::cerr << "> " << std::flush;
    if (!std::getline(std::cin, line)) break;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // Commands may carry spaces around them ("/reset " typed with a trailing space).
    const std::size_t first = line.find_first_not_of(" \t"), last = line.find_last_not_of(" \t");
    const std::string command = first == std::string::npos ? std::string() : line.substr(first, last - first + 1);
    if (command == "/exit") break;
    if (command == "/reset") {
      history.clear();
      history_images.clear();
      std::cerr << (pending.empty() ? "[conversation reset]\n" : "[conversation reset; the attached images dropped]\n");
      pending.clear();
      continue;
    }
    if (command == "/image" || command.rfind("/image ", 0) == 0) {
      std::string path = command.size() > 6 ? command.substr(command.find_first_not_of(" \t", 6)) : std::string();
      if (path.size() >= 2 && (path.front() == '"' || path.front() == '\'') && path.back() == path.front())
        path = path.substr(1, path.size() - 2);  // a quoted path (spaces in it)
      if (path.rfind("~/", 0) == 0 && std::getenv("HOME")) path = std::string(std::getenv("HOME")) + path.substr(1);
      if (path.empty()) {
        std::cerr << "usage: /image FILE (a PNG, JPEG or WebP picture for the next message)\n";
        continue;
      }
      if (!engine.vision_encoder()) {
        std::cerr << "pagedchat-cli: this model reads no images: give its image projector with --mmproj (a "
                     "Hugging Face folder with a vision tower brings its own)\n";
        continue;
      }
      try {
        const RgbImage picture = decode_image_file(path);
        pending.push_back(std::make_shared<const RgbImage>(engine.vision_encoder()->fit(picture)));
        std::cerr << "[image " << picture.width << "x" << picture.height << " attached to the next message]\n";
      } catch (const ImageError& e) {
        std::cerr << "pagedchat-cli: " << e.what() << "\n";
      } catch (const std::invalid_argument& e) {  // a size the encoder does not take
        std::cerr << "pagedchat-cli: " << path << ": " << e.what() << "\n";
      }
      continue;
    }
    if (is_blank(line)) continue;
    // Another "/word" is a mistyped command, not a message ("/imgae x.png"); "//" sends a message
    // that begins with "/".
    if (command.size() > 1 && command[0] == '/' && command[1] != '/') {
      const std::string word = command.substr(0, command.find_first_of(" \t"));
      if (word.size() > 1 &&
          word.find_first_not_of("/abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 1) == std::string::npos) {
        std::cerr << "pagedchat-cli: unknown command " << word
                  << " (commands: /image FILE, /reset, /exit; start a message with // to send one beginning with /)\n";
        continue;
      }
    }
    if (command.rfind("//", 0) == 0) line = line.substr(first + 1);

    // This turn's messages: the user's, then (with tools) each call and its result, then the
    // answer; the model is asked again after each round of calls, --max-tool-steps at most.
    // Images go before the text, one marker each (mm_prompt.h).
    std::string content = strip_image_markers(line);
    for (std::size_t k = 0; k < pending.size(); ++k) content.insert(0, kImageMarker);
    std::vector<ChatMessage> turn_messages{{"user", content}};
    std::vector<Images> turn_images{pending};
    pending.clear();
    for (int step = 0;; ++step) {
      std::vector<ChatMessage> messages;
      if (!opt.system.empty()) messages.push_back({"system", opt.system});
      messages.insert(messages.end(), history.begin(), history.end());
      messages.insert(messages.end(), turn_messages.begin(), turn_messages.end());
      std::vector<Images> message_images(opt.system.empty() ? 0 : 1);
      message_images.insert(message_images.end(), history_images.begin(), history_images.end());
      message_images.insert(message_images.end(), turn_images.begin(), turn_images.end());
      message_images.resize(messages.size());
      ChatPrompt prompt;
      std::vector<MultiModalPlaceholder> placed;
      try {
        prompt = fit_chat(tokenizer, tmpl, messages, encode, max_model_len, opt.sampling.max_tokens);
        Images kept;  // the images of the messages fit_chat kept, in order
        for (std::size_t m = 0; m < messages.size(); ++m) {
          const int mi = static_cast<int>(m);
          if (mi >= prompt.first_dropped_message && mi < prompt.first_dropped_message + prompt.num_dropped_messages)
            continue;
          kept.insert(kept.end(), message_images[m].begin(), message_images[m].end());
        }
        if (!kept.empty()) {
          ImagePrompt ip = encode_image_prompt(tokenizer, *engine.vision_encoder(), prompt.rendered, kept,
                                               encode.bos_id, image_placeholder_id(tokenizer));
          const int n = static_cast<int>(ip.token_ids.size());
          if (n >= max_model_len)
            throw ChatTooLongError("the conversation with its images needs " + std::to_string(n) +
                                       " prompt tokens; max_model_len is " + std::to_string(max_model_len),
                                   n, max_model_len);
          prompt.token_ids = std::move(ip.token_ids);
          prompt.max_tokens = std::min(prompt.max_tokens, max_model_len - n);
          prompt.stable_prefix_tokens = 0;
          placed = std::move(ip.images);
        }
      } catch (const ChatTooLongError& e) {
        std::cerr << "pagedchat-cli: " << e.what() << "; message skipped\n";
        break;
      } catch (const ChatTemplateError& e) {
        std::cerr << "pagedchat-cli: " << e.what() << "; message skipped\n";
        break;
      } catch (const std::invalid_argument& e) {  // the template left out an image's place
        std::cerr << "pagedchat-cli: " << e.what() << "; message skipped\n";
        break;
      }
      if (!prompt.warning.empty() && !warned) {
        std::cerr << "pagedchat-cli: warning: " << prompt.warning << "\n";
        warned = true;
      }
      if (prompt.num_dropped_messages > 0) {
        const int from_history = std::min<int>(prompt.num_dropped_messages, static_cast<int>(history.size()));
        history.erase(history.begin(), history.begin() + from_history);
        history_images.erase(history_images.begin(), history_images.begin() + from_history);
        std::cerr << "[dropped the " << prompt.num_dropped_messages << " oldest messages to fit max_model_len "
                  << max_model_len << "]\n";
      }
      SamplingParams params = opt.sampling;
      params.max_tokens = prompt.max_tokens;
      const bool forced = tools && step == 0 && !tools->forced_schema().empty();
      if (forced) params.structured_outputs = StructuredOutputsParams{tools->forced_schema(), {}, {}, false};
      RequestOutput final_output;
      bool stopped = false;
      std::string reply;
      try {
        reply = stream_reply(engine, interrupts, "chat-" + std::to_string(turn) + "-" + std::to_string(step), prompt,
                             placed, params, opt.tint_drafts, final_output, stopped);
      } catch (const StepFailed& e) {
        std::cerr << "pagedchat-cli: the engine step failed: " << e.what() << "; message skipped\n";
        turn_messages.resize(1);  // nothing of this turn goes into the history
        break;
      }
      if (stopped) std::cerr << "[stopped: Ctrl+C again at the prompt exits]\n";
      // Tokens but no text: only special tokens (a Harmony reply that never opened a channel, a
      // model that answers in control tokens): say so instead of an empty line.
      if (reply.empty() && !stopped && !tools && final_output.metrics.num_generation_tokens > 0)
        std::cerr << "[" << final_output.metrics.num_generation_tokens
                  << " tokens generated and no text: the model wrote only special tokens]\n";
      if (opt.verbose)
        std::cerr << "[cached " << final_output.num_cached_tokens << "/" << prompt.token_ids.size()
                  << " prompt tokens]\n";
      if (opt.timings) std::cerr << timings_line(final_output) << "\n";
      std::cerr << std::flush;
      const openai::ChatReply parsed = tools && !stopped ? tools->parse(reply, forced) : openai::ChatReply{};
      if (parsed.calls.empty()) {
        turn_messages.push_back({"assistant", reply});
        break;
      }
      if (step >= tools->max_steps()) {
        std::cerr << "[" << tools->max_steps() << " tool steps: the calls of this reply are not run]\n";
        turn_messages.push_back({"assistant", reply});
        break;
      }
      // The reply as the template expects a call: its text (reasoning kept in the engine's form)
      // and `tool_calls` with the arguments as an object; then one tool message per call.
      nlohmann::ordered_json calls = nlohmann::ordered_json::array();
      for (const openai::ToolCall& c : parsed.calls) {
        auto args = nlohmann::ordered_json::parse(c.arguments, nullptr, false);
        calls.push_back(
            {{"id", c.id},
             {"type", "function"},
             {"function",
              {{"name", c.name}, {"arguments", args.is_discarded() ? nlohmann::ordered_json(c.arguments) : args}}}});
      }
      const std::string text = (parsed.reasoning ? "<think>\n" + *parsed.reasoning + "\n</think>\n\n" : std::string()) +
                               parsed.content;
      turn_messages.push_back({"assistant", text, nlohmann::ordered_json{{"tool_calls", calls}}.dump()});
      for (const openai::ToolCall& c : parsed.calls)
        turn_messages.push_back(
            {"tool", tools->run(c), nlohmann::ordered_json{{"tool_call_id", c.id}, {"name", c.name}}.dump()});
    }
    if (turn_messages.size() > 1) {
      history.insert(history.end(), turn_messages.begin(), turn_messages.end());
      turn_images.resize(turn_messages.size());
      history_images.insert(history_images.end(), turn_images.begin(), turn_images.end());
    }
  }
  return 0;
}

}  // namespace

Command add_chat_command(CLI::App& app) {
  auto opt = std::make_shared<ChatOptions>();
  opt->sampling.max_tokens = 256;
  SamplingParams& s = opt->sampling;
  CLI::App* cmd = app.add_subcommand(
      "chat",
      "Chat on stdin/stdout: one user message per line; /image FILE attaches a picture (PNG, JPEG, WebP; needs "
      "--mmproj or a Hugging Face folder with a vision tower) to the next message, /reset clears the history, /exit "
      "(or EOF) ends, another /word is refused as a mistyped command (// sends a message beginning with /); Ctrl+C "
      "stops a reply (the conversation goes on), at the prompt it exits");
  cmd->add_option("--model", opt->engine.model, kModelHelp)->required();
  cmd->add_option("--tokenizer", opt->engine.tokenizer, "sentencepiece tokenizer (.model)");
  cmd->add_option("--system", opt->system, "system message placed before the conversation");
  cmd->add_option("--chat-template", opt->chat_template,
                  "the model's own (auto, the default), a built-in (llama-2, mistral, chatml, zephyr, vicuna, "
                  "llama3, deepseek-r1, phi3, gemma, gemma4, none) or a .jinja file");
  opt->given = add_sampling_options(cmd, s, "reply");
  cmd->add_option("--seed", opt->seed, "RNG seed of every reply");
  cmd->add_option("--reasoning", opt->reasoning,
                  "a reasoning model's thinking: on or off (templates with enable_thinking: Qwen3, Gemma 4), or "
                  "its effort: low, medium or high (templates with reasoning_effort: gpt-oss); default: the "
                  "template's")
      ->check(CLI::IsMember({"on", "off", "low", "medium", "high"}))
      ->each([opt](const std::string& v) { opt->reasoning_flag = "--reasoning " + v; });
  cmd->add_option_function<bool>(
         "--enable-thinking",
         [opt](bool on) {
           opt->reasoning = on ? "on" : "off";
           opt->reasoning_flag = on ? "--enable-thinking true" : "--enable-thinking false";
         },
         "the same as --reasoning on (true) or off (false)")
      ->excludes("--reasoning");
  add_engine_options(cmd, opt->engine);
  cmd->add_option("--mcp-config", opt->tools.mcp_config,
                  "tools from MCP servers: a JSON file of \"mcpServers\" (command + args + env, or url + headers), as "
                  "other apps write it; each call is asked about on the terminal")
      ->check(CLI::ExistingFile);
  cmd->add_option("--allow-tools", opt->tools.allow_tools, "tools that run without asking (comma-separated; * = all)")
      ->delimiter(',');
  cmd->add_option("--tool-choice", opt->tools.tool_choice,
                  "auto (the model decides), required (a call to some tool) or a tool's name: the last two force the "
                  "first reply to each message by constrained decoding");
  cmd->add_option("--max-tool-steps", opt->tools.max_tool_steps, "rounds of tool calls per message, at most")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--verbose", opt->verbose, "print the template and [cached N/M prompt tokens] per turn on stderr");
  cmd->add_flag("--timings", opt->timings, "print each reply's prompt and decode speed on stderr");
  cmd->add_flag("--tint-drafts", opt->tint_drafts,
                "show the text of accepted draft tokens (speculative decoding) in green (ANSI colour)");
  return [opt]() { return run_chat(*opt); };
}

}  // namespace pagedchat::cli
