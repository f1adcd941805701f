// Structured outputs (engine/sample/structured/): the grammars against outside references —
// regular expressions against std::regex (ECMAScript), integer bounds against arithmetic, the
// outputs the engine generates under a schema against ajv — and the engine's handling: a
// permissive grammar leaves greedy output as it was, a choice or pattern ends the request when
// complete, an unsupported keyword is named. (Plain string literals: Qt 6.4's moc loses the test
// class after a raw string literal spanning lines.)
#include <QTest>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ajv_reference.h"
#include "engine/llm_engine.h"
#include "engine/sample/structured/grammar_matcher.h"
#include "engine/sample/structured/json_schema_grammar.h"
#include "engine/text/tokenizer.h"
#include "engine_test_utils.h"
#include "test_paths.h"

using namespace pagedchat;
using namespace pagedchat::structured;
using json = nlohmann::ordered_json;

namespace {
std::shared_ptr<const TokenTrie> storiesTrie() {
  static std::shared_ptr<const TokenTrie> trie = [] {
    auto tok = load_tokenizer(testpaths::modelFile(QStringLiteral("stories260K/tok512.model")).toStdString());
    return std::make_shared<const TokenTrie>(*tok, tok->vocab_size(), tok->eos_ids());
  }();
  return trie;
}

/// Whether the grammar's language holds `text` (read byte by byte, then able to end).
bool matches(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  GrammarMatcher m(g, storiesTrie());
  return m.accept_bytes(text) && m.can_terminate();
}

bool schemaAccepts(const json& schema, const std::string& text) { return matches(json_schema_grammar(schema), text); }

QString unsupportedMessage(const json& schema) {
  try {
    json_schema_grammar(schema);
  } catch (const UnsupportedSchema& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}
}  // namespace

class TestStructuredOutput : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { REQUIRE_MODEL_FILE(testpaths::modelFile(QStringLiteral("stories260K/tok512.model"))); }

  // Every pattern's language equals std::regex's (ECMAScript, regex_match) on random strings.
  void regexMatchesStdRegex() {
    const std::vector<std::string> patterns{
        "[a-c]+x?",   "(ab|cd)*e{2,3}", "\\d{3}-\\d{2}",   "[^abc]{1,4}",     "a.c",
        "(?:x|y)+z*", "colou?r",        "[A-Z][a-z]{0,3}", "\\w+@\\w+\\.com", "(a|b|)c",
        "x{2,}y",     "[-.0-9]+",       "(a(b|c)*d)?e",    "\\s*[xyz]\\s*",   "[\\d\\-]{2}[^\\d]"};
    const std::string alphabet = "abcdexyz0123-@.ACZ colur";
    std::mt19937 rng(7);
    for (const std::string& p : patterns) {
      const auto g = regex_grammar(p);
      const std::regex re(p, std::regex::ECMAScript);
      int accepted = 0;
      for (int i = 0; i < 3000; ++i) {
        std::string s;
        const int len = int(rng() % 9);
        for (int k = 0; k < len; ++k) s += alphabet[rng() % alphabet.size()];
        const bool want = std::regex_match(s, re);
        accepted += want;
        QVERIFY2(matches(g, s) == want, qPrintable(QString::fromStdString("/" + p + "/ on '" + s + "'")));
      }
      Q_UNUSED(accepted);
    }
    // Beyond ASCII: classes of code points, written as UTF-8.
    const auto hangul = regex_grammar("[가-힣]{2}");
    QVERIFY(matches(hangul, "한국"));
    QVERIFY(!matches(hangul, "한"));
    QVERIFY(!matches(hangul, "ab"));
    QVERIFY(!matches(hangul, "한국어"));
    QVERIFY(matches(regex_grammar("[^a]"), "é"));
    QVERIFY(!matches(regex_grammar("[^a]"), "\xC3"));  // half a character
  }

