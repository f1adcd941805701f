// `pagedchat-cli serve`: the OpenAI-compatible server (vLLM's `vllm serve`). The socket is bound
// first (a port in use fails at once) and answers 503 while the model loads; then every request,
// from any number of clients, joins the same continuous batch. SIGINT / SIGTERM stop it: running
// requests are aborted, the listener closes.
#include <CLI/CLI.hpp>

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <thread>

#include "cli/commands.h"
#include "cli/engine_options.h"
#include "engine/async_llm.h"
#include "engine/entrypoints/openai/api_server.h"
#include "engine/entrypoints/openai/metrics.h"
#include "engine/entrypoints/openai/serving.h"

namespace pagedchat::cli {

namespace {

struct ServeOptions {
  EngineConfig engine;
  openai::ServerConfig server;
  std::string served_model_name;
  std::string chat_template = "auto";
  bool trust_request_chat_template = false;
};

int run_serve(ServeOptions& opt) {
  if (opt.server.api_key.empty())
    if (const char* key = std::getenv("PAGEDCHAT_API_KEY"); key && *key) opt.server.api_key = key;
  if (!openai::is_loopback_host(opt.server.host) && opt.server.api_key.empty())
    throw std::invalid_argument("--host " + opt.server.host +
                                " is reachable from other machines: give --api-key (or PAGEDCHAT_API_KEY) too");
  const std::string name = opt.served_model_name.empty() ? openai::default_served_model_name(opt.engine.model)
                                                         : opt.served_model_name;

  // SIGINT/SIGTERM go to a waiting thread (blocked everywhere else, including the threads started below).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  openai::ApiServer server(opt.server);
  const int port = server.bind();
  std::thread http([&] { server.listen(); });
  // The signal waiter runs from here on: a signal while the model loads ends the process at once
  // (nothing is served yet, nothing to save); once serving, it aborts the requests and stops.
  std::atomic<AsyncLLM*> serving_llm{nullptr};
  std::atomic<bool> finished{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (finished) return;
    std::fprintf(stderr, "pagedchat-cli: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    AsyncLLM* llm = serving_llm;
    if (!llm) std::_Exit(128 + sig);  // still loading
    llm->abort_all();
    server.stop();
  });
  auto finish_threads = [&] {
    finished = true;
    server.stop();
    http.join();
    pthread_kill(waiter.native_handle(), SIGTERM);  // wake the waiter if no signal came
    waiter.join();
  };
  std::fprintf(stderr, "pagedchat-cli: loading %s (the server answers 503 until it is loaded)\n",
               opt.engine.model.c_str());
  std::unique_ptr<AsyncLLM> llm;
  std::unique_ptr<openai::OpenAIServing> serving;
  openai::ServerMetrics metrics(name);
  try {
    llm = std::make_unique<AsyncLLM>(opt.engine);
    serving = std::make_unique<openai::OpenAIServing>(*llm, name, opt.chat_template, [](const std::string& w) {
      std::fprintf(stderr, "pagedchat-cli: warning: %s\n", w.c_str());
    });
    serving->set_trust_request_chat_template(opt.trust_request_chat_template);
  } catch (...) {
    finish_threads();
    throw;
  }
  llm->set_output_observer([&metrics](const RequestOutput& out) { metrics.observe(out); });
  server.set_serving(llm.get(), serving.get(), &metrics);
  serving_llm = llm.get();
  const EngineConfig& ec = llm->engine().engine_config();
  // An IPv6 address goes in brackets in a URL (RFC 3986): http://[::1]:8000/v1.
  const std::string& h = opt.server.host;
  const std::string url_host = h.find(':') != std::string::npos && h.front() != '[' ? "[" + h + "]" : h;
  std::fprintf(stderr,
               "pagedchat-cli: serving '%s' on http://%s:%d/v1 (%s, max_model_len %d, %d KV blocks of %d tokens)\n",
               name.c_str(), url_host.c_str(), port, llm->engine().backend_name().c_str(), ec.max_model_len,
               llm->engine().num_usable_blocks(), ec.block_size);  // as /metrics counts them
  if (ec.speculative_config.enabled())
    std::fprintf(stderr, "pagedchat-cli: speculative decoding: %s, up to %d draft tokens per step%s\n",
                 ec.speculative_config.method_name().c_str(), ec.speculative_config.num_speculative_tokens,
                 ec.speculative_config.fit_to_batch ? ", fitted to the batch" : "");
  std::fflush(stderr);
  http.join();  // until a signal stops the server (or its socket fails)
  finished = true;
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  server.set_serving(nullptr, nullptr, nullptr);
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto opt = std::make_shared<ServeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "serve", "OpenAI-compatible HTTP server: /v1/models, /v1/completions, /v1/chat/completions, /health, /metrics");
  cmd->add_option("--model", opt->engine.model, kModelHelp)->required();
  cmd->add_option("--tokenizer", opt->engine.tokenizer, "sentencepiece tokenizer (.model)");
  cmd->add_option("--host", opt->server.host, "address to listen on (default 127.0.0.1; another needs --api-key)");
  cmd->add_option("--port", opt->server.port, "TCP port (default 8000; 0 = any free port, printed at start)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", opt->server.api_key,
                  "clients must send 'Authorization: Bearer KEY' (default: $PAGEDCHAT_API_KEY, or none)");
  cmd->add_option("--served-model-name", opt->served_model_name,
                  "the model's name in the API (default: --model's file or folder name; the path is accepted too)");
  cmd->add_option("--chat-template", opt->chat_template,
                  "the model's own (auto, the default), a built-in (llama-2, mistral, chatml, zephyr, vicuna, "
                  "llama3, deepseek-r1, phi3, gemma, gemma4, none) or a .jinja file");
  cmd->add_option("--max-body-bytes", opt->server.max_body_bytes,
                  "largest request body, counted as it is read (default 32 MiB; more: 413)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32));
  cmd->add_option("--max-json-depth", opt->server.max_json_depth,
                  "deepest nesting of arrays and objects in a request (default 64; more: 400)")
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--request-timeout", opt->server.request_timeout_s,
                  "seconds a client has to send a whole request, headers and body (default 30)")
      ->check(CLI::Range(1, 3600));
  cmd->add_option("--max-connections", opt->server.max_connections, "connections at once (default 1000)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--allowed-origins", opt->server.allowed_origins,
                  "web page origins allowed to call the server (CORS), e.g. http://localhost:3000; '*' = any "
                  "(default: none, a browser's request is refused)");
  cmd->add_option("--max-stop-strings", opt->server.limits.max_stop_strings,
                  "most stop strings in one request (default 64; each at most 1024 bytes)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--max-sequences-per-request", opt->server.limits.max_sequences,
                  "most prompts times n in one request (default 1024)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--allowed-media-domains", opt->server.limits.allowed_media_domains,
                  "hosts whose http(s) image URLs the server fetches (exact names, e.g. upload.wikimedia.org; "
                  "default: none, only data: URLs)");
  cmd->add_flag("--trust-request-chat-template", opt->trust_request_chat_template,
                "render a request's own 'chat_template' (in the template sandbox); default: refuse it");
  add_engine_options(cmd, opt->engine);
  return [opt]() { return run_serve(*opt); };
}

}  // namespace pagedchat::cli
