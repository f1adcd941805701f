#include "engine/entrypoints/openai/protocol.h"

#include <cctype>
#include <climits>
#include <cmath>
#include <limits>
#include <set>

#include "engine/entrypoints/openai/chat_reply.h"
#include "engine/entrypoints/openai/media_fetch.h"
#include "engine/loader/load_util.h"
#include "engine/multimodal/mm_prompt.h"
#include "engine/sample/structured/json_schema_grammar.h"
#include "engine/text/chat_template.h"

namespace pagedchat::openai {

namespace {

constexpr std::size_t kMaxToolsBytes = std::size_t(1) << 20;

std::string default_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 503:
      return "service_unavailable";
    case 500:
      return "internal_server_error";
    default:
      return "invalid_request_error";
  }
}

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& param, const std::string& what) {
  throw ApiError(400, "'" + param + "' " + what, param);
}

/// The bytes of an image_url part's URL: a data: URL with base64 data (RFC 2397; RFC 4648's
/// alphabet, padding optional, no whitespace). Remote URLs are not fetched.
std::vector<uint8_t> image_from_url(const std::string& url, const std::string& param) {
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0)
    bad(param,
        "is a remote URL: this server fetches no media (start it with --allowed-media-domains HOST to fetch "
        "from HOST); send the image as a data: URL (data:image/png;base64,...)");
  const std::size_t comma = url.find(',');
  if (url.rfind("data:", 0) != 0 || comma == std::string::npos)
    bad(param, "must be a data: URL (data:image/png;base64,...)");
  const std::string head = url.substr(5, comma - 5);
  if (head.size() < 7 || head.compare(head.size() - 7, 7, ";base64") != 0)
    bad(param, "must hold base64 data (data:image/...;base64,...)");
  // The media type must be an image's (as vLLM's and OpenAI's checks want); which image format the
  // bytes hold is read from the bytes themselves.
  std::string type = head.substr(0, head.find(';'));
  for (char& c : type) c = char(std::tolower(static_cast<unsigned char>(c)));
  if (type.rfind("image/", 0) != 0 || type.size() == 6) {
    std::string shown = head.substr(0, std::min<std::size_t>(head.find(';'), 40));  // echoed, kept short
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
    bad(param, "has media type '" + shown + (head.find(';') > 40 ? "...'" : "'") +
                   ", not an image's (data:image/png;base64,... or image/jpeg, image/webp)");
  }
  const std::size_t n = url.size() - comma - 1;
  if (n > (std::size_t(96) << 20)) bad(param, "holds more than 96 MiB of base64 data");
  std::vector<uint8_t> out;
  out.reserve(n / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  std::size_t i = comma + 1, pad = 0;
  for (; i < url.size(); ++i) {
    const char c = url[i];
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || c == '-')
      v = 62;
    else if (c == '/' || c == '_')
      v = 63;
    else if (c == '=')
      break;
    else if (c == '\n' || c == '\r' || c == ' ' || c == '\t')
      continue;  // line breaks of MIME-style base64
    else
      bad(param, "holds a character that is not base64 at byte " + std::to_string(i));
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t(acc >> bits));
    }
  }
  for (; i < url.size(); ++i) {
    if (url[i] == '=')
      ++pad;
    else if (url[i] != '\n' && url[i] != '\r' && url[i] != ' ' && url[i] != '\t')
      bad(param, "holds data after its base64 padding");
  }
  if (pad > 2 || bits >= 6) bad(param, "is not whole base64 (its length is wrong)");
  if (out.empty()) bad(param, "holds no data");
  return out;
}

const char* type_name(const json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

// A present, non-null field (null means "not given", as the OpenAI clients send it).
const json* field(const json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

double number(const json& v, const std::string& name) {
  if (!v.is_number()) bad(name, std::string("must be a number, got ") + type_name(v));
  const double d = v.get<double>();
  if (!std::isfinite(d)) bad(name, "must be finite");
  return d;
}

// A sampling number as the engine holds it (float): one beyond float's range is refused by name,
// not turned into inf (1e308 is a finite JSON number).
float number_f(const json& v, const std::string& name) {
  const double d = number(v, name);
  if (std::fabs(d) > double(std::numeric_limits<float>::max()))
    bad(name, "is out of range (a 32-bit float), got " + v.dump());
  return static_cast<float>(d);
}

long long integer(const json& v, const std::string& name) {
  const std::string range = "is out of range (a 64-bit integer), got ";
  if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(LLONG_MAX))
    bad(name, range + v.dump());
  if (v.is_number_integer()) return v.get<long long>();
  if (v.is_number_float()) {
    // A whole number written with a fraction or an exponent (5.0, 1e16) is the integer it names,
    // where one exists: -2^63 <= d < 2^63 (both bounds exact doubles).
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d)) {
      if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return static_cast<long long>(d);
      bad(name, range + v.dump());
    }
  }
  bad(name, std::string("must be an integer, got ") + (v.is_number() ? v.dump() : type_name(v)));
}