  // Integer and number bounds: accepted exactly when arithmetic says the value is in range.
  void numberBoundsMatchArithmetic() {
    std::mt19937 rng(11);
    const std::vector<std::pair<long long, long long>> ranges{{-37, 1234}, {0, 0},  {5, 5},     {-1000, -999},
                                                              {7, 70000},  {-5, 5}, {100, 199}, {-99999, 3}};
    for (const auto& [lo, hi] : ranges) {
      const json schema = {{"type", "integer"}, {"minimum", lo}, {"maximum", hi}};
      const auto g = json_schema_grammar(schema);
      std::vector<long long> values{lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 0, -1, 10 * hi + 3};
      for (int i = 0; i < 400; ++i) values.push_back(lo - 50 + (long long)(rng() % uint32_t(hi - lo + 101)));
      for (long long v : values)
        QVERIFY2(matches(g, std::to_string(v)) == (lo <= v && v <= hi),
                 qPrintable(QStringLiteral("%1 in [%2, %3]").arg(v).arg(lo).arg(hi)));
      QVERIFY(!matches(g, "01"));
      QVERIFY(!matches(g, "-0") || lo <= 0);
    }
    // Exclusive bounds, and numbers with fractions: whatever is accepted is in range.
    const json number = {{"type", "number"}, {"exclusiveMinimum", -2.5}, {"maximum", 3}};
    const auto g = json_schema_grammar(number);
    for (const char* text : {"-2", "-1.75", "0.5", "2.999", "3", "0"}) QVERIFY2(matches(g, text), text);
    for (const char* text : {"-3", "-2.5", "3.5", "4", "1e2"}) QVERIFY2(!matches(g, text), text);
  }

  void schemasAcceptAndReject() {
    const json person = json::parse(
        "{ "
        "      \"type\": \"object\", "
        "      \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 5}, \"age\": {\"type\": \"integer\", "
        "\"minimum\": 0}, "
        "                     \"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"a\", \"b\"]}, \"minItems\": 1, "
        "\"maxItems\": 2}, "
        "                     \"nick\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}}, "
        "      \"required\": [\"name\"]}");
    for (const char* ok :
         {"{\"name\": \"Al\"}", "{\"name\":\"Al\",\"age\":42}", " { \"name\" : \"Al\" ,\n  \"tags\" : [\"a\",\"b\"] }",
          "{\"name\":\"\",\"nick\":null}", "{\"name\":\"x\\\"y\",\"nick\":\"z\"}", "{\"name\":\"한국\"}"})
      QVERIFY2(schemaAccepts(person, ok), ok);
    for (const char* bad : {"{\"age\": 3}", "{\"name\": 1}", "{\"name\":\"x\",\"extra\":1}", "{\"name\":\"toolong\"}",
                            "{\"name\":\"x\",\"tags\":[]}", "{\"name\":\"x\",\"tags\":[\"a\",\"b\",\"a\"]}",
                            "{\"name\":\"x\",\"tags\":[\"c\"]}", "{\"name\":\"x\",\"age\":-1}", "{\"name\":\"x\""})
      QVERIFY2(!schemaAccepts(person, bad), bad);

    // $ref, recursion through $defs, prefixItems, const, additionalProperties as a schema.
    const json tree = json::parse(
        "{ "
        "      \"$defs\": {\"node\": {\"type\": \"object\", \"properties\": {\"v\": {\"const\": 1}, \"kids\": "
        "{\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/node\"}}}, "
        "                         \"required\": [\"v\"]}}, "
        "      \"$ref\": \"#/$defs/node\"}");
    QVERIFY(schemaAccepts(tree, "{\"v\":1,\"kids\":[{\"v\":1},{\"v\":1,\"kids\":[{\"v\":1}]}]}"));
    QVERIFY(!schemaAccepts(tree, "{\"v\":2}"));
    const json pair = {
        {"type", "array"}, {"prefixItems", {{{"type", "boolean"}}, {{"type", "null"}}}}, {"items", false}};
    QVERIFY(schemaAccepts(pair, "[true, null]"));
    QVERIFY(schemaAccepts(pair, "[]"));
    QVERIFY(!schemaAccepts(pair, "[true, null, 1]"));
    const json map = {{"type", "object"}, {"additionalProperties", {{"type", "integer"}}}};
    QVERIFY(schemaAccepts(map, "{\"a\": 1, \"b\": 2}"));
    QVERIFY(!schemaAccepts(map, "{\"a\": \"1\"}"));
    const json date = {{"type", "string"}, {"format", "date"}};
    QVERIFY(schemaAccepts(date, "\"2024-02-28\""));
    QVERIFY(!schemaAccepts(date, "\"2024-13-01\""));
    QVERIFY(matches(json_object_grammar(), "{\"a\": [1, {\"b\": null}], \"c\": \"d\"}"));
    QVERIFY(!matches(json_object_grammar(), "[1]"));
    // At most 12 whitespace characters between two tokens, an empty object's brackets included.
    QVERIFY(matches(json_object_grammar(), "{" + std::string(12, ' ') + "}"));
    QVERIFY(!matches(json_object_grammar(), "{" + std::string(13, ' ') + "}"));
    QVERIFY(matches(json_schema_grammar({{"type", "array"}}), "[" + std::string(12, '\n') + "]"));
    QVERIFY(!matches(json_schema_grammar({{"type", "array"}}), "[" + std::string(13, '\n') + "]"));
    QVERIFY(!matches(json_schema_grammar({{"type", "object"}, {"additionalProperties", false}}),
                     "{" + std::string(13, ' ') + "}"));
  }

