#include "engine/sample/structured/json_schema_grammar.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "engine/sample/structured/regex_grammar.h"

namespace pagedchat::structured {

using Expr = GrammarBuilder::Expr;
using json = nlohmann::ordered_json;

namespace {
constexpr int kMaxWhitespace = 12;  // between two tokens of the JSON text: a newline and 5 levels of indent
constexpr int kMaxDigits = 16;      // of a number's integer part, fraction, and the bounds
constexpr long long kMaxInteger = 9999999999999999LL;  // 16 digits
constexpr int kMaxRepetition = 4096;                   // minItems / maxItems / minLength / maxLength spelled out

const std::set<std::string> kAnnotations{"title",   "description",     "default",         "examples", "$schema",
                                         "$id",     "$comment",        "deprecated",      "readOnly", "writeOnly",
                                         "$anchor", "contentEncoding", "contentMediaType"};

std::string dump(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::strict); }

class SchemaCompiler {
 public:
  explicit SchemaCompiler(const json& root) : root_(root) {}

  std::shared_ptr<const Grammar> compile_root() {
    const int top = b_.declare_rule("root");
    // Leading whitespace (a sentencepiece token carries its space in front); none after the
    // value: once the value is complete, so is the output.
    b_.define(top, b_.seq({ws(), compile(root_, "")}));
    auto g = std::make_shared<const Grammar>(b_.build(top));
    if (!productive_rules(*g)[std::size_t(top)])
      throw UnsupportedSchema(
          "unsupported: the schema admits no finite JSON value (a $ref that only leads back to itself, or a "
          "required property whose schema requires the object again)");
    return g;
  }

  std::shared_ptr<const Grammar> any_object_root() {
    const int top = b_.declare_rule("root");
    b_.define(top, b_.seq({ws(), b_.ref(any_object())}));
    return std::make_shared<const Grammar>(b_.build(top));
  }

 private:
  [[noreturn]] static void unsupported(const std::string& what, const std::string& path) {
    const bool worded = what.rfind("unsupported", 0) == 0;
    throw UnsupportedSchema((worded ? what : "unsupported: " + what) + " at " +
                            (path.empty() ? std::string("/") : path));
  }

  // Whether `v` is of JSON Schema type `t` (an integer: a number with no fraction).
  static bool of_type(const json& v, const std::string& t) {
    if (t == "null") return v.is_null();
    if (t == "boolean") return v.is_boolean();
    if (t == "string") return v.is_string();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "number") return v.is_number();
    if (t == "integer")
      return v.is_number_integer() || (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>());
    return false;
  }
  // enum / const values the schema's `type` admits (all of them without a type).
  std::vector<json> typed_values(const json& s, const std::vector<json>& values, const std::string& path) {
    if (!s.contains("type")) return values;
    std::vector<std::string> types;
    if (s["type"].is_string())
      types.push_back(s["type"].get<std::string>());
    else if (s["type"].is_array())
      for (const json& t : s["type"])
        if (t.is_string()) types.push_back(t.get<std::string>());
    std::vector<json> kept;
    for (const json& v : values)
      if (std::any_of(types.begin(), types.end(), [&](const std::string& t) { return of_type(v, t); }))
        kept.push_back(v);
    if (kept.empty()) unsupported("an enum or const that its type admits none of", path);
    return kept;
  }
  // The JSON types an alternative of oneOf can take ("" entries: unknown, overlaps anything).
  static std::set<std::string> types_of(const json& s) {
    if (!s.is_object()) return {""};
    if (s.contains("const")) return {"const:" + s["const"].dump()};
    if (s.contains("type") && s["type"].is_string()) {
      const std::string t = s["type"].get<std::string>();
      return t == "integer" ? std::set<std::string>{"number"} : std::set<std::string>{t};
    }
    if (s.contains("type") && s["type"].is_array()) {
      std::set<std::string> out;
      for (const json& t : s["type"]) out.insert(t == "integer" ? std::string("number") : t.get<std::string>());
      return out;
    }
    return {""};
  }