int int_in(const json& v, const std::string& name, long long lo, long long hi) {
  const long long x = integer(v, name);
  if (x < lo || x > hi)
    bad(name, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(x));
  return static_cast<int>(x);
}

bool boolean(const json& v, const std::string& name) {
  if (!v.is_boolean()) bad(name, std::string("must be a boolean, got ") + type_name(v));
  return v.get<bool>();
}

std::string string(const json& v, const std::string& name) {
  if (!v.is_string()) bad(name, std::string("must be a string, got ") + type_name(v));
  return v.get<std::string>();
}

std::vector<int> token_ids(const json& v, const std::string& name) {
  std::vector<int> ids;
  for (std::size_t i = 0; i < v.size(); ++i)
    ids.push_back(int_in(v[i], name + "[" + std::to_string(i) + "]", 0, std::numeric_limits<int>::max()));
  return ids;
}

// The model asked for; "" when the request names none (null or left out: the served model, as
// vLLM and llama.cpp's server take it).
std::string model_name(const json& body) {
  const json* m = field(body, "model");
  if (!m || m->is_null()) return {};
  return string(*m, "model");
}

void read_stream_options(const json& body, bool stream, bool& include_usage) {
  const json* so = field(body, "stream_options");
  if (!so) return;
  if (!so->is_object()) bad("stream_options", std::string("must be an object, got ") + type_name(*so));
  if (!stream) bad("stream_options", "is only allowed when 'stream' is true");
  if (const json* u = field(*so, "include_usage")) include_usage = boolean(*u, "stream_options.include_usage");
}

