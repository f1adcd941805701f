// Derived from @huggingface/jinja (MIT licence; see THIRD_PARTY_NOTICES), on purpose: templates
// render as it renders them.
// The reference's globals (setupGlobals and the Environment's own `namespace`): true, false,
// none, True, False, None, namespace(...), raise_exception(message), range(...),
// strftime_now(format). No global reaches files, the environment, the network or the clock
// beyond strftime_now's reading of the render's time.
#include <cmath>
#include <ctime>
#include <string>

#include "engine/text/jinja/builtins.h"
#include "engine/text/jinja/operators.h"
#include "engine/text/jinja/serialize.h"
#include "engine/text/jinja/string_ops.h"

namespace pagedchat::jinja::detail {

namespace {

using Kind = Value::Kind;

class Builtin final : public Callable {
 public:
  using Fn = Value (*)(Interpreter&, CallArgs&);
  Builtin(const char* name, Fn fn) : name_(name), fn_(fn) {}
  Value call(Interpreter& interp, Scope&, CallArgs& args) const override { return fn_(interp, args); }
  std::string describe() const override { return std::string("function ") + name_; }

 private:
  const char* name_;
  Fn fn_;
};

// namespace(mapping_or_pairs?, **attrs)
Value namespace_fn(Interpreter& interp, CallArgs& args) {
  if (args.positional.size() > 1) {
    fail("namespace expected at most 1 argument, got " + std::to_string(args.positional.size()));
  }
  Value ns = make_dict(Kind::kNamespace);
  interp.ctx().namespaces.push_back(std::static_pointer_cast<DictObj>(ValueAccess::obj(ns)));
  if (args.positional.size() == 1) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      for (const auto& [k, v] : dict_of(source).entries) dict_set(ns, k, v);
    } else if (source.is_list()) {
      for (const Value& pair : list_of(source).items) {
        std::vector<Value> kv;
        if (pair.is_list()) kv = list_of(pair).items;
        if (pair.is_string()) kv = str_code_points(interp.ctx(), pair);
        if (kv.size() != 2) fail("namespace expected an object or an iterable of [key, value] pairs");
        if (!kv[0].is_string()) fail("namespace keys must be strings");
        dict_set(ns, kv[0], kv[1]);
      }
    } else {
      fail(std::string("'") + type_name(source) + "' object is not iterable");
    }
  }
  for (auto& [k, v] : args.keyword) dict_set(ns, make_string(k, false), v);
  return ns;
}

// raise_exception(message): the render fails with the template's message.
Value raise_exception_fn(Interpreter& interp, CallArgs& args) {
  std::string message;
  if (!args.positional.empty()) message = std::string(bytes_of(raw_string(interp.ctx(), args.positional[0])));
  throw Failure{Error::Kind::kRaised, std::move(message)};
}

// range(stop) / range(start, stop[, step]) as the reference's JavaScript range(): numbers step by
// `step` while below (or above, for a negative step) `stop`; a none argument counts as absent.
Value range_fn(Interpreter& interp, CallArgs& args) {
  if (!args.keyword.empty()) fail("range() takes no keyword arguments");
  std::vector<const Value*> a;
  for (const Value& v : args.positional) {
    if (!is_numeric_like(v) && !v.is_none() && !v.is_undefined()) {
      fail(std::string("range() arguments must be numbers, got ") + type_name(v));
    }
    a.push_back(&v);
  }
  auto given = [&](std::size_t i) { return i < a.size() && !a[i]->is_none() && !a[i]->is_undefined(); };
  Ctx& ctx = interp.ctx();
  const bool all_int = [&] {
    for (const Value* v : a) {
      if (v->kind() == Kind::kFloat) return false;
    }
    return true;
  }();
  std::vector<Value> out;
  auto push = [&](Value v) {
    out.push_back(std::move(v));
    ctx.check_items(out.size());
    ctx.step();
  };
  if (all_int) {
    auto get = [&](std::size_t i) {
      return a[i]->kind() == Kind::kBool ? std::int64_t(a[i]->as_bool()) : a[i]->as_int();
    };
    std::int64_t start = 0, stop = 0, step = given(2) ? get(2) : 1;
    if (given(1)) {
      if (!given(0)) return make_list({});  // JavaScript: undefined < stop is false
      start = get(0);
      stop = get(1);
    } else if (given(0)) {
      stop = get(0);
    } else {
      return make_list({});
    }
    if (step == 0) fail("range() step must not be zero");
    if (step > 0) {
      for (std::int64_t i = start; i < stop;) {
        push(Value::integer(i));
        if (__builtin_add_overflow(i, step, &i)) break;
      }
    } else {
      for (std::int64_t i = start; i > stop;) {
        push(Value::integer(i));
        if (__builtin_add_overflow(i, step, &i)) break;
      }
    }
    return make_list(std::move(out));
  }
  auto get = [&](std::size_t i) { return numeric_value(*a[i]); };
  double start = 0, stop = 0;
  const double step = given(2) ? get(2) : 1;
  if (given(1)) {
    if (!given(0)) return make_list({});
    start = get(0);
    stop = get(1);
  } else if (given(0)) {
    stop = get(0);
  } else {
    return make_list({});
  }
  if (step == 0) fail("range() step must not be zero");
  auto number = [](double d) {  // JavaScript keeps one number type: integral values are integers
    if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 9.2e18)
      return Value::integer(static_cast<std::int64_t>(d));
    return Value::number(d);
  };
  for (double i = start; step > 0 ? i < stop : i > stop; i += step) push(number(i));
  return make_list(std::move(out));
}