  // Shared rules, made on first use.
  Expr ws() {
    if (ws_ < 0) {
      ws_ = b_.declare_rule("ws");
      b_.define(ws_, b_.repeat(b_.byte_set({{' ', ' '}, {'\t', '\t'}, {'\n', '\n'}, {'\r', '\r'}}), 0, kMaxWhitespace));
    }
    return b_.ref(ws_);
  }
  Expr json_char() {
    if (char_ < 0) {
      char_ = b_.declare_rule("char");
      b_.define(char_, char_set_expr(b_, {{0, 0x10FFFF}}, CharContext::kJsonString));
    }
    return b_.ref(char_);
  }
  int any_string() {
    if (string_ < 0) {
      string_ = b_.declare_rule("string");
      b_.define(string_, b_.seq({b_.literal("\""), b_.star(json_char()), b_.literal("\"")}));
    }
    return string_;
  }
  Expr digits(int min, int max) { return b_.repeat(b_.byte_range('0', '9'), min, max); }
  int any_number() {
    if (number_ < 0) {
      number_ = b_.declare_rule("number");
      const Expr integer = b_.seq(
          {b_.optional(b_.literal("-")),
           b_.alt({b_.literal("0"), b_.seq({b_.byte_range('1', '9'), digits(0, kMaxDigits - 1)})})});
      const Expr fraction = b_.optional(b_.seq({b_.literal("."), digits(1, kMaxDigits)}));
      const Expr exponent = b_.optional(b_.seq(
          {b_.byte_set({{'e', 'e'}, {'E', 'E'}}), b_.optional(b_.byte_set({{'+', '+'}, {'-', '-'}})), digits(1, 3)}));
      b_.define(number_, b_.seq({integer, fraction, exponent}));
    }
    return number_;
  }
  int any_value() {
    if (value_ < 0) {
      value_ = b_.declare_rule("value");
      const int object = any_object(), array = any_array();
      b_.define(value_, b_.alt({b_.ref(object), b_.ref(array), b_.ref(any_string()), b_.ref(any_number()),
                                b_.literal("true"), b_.literal("false"), b_.literal("null")}));
    }
    return value_;
  }
  int any_object() {
    if (object_ < 0) {
      object_ = b_.declare_rule("object");
      const int value = any_value();
      const Expr member = b_.seq({b_.ref(any_string()), ws(), b_.literal(":"), ws(), b_.ref(value)});
      const Expr members = b_.seq({member, b_.star(b_.seq({ws(), b_.literal(","), ws(), member}))});
      // One run of whitespace between the brackets when empty ("{" ws "}"), as between tokens.
      b_.define(object_, b_.seq({b_.literal("{"), b_.optional(b_.seq({ws(), members})), ws(), b_.literal("}")}));
    }
    return object_;
  }
  int any_array() {
    if (array_ < 0) {
      array_ = b_.declare_rule("array");
      const Expr value = b_.ref(any_value());
      const Expr items = b_.seq({value, b_.star(b_.seq({ws(), b_.literal(","), ws(), value}))});
      b_.define(array_, b_.seq({b_.literal("["), b_.optional(b_.seq({ws(), items})), ws(), b_.literal("]")}));
    }
    return array_;
  }

  // A sub-schema as a rule of its own (repeated items, properties referred to twice).
  Expr as_rule(const json& schema, const std::string& path) {
    const int r = b_.declare_rule(path.empty() ? "/" : path);
    b_.define(r, compile(schema, path));
    return b_.ref(r);
  }

  const json& resolve(const std::string& ref, const std::string& path) {
    if (ref.empty() || ref[0] != '#') unsupported("the $ref '" + ref + "' (only references inside the schema)", path);
    try {
      const json::json_pointer pointer(ref.substr(1));
      if (!root_.contains(pointer)) unsupported("the $ref '" + ref + "', which points nowhere,", path);
      return root_.at(pointer);
    } catch (const json::exception&) {
      unsupported("the $ref '" + ref + "', not a JSON pointer,", path);
    }
  }