// The fields of SamplingParams; `max_tokens_names` lists the names max_tokens may come under.
SamplingRequest read_sampling(const json& body, std::initializer_list<const char*> max_tokens_names,
                              const RequestLimits& limits) {
  SamplingRequest s;
  SamplingParams& p = s.params;
  p.temperature = 1.0f;
  if (const json* v = field(body, "n")) p.n = int_in(*v, "n", 1, 64);
  if (const json* v = field(body, "temperature")) {
    p.temperature = number_f(*v, "temperature");
    s.set.temperature = true;
  }
  if (const json* v = field(body, "top_p")) {
    p.top_p = number_f(*v, "top_p");
    s.set.top_p = true;
  }
  if (const json* v = field(body, "top_k")) {
    p.top_k = int_in(*v, "top_k", -1, std::numeric_limits<int>::max());
    s.set.top_k = true;
  }
  if (const json* v = field(body, "min_p")) {
    p.min_p = number_f(*v, "min_p");
    s.set.min_p = true;
  }
  if (const json* v = field(body, "repetition_penalty")) {
    p.repetition_penalty = number_f(*v, "repetition_penalty");
    s.set.repetition_penalty = true;
  }
  if (const json* v = field(body, "presence_penalty")) p.presence_penalty = number_f(*v, "presence_penalty");
  if (const json* v = field(body, "frequency_penalty")) p.frequency_penalty = number_f(*v, "frequency_penalty");
  if (const json* v = field(body, "seed")) {
    const long long seed = integer(*v, "seed");
    p.seed = static_cast<uint64_t>(seed);
  }
  for (const char* name : max_tokens_names)
    if (const json* v = field(body, name)) {
      s.max_tokens = int_in(*v, name, 1, std::numeric_limits<int>::max());
      s.set.max_tokens = true;
    }
  if (const json* v = field(body, "min_tokens"))
    p.min_tokens = int_in(*v, "min_tokens", 0, std::numeric_limits<int>::max());
  if (const json* v = field(body, "ignore_eos")) p.ignore_eos = boolean(*v, "ignore_eos");
  if (const json* v = field(body, "include_stop_str_in_output"))
    p.include_stop_str_in_output = boolean(*v, "include_stop_str_in_output");
  if (const json* v = field(body, "stop")) {
    if (v->is_string()) {
      p.stop.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      if (v->size() > static_cast<std::size_t>(limits.max_stop_strings))
        bad("stop", "has " + std::to_string(v->size()) + " strings; this server takes at most " +
                        std::to_string(limits.max_stop_strings) + " (--max-stop-strings)");
      for (std::size_t i = 0; i < v->size(); ++i) p.stop.push_back(string((*v)[i], "stop[" + std::to_string(i) + "]"));
    } else {
      bad("stop", std::string("must be a string or an array of strings, got ") + type_name(*v));
    }
    for (const std::string& st : p.stop) {
      if (st.empty()) bad("stop", "must not contain an empty string");
      if (st.size() > static_cast<std::size_t>(limits.max_stop_string_bytes))
        bad("stop", "has a string of " + std::to_string(st.size()) + " bytes; this server takes at most " +
                        std::to_string(limits.max_stop_string_bytes) + " bytes per stop string");
    }
  }
  if (const json* v = field(body, "stop_token_ids")) {
    if (!v->is_array()) bad("stop_token_ids", std::string("must be an array of token ids, got ") + type_name(*v));
    if (v->size() > static_cast<std::size_t>(limits.max_stop_token_ids))
      bad("stop_token_ids", "has " + std::to_string(v->size()) + " ids; this server takes at most " +
                                std::to_string(limits.max_stop_token_ids));
    p.stop_token_ids = token_ids(*v, "stop_token_ids");
  }
  // vLLM's allowed_token_ids: only these may be sampled (an empty list would allow nothing).
  if (const json* v = field(body, "allowed_token_ids"); v && !v->is_null()) {
    if (!v->is_array() || v->empty())
      bad("allowed_token_ids", std::string("must be a non-empty array of token ids, got ") +
                                   (v->is_array() ? "an empty array" : type_name(*v)));
    p.allowed_token_ids = token_ids(*v, "allowed_token_ids");
  }
  // vLLM's other sampling extras this server does not run: refused by name rather than ignored
  // (a request that asks for them would silently get something else). All of them are named, the
  // first as the error's param.
  std::vector<std::string> unsupported;
  for (const char* extra : {"bad_words", "use_beam_search", "prompt_logprobs", "truncate_prompt_tokens"})
    if (const json* v = field(body, extra);
        v && !v->is_null() && !(v->is_boolean() && !v->get<bool>()) && !(v->is_array() && v->empty()))
      unsupported.emplace_back(extra);
  if (!unsupported.empty()) {
    std::string others;
    for (std::size_t i = 1; i < unsupported.size(); ++i) others += (i > 1 ? ", " : "") + unsupported[i];
    bad(unsupported[0], "is not supported by this server" + (others.empty() ? "" : " (nor is " + others + ")"));
  }
  if (const json* v = field(body, "logit_bias")) {
    if (!v->is_object()) bad("logit_bias", std::string("must be an object of token id -> bias, got ") + type_name(*v));
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string& key = it.key();
      std::size_t used = 0;
      long long id = -1;
      try {
        id = std::stoll(key, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != key.size() || id < 0 || id > std::numeric_limits<int>::max())
        bad("logit_bias", "keys must be token ids, got '" + key + "'");
      p.logit_bias[static_cast<int>(id)] = static_cast<float>(number(it.value(), "logit_bias." + key));
    }
  }
  return s;
}

