// pagedchat-cli: the engine from the command line (generate, chat, serve, bench, convert, tokenize, template),
// and models from the Hugging Face hub (pull, search).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"PagedChat command-line interface: paged, continuously batched LLM inference"};
  app.set_version_flag("--version", std::string("pagedchat-cli ") + PAGEDCHAT_VERSION);
  app.require_subcommand(1);
  auto generate = pagedchat::cli::add_generate_command(app);
  auto chat = pagedchat::cli::add_chat_command(app);
  auto bench = pagedchat::cli::add_bench_command(app);
  auto convert = pagedchat::cli::add_convert_command(app);
  auto chat_template = pagedchat::cli::add_template_command(app);
  auto tokenize = pagedchat::cli::add_tokenize_command(app);
  auto serve = pagedchat::cli::add_serve_command(app);
  auto pull = pagedchat::cli::add_pull_command(app);
  auto search = pagedchat::cli::add_search_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (app.got_subcommand("generate")) return generate();
    if (app.got_subcommand("chat")) return chat();
    if (app.got_subcommand("bench")) return bench();
    if (app.got_subcommand("convert")) return convert();
    if (app.got_subcommand("template")) return chat_template();
    if (app.got_subcommand("tokenize")) return tokenize();
    if (app.got_subcommand("serve")) return serve();
    if (app.got_subcommand("pull")) return pull();
    if (app.got_subcommand("search")) return search();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pagedchat-cli: error: %s\n", e.what());
    return 1;
  }
  return 2;
}