  Expr reference(const std::string& ref, const std::string& path) {
    const auto it = refs_.find(ref);
    if (it != refs_.end()) return b_.ref(it->second);
    const json& target = resolve(ref, path);
    const int r = b_.declare_rule(ref);
    refs_.emplace(ref, r);  // before compiling: the target may refer to itself
    b_.define(r, compile(target, ref.substr(1)));
    return b_.ref(r);
  }

  Expr compile(const json& s, const std::string& path) {
    struct Depth {  // each sub-schema is a level of recursion here
      int& d;
      explicit Depth(int& depth) : d(depth) { ++d; }
      ~Depth() { --d; }
    } depth(depth_);
    if (depth_ > kMaxSchemaDepth)
      unsupported("a schema nested more than " + std::to_string(kMaxSchemaDepth) + " deep", path);
    if (s.is_boolean()) {
      if (!s.get<bool>()) unsupported("the schema false (it admits nothing)", path);
      return b_.ref(any_value());
    }
    if (!s.is_object()) unsupported("a schema that is neither an object nor a boolean", path);
    for (auto it = s.begin(); it != s.end(); ++it)
      if (!kAnnotations.count(it.key()) && !kKeywords.count(it.key()))
        unsupported("unsupported JSON Schema keyword '" + it.key() + "'", path);
    if (s.contains("$ref")) {
      for (auto it = s.begin(); it != s.end(); ++it)
        if (it.key() != "$ref" && it.key() != "$defs" && it.key() != "definitions" && !kAnnotations.count(it.key()))
          unsupported("unsupported JSON Schema keyword '" + it.key() + "' beside $ref", path);
      if (!s["$ref"].is_string()) unsupported("a $ref that is not a string", path);
      return reference(s["$ref"].get<std::string>(), path);
    }
    if (s.contains("allOf")) return compile(merge_all_of(s, path), path);
    if (s.contains("const")) return b_.literal(dump(typed_values(s, {s["const"]}, path).front()));
    if (s.contains("enum")) {
      if (!s["enum"].is_array() || s["enum"].empty()) unsupported("an enum that is not a non-empty array", path);
      std::vector<Expr> options;
      for (const json& v : typed_values(s, std::vector<json>(s["enum"].begin(), s["enum"].end()), path))
        options.push_back(b_.literal(dump(v)));
      return b_.alt(std::move(options));
    }
    for (const char* key : {"anyOf", "oneOf"}) {
      if (!s.contains(key)) continue;
      const json& list = s[key];
      if (!list.is_array() || list.empty()) unsupported(std::string(key) + " that is not a non-empty array", path);
      for (auto it = s.begin(); it != s.end(); ++it)
        if (it.key() != key && it.key() != "$defs" && it.key() != "definitions" && !kAnnotations.count(it.key()))
          unsupported("the keyword '" + it.key() + "' beside " + key + " (put it inside each alternative)", path);
      if (std::string(key) == "oneOf") {
        // Exactly one must match: generated as anyOf, which is the same only when no value can
        // match two alternatives; known here by their types (or consts).
        std::set<std::string> seen;
        for (const json& alt : list)
          for (const std::string& t : types_of(alt))
            if (t.empty() || !seen.insert(t).second)
              unsupported("a oneOf whose alternatives may overlap (give each a different type or const, or use anyOf)",
                          path);
      }
      std::vector<Expr> options;
      for (std::size_t i = 0; i < list.size(); ++i)
        options.push_back(compile(list[i], path + "/" + key + "/" + std::to_string(i)));
      return b_.alt(std::move(options));
    }
    std::vector<std::string> types;
    if (s.contains("type")) {
      const json& t = s["type"];
      if (t.is_string()) {
        types.push_back(t.get<std::string>());
      } else if (t.is_array() && !t.empty()) {
        for (const json& one : t) {
          if (!one.is_string()) unsupported("a type that is not a string", path);
          types.push_back(one.get<std::string>());
        }
      } else {
        unsupported("a type that is neither a string nor a list of them", path);
      }
    } else if (s.contains("properties") || s.contains("additionalProperties") || s.contains("required")) {
      types.push_back("object");
    } else if (s.contains("items") || s.contains("prefixItems") || s.contains("minItems") || s.contains("maxItems")) {
      types.push_back("array");
    } else if (s.contains("pattern") || s.contains("format") || s.contains("minLength") || s.contains("maxLength")) {
      types.push_back("string");
    } else if (s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") ||
               s.contains("exclusiveMaximum")) {
      types.push_back("number");
    } else {
      return b_.ref(any_value());
    }
    std::vector<Expr> options;
    for (const std::string& t : types) options.push_back(compile_type(s, t, path));
    return b_.alt(std::move(options));
  }