  void unsupportedKeywordsAreNamed() {
    QVERIFY(unsupportedMessage({{"type", "array"}, {"uniqueItems", true}}).contains("uniqueItems"));
    QVERIFY(
        unsupportedMessage({{"type", "object"}, {"patternProperties", json::object()}}).contains("patternProperties"));
    QVERIFY(unsupportedMessage({{"type", "number"}, {"multipleOf", 3}}).contains("multipleOf"));
    QVERIFY(unsupportedMessage({{"$ref", "#/$defs/missing"}}).contains("missing"));
    QVERIFY(unsupportedMessage({{"type", "string"}, {"pattern", "(?=a)"}}).contains("look-around"));
    QVERIFY(unsupportedMessage(false).contains("false"));
    // Schemas with no finite value (a model could never finish): refused, not run into a dead end.
    QVERIFY(unsupportedMessage({{"$ref", "#"}}).contains("no finite"));
    QVERIFY(unsupportedMessage(json::parse("{\"type\": \"object\", \"properties\": {\"c\": {\"$ref\": \"#\"}}, "
                                           "\"required\": [\"c\"]}"))
                .contains("no finite"));
    QVERIFY(!unsupportedMessage(json::parse("{\"allOf\": [{\"$ref\": \"#\"}]}")).isEmpty());
    // oneOf is generated as anyOf only where no value can match two alternatives.
    QVERIFY(unsupportedMessage(json::parse("{\"oneOf\": [{\"type\": \"integer\"}, {\"type\": \"integer\", "
                                           "\"minimum\": 0}]}"))
                .contains("overlap"));
    QVERIFY(unsupportedMessage(json::parse("{\"oneOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}")).isEmpty());
    // enum and const keep to their schema's type.
    const json typedEnum = json::parse("{\"type\": \"integer\", \"enum\": [\"a\", 1, 2.5]}");
    QVERIFY(schemaAccepts(typedEnum, "1"));
    QVERIFY(!schemaAccepts(typedEnum, "2.5"));
    QVERIFY(!schemaAccepts(typedEnum, "\"a\""));
    QVERIFY(!unsupportedMessage(json::parse("{\"type\": \"string\", \"const\": 5}")).isEmpty());
    // Hostile patterns: a regex nested 100 000 deep, one asking for a million states.
    try {
      regex_grammar(std::string(100000, '(') + "a" + std::string(100000, ')'));
      QFAIL("a regex nested 100000 deep was compiled");
    } catch (const UnsupportedSchema& e) {
      QVERIFY2(QString(e.what()).contains("nested"), e.what());
    }
    json deep = {{"type", "string"}};
    for (int i = 0; i < 1000; ++i) deep = {{"type", "array"}, {"items", deep}};
    QVERIFY(unsupportedMessage(deep).contains("nested"));
    try {
      regex_grammar("(a{1000}){1000}");
      QFAIL("a regex of a million states was compiled");
    } catch (const UnsupportedSchema& e) {
      QVERIFY2(QString(e.what()).contains("too large"), e.what());
    }
    QVERIFY(unsupportedMessage({{"type", "string"}, {"maxLength", 1000000}}).contains("maxLength"));
    const QString where = unsupportedMessage(
        {{"type", "object"}, {"properties", {{"tags", {{"type", "array"}, {"contains", {{"type", "string"}}}}}}}});
    QVERIFY2(where.contains("contains") && where.contains("/properties/tags"), qPrintable(where));
  }

