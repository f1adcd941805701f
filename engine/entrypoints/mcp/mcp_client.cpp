#include "engine/entrypoints/mcp/mcp_client.h"

#include <cctype>

#include <signal.h>

#include <mutex>
#include <set>

namespace pagedchat::mcp {

namespace {
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// A function name as OpenAI accepts it: letters, digits, '_' and '-', at most 64.
std::string function_name(const std::string& s) {
  std::string out;
  for (const char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  return out.substr(0, 64);
}
}  // namespace

std::string ToolResult::text() const {
  std::string out;
  auto add = [&out](const std::string& s) {
    if (!out.empty()) out += "\n";
    out += s;
  };
  for (const json& block : content) {
    if (!block.is_object()) continue;
    const std::string type = block.value("type", "");
    if (type == "text" && block.contains("text") && block["text"].is_string()) {
      add(block["text"].get<std::string>());
    } else if (type == "image" || type == "audio") {
      // The decoded size of the base64 data (padding and line breaks not counted).
      std::size_t bytes = 0;
      if (block.contains("data") && block["data"].is_string()) {
        std::size_t chars = 0;
        for (const char ch : block["data"].get_ref<const std::string&>())
          chars += std::isalnum(static_cast<unsigned char>(ch)) || ch == '+' || ch == '/' || ch == '-' || ch == '_';
        bytes = chars * 3 / 4;
      }
      add("[" + type + ": " + block.value("mimeType", "?") + ", " + std::to_string(bytes) + " bytes]");
    } else if (type == "resource_link") {
      add("[resource: " + block.value("uri", "") + "]");
    } else if (type == "resource" && block.contains("resource") && block["resource"].is_object()) {
      const json& r = block["resource"];
      if (r.contains("text") && r["text"].is_string())
        add(r["text"].get<std::string>());
      else
        add("[resource: " + r.value("uri", "") + "]");
    }
  }
  if (out.empty() && !structured.is_null()) out = structured.dump(-1, ' ', false, json::error_handler_t::replace);
  return out;
}

Client::Client(ServerConfig config, ClientLimits limits) : config_(std::move(config)), limits_(limits) {
  // A server that exits while we write to it must not end this process (SIGPIPE's default).
  static std::once_flag no_sigpipe;
  std::call_once(no_sigpipe, [] { ::signal(SIGPIPE, SIG_IGN); });
  TransportLimits t;
  t.max_message_bytes = limits_.max_message_bytes;
  transport_ = config_.http() ? make_http_transport(config_, t) : make_stdio_transport(config_, t);
  initialize();
}

Client::Client(ServerConfig config, std::unique_ptr<Transport> transport, ClientLimits limits)
    : config_(std::move(config)), limits_(limits), transport_(std::move(transport)) {
  initialize();
}

Client::~Client() = default;

bool Client::alive() const { return transport_ && transport_->alive() && !timed_out_; }

void Client::fail(const std::string& what) const {
  std::string p = transport_ ? transport_->problem() : std::string();
  throw McpError("MCP server '" + config_.name + "': " + what + (p.empty() ? "" : " (" + p + ")"));
}

void Client::initialize() {
  const json result = request("initialize",
                              {{"protocolVersion", kProtocolVersion},
                               {"capabilities", json::object()},
                               {"clientInfo", {{"name", "PagedChat"}, {"version", "1"}}}},
                              limits_.startup_timeout);
  if (!result.is_object()) fail("its initialize answer is not an object");
  protocol_version_ = result.value("protocolVersion", "");
  // Versions are dates: anything from 2025-03-26 (Streamable HTTP, tool annotations) on works.
  if (protocol_version_ < "2025-03-26") fail("it speaks MCP " + protocol_version_ + ", older than 2025-03-26");
  transport_->set_protocol_version(protocol_version_);
  if (result.contains("serverInfo") && result["serverInfo"].is_object())
    server_info_ = result["serverInfo"].value("name", "") + " " + result["serverInfo"].value("version", "");
  if (result.contains("instructions") && result["instructions"].is_string())
    instructions_ = result["instructions"].get<std::string>();
  notify("notifications/initialized", json::object());
}

void Client::notify(const std::string& method, json params) {
  try {
    transport_->send(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  } catch (const McpError& e) {
    fail(e.what());
  }
}

json Client::request(const std::string& method, json params, std::chrono::milliseconds timeout,
                     const std::function<bool()>& cancelled) {
  const long long id = next_id_++;
  try {
    transport_->send(json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
  } catch (const McpError& e) {
    throw McpError(e.what());
  }
  const auto deadline = Clock::now() + timeout;
  while (true) {
    if (cancelled && cancelled()) {
      try {
        notify("notifications/cancelled", {{"requestId", id}, {"reason", "stopped by the user"}});
      } catch (const McpError&) {
      }
      throw McpError("MCP server '" + config_.name + "': " + method + " stopped");
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      timed_out_ = true;  // a server that hung is not asked again
      try {
        notify("notifications/cancelled", {{"requestId", id}, {"reason", "timed out"}});
      } catch (const McpError&) {
      }
      fail(method + " timed out after " + std::to_string(timeout.count() / 1000) + " s");
    }
    std::optional<json> m = transport_->receive(std::min(left, std::chrono::milliseconds(100)));
    if (!m) {
      if (!transport_->alive()) fail("it stopped before answering " + method);
      continue;
    }
    if (m->contains("_transport_error")) fail((*m)["_transport_error"].get<std::string>());
    if (m->contains("method") && (*m)["method"].is_string()) {
      // A request from the server: ping is answered; this client offers no other capability.
      if (m->contains("id") && !(*m)["id"].is_null()) {
        const std::string what = (*m)["method"].get<std::string>();
        json reply = {{"jsonrpc", "2.0"}, {"id", (*m)["id"]}};
        if (what == "ping")
          reply["result"] = json::object();
        else
          reply["error"] = {{"code", -32601}, {"message", "Method not found: " + what}};
        try {
          transport_->send(reply);
        } catch (const McpError&) {
        }
      }
      continue;  // notifications (progress, logging, list_changed) are not shown
    }
    if (!m->contains("id") || (*m)["id"] != json(id)) continue;  // an answer to another request
    if (m->contains("error")) {
      const json& e = (*m)["error"];
      const std::string msg = e.is_object() && e.contains("message") && e["message"].is_string()
                                  ? e["message"].get<std::string>()
                                  : e.dump();
      throw McpError("MCP server '" + config_.name + "': " + method + " failed: " + msg);
    }
    if (!m->contains("result")) fail("its answer to " + method + " has neither result nor error");
    return (*m)["result"];
  }
}

std::vector<Tool> Client::list_tools() {
  std::vector<Tool> tools;
  skipped_.clear();
  std::set<std::string> seen;
  std::string cursor;
  for (int page = 0; page < limits_.max_pages; ++page) {
    json params = json::object();
    if (!cursor.empty()) params["cursor"] = cursor;
    const json r = request("tools/list", params, limits_.request_timeout);
    if (!r.is_object() || !r.contains("tools") || !r["tools"].is_array())
      fail("its tools/list answer has no \"tools\" array");
    for (const json& t : r["tools"]) {
      if (!t.is_object() || !t.contains("name") || !t["name"].is_string() || t["name"].get<std::string>().empty()) {
        skipped_.push_back("a tool without a name");
        continue;
      }
      Tool tool;
      tool.name = t["name"].get<std::string>();
      if (!seen.insert(tool.name).second) continue;
      tool.description = t.contains("description") && t["description"].is_string() ? t["description"].get<std::string>()
                                                                                   : std::string();
      if (t.contains("inputSchema") && t["inputSchema"].is_object()) {
        tool.input_schema = t["inputSchema"];
      } else {
        skipped_.push_back(tool.name + ": its inputSchema is not a JSON Schema object (taken as any object)");
        tool.input_schema = json{{"type", "object"}};
      }
      tools.push_back(std::move(tool));
      if (tools.size() > limits_.max_tools) fail("it lists more than " + std::to_string(limits_.max_tools) + " tools");
    }
    if (!r.contains("nextCursor") || !r["nextCursor"].is_string() || r["nextCursor"].get<std::string>().empty())
      return tools;
    cursor = r["nextCursor"].get<std::string>();
  }
  fail("its tools/list has more than " + std::to_string(limits_.max_pages) + " pages");
}

ToolResult Client::call_tool(const std::string& name, const json& arguments, const std::function<bool()>& cancelled) {
  const json r = request("tools/call",
                         {{"name", name}, {"arguments", arguments.is_object() ? arguments : json::object()}},
                         limits_.request_timeout, cancelled);
  if (!r.is_object()) fail("its tools/call answer is not an object");
  ToolResult out;
  if (r.contains("content") && r["content"].is_array()) out.content = r["content"];
  if (r.contains("structuredContent")) out.structured = r["structuredContent"];
  out.is_error = r.value("isError", false);
  return out;
}

json openai_tools(const std::vector<std::pair<std::string, std::vector<Tool>>>& servers,
                  std::vector<ToolRoute>& routes) {
  json out = json::array();
  routes.clear();
  std::set<std::string> taken;
  for (const auto& [server, tools] : servers) {
    for (const Tool& t : tools) {
      std::string fn = function_name(t.name);
      if (taken.count(fn)) fn = function_name(server + "__" + t.name);
      for (int k = 2; taken.count(fn); ++k) fn = function_name(server + "__" + t.name) + "_" + std::to_string(k);
      taken.insert(fn);
      routes.push_back({fn, server, t.name});
      json f = {{"name", fn}, {"parameters", t.input_schema}};
      if (!t.description.empty()) f["description"] = t.description;
      out.push_back({{"type", "function"}, {"function", std::move(f)}});
    }
  }
  return out;
}

}  // namespace pagedchat::mcp
