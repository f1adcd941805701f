#include "engine/entrypoints/mcp/mcp_config.h"

#include <nlohmann/json.hpp>

namespace pagedchat::mcp {

namespace {
using json = nlohmann::json;

std::map<std::string, std::string> string_map(const json& v, const std::string& where) {
  std::map<std::string, std::string> out;
  if (v.is_null()) return out;
  if (!v.is_object()) throw McpError(where + " must be an object of strings");
  for (const auto& [key, value] : v.items()) {
    if (!value.is_string()) throw McpError(where + "." + key + " must be a string");
    out[key] = value.get<std::string>();
  }
  return out;
}
}  // namespace

std::vector<ServerConfig> parse_servers_config(std::string_view json_text) {
  json doc;
  try {
    doc = json::parse(json_text.begin(), json_text.end());
  } catch (const json::parse_error& e) {
    std::string why = e.what();  // "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    if (const auto at = why.find("parse error"); at != std::string::npos) why = why.substr(at);
    throw McpError("the MCP configuration is not JSON: " + why);
  }
  if (!doc.is_object()) throw McpError("the MCP configuration must be an object with \"mcpServers\"");
  // The document, or its inner object alone when every entry looks like a server.
  bool bare = !doc.contains("mcpServers");
  for (const auto& [name, s] : doc.items())
    bare = bare && s.is_object() && (s.contains("command") || s.contains("url"));
  if (!doc.contains("mcpServers") && !bare && !doc.empty())
    throw McpError("the MCP configuration has no \"mcpServers\" object (of servers by name)");
  const json& servers = doc.contains("mcpServers") ? doc["mcpServers"] : doc;
  if (!servers.is_object()) throw McpError("\"mcpServers\" must be an object of servers by name");
  std::vector<ServerConfig> out;
  for (const auto& [name, s] : servers.items()) {
    const std::string where = "MCP server '" + name + "'";
    if (name.empty()) throw McpError("an MCP server has an empty name");
    if (!s.is_object()) throw McpError(where + " must be an object");
    ServerConfig c;
    c.name = name;
    const std::string type = s.contains("type") && s["type"].is_string() ? s["type"].get<std::string>() : "";
    if (type == "sse")
      throw McpError(where + ": the old HTTP+SSE transport is not supported; use its Streamable HTTP URL");
    if (!type.empty() && type != "stdio" && type != "http" && type != "streamable-http" && type != "streamableHttp")
      throw McpError(where + ": unknown type \"" + type + "\" (stdio or http)");
    if (s.contains("command")) {
      if (!s["command"].is_string() || s["command"].get<std::string>().empty())
        throw McpError(where + ": \"command\" must be a non-empty string");
      c.command = s["command"].get<std::string>();
    }
    if (s.contains("args")) {
      if (!s["args"].is_array()) throw McpError(where + ": \"args\" must be an array of strings");
      for (const json& a : s["args"]) {
        if (!a.is_string()) throw McpError(where + ": \"args\" must be an array of strings");
        c.args.push_back(a.get<std::string>());
      }
    }
    if (s.contains("env")) c.env = string_map(s["env"], where + ": env");
    if (s.contains("cwd")) {
      if (!s["cwd"].is_string()) throw McpError(where + ": \"cwd\" must be a string");
      c.cwd = s["cwd"].get<std::string>();
    }
    if (s.contains("url")) {
      if (!s["url"].is_string()) throw McpError(where + ": \"url\" must be a string");
      c.url = s["url"].get<std::string>();
      if (c.url.rfind("http://", 0) != 0 && c.url.rfind("https://", 0) != 0)
        throw McpError(where + ": \"url\" must start with http:// or https://");
    }
    if (s.contains("headers")) c.headers = string_map(s["headers"], where + ": headers");
    if (s.contains("disabled")) {
      if (!s["disabled"].is_boolean()) throw McpError(where + ": \"disabled\" must be true or false");
      c.enabled = !s["disabled"].get<bool>();
    }
    if (c.command.empty() == c.url.empty())
      throw McpError(where + (c.command.empty() ? ": needs a \"command\" (stdio) or a \"url\" (HTTP)"
                                                : ": has both a \"command\" and a \"url\": give one"));
    out.push_back(std::move(c));
  }
  return out;
}

std::string servers_config_json(const std::vector<ServerConfig>& servers) {
  json all = json::object();
  for (const ServerConfig& c : servers) {
    json s = json::object();
    if (c.http()) {
      s["url"] = c.url;
      if (!c.headers.empty()) s["headers"] = c.headers;
    } else {
      s["command"] = c.command;
      s["args"] = c.args;
      if (!c.env.empty()) s["env"] = c.env;
      if (!c.cwd.empty()) s["cwd"] = c.cwd;
    }
    if (!c.enabled) s["disabled"] = true;
    all[c.name] = std::move(s);
  }
  return json{{"mcpServers", all}}.dump(2);
}

}  // namespace pagedchat::mcp
