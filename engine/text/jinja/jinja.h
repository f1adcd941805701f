// A sandboxed interpreter of the Jinja subset Hugging Face chat templates use: the engine renders
// a model's own chat template (tokenizer_config.json "chat_template", GGUF
// "tokenizer.chat_template") with it, byte for byte as the reference renderer does.
//
// Reference: @huggingface/jinja 0.5.11 (npm; the renderer transformers.js uses), whose semantics
// are matched where they differ from Python's jinja2 (e.g. true/false print lowercase, `none`
// prints nothing, str.strip(chars) ignores `chars`, loop output before a break is dropped,
// macros see the caller's variables, strings count UTF-16 units). What the reference lacks but
// Python Jinja has (some filters, tests and string methods, tests with arguments) follows Python
// Jinja. docs/jinja.md lists the constructs, built-ins and every known deviation.
//
// Sandbox: a template is data, never code. It cannot reach files, the environment or the network
// (`include`, `import`, `extends` are refused at parse time); every render runs under Limits
// (evaluation steps, output bytes, nesting depth, list lengths), so a template that loops forever,
// recurses without end or builds huge strings stops with an Error, never a hang, a crash or a
// stack overflow. Template text and context values are never interpreted as templates.
//
// Data ranges: context values built with is_data (message contents, tools, documents) keep their
// bytes marked through every string operation; the result is a TemplatedText whose `data` ranges
// cover exactly the bytes that came from data (see engine/text/templated_text.h).
#pragma once

#include <cstddef>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "engine/text/jinja/value.h"
#include "engine/text/templated_text.h"

namespace pagedchat::jinja {

/// A parse or render error. what() reads "<template name>:<line>:<column>: <message>".
class Error : public std::runtime_error {
 public:
  enum class Kind {
    kSyntax,  ///< the template does not parse (thrown by the Template constructor)
    kRender,  ///< a render failed: a type error, an unknown filter, a bad argument, ...
    kRaised,  ///< the template called raise_exception(message) (e.g. a role order it refuses)
    kLimit,   ///< a Limits budget ran out (steps, output bytes, depth, list length)
  };
  Error(Kind kind, std::string message, std::string template_name, std::size_t line, std::size_t column);

  Kind kind() const { return kind_; }
  /// The message alone (for raise_exception, the template's own text).
  const std::string& message() const { return message_; }
  const std::string& template_name() const { return template_name_; }
  /// 1-based position in the template source (column in code points).
  std::size_t line() const { return line_; }
  std::size_t column() const { return column_; }

 private:
  Kind kind_;
  std::string message_;
  std::string template_name_;
  std::size_t line_;
  std::size_t column_;
};

/// Budgets of one render; exceeding one throws Error (Kind::kLimit).
struct Limits {
  /// Evaluation steps: one per statement or expression evaluated, plus one per 32 bytes of string
  /// built and per list item copied, sorted or joined.
  std::size_t max_steps = 10'000'000;
  /// The rendered output and every string built during the render, in bytes.
  std::size_t max_output_bytes = 64u << 20;
  /// Nesting of evaluation: statements and expressions inside each other count one level each, a
  /// macro or caller() call four. A macro that recurses without end stops here, long before the
  /// stack would overflow: a level takes about 0.5 KB of stack in an optimized build (a few times
  /// more with sanitizers), so the default needs about 0.5 MB; keep max_depth * 1 KB well below
  /// the rendering thread's stack size.
  std::size_t max_depth = 1000;
  /// Items of one list (range() included) and entries of one dict.
  std::size_t max_items = 1'000'000;
};

/// A parsed chat template: parse once, render many times (render is const and thread-safe).
/// Parsing and rendering recurse; with the default Limits neither needs more than about 1 MB of
/// stack (templates are refused past 100 levels of nesting, values past 512).
class Template {
 public:
  /// Parses `source`; `name` names the template in errors. Throws Error (Kind::kSyntax).
  explicit Template(std::string_view source, std::string name = "chat template");
  ~Template();
  Template(const Template&);
  Template& operator=(const Template&);
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  /// Renders with `context`, a dict whose keys become the template's variables (messages, tools,
  /// bos_token, add_generation_prompt, ...); a key that names a built-in (true, none, range,
  /// namespace, raise_exception, strftime_now, ...) is refused as the reference refuses it.
  /// strftime_now() formats the current local time. Throws Error.
  TemplatedText render(const Value& context, const Limits& limits = {}) const;
  /// The same with strftime_now() reading `now` (seconds since the epoch, local time zone).
  TemplatedText render(const Value& context, const Limits& limits, std::time_t now) const;

  const std::string& name() const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

/// Converts JSON as JavaScript's JSON.parse + @huggingface/jinja would see it: objects become
/// dicts (keys that are array indices, "0".."4294967294", first in ascending order, then the others
/// in document order, as JavaScript orders object keys), arrays lists, numbers with an integral
/// value integers (1.0 -> 1, as JavaScript has one number type), others floats. With `is_data`
/// every string and key is marked as data and every scalar flagged. nlohmann::json sorts object
/// keys alphabetically; pass nlohmann::ordered_json to keep the document's order (tool schemas
/// print in that order). Throws std::invalid_argument for JSON nested deeper than 512 levels.
Value value_from_json(const nlohmann::json& j, bool is_data);
Value value_from_json(const nlohmann::ordered_json& j, bool is_data);

}  // namespace pagedchat::jinja
