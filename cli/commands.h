// pagedchat-cli subcommands. Each registers its options on a CLI11 subcommand and returns the
// function that runs it (exit code; errors are printed to stderr by main).
#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace pagedchat::cli {

using Command = std::function<int()>;

/// Help text of --model for the commands that load a model (bench adds random:SHAPE).
inline constexpr const char* kModelHelp =
    "a GGUF file, a Hugging Face folder (config.json, *.safetensors, tokenizer.json), a llama2.c checkpoint (.bin) or "
    "a "
    "folder holding one";

/// `generate`: submit every --prompt together (one batch) and print the continuations.
Command add_generate_command(CLI::App& app);

/// `chat`: an interactive conversation on stdin/stdout with the model's chat template; each turn
/// re-sends the whole conversation (prefix caching reuses it) and streams the reply.
Command add_chat_command(CLI::App& app);

/// `bench`: `throughput`, `latency` and `chat` benchmarks on random token-id prompts (see
/// cli/bench_common.h); model load time is excluded from every figure.
Command add_bench_command(CLI::App& app);

/// `template`: render a conversation (a JSON file) with the model's chat template, a built-in or a
/// .jinja file, and print the prompt exactly (with --json, its token ids too).
Command add_template_command(CLI::App& app);
/// `tokenize`: print the ids and pieces of a text (loads only the tokenizer).
Command add_tokenize_command(CLI::App& app);

/// `serve`: the OpenAI-compatible HTTP server on one continuously batched engine.
Command add_serve_command(CLI::App& app);

/// `pull`: download a model from the Hugging Face hub (a GGUF of a repository, by quantization, or
/// a safetensors repository's files) into the models folder, resuming and checking SHA-256.
Command add_pull_command(CLI::App& app);
/// `search`: repositories of the Hugging Face hub with GGUF files, most downloaded first.
Command add_search_command(CLI::App& app);

/// `convert`: write a model as GGUF (f32, f16, q8_0) or as a Hugging Face folder (f32, bf16).
Command add_convert_command(CLI::App& app);

}  // namespace pagedchat::cli
