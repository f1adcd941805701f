// jinja_render: renders a chat template with a JSON context using pagedchat::jinja, for the
// differential test against @huggingface/jinja (tests/js/render_chat_templates.mjs renders the
// same pair there) and for looking at templates by hand.
//
//   jinja_render TEMPLATE CONTEXT.json [--now=SECONDS] [--trusted=k1,k2,...] [--ranges=FILE]
//
// TEMPLATE is a .jinja file, or a tokenizer_config.json whose "chat_template" is used (a string,
// or the "default" entry of a list of {name, template}). Every context key is data except the
// trusted ones (default: bos_token, eos_token, pad_token, unk_token, add_generation_prompt,
// enable_thinking). The rendering goes to stdout as bytes; --ranges writes its data ranges as
// JSON [[begin, end], ...]. An error goes to stderr ("error: <kind>: <what>") with exit status 1.
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/text/jinja/jinja.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string template_text(const std::string& path) {
  const std::string text = read_file(path);
  if (path.size() < 5 || path.substr(path.size() - 5) != ".json") return text;
  const auto config = nlohmann::ordered_json::parse(text);
  const auto& ct = config.at("chat_template");
  if (ct.is_string()) return ct.get<std::string>();
  for (const auto& entry : ct) {
    if (entry.value("name", "") == "default") return entry.at("template").get<std::string>();
  }
  return ct.at(0).at("template").get<std::string>();
}

const char* kind_name(pagedchat::jinja::Error::Kind k) {
  switch (k) {
    case pagedchat::jinja::Error::Kind::kSyntax:
      return "syntax";
    case pagedchat::jinja::Error::Kind::kRender:
      return "render";
    case pagedchat::jinja::Error::Kind::kRaised:
      return "raised";
    case pagedchat::jinja::Error::Kind::kLimit:
      return "limit";
  }
  return "?";
}

}  // namespace

int main(int argc, char** argv) {
  std::string template_path, context_path, ranges_path;
  std::set<std::string> trusted = {"bos_token",      "eos_token", "pad_token", "unk_token", "add_generation_prompt",
                                   "enable_thinking"};
  std::time_t now = std::time(nullptr);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--now=", 0) == 0) {
      now = static_cast<std::time_t>(std::stoll(a.substr(6)));
    } else if (a.rfind("--trusted=", 0) == 0) {
      trusted.clear();
      std::stringstream list(a.substr(10));
      for (std::string k; std::getline(list, k, ',');) trusted.insert(k);
    } else if (a.rfind("--ranges=", 0) == 0) {
      ranges_path = a.substr(9);
    } else if (template_path.empty()) {
      template_path = a;
    } else if (context_path.empty()) {
      context_path = a;
    } else {
      std::cerr << "usage: jinja_render TEMPLATE CONTEXT.json [--now=SECONDS] [--trusted=k1,k2] [--ranges=FILE]\n";
      return 2;
    }
  }
  if (template_path.empty() || context_path.empty()) {
    std::cerr << "usage: jinja_render TEMPLATE CONTEXT.json [--now=SECONDS] [--trusted=k1,k2] [--ranges=FILE]\n";
    return 2;
  }
  try {
    const pagedchat::jinja::Template tmpl(template_text(template_path), template_path);
    const auto json = nlohmann::ordered_json::parse(read_file(context_path));
    pagedchat::jinja::Value context = pagedchat::jinja::Value::dict();
    for (auto it = json.begin(); it != json.end(); ++it) {
      const bool data = !trusted.count(it.key());
      context.set(it.key(), pagedchat::jinja::value_from_json(it.value(), data));
    }
    const pagedchat::TemplatedText out = tmpl.render(context, {}, now);
    std::fwrite(out.text.data(), 1, out.text.size(), stdout);
    if (!ranges_path.empty()) {
      nlohmann::json ranges = nlohmann::json::array();
      for (const auto& r : out.data) ranges.push_back({r.begin, r.end});
      std::ofstream(ranges_path) << ranges.dump();
    }
    return 0;
  } catch (const pagedchat::jinja::Error& e) {
    std::cerr << "error: " << kind_name(e.kind()) << ": " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
