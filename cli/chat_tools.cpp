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

// Text from a server or the model, safe on a terminal: one line, control characters (escape
// sequences) as '?', at most `n` bytes.
std::string shorten(const std::string& s, std::size_t n = std::string::npos) {
  std::string one = s.substr(0, n);
  for (std::size_t i = 0; i < one.size(); ++i) {
    const auto u = static_cast<unsigned char>(one[i]);
    const auto next = i + 1 < one.size() ? static_cast<unsigned char>(one[i + 1]) : 0;
    const auto third = i + 2 < one.size() ? static_cast<unsigned char>(one[i + 2]) : 0;
    if (one[i] == '\n' || one[i] == '\r' || one[i] == '\t') {
      one[i] = ' ';
    } else if (u < 0x20 || u == 0x7f) {
      one[i] = '?';
    } else if (u == 0xc2 && next >= 0x80 && next <= 0x9f) {  // C1 controls (U+0080-U+009F: a one-byte CSI)
      one.replace(i, 2, "?");
    } else if (u == 0xe2 &&
               ((next == 0x80 && third >= 0xaa && third <= 0xae) || (next == 0x81 && third >= 0xa6 && third <= 0xa9))) {
      one.replace(i, 3, "?");  // bidirectional overrides and isolates (U+202A-202E, U+2066-2069)
    }
  }
  return one.size() < s.size() ? one + "..." : one;
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(" \t") - b + 1);
}
}  // namespace

ChatTools::ChatTools(const ChatToolOptions& options, const ChatTemplate& tmpl) : max_steps_(options.max_tool_steps) {
  for (const std::string& name : options.allow_tools) {
    const std::string t = trimmed(name);
    if (t == "*")
      allow_all_ = true;
    else if (!t.empty())
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
      std::cerr << "pagedchat-cli: warning: " << shorten(e.what(), 2000) << "; its tools are left out\n";
    }
  }
  tools_ = mcp::openai_tools(listed, routes_);
  for (const mcp::ToolRoute& r : routes_)
    if (r.function != r.tool)
      std::cerr << "[tool " << shorten(r.tool, 80) << " of MCP server '" << r.server << "' is offered as " << r.function
                << " (another server has one of that name, or the name has characters a function "
                << "name cannot hold)]\n";
  for (const std::string& name : always_) {
    bool known = false;
    for (const mcp::ToolRoute& r : routes_) known = known || r.function == name;
    if (!known) std::cerr << "pagedchat-cli: warning: --allow-tools names '" << name << "', which no server offers\n";
  }
  // The schemas the grammar cannot enforce: offered to the model as they are, left out of a forced
  // call's choices (and a forced call of such a tool is refused).
  std::vector<std::pair<std::string, std::string>> refused;
  const nlohmann::ordered_json enforceable = openai::enforceable_tools(nlohmann::ordered_json::parse(tools_.dump()),
                                                                       &refused);
  if (options.tool_choice != "auto")
    for (const auto& [name, why] : refused)
      std::cerr << "pagedchat-cli: warning: tool " << name << ": its schema cannot be enforced (" << why
                << "): --tool-choice leaves it out\n";
  reply_options_.reasoning = tmpl.reasoning_controls().reasons;
  reply_options_.tool_format = openai::tool_call_format_of(tmpl.source(), tmpl.family());
  reply_options_.tools = tools_;
  if (options.tool_choice != "auto") {
    forced_options_ = reply_options_;
    forced_options_.forced = options.tool_choice == "required" ? "required" : "function";
    forced_options_.forced_name = options.tool_choice == "required" ? "" : options.tool_choice;
    try {
      forced_schema_ =
          openai::tool_choice_schema(enforceable, forced_options_.forced, forced_options_.forced_name, true).dump();
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
    std::cerr << "[tool " << shorten(call.name, 80) << ": no such tool]\n";
    return "Error: there is no tool named '" + call.name + "'.";
  }
  const json args = json::parse(call.arguments, nullptr, false);
  if (!args.is_object()) {  // cut short, or no JSON: never run with other arguments than asked
    std::cerr << "[tool " << call.name << " not run: its arguments are not a JSON object ("
              << shorten(call.arguments, 80) << ")]\n";
    return "Error: the arguments of this call are not a JSON object, so it was not run.";
  }
  if (!approve(call)) return "The user did not allow this call of " + call.name + ".";
  mcp::Client* client = nullptr;
  for (auto& c : clients_)
    if (c->name() == route->server) client = c.get();
  try {
    if (!client->alive())
      throw mcp::McpError("MCP server '" + route->server + "' has stopped or timed out: it is left out");
    const mcp::ToolResult r = client->call_tool(route->tool, args);
    const std::string text = r.text();
    std::cerr << "[tool " << call.name << (r.is_error ? " failed: " : ": ") << shorten(text, 200) << "]\n";
    return r.is_error ? "Error: " + text : text;
  } catch (const mcp::McpError& e) {
    std::cerr << "[tool " << call.name << " failed: " << shorten(e.what(), 2000) << "]\n";
    return std::string("Error: ") + e.what();
  }
}

}  // namespace pagedchat::cli