  // What the engine writes under a schema, sampled with many seeds, validates with ajv.
  void generatedOutputsValidateWithAjv() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    REQUIRE_AJV();
    const std::vector<json> schemas{
        json::parse(
            "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"maxLength\":8},\"age\":{\"type\":"
            "\"integer\",\"minimum\":0,\"maximum\":120}, "
            "                        \"pet\":{\"enum\":[\"cat\",\"dog\",null]}},\"required\":[\"name\",\"age\"]}"),
        json::parse("{\"type\":\"array\",\"items\":{\"type\":\"number\",\"minimum\":-5,\"maximum\":5},\"minItems\":2,"
                    "\"maxItems\":4}"),
        json::parse(
            "{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\",\"format\":\"date\"},\"id\":{\"type\":"
            "\"string\",\"format\":\"uuid\"}, "
            "                        "
            "\"ok\":{\"type\":\"boolean\"}},\"required\":[\"when\",\"id\",\"ok\"],\"additionalProperties\":false}"),
        json::parse("{\"$defs\":{\"p\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\",\"minimum\":-9,"
                    "\"maximum\":9},\"y\":{\"type\":\"integer\",\"minimum\":-9,\"maximum\":9}}, "
                    "                        "
                    "\"required\":[\"x\",\"y\"]}},\"type\":\"object\",\"properties\":{\"from\":{\"$ref\":\"#/$defs/"
                    "p\"},\"to\":{\"$ref\":\"#/$defs/p\"}},\"required\":[\"from\",\"to\"]}"),
        json::parse("{\"anyOf\":[{\"type\":\"string\",\"pattern\":\"^[a-z]{2,5}$\"},{\"type\":\"integer\",\"minimum\":"
                    "10,\"maximum\":99}]}"),
        json::parse("{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}-\\\\d{"
                    "3}$\"},\"n\":{\"type\":\"null\"}},\"required\":[\"code\"]}")};
    LLMEngine engine(testutil::storiesConfig());
    std::vector<ajvref::Case> cases;
    int finished = 0, total = 0;
    std::string unfinished;
    for (std::size_t s = 0; s < schemas.size(); ++s) {
      ajvref::Case c{schemas[s], {}};
      for (int seed = 0; seed < 6; ++seed) {
        SamplingParams p;
        p.temperature = 1.0f;
        p.seed = uint64_t(seed);
        p.max_tokens = 300;
        p.structured_outputs = StructuredOutputsParams{};
        p.structured_outputs->json = schemas[s].dump();
        const std::string id = "s" + std::to_string(s) + "-" + std::to_string(seed);
        engine.add_request(id, "Once upon a time", p);
      }
      const auto done = testutil::runToCompletion(engine);
      for (const auto& [id, out] : done) {
        ++total;
        if (out.outputs[0].finish_reason != FinishReason::kStop) {  // ran out of tokens mid-text
          unfinished += "\n" + out.outputs[0].text;
          continue;
        }
        ++finished;
        c.outputs.push_back(out.outputs[0].text);
      }
      cases.push_back(std::move(c));
    }
    QVERIFY2(
        finished * 3 >= total,
        qPrintable(
            QStringLiteral("%1 of %2 finished: %3").arg(finished).arg(total).arg(QString::fromStdString(unfinished))));
    const json verdict = ajvref::validate(cases);
    QVERIFY2(!verdict.contains("error"), verdict.dump().c_str());
    for (std::size_t s = 0; s < cases.size(); ++s) {
      QVERIFY2(!verdict[s].contains("schemaError"), verdict[s].dump().c_str());
      for (std::size_t i = 0; i < cases[s].outputs.size(); ++i)
        QVERIFY2(verdict[s]["outputs"][i]["valid"].get<bool>(),
                 qPrintable(QString::fromStdString(cases[s].outputs[i] + " -> " + verdict[s]["outputs"][i].dump())));
    }
  }

  // A grammar that admits everything leaves greedy output unchanged, token for token.
  void permissiveGrammarKeepsGreedyOutput() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    LLMEngine engine(testutil::storiesConfig());
    SamplingParams plain = testutil::greedy(64), free = plain;
    free.structured_outputs = StructuredOutputsParams{};
    free.structured_outputs->regex = "[\\s\\S]*";
    engine.add_request("plain", "Once upon a time", plain);
    engine.add_request("free", "Once upon a time", free);
    const auto done = testutil::runToCompletion(engine);
    QCOMPARE(done.at("free").outputs[0].token_ids, done.at("plain").outputs[0].token_ids);
    QCOMPARE(done.at("free").outputs[0].text, done.at("plain").outputs[0].text);
  }

  // A choice or a pattern with nothing after it ends the request as soon as it is complete.
  void completeOutputsEndTheRequest() {
    REQUIRE_MODEL_FILE(testpaths::stories260K());
    LLMEngine engine(testutil::storiesConfig());
    for (int seed = 0; seed < 5; ++seed) {
      SamplingParams p;
      p.temperature = 1.0f;
      p.seed = uint64_t(seed);
      p.max_tokens = 50;
      p.structured_outputs = StructuredOutputsParams{};
      p.structured_outputs->choice = std::vector<std::string>{"yes", "no", "maybe so"};
      engine.add_request("c" + std::to_string(seed), "Is it", p);
      SamplingParams r = p;
      r.structured_outputs = StructuredOutputsParams{};
      r.structured_outputs->regex = "[A-Z]{2}\\d{2}";
      engine.add_request("r" + std::to_string(seed), "Code:", r);
    }
    const std::regex code("[A-Z]{2}[0-9]{2}");
    for (const auto& [id, out] : testutil::runToCompletion(engine)) {
      const std::string& text = out.outputs[0].text;
      QCOMPARE(out.outputs[0].finish_reason, FinishReason::kStop);
      if (id[0] == 'c')
        QVERIFY2(text == "yes" || text == "no" || text == "maybe so", text.c_str());
      else
        QVERIFY2(std::regex_match(text, code), text.c_str());
    }
    // A schema the grammars cannot express is refused when the request is added, by name.
    SamplingParams bad = testutil::greedy(8);
    bad.structured_outputs = StructuredOutputsParams{};
    bad.structured_outputs->json = "{\"type\":\"array\",\"uniqueItems\":true}";
    QString message;
    try {
      engine.add_request("bad", "x", bad);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    QVERIFY2(message.contains("uniqueItems"), qPrintable(message));
    QVERIFY(!engine.has_unfinished_requests());
  }
};

QTEST_GUILESS_MAIN(TestStructuredOutput)
#include "test_structured_output.moc"