  json merge_all_of(const json& s, const std::string& path) {
    json merged = s;
    merged.erase("allOf");
    if (!s["allOf"].is_array()) unsupported("an allOf that is not an array", path);
    for (const json& part0 : s["allOf"]) {
      const json& part = part0.is_object() && part0.contains("$ref") && part0.size() == 1
                             ? resolve(part0["$ref"].get<std::string>(), path)
                             : part0;
      if (!part.is_object()) unsupported("an allOf member that is not an object", path);
      for (auto it = part.begin(); it != part.end(); ++it) {
        if (it.key() == "properties" && merged.contains("properties")) {
          merged["properties"].update(it.value());
        } else if (it.key() == "required" && merged.contains("required")) {
          for (const json& r : it.value())
            if (std::find(merged["required"].begin(), merged["required"].end(), r) == merged["required"].end())
              merged["required"].push_back(r);
        } else if (merged.contains(it.key()) && merged[it.key()] != it.value() && !kAnnotations.count(it.key())) {
          unsupported("an allOf whose members set '" + it.key() + "' differently", path);
        } else {
          merged[it.key()] = it.value();
        }
      }
    }
    return merged;
  }

  Expr compile_type(const json& s, const std::string& t, const std::string& path) {
    if (t == "null") return b_.literal("null");
    if (t == "boolean") return b_.alt({b_.literal("true"), b_.literal("false")});
    if (t == "string") return compile_string(s, path);
    if (t == "integer") return compile_integer(s, path);
    if (t == "number") return compile_number(s, path);
    if (t == "array") return compile_array(s, path);
    if (t == "object") return compile_object(s, path);
    unsupported("the type '" + t + "'", path);
  }

  int count(const json& s, const char* key, int fallback, const std::string& path) {
    if (!s.contains(key)) return fallback;
    const json& v = s[key];
    if (!v.is_number_integer() || v.get<long long>() < 0) unsupported(std::string(key) + " that is not a count", path);
    if (v.get<long long>() > kMaxRepetition)
      unsupported(std::string(key) + " above " + std::to_string(kMaxRepetition), path);
    return int(v.get<long long>());
  }

  Expr compile_string(const json& s, const std::string& path) {
    const int min = count(s, "minLength", 0, path), max = count(s, "maxLength", -1, path);
    if (max >= 0 && max < min) unsupported("maxLength below minLength", path);
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    Expr body;
    if (s.contains("pattern") || s.contains("format")) {
      if (lengths) unsupported("minLength / maxLength together with pattern or format", path);
      if (s.contains("pattern") && s.contains("format")) unsupported("pattern together with format", path);
      std::string pattern;
      bool full = true;
      if (s.contains("pattern")) {
        if (!s["pattern"].is_string()) unsupported("a pattern that is not a string", path);
        pattern = s["pattern"].get<std::string>();
        full = false;  // JSON Schema's patterns search: anchors say where
      } else {
        pattern = format_pattern(s["format"], path);
      }
      try {
        body = regex_expr(b_, pattern, CharContext::kJsonString, full);
      } catch (const std::invalid_argument& e) {
        unsupported(e.what(), path);
      }
    } else {
      body = b_.repeat(json_char(), min, max);
    }
    return b_.seq({b_.literal("\""), body, b_.literal("\"")});
  }