// The structured output a request asks for: OpenAI's response_format (text, json_object,
// json_schema), or vLLM's guided_json / guided_regex / guided_choice and structured_outputs
// {json, regex, choice, json_object}. At most one; compiled here once so that a schema the
// grammars cannot express is a 400 naming the keyword (the engine compiles it again from its cache).
std::optional<StructuredOutputsParams> read_structured_outputs(const json& body, const std::string* raw_body) {
  std::optional<StructuredOutputsParams> so;
  // The schema at `path` in the raw body, keys in their order (nlohmann::json sorted them).
  auto ordered = [raw_body](std::initializer_list<const char*> path) -> std::optional<std::string> {
    if (!raw_body) return std::nullopt;
    try {
      const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(*raw_body);
      const nlohmann::ordered_json* v = &doc;
      for (const char* key : path) {
        if (!v->is_object() || !v->contains(key)) return std::nullopt;
        v = &(*v)[key];
      }
      if (v->is_string()) return nlohmann::ordered_json::parse(v->get<std::string>()).dump();
      return v->dump();
    } catch (const nlohmann::json::exception&) {
      return std::nullopt;
    }
  };
  std::string source;  // the field that set it, for messages
  auto set = [&](const std::string& field, StructuredOutputsParams value) {
    if (so) bad(field, "cannot be combined with " + source + " (one structured output per request)");
    so = std::move(value);
    source = field;
  };
  auto schema_text = [](const json& v, const std::string& field) {
    if (v.is_string()) {
      try {
        return json::parse(v.get<std::string>()).dump();
      } catch (const json::exception&) {
        bad(field, "is a string that is not JSON");
      }
    }
    if (!v.is_object() && !v.is_boolean()) bad(field, "must be a JSON Schema (an object)");
    return v.dump();
  };
  auto choices = [](const json& v, const std::string& field) {
    if (!v.is_array() || v.empty()) bad(field, "must be a non-empty array of strings");
    std::vector<std::string> out;
    for (const json& c : v) {
      if (!c.is_string()) bad(field, "must be a non-empty array of strings");
      out.push_back(c.get<std::string>());
    }
    return out;
  };
  if (const json* v = field(body, "response_format")) {
    const json* type = v->is_object() ? field(*v, "type") : nullptr;
    if (!type || !type->is_string())
      bad("response_format", "must be an object with a type: \"text\", \"json_object\" or \"json_schema\"");
    const std::string t = type->get<std::string>();
    if (t == "json_object") {
      StructuredOutputsParams p;
      p.json_object = true;
      set("response_format", p);
    } else if (t == "json_schema") {
      const json* js = field(*v, "json_schema");
      const json* schema = js && js->is_object() ? field(*js, "schema") : nullptr;
      if (!schema) bad("response_format.json_schema.schema", "is required");
      StructuredOutputsParams p;
      p.json = schema_text(*schema, "response_format.json_schema.schema");
      if (auto o = ordered({"response_format", "json_schema", "schema"})) p.json = *o;
      set("response_format", p);
    } else if (t != "text") {
      bad("response_format.type", "'" + t + "' is not one of \"text\", \"json_object\", \"json_schema\"");
    }
  }
  if (const json* v = field(body, "guided_json")) {
    StructuredOutputsParams p;
    p.json = schema_text(*v, "guided_json");
    if (auto o = ordered({"guided_json"})) p.json = *o;
    set("guided_json", p);
  }
  if (const json* v = field(body, "guided_regex")) {
    StructuredOutputsParams p;
    p.regex = string(*v, "guided_regex");
    set("guided_regex", p);
  }
  if (const json* v = field(body, "guided_choice")) {
    StructuredOutputsParams p;
    p.choice = choices(*v, "guided_choice");
    set("guided_choice", p);
  }
  if (field(body, "guided_grammar"))
    bad("guided_grammar", "is not supported (use guided_json, guided_regex or guided_choice)");
  if (const json* v = field(body, "structured_outputs")) {
    if (!v->is_object()) bad("structured_outputs", "must be an object");
    StructuredOutputsParams p;
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string name = "structured_outputs." + it.key();
      if (it.value().is_null()) continue;
      if (it.key() == "json") {
        p.json = schema_text(it.value(), name);
        if (auto o = ordered({"structured_outputs", "json"})) p.json = *o;
      } else if (it.key() == "regex")
        p.regex = string(it.value(), name);
      else if (it.key() == "choice")
        p.choice = choices(it.value(), name);
      else if (it.key() == "json_object")
        p.json_object = boolean(it.value(), name);
      else
        bad(name, "is not supported (json, json_object, regex, choice)");
    }
    if (p.count() != 1) bad("structured_outputs", "must set exactly one of json, json_object, regex, choice");
    set("structured_outputs", p);
  }
  if (so && so->json && so->json->size() > kMaxToolsBytes)
    bad(source, "is a schema of " + std::to_string(so->json->size()) + " bytes; at most " +
                    std::to_string(kMaxToolsBytes) + " (1 MiB)");
  if (so) {
    try {
      if (so->json) structured::json_schema_grammar(nlohmann::ordered_json::parse(*so->json));
      if (so->regex) structured::regex_grammar(*so->regex);
      if (so->choice) structured::choice_grammar(*so->choice);
    } catch (const structured::UnsupportedSchema& e) {
      bad(source, e.what());
    }
  }
  return so;
}

