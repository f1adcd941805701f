// What a chat template lets a request choose about the model's reasoning (thinking on or off, an
// effort), read from the template's own text, and applying a user's choice to a request.
#pragma once

#include <string_view>
#include <vector>

namespace pagedchat {

struct ChatEncodeOptions;

/// The reasoning switches a chat template has: the variables its text reads, as transformers and
/// vLLM pass them (chat_template_kwargs).
struct ReasoningControls {
  /// Reads `enable_thinking` (Qwen3, Qwen3.5, Gemma 4, SmolLM3): reasoning on or off.
  bool thinking = false;
  /// Reads `reasoning_effort` (gpt-oss's Harmony: "Reasoning: low / medium / high").
  bool effort = false;
  /// The model writes reasoning before its answer: either switch above, a reasoning channel
  /// (Harmony, Gemma 4), or "<think>" in the template (DeepSeek-R1 and its distills, Qwen3).
  bool reasons = false;
};

/// The controls of a template whose Jinja text is `source`. `builtin_name`: the built-in's name
/// for a built-in template ("" for a model's own), whose `reasons` is known by name (the ChatML
/// built-in reads enable_thinking for Qwen3, but most ChatML models do not reason).
ReasoningControls reasoning_controls_of(std::string_view source, std::string_view builtin_name = {});

/// The choices `controls` offers, as the app and `pagedchat-cli chat --reasoning` spell them
/// (besides "", the template's default): "on", "off" where it has the thinking switch; "low",
/// "medium", "high" where it has the effort.
std::vector<std::string_view> reasoning_choices(const ReasoningControls& controls);

/// True for "" and the choices reasoning_choices() can list.
bool is_reasoning_choice(std::string_view choice);

/// Sets `options` for `choice` where `controls` has its switch: "on" / "off" set
/// enable_thinking; "low" / "medium" / "high" set the template variable reasoning_effort
/// (added to extra_variables_json unless a caller's variables set it already). Returns false,
/// changing nothing, for "" and for a choice the template has no switch for (the template's
/// default then applies). Throws std::invalid_argument when extra_variables_json is not a JSON
/// object.
bool apply_reasoning_choice(ChatEncodeOptions& options, const ReasoningControls& controls, std::string_view choice);

}  // namespace pagedchat