  static std::string format_pattern(const json& format, const std::string& path) {
    if (!format.is_string()) unsupported("a format that is not a string", path);
    const std::string f = format.get<std::string>();
    // Days 29-31 only in the months that always have them (no leap-year arithmetic in a grammar).
    const std::string date =
        R"(\d{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31))";
    const std::string time = R"((?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d{1,6})?(?:Z|[+-](?:[01]\d|2[0-3]):[0-5]\d))";
    if (f == "date") return date;
    if (f == "time") return time;
    if (f == "date-time") return date + "T" + time;
    if (f == "uuid") return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
    if (f == "email") return R"([a-z0-9_+-]{1,32}(?:\.[a-z0-9_+-]{1,32}){0,4}@(?:[a-z0-9]{1,32}\.){1,4}[a-z]{2,8})";
    if (f == "ipv4") return R"((?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))";
    if (f == "uri") return R"(https?://[a-z0-9]{1,32}(?:\.[a-z0-9]{1,32}){0,4}(?:/[A-Za-z0-9._~-]{0,32}){0,8})";
    unsupported("the string format '" + f + "'", path);
  }

  // Whole-number bounds from minimum / maximum / exclusive*, rounded inward; absent: 16 digits.
  std::pair<long long, long long> bounds(const json& s, const std::string& path) {
    double lo = -double(kMaxInteger), hi = double(kMaxInteger);
    auto number = [&](const char* key) {
      if (!s[key].is_number()) unsupported(std::string(key) + " that is not a number", path);
      return s[key].get<double>();
    };
    if (s.contains("minimum")) lo = std::max(lo, std::ceil(number("minimum")));
    if (s.contains("exclusiveMinimum")) lo = std::max(lo, std::floor(number("exclusiveMinimum")) + 1);
    if (s.contains("maximum")) hi = std::min(hi, std::floor(number("maximum")));
    if (s.contains("exclusiveMaximum")) hi = std::min(hi, std::ceil(number("exclusiveMaximum")) - 1);
    if (s.contains("multipleOf")) unsupported("the keyword 'multipleOf'", path);
    lo = std::max(lo, -double(kMaxInteger));
    hi = std::min(hi, double(kMaxInteger));
    if (lo > hi)
      unsupported("bounds that admit no whole number (number bounds are rounded inward to whole numbers here)", path);
    return {static_cast<long long>(lo), static_cast<long long>(hi)};
  }

  // The decimal strings of [lo, hi], both >= 0 and of the same number of digits.
  Expr same_length(const std::string& lo, const std::string& hi) {
    if (lo.empty()) return b_.empty();
    if (lo == hi) return b_.literal(lo);
    // Every string of that length (what the recursion's edges reduce to: keeps it linear).
    if (lo.find_first_not_of('0') == std::string::npos && hi.find_first_not_of('9') == std::string::npos)
      return digits(int(lo.size()), int(lo.size()));
    if (lo[0] == hi[0]) return b_.seq({b_.literal(lo.substr(0, 1)), same_length(lo.substr(1), hi.substr(1))});
    const std::size_t rest = lo.size() - 1;
    std::vector<Expr> options{b_.seq({b_.literal(lo.substr(0, 1)), same_length(lo.substr(1), std::string(rest, '9'))}),
                              b_.seq({b_.literal(hi.substr(0, 1)), same_length(std::string(rest, '0'), hi.substr(1))})};
    if (lo[0] + 1 <= hi[0] - 1)
      options.push_back(b_.seq({b_.byte_range(uint8_t(lo[0] + 1), uint8_t(hi[0] - 1)), digits(int(rest), int(rest))}));
    return b_.alt(std::move(options));
  }