std::string two_digits(int n) { return (n < 10 ? "0" : "") + std::to_string(n); }

// strftime_now(format): the reference's strftime subset %Y %m %d %b %B %H %M %%; any other
// directive is written as it is (Python would expand %S, %A, ... too). Month names are English,
// as Intl.DateTimeFormat gives them in the en-US locale.
Value strftime_now_fn(Interpreter& interp, CallArgs& args) {
  if (args.positional.empty() || !args.positional[0].is_string()) fail("strftime_now() needs a format string");
  static const char* const kShort[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                       "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  static const char* const kLong[] = {"January", "February", "March",     "April",   "May",      "June",
                                      "July",    "August",   "September", "October", "November", "December"};
  std::tm tm{};
  const std::time_t now = interp.ctx().now;
  localtime_r(&now, &tm);
  const std::string_view fmt = bytes_of(args.positional[0]);
  std::string out;
  for (std::size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out += fmt[i];
      continue;
    }
    const char d = fmt[i + 1];
    switch (d) {
      case 'Y':
        out += std::to_string(tm.tm_year + 1900);
        break;
      case 'm':
        out += two_digits(tm.tm_mon + 1);
        break;
      case 'd':
        out += two_digits(tm.tm_mday);
        break;
      case 'b':
        out += kShort[tm.tm_mon];
        break;
      case 'B':
        out += kLong[tm.tm_mon];
        break;
      case 'H':
        out += two_digits(tm.tm_hour);
        break;
      case 'M':
        out += two_digits(tm.tm_min);
        break;
      case '%':
        out += '%';
        break;
      default:
        out += '%';
        continue;  // not a directive: the next character is read on its own
    }
    ++i;
  }
  interp.ctx().check_string_size(out.size());
  return make_string(out, false);
}

const Value& global_function(int which) {
  static const Value kNamespace = make_callable(std::make_shared<Builtin>("namespace", &namespace_fn));
  static const Value kRaise = make_callable(std::make_shared<Builtin>("raise_exception", &raise_exception_fn));
  static const Value kRange = make_callable(std::make_shared<Builtin>("range", &range_fn));
  static const Value kStrftime = make_callable(std::make_shared<Builtin>("strftime_now", &strftime_now_fn));
  switch (which) {
    case 0:
      return kNamespace;
    case 1:
      return kRaise;
    case 2:
      return kRange;
    default:
      return kStrftime;
  }
}

}  // namespace

void install_globals(Scope& g) {
  g.vars.reserve(16);
  g.set("namespace", global_function(0));
  g.set("false", Value::boolean(false));
  g.set("true", Value::boolean(true));
  g.set("none", Value::none());
  g.set("raise_exception", global_function(1));
  g.set("range", global_function(2));
  g.set("strftime_now", global_function(3));
  g.set("True", Value::boolean(true));
  g.set("False", Value::boolean(false));
  g.set("None", Value::none());
}

}  // namespace pagedchat::jinja::detail