// prompts × n: each is a sequence in the batch (vLLM's max_num_seqs is the batch; this is per call).
void check_sequences(std::size_t prompts, int n, const RequestLimits& limits) {
  if (prompts * static_cast<std::size_t>(n) > static_cast<std::size_t>(limits.max_sequences))
    bad(prompts > 1 ? "prompt" : "n",
        "asks for " + std::to_string(prompts) + " prompt(s) times n = " + std::to_string(n) +
            " sequences; this server takes at most " + std::to_string(limits.max_sequences) +
            " per request (--max-sequences-per-request)");
}

}  // namespace

ApiError::ApiError(int status, std::string message, std::string param, std::string type)
    : std::runtime_error(std::move(message)),
      status_(status),
      param_(std::move(param)),
      type_(type.empty() ? default_type(status) : std::move(type)) {}

nlohmann::json ApiError::to_json() const {
  json e = {{"message", what()}, {"type", type_}, {"param", nullptr}, {"code", status_}};
  if (!param_.empty()) e["param"] = param_;
  return json{{"error", e}};
}

int json_nesting_depth(const std::string& text, int limit) { return load::json_nesting_depth(text, limit); }

nlohmann::json parse_body(const std::string& body, int max_depth) {
  // Before anything walks it recursively (a dump, a copy, a template): a body nested 60 000 deep
  // would overflow the stack there.
  if (json_nesting_depth(body, max_depth) > max_depth)
    throw ApiError(400, "The request body nests arrays and objects deeper than " + std::to_string(max_depth) +
                            " levels (the server's --max-json-depth)");
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number beyond a double (1e400)
    throw ApiError(400, std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return j;
}

CompletionRequest parse_completion_request(const json& body, const RequestLimits& limits, const std::string* raw_body) {
  CompletionRequest r;
  r.model = model_name(body);
  const json* prompt = field(body, "prompt");
  if (!prompt) bad("prompt", "is required");
  if (prompt->is_string()) {
    r.prompts.emplace_back(prompt->get<std::string>());
  } else if (prompt->is_array() && !prompt->empty()) {
    if ((*prompt)[0].is_number()) {
      r.prompts.emplace_back(token_ids(*prompt, "prompt"));
    } else {
      check_sequences(prompt->size(), 1, limits);  // before reading them all
      for (std::size_t i = 0; i < prompt->size(); ++i) {
        const json& p = (*prompt)[i];
        const std::string name = "prompt[" + std::to_string(i) + "]";
        if (p.is_string())
          r.prompts.emplace_back(p.get<std::string>());
        else if (p.is_array() && !p.empty() && p[0].is_number())
          r.prompts.emplace_back(token_ids(p, name));
        else
          bad(name, "must be a string or a non-empty array of token ids");
      }
    }
  } else {
    bad("prompt", "must be a string, an array of strings, or (arrays of) token ids, and not empty");
  }
  for (const char* unsupported : {"suffix", "best_of"})
    if (const json* v = field(body, unsupported)) {
      if (std::string(unsupported) == "best_of" && integer(*v, "best_of") <= 1) continue;
      bad(unsupported, "is not supported by this server");
    }
  const std::optional<StructuredOutputsParams> structured = read_structured_outputs(body, raw_body);
  r.sampling = read_sampling(body, {"max_tokens"}, limits);
  r.sampling.params.structured_outputs = structured;
  check_sequences(r.prompts.size(), r.sampling.params.n, limits);
  if (const json* v = field(body, "stream")) r.stream = boolean(*v, "stream");
  read_stream_options(body, r.stream, r.include_usage);
  if (const json* v = field(body, "echo")) r.echo = boolean(*v, "echo");
  if (const json* v = field(body, "logprobs")) r.logprobs = int_in(*v, "logprobs", 0, 20);
  return r;
}

ChatCompletionRequest parse_chat_completion_request(const json& body, const RequestLimits& limits,
                                                    const std::string* raw_body) {
  ChatCompletionRequest r;
  r.model = model_name(body);
  const json* messages = field(body, "messages");
  if (!messages) bad("messages", "is required");
  if (!messages->is_array() || messages->empty()) bad("messages", "must be a non-empty array of messages");
  r.messages = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string name = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) bad(name, "must be an object with 'role' and 'content'");
    const json* role = field(m, "role");
    if (!role) bad(name + ".role", "is required");
    if (!role->is_string()) bad(name + ".role", std::string("must be a string, got ") + type_name(*role));
    // The OpenAI API's roles (and Llama 3's ipython): a template would skip another one's text
    // without a word. The role as a JSON string, so a NUL in it reads whole.
    if (const std::string rs = role->get<std::string>(); rs != "system" && rs != "developer" && rs != "user" &&
                                                         rs != "assistant" && rs != "tool" && rs != "function" &&
                                                         rs != "ipython")
      bad(name + ".role", "is " + json(rs).dump(-1, ' ', false, json::error_handler_t::replace) +
                              "; roles are system, developer, user, assistant, tool, function and ipython");
    if (const json* calls = field(m, "tool_calls"); calls && !calls->is_null()) {
      if (!calls->is_array()) bad(name + ".tool_calls", "must be an array of calls");
      for (std::size_t k = 0; k < calls->size(); ++k) {
        const json& c = (*calls)[k];
        const json* fn = c.is_object() ? field(c, "function") : nullptr;
        const json* fname = fn && fn->is_object() ? field(*fn, "name") : nullptr;
        if (!fname || !fname->is_string())
          bad(name + ".tool_calls[" + std::to_string(k) + "]",
              "must be {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}");
      }
    }
    nlohmann::ordered_json out = nlohmann::ordered_json::parse(m.dump());
    // An earlier call's arguments come as a JSON text; templates write them as an object
    // (`tool_call.arguments | tojson`), so they get the object, as vLLM passes it.
    if (out.contains("tool_calls") && out["tool_calls"].is_array())
      for (auto& call : out["tool_calls"])
        if (call.is_object() && call.contains("function") && call["function"].is_object() &&
            call["function"].contains("arguments") && call["function"]["arguments"].is_string()) {
          auto args = nlohmann::ordered_json::parse(call["function"]["arguments"].get<std::string>(), nullptr, false);
          if (args.is_object()) call["function"]["arguments"] = std::move(args);
        }
    const json* content = field(m, "content");
    if (content && content->is_array()) {
      // Content parts: text, and images as data: URLs (each becomes kImageMarker where it stands;
      // the text parts are joined by newlines).
      std::string text;
      bool last_text = false;
      for (std::size_t k = 0; k < content->size(); ++k) {
        const json& part = (*content)[k];
        const std::string pname = name + ".content[" + std::to_string(k) + "]";
        const json* type = part.is_object() ? field(part, "type") : nullptr;
        if (!type || !type->is_string()) bad(pname, "must be an object with a 'type'");
        const std::string t = type->get<std::string>();
        if (t == "image_url") {
          const json* iu = field(part, "image_url");
          const json* url = iu && iu->is_object() ? field(*iu, "url") : iu;
          if (!url || !url->is_string()) bad(pname + ".image_url", "must be {\"url\": \"data:image/...;base64,...\"}");
          if (int(r.images.size()) >= limits.max_images)
            bad(pname,
                "is one image too many: a request takes at most " + std::to_string(limits.max_images) + " images");
          const std::string& u = url->get<std::string>();
          const bool remote = u.rfind("http://", 0) == 0 || u.rfind("https://", 0) == 0;
          if (remote && !limits.allowed_media_domains.empty()) {
            std::string host;
            try {
              host = media_url_host(u);
            } catch (const MediaFetchError& e) {
              bad(pname + ".image_url.url", std::string("is not a URL this server fetches: ") + e.what());
            }
            if (!media_url_allowed(u, limits.allowed_media_domains))
              bad(pname + ".image_url.url", "is on host '" + host.substr(0, 200) +
                                                "', which is not among the hosts this server fetches images from "
                                                "(--allowed-media-domains)");
            r.images.emplace_back();
            r.image_urls.push_back(u);
          } else {
            r.images.push_back(image_from_url(u, pname + ".image_url.url"));
            r.image_urls.emplace_back();
          }
          r.image_params.push_back(pname + ".image_url");
          text += kImageMarker;
          last_text = false;
          continue;
        }
        if (t != "text") bad(pname + ".type", "'" + t + "' is not supported (\"text\" and \"image_url\" are)");
        const json* tx = field(part, "text");
        if (!tx) bad(pname + ".text", "is required");
        if (last_text) text += "\n";
        text += strip_image_markers(string(*tx, pname + ".text"));
        last_text = true;
      }
      out["content"] = text;
    } else if (content && !content->is_string()) {
      bad(name + ".content", std::string("must be a string or an array of content parts, got ") + type_name(*content));
    } else if (!content) {
      // Tool calls stand in for the text; an empty list is none (clients send [] for no calls).
      const json* calls = field(m, "tool_calls");
      const bool hasCalls = calls && !(calls->is_array() && calls->empty());
      // An earlier answer may come back without text (null, as vLLM accepts it: a tool call, a
      // refusal, or an empty reply); the template sees "", as vLLM passes it, so that templates
      // which concatenate or test the content work on tool-call turns too.
      if (role->get<std::string>() != "assistant" && !hasCalls) bad(name + ".content", "is required");
      out["content"] = "";
    }
    if (content && content->is_string()) out["content"] = strip_image_markers(content->get<std::string>());
    r.messages.push_back(std::move(out));
  }
  if (const json* v = field(body, "tools"); v && !v->is_array())
    bad("tools", std::string("must be an array of tools, got ") + type_name(*v));
  if (const json* tools = field(body, "tools")) {
    for (std::size_t i = 0; i < tools->size(); ++i) {
      const json& t = (*tools)[i];
      const std::string name = "tools[" + std::to_string(i) + "]";
      const json* fn = t.is_object() ? field(t, "function") : nullptr;
      if (!t.is_object() || t.value("type", "function") != "function" || !fn || !fn->is_object())
        bad(name, "must be {\"type\": \"function\", \"function\": {\"name\", \"parameters\"}}");
      const json* fname = field(*fn, "name");
      if (!fname || !fname->is_string() || fname->get<std::string>().empty())
        bad(name + ".function.name", "is required (a non-empty string)");
      if (const json* params = field(*fn, "parameters"); params && !params->is_object())
        bad(name + ".function.parameters", "must be a JSON Schema object");
    }
    std::set<std::string> names;
    for (std::size_t i = 0; i < tools->size(); ++i)
      if (!names.insert((*tools)[i]["function"]["name"].get<std::string>()).second)
        bad("tools[" + std::to_string(i) + "].function.name",
            "'" + (*tools)[i]["function"]["name"].get<std::string>() + "' names an earlier tool too");
    // More tool definitions than any context holds (1 MiB is some 250k tokens): refused before the
    // template and the grammar spend time on them.
    if (const std::size_t size = tools->dump().size(); size > kMaxToolsBytes)
      bad("tools", "is " + std::to_string(size) + " bytes of definitions; at most " + std::to_string(kMaxToolsBytes) +
                       " (1 MiB)");
    r.tools = *tools;
    if (!tools->empty()) r.tool_choice = "auto";
  }
  if (const json* tc = field(body, "tool_choice")) {
    const std::string kinds =
        "must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}";
    if (tc->is_string()) {
      const std::string v = tc->get<std::string>();
      if (v != "none" && v != "auto" && v != "required") bad("tool_choice", kinds);
      r.tool_choice = v;
    } else if (tc->is_object()) {
      const json* fn = field(*tc, "function");
      const json* name = fn && fn->is_object() ? field(*fn, "name") : nullptr;
      if (tc->value("type", "function") != "function" || !name || !name->is_string()) bad("tool_choice", kinds);
      r.tool_choice = "function";
      r.tool_choice_name = name->get<std::string>();
    } else {
      bad("tool_choice", kinds);
    }
    if (r.tool_choice != "none" && r.tools.empty()) bad("tool_choice", "\"" + r.tool_choice + "\" needs tools");
  }
  if (const json* v = field(body, "parallel_tool_calls")) r.parallel_tool_calls = boolean(*v, "parallel_tool_calls");
  std::optional<StructuredOutputsParams> structured = read_structured_outputs(body, raw_body);
  if (r.tool_choice == "required" || r.tool_choice == "function") {
    // Constrained decoding makes the call (vLLM's way): the named function's arguments, or an
    // array of calls, by a schema of the tools (their parameters in the client's key order).
    if (structured) bad("tool_choice", "\"" + r.tool_choice + "\" cannot be combined with a structured output");
    nlohmann::ordered_json tools = nlohmann::ordered_json::parse(r.tools.dump());
    if (raw_body) {
      const nlohmann::ordered_json doc = nlohmann::ordered_json::parse(*raw_body, nullptr, false);
      if (doc.is_object() && doc.contains("tools") && doc["tools"].is_array()) tools = doc["tools"];
    }
    // Each schema that may constrain the reply must describe an object the grammar can enforce:
    // a 400 naming the tool otherwise (before any work on the request).
    for (std::size_t i = 0; i < tools.size(); ++i) {
      const auto& fn = tools[i]["function"];
      if (r.tool_choice == "function" && fn.value("name", "") != r.tool_choice_name) continue;
      const std::string where = "tools[" + std::to_string(i) + "].function.parameters";
      const nlohmann::ordered_json params = tool_parameters_schema(fn);
      if (!params["type"].is_string() || params["type"].get<std::string>() != "object")
        bad(where, "must describe an object (\"type\": \"object\"): a call's arguments are one");
      try {
        structured::json_schema_grammar(params);
      } catch (const structured::UnsupportedSchema& e) {
        bad(where, e.what());
      }
    }
    StructuredOutputsParams p;
    try {
      p.json = tool_choice_schema(tools, r.tool_choice, r.tool_choice_name, r.parallel_tool_calls).dump();
      structured::json_schema_grammar(nlohmann::ordered_json::parse(*p.json));
    } catch (const std::invalid_argument& e) {
      bad("tool_choice", e.what());
    }
    structured = std::move(p);
  }
  r.sampling = read_sampling(body, {"max_tokens", "max_completion_tokens"}, limits);
  r.sampling.params.structured_outputs = structured;
  check_sequences(1, r.sampling.params.n, limits);
  if (const json* v = field(body, "stream")) r.stream = boolean(*v, "stream");
  read_stream_options(body, r.stream, r.include_usage);
  if (const json* v = field(body, "logprobs")) r.logprobs = boolean(*v, "logprobs");
  if (const json* v = field(body, "top_logprobs")) {
    r.top_logprobs = int_in(*v, "top_logprobs", 0, 20);
    if (!r.logprobs && r.top_logprobs > 0) bad("top_logprobs", "needs 'logprobs': true");
  }
  if (const json* v = field(body, "add_generation_prompt"))
    r.add_generation_prompt = boolean(*v, "add_generation_prompt");
  if (const json* v = field(body, "continue_final_message"))
    r.continue_final_message = boolean(*v, "continue_final_message");
  if (r.continue_final_message && r.add_generation_prompt && field(body, "add_generation_prompt"))
    bad("continue_final_message", "cannot be combined with 'add_generation_prompt': true");
  if (const json* v = field(body, "chat_template_kwargs")) {
    if (!v->is_object()) bad("chat_template_kwargs", std::string("must be an object, got ") + type_name(*v));
    json rest = *v;
    if (auto it = rest.find("enable_thinking"); it != rest.end()) {
      if (!it->is_null()) r.enable_thinking = boolean(*it, "chat_template_kwargs.enable_thinking");
      rest.erase(it);
    }
    for (const auto& [key, value] : rest.items())
      if (is_reserved_template_variable(key))
        bad("chat_template_kwargs." + key,
            "cannot be set: the template's own variable or function of that name is not the client's to replace");
    if (!rest.empty()) r.chat_template_kwargs_json = rest.dump();
  }
  // OpenAI's reasoning_effort reaches the template as its variable of that name (gpt-oss's
  // Harmony template writes "Reasoning: low|medium|high"); chat_template_kwargs may set it too.
  if (const json* v = field(body, "reasoning_effort"); v && !v->is_null()) {
    const std::string effort = string(*v, "reasoning_effort");
    if (effort != "low" && effort != "medium" && effort != "high")
      bad("reasoning_effort", "must be \"low\", \"medium\" or \"high\", got \"" + effort + "\"");
    json vars = r.chat_template_kwargs_json.empty() ? json::object() : json::parse(r.chat_template_kwargs_json);
    if (!vars.contains("reasoning_effort")) vars["reasoning_effort"] = effort;
    r.chat_template_kwargs_json = vars.dump();
  }
  if (const json* v = field(body, "chat_template")) r.chat_template = string(*v, "chat_template");
  // The tool definitions go to the model's template as `tools` (as vLLM and transformers pass
  // them), unless the template variables name their own.
  if (const json* tools = field(body, "tools"); tools && !tools->empty()) {
    json vars = r.chat_template_kwargs_json.empty() ? json::object() : json::parse(r.chat_template_kwargs_json);
    if (!vars.contains("tools")) {
      vars["tools"] = *tools;
      r.chat_template_kwargs_json = vars.dump();
    }
  }
  return r;
}

}  // namespace pagedchat::openai