  // Decimal integers in [lo, hi] (0 <= lo <= hi), no leading zeros.
  Expr non_negative(long long lo, long long hi) {
    std::vector<Expr> options;
    long long start = lo;
    for (int len = 1; len <= 17 && start <= hi; ++len) {
      const long long top = len >= 17 ? hi : std::min(hi, static_cast<long long>(std::pow(10.0, len)) - 1);
      if (start <= top) options.push_back(same_length(std::to_string(start), std::to_string(top)));
      start = std::max(start, top + 1);
    }
    return b_.alt(std::move(options));
  }

  Expr integer_range(long long lo, long long hi) {
    std::vector<Expr> options;
    if (hi >= 0) options.push_back(non_negative(std::max(lo, 0LL), hi));
    if (lo < 0) options.push_back(b_.seq({b_.literal("-"), non_negative(std::max(1LL, hi >= 0 ? 1 : -hi), -lo)}));
    return b_.alt(std::move(options));
  }

  Expr compile_integer(const json& s, const std::string& path) {
    const auto [lo, hi] = bounds(s, path);
    return integer_range(lo, hi);
  }

  Expr compile_number(const json& s, const std::string& path) {
    const bool bounded = s.contains("minimum") || s.contains("maximum") || s.contains("exclusiveMinimum") ||
                         s.contains("exclusiveMaximum") || s.contains("multipleOf");
    if (!bounded) return b_.ref(any_number());
    const auto [lo, hi] = bounds(s, path);
    // Whole numbers in range, and k.fff where the fraction keeps it in range: k >= 0 gives
    // [k, k + 1), so k + 1 <= hi; k < 0 gives (k - 1, k], so k - 1 >= lo.
    std::vector<Expr> options{integer_range(lo, hi)};
    const Expr fraction = b_.seq({b_.literal("."), digits(1, kMaxDigits)});
    if (lo <= hi - 1 && hi - 1 >= 0) options.push_back(b_.seq({non_negative(std::max(lo, 0LL), hi - 1), fraction}));
    if (lo + 1 <= -1 && lo + 1 <= hi)
      options.push_back(b_.seq({b_.literal("-"), non_negative(std::max(1LL, hi >= 0 ? 1 : -hi), -(lo + 1)), fraction}));
    return b_.alt(std::move(options));
  }

  Expr compile_array(const json& s, const std::string& path) {
    for (const char* key : {"uniqueItems", "contains", "minContains", "maxContains", "unevaluatedItems"})
      if (s.contains(key) && !(std::string(key) == "uniqueItems" && s[key] == false))
        unsupported(std::string("the keyword '") + key + "'", path);
    std::vector<Expr> prefix;
    if (s.contains("prefixItems")) {
      if (!s["prefixItems"].is_array()) unsupported("prefixItems that is not an array", path);
      for (std::size_t i = 0; i < s["prefixItems"].size(); ++i)
        prefix.push_back(compile(s["prefixItems"][i], path + "/prefixItems/" + std::to_string(i)));
    }
    const bool more = !(s.contains("items") && s["items"] == false);
    const int n = int(prefix.size());
    const int min = count(s, "minItems", 0, path);
    int max = count(s, "maxItems", -1, path);
    if (!more) max = max < 0 ? n : std::min(max, n);
    if (max >= 0 && max < min) unsupported("maxItems below minItems (or more items required than allowed)", path);
    const Expr item = more ? (s.contains("items") ? as_rule(s["items"], path + "/items") : b_.ref(any_value())) : -1;
    const Expr comma = b_.seq({ws(), b_.literal(","), ws()});
    // Element k (0-based) is prefix[k] while k < n, then `item`.
    auto element = [&](int k) { return k < n ? prefix[std::size_t(k)] : item; };
    // From element k on, having written k elements: the rest, each after a comma when k > 0.
    const int fixed = std::max(min, n);  // spelled out one by one, then a repetition of `item`
    Expr rest = b_.empty();
    if (more && (max < 0 || max > fixed)) {
      const int extra_max = max < 0 ? -1 : max - fixed;
      rest = fixed == 0 ? b_.optional(b_.seq(
                              {ws(), item, b_.repeat(b_.seq({comma, item}), 0, extra_max < 0 ? -1 : extra_max - 1)}))
                        : b_.repeat(b_.seq({comma, item}), 0, extra_max);
    }
    for (int k = fixed - 1; k >= 0; --k) {
      const Expr el = k == 0 ? b_.seq({ws(), element(0)}) : b_.seq({comma, element(k)});
      // Elements past minItems are optional: stopping before element k ends the array.
      rest = k >= min ? b_.optional(b_.seq({el, rest})) : b_.seq({el, rest});
    }
    // The whitespace after "[" comes with the first element: an empty array has one run, not two.
    return b_.seq({b_.literal("["), rest, ws(), b_.literal("]")});
  }

