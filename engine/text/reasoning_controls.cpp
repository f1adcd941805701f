#include "engine/text/reasoning_controls.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

#include "engine/text/chat_template.h"

namespace pagedchat {

namespace {

bool contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

}  // namespace

ReasoningControls reasoning_controls_of(std::string_view source, std::string_view builtin_name) {
  ReasoningControls c;
  c.thinking = contains(source, "enable_thinking");
  c.effort = contains(source, "reasoning_effort");
  if (!builtin_name.empty()) {
    c.reasons = builtin_name == "deepseek-r1" || builtin_name == "gemma4";
  } else {
    const bool channels = (contains(source, "<|channel|>") && contains(source, "<|message|>")) ||
                          (contains(source, "<|channel>") && contains(source, "<channel|>"));
    c.reasons = c.thinking || c.effort || channels || contains(source, "<think>");
  }
  return c;
}

std::vector<std::string_view> reasoning_choices(const ReasoningControls& controls) {
  std::vector<std::string_view> v;
  if (controls.thinking) v.insert(v.end(), {"on", "off"});
  if (controls.effort) v.insert(v.end(), {"low", "medium", "high"});
  return v;
}

bool is_reasoning_choice(std::string_view choice) {
  for (std::string_view c : {"", "on", "off", "low", "medium", "high"})
    if (choice == c) return true;
  return false;
}

bool apply_reasoning_choice(ChatEncodeOptions& options, const ReasoningControls& controls, std::string_view choice) {
  if ((choice == "on" || choice == "off") && controls.thinking) {
    options.enable_thinking = choice == "on";
    return true;
  }
  if ((choice == "low" || choice == "medium" || choice == "high") && controls.effort) {
    nlohmann::json vars = nlohmann::json::object();
    if (!options.extra_variables_json.empty()) {
      vars = nlohmann::json::parse(options.extra_variables_json, nullptr, /*allow_exceptions=*/false);
      if (!vars.is_object()) throw std::invalid_argument("the chat template's extra variables are not a JSON object");
    }
    if (!vars.contains("reasoning_effort")) vars["reasoning_effort"] = std::string(choice);
    options.extra_variables_json = vars.dump();
    return true;
  }
  return false;
}

}  // namespace pagedchat
