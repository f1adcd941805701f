#include "cli/chat_tools.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/entrypoints/openai/tool_calls.h"
#include "engine/text/chat_template.h"

namespace pagedchat::cli {

namespace {
using json = nlohmann::json;

std::string shorten(const std::string& s, std::size_t n) {
  std::string one = s;
  for (char& c : one)
    if (c == '\n' || c == '\r') c = ' ';
  return one.size() <= n ? one : one.substr(0, n) + "...";
}
}  // namespace

ChatTools::ChatTools(const ChatToolOptions& options, const ChatTemplate& tmpl) : max_steps_(options.max_tool_steps) {
  for (const std::string& t : options.allow_tools) {
    if (t == "*")
      allow_all_ = true;
    else
      always_.insert(t);
  }
  std::ifstream in(options.mcp_config);
  if (!in) throw mcp::McpError("cannot read the MCP configuration '" + options.mcp_config + "'");
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::pair<std::string, std::vector<mcp::Tool>>> listed;
  for (mcp::ServerConfig& c : mcp::parse_servers_config(text.str())) {
    if (!c.enabled) continue;
    try {
      auto client = std::make_unique<mcp::Client>(c);
      listed.emplace_back(c.name, client->list_tools());
      for (const std::string& s : client->skipped())
        std::cerr << "pagedchat-cli: warning: MCP server '" << c.name << "': " << s << "\n";
      std::cerr << "[MCP server '" << c.name << "': " << listed.back().second.size() << " tools]\n";
      clients_.push_back(std::move(client));
    } catch (const mcp::McpError& e) {
      std::cerr << "pagedchat-cli: warning: " << e.what() << "; its tools are left out\n";
    }
  }
  tools_ = mcp::openai_tools(listed, routes_);
  reply_options_.reasoning = tmpl.reasoning_controls().reasons;
  reply_options_.tool_format = openai::tool_call_format_of(tmpl.source(), tmpl.family());
  reply_options_.tools = tools_;
  if (options.tool_choice != "auto") {
    forced_options_ = reply_options_;
    forced_options_.forced = options.tool_choice == "required" ? "required" : "function";
    forced_options_.forced_name = options.tool_choice == "required" ? "" : options.tool_choice;
    try {
      forced_schema_ = openai::tool_choice_schema(nlohmann::ordered_json::parse(tools_.dump()), forced_options_.forced,
                                                  forced_options_.forced_name, true)
                           .dump();
    } catch (const std::invalid_argument& e) {
      throw mcp::McpError(std::string("--tool-choice ") + e.what());
    }
  }
  if (any() && reply_options_.tool_format == openai::ToolCallFormat::kNone)
    std::cerr << "pagedchat-cli: warning: the chat template shows no tool-call format: the model's calls cannot be "
                 "read\n";
}

ChatTools::~ChatTools() = default;

openai::ChatReply ChatTools::parse(const std::string& reply, bool forced) const {
  return openai::parse_chat_reply(forced ? forced_options_ : reply_options_, reply);
}

bool ChatTools::approve(const openai::ToolCall& call) {
  if (allow_all_ || always_.count(call.name)) return true;
  // Asked on the terminal the conversation is typed on; a script (stdin not a terminal) cannot be
  // asked, so only what --allow-tools names runs.
  if (!isatty(STDIN_FILENO)) {
    std::cerr << "[tool " << call.name << " denied: stdin is no terminal to ask on (pre-approve it with "
              << "--allow-tools " << call.name << ")]\n";
    return false;
  }
  std::cerr << "Run tool " << call.name << " " << shorten(call.arguments, 300)
            << "? [y] once, [a] always for this tool, [n] no: " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  if (answer == "a" || answer == "A") {
    always_.insert(call.name);
    return true;
  }
  return answer == "y" || answer == "Y" || answer == "yes";
}

std::string ChatTools::run(const openai::ToolCall& call) {
  const mcp::ToolRoute* route = nullptr;
  for (const mcp::ToolRoute& r : routes_)
    if (r.function == call.name) route = &r;
  if (!route) {
    std::cerr << "[tool " << call.name << ": no such tool]\n";
    return "Error: there is no tool named '" + call.name + "'.";
  }
  if (!approve(call)) return "The user did not allow this call of " + call.name + ".";
  mcp::Client* client = nullptr;
  for (auto& c : clients_)
    if (c->name() == route->server) client = c.get();
  const json args = json::parse(call.arguments, nullptr, false);
  try {
    if (!client->alive()) throw mcp::McpError("MCP server '" + route->server + "' has stopped");
    const mcp::ToolResult r = client->call_tool(route->tool, args.is_object() ? args : json::object());
    const std::string text = r.text();
    std::cerr << "[tool " << call.name << (r.is_error ? " failed: " : ": ") << shorten(text, 200) << "]\n";
    return r.is_error ? "Error: " + text : text;
  } catch (const mcp::McpError& e) {
    std::cerr << "[tool " << call.name << " failed: " << e.what() << "]\n";
    return std::string("Error: ") + e.what();
  }
}

}  // namespace pagedchat::cli
