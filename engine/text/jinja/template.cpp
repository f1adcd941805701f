// Template and Error: parse once (preprocess, tokenize, parse), render many times.
#include <ctime>
#include <utility>

#include "engine/text/jinja/interpreter.h"
#include "engine/text/jinja/jinja.h"
#include "engine/text/jinja/lexer.h"
#include "engine/text/jinja/parser.h"
#include "engine/text/jinja/source.h"

namespace pagedchat::jinja {

namespace {

std::string what_text(const std::string& name, std::size_t line, std::size_t column, const std::string& message) {
  return name + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

}  // namespace

Error::Error(Kind kind, std::string message, std::string template_name, std::size_t line, std::size_t column)
    : std::runtime_error(what_text(template_name, line, column, message)),
      kind_(kind),
      message_(std::move(message)),
      template_name_(std::move(template_name)),
      line_(line),
      column_(column) {}

struct Template::Impl {
  std::string name;
  std::string original;
  Source source;
  detail::Body program;
};

Template::Template(std::string_view source, std::string name) {
  auto impl = std::make_shared<Impl>();
  impl->name = std::move(name);
  impl->original.assign(source);
  try {
    impl->source = preprocess(impl->original);
  } catch (const std::length_error& e) {
    throw Error(Error::Kind::kSyntax, e.what(), impl->name, 1, 1);
  }
  try {
    const std::vector<detail::Token> tokens = detail::tokenize(impl->source);
    impl->program = detail::parse(tokens, impl->source.text.size());
  } catch (const detail::SyntaxFailure& f) {
    const auto& origin = impl->source.origin;
    const std::size_t at = origin[std::min(f.pos, origin.size() - 1)];
    const LineColumn lc = line_column(impl->original, at);
    throw Error(Error::Kind::kSyntax, f.message, impl->name, lc.line, lc.column);
  }
  impl_ = std::move(impl);
}

Template::~Template() = default;
Template::Template(const Template&) = default;
Template& Template::operator=(const Template&) = default;
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;

const std::string& Template::name() const { return impl_->name; }

TemplatedText Template::render(const Value& context, const Limits& limits) const {
  return render(context, limits, std::time(nullptr));
}

TemplatedText Template::render(const Value& context, const Limits& limits, std::time_t now) const {
  detail::Ctx ctx(limits, now);
  const detail::SourceInfo info{&impl_->name, impl_->original, &impl_->source.origin};
  detail::Interpreter interp(ctx, info);
  return interp.run(impl_->program, context);
}

}  // namespace pagedchat::jinja
