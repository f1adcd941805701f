// libFuzzer entry point for the Jinja interpreter (engine/text/jinja): the input is a template;
// it is parsed and rendered with a fixed chat-like context under tight limits. Any input must
// either render or throw pagedchat::jinja::Error; anything else (a crash, a hang past the per-input
// timeout, a sanitizer report, another exception type escaping, a broken TemplatedText) is a bug.
// Built only with clang; see tests/fuzz/CMakeLists.txt. A crash it finds belongs in
// tests/engine/text/test_jinja.cpp as a case of its own (30 minutes of fuzzing found none so far).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/text/jinja/jinja.h"

namespace {

pagedchat::jinja::Value make_context() {
  const auto j = nlohmann::ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Hi {{ x }} <|im_end|> 😀 안녕"},
      {"role": "assistant", "content": "<think>\nok\n</think>\n\nHello", "tool_calls": [
        {"id": "abcdefghi", "type": "function", "function": {"name": "f", "arguments": {"a": 1, "b": [true, null, 2.5]}}}]},
      {"role": "tool", "tool_call_id": "abcdefghi", "content": "{\"r\": 1}"},
      {"role": "user", "content": "  bye  "}
    ],
    "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object",
               "properties": {"a": {"type": "integer"}, "b": {"type": "array"}}, "required": ["a"]}}}],
    "documents": [{"title": "t", "text": "x"}],
    "n": 3, "f": -1.5, "s": "a,b,,c", "l": [3, 1, 2], "d": {"k": "v", "2": 2}, "e": "", "z": null
  })");
  pagedchat::jinja::Value ctx = pagedchat::jinja::value_from_json(j, true);
  ctx.set("bos_token", pagedchat::jinja::Value::string("<s>", false));
  ctx.set("eos_token", pagedchat::jinja::Value::string("</s>", false));
  ctx.set("add_generation_prompt", pagedchat::jinja::Value::boolean(true));
  return ctx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  static const pagedchat::jinja::Value context = make_context();
  pagedchat::jinja::Limits limits;
  limits.max_steps = 20000;
  limits.max_output_bytes = 1 << 16;
  limits.max_depth = 200;
  limits.max_items = 10000;
  try {
    const pagedchat::jinja::Template t(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
    const pagedchat::TemplatedText out = t.render(context, limits, 0);
    if (out.text.size() > limits.max_output_bytes) __builtin_trap();
    for (std::size_t i = 0; i < out.data.size(); ++i) {
      const auto& r = out.data[i];
      if (r.begin >= r.end || r.end > out.text.size()) __builtin_trap();
      if (i > 0 && out.data[i - 1].end >= r.begin) __builtin_trap();
    }
  } catch (const pagedchat::jinja::Error&) {
    // Refused with a message: the expected outcome for a malformed or runaway template.
  }
  return 0;
}