  Expr compile_object(const json& s, const std::string& path) {
    for (const char* key : {"patternProperties", "propertyNames", "minProperties", "maxProperties", "dependentRequired",
                            "dependentSchemas", "unevaluatedProperties", "if", "then", "else"})
      if (s.contains(key)) unsupported(std::string("the keyword '") + key + "'", path);
    const json properties = s.contains("properties") ? s["properties"] : json::object();
    if (!properties.is_object()) unsupported("properties that is not an object", path);
    std::set<std::string> required;
    if (s.contains("required")) {
      if (!s["required"].is_array()) unsupported("required that is not an array", path);
      for (const json& r : s["required"]) {
        if (!r.is_string()) unsupported("a required name that is not a string", path);
        if (!properties.contains(r.get<std::string>()) &&
            !(s.contains("additionalProperties") && s["additionalProperties"] != false))
          unsupported("the required property '" + r.get<std::string>() + "' that properties does not define", path);
        required.insert(r.get<std::string>());
      }
    }
    // Extra members: additionalProperties true or a schema; without a "properties" keyword, absent
    // means any members too (a free-form object), while "properties": {} means none (OpenAI's strict
    // reading: the usual schema of a tool without arguments). Required ones not in properties first.
    const bool has_extra = s.contains("additionalProperties") ? s["additionalProperties"] != false
                                                              : !s.contains("properties");
    Expr extra_value = -1;
    if (has_extra)
      extra_value = s.contains("additionalProperties") && s["additionalProperties"].is_object()
                        ? as_rule(s["additionalProperties"], path + "/additionalProperties")
                        : b_.ref(any_value());
    const Expr comma = b_.seq({ws(), b_.literal(","), ws()});
    std::vector<std::pair<std::string, bool>> members;  // name, required
    for (auto it = properties.begin(); it != properties.end(); ++it)
      members.push_back({it.key(), required.count(it.key()) > 0});
    std::vector<std::string> required_extra;
    for (const std::string& r : required)
      if (!properties.contains(r)) required_extra.push_back(r);
    for (const std::string& r : required_extra) members.push_back({r, true});
    std::vector<Expr> values;
    for (const auto& [name, req] : members)
      values.push_back(properties.contains(name) ? as_rule(properties[name], path + "/properties/" + name)
                                                 : extra_value);
    // after[i][started]: members i.. (each optional unless required), a comma before each when
    // one was written already; then the extra members. Rules, as each is reached two ways.
    const std::size_t n = members.size();
    std::vector<std::array<int, 2>> after(n + 1);
    for (std::size_t i = 0; i <= n; ++i)
      for (int started = 0; started < 2; ++started)
        after[i][std::size_t(started)] = b_.declare_rule(path + "/members" + std::to_string(i) + "." +
                                                         std::to_string(started));
    for (int started = 0; started < 2; ++started) {
      Expr tail = b_.empty();
      if (has_extra) {
        const Expr member = b_.seq({b_.ref(any_string()), ws(), b_.literal(":"), ws(), extra_value});
        const Expr more = b_.star(b_.seq({comma, member}));
        tail = started ? more : b_.optional(b_.seq({ws(), member, more}));
      }
      b_.define(after[n][std::size_t(started)], tail);
    }
    for (std::size_t i = n; i-- > 0;) {
      for (int started = 0; started < 2; ++started) {
        std::vector<Expr> write;
        write.push_back(started ? comma : ws());  // the whitespace after "{" comes with the first member
        write.push_back(b_.literal(dump(json(members[i].first))));
        write.insert(write.end(), {ws(), b_.literal(":"), ws(), values[i], b_.ref(after[i + 1][1])});
        std::vector<Expr> options{b_.seq(std::move(write))};
        if (!members[i].second) options.push_back(b_.ref(after[i + 1][std::size_t(started)]));
        b_.define(after[i][std::size_t(started)], b_.alt(std::move(options)));
      }
    }
    return b_.seq({b_.literal("{"), b_.ref(after[0][0]), ws(), b_.literal("}")});
  }

  static const std::set<std::string> kKeywords;
  static constexpr int kMaxSchemaDepth = 128;

  const json& root_;
  GrammarBuilder b_;
  std::map<std::string, int> refs_;
  int depth_ = 0;
  int ws_ = -1, char_ = -1, string_ = -1, number_ = -1, value_ = -1, object_ = -1, array_ = -1;
};

const std::set<std::string> SchemaCompiler::kKeywords{"type",
                                                      "enum",
                                                      "const",
                                                      "properties",
                                                      "required",
                                                      "additionalProperties",
                                                      "items",
                                                      "prefixItems",
                                                      "minItems",
                                                      "maxItems",
                                                      "uniqueItems",
                                                      "anyOf",
                                                      "oneOf",
                                                      "allOf",
                                                      "$ref",
                                                      "$defs",
                                                      "definitions",
                                                      "minLength",
                                                      "maxLength",
                                                      "pattern",
                                                      "format",
                                                      "minimum",
                                                      "maximum",
                                                      "exclusiveMinimum",
                                                      "exclusiveMaximum"};
}  // namespace

std::shared_ptr<const Grammar> json_object_grammar() {
  static const std::shared_ptr<const Grammar> g = SchemaCompiler(json::object()).any_object_root();
  return g;
}

std::shared_ptr<const Grammar> json_schema_grammar(const json& schema) {
  try {
    return SchemaCompiler(schema).compile_root();
  } catch (const UnsupportedSchema&) {
    throw;
  } catch (const std::invalid_argument& e) {  // the grammar grew too large
    throw UnsupportedSchema(e.what());
  } catch (const json::exception& e) {
    throw UnsupportedSchema(std::string("invalid JSON Schema: ") + e.what());
  }
}

std::shared_ptr<const Grammar> regex_grammar(std::string_view pattern) {
  GrammarBuilder b;
  const int top = b.declare_rule("regex");
  try {
    b.define(top, regex_expr(b, pattern, CharContext::kRaw, /*full_match=*/true));
    return std::make_shared<const Grammar>(b.build(top));
  } catch (const std::invalid_argument& e) {
    throw UnsupportedSchema(e.what());
  }
}

std::shared_ptr<const Grammar> choice_grammar(const std::vector<std::string>& choices) {
  if (choices.empty()) throw UnsupportedSchema("guided_choice needs at least one choice");
  GrammarBuilder b;
  const int top = b.declare_rule("choice");
  std::vector<Expr> options;
  for (const std::string& c : choices) options.push_back(b.literal(c));
  b.define(top, b.alt(std::move(options)));
  return std::make_shared<const Grammar>(b.build(top));
}

}  // namespace pagedchat::structured
