// tokenizer.json components one by one, on small synthetic files written here: each normalizer,
// pre-tokenizer, decoder, model option, added-token flag and post-processor, checked against
// transformers.js (tests/js/tokenize.mjs) on the same file. Where transformers.js does not
// implement what Hugging Face tokenizers does (Split behaviors other than Isolated/Removed,
// Metaspace split, continuing_subword_prefix, single_word, normalized added tokens), the
// expectation is the example of HF tokenizers' own documentation or the result spelled out by
// hand from its rules. Then malformed files: each error names the file and the JSON field.
#include <QTest>

#include <nlohmann/json.hpp>

#include <fstream>

#include "engine/text/bpe/pipeline.h"
#include "engine/text/bpe/tokenizer_json.h"
#include "engine/text/tokenizer.h"
#include "js_reference.h"
#include "test_paths.h"
#include "tokenizer_test_utils.h"

using namespace pagedchat;
using json = nlohmann::json;
using toktest::escaped;
using toktest::show;

namespace {

// GPT-2's byte -> character map, written out from its definition (OpenAI encoder.py).
std::string byte_char(int b) {
  const bool self = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  int cp = b;
  if (!self) {
    int extra = 0;
    for (int k = 0; k < b; ++k)
      if (!((k >= 0x21 && k <= 0x7E) || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE)) ++extra;
    cp = 256 + extra;
  }
  std::string s;
  if (cp < 0x80)
    s += char(cp);
  else {
    s += char(0xC0 | (cp >> 6));
    s += char(0x80 | (cp & 0x3F));
  }
  return s;
}

// A BPE vocabulary: the base symbols, then each word merged left to right (a chain of merges).
struct Vocab {
  json vocab = json::object();
  json merges = json::array();
  int next = 0;
  void add(const std::string& t) {
    if (!vocab.contains(t)) vocab[t] = next++;
  }
  // `chars`: the word split into its base symbols.
  void word(const std::vector<std::string>& chars) {
    for (const auto& c : chars) add(c);
    std::string acc = chars[0];
    for (std::size_t i = 1; i < chars.size(); ++i) {
      const std::string joined = acc + chars[i];
      if (!vocab.contains(joined)) {
        merges.push_back(acc + " " + chars[i]);
        add(joined);
      }
      acc = joined;
    }
  }
};

std::vector<std::string> chars_of(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = 1;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0xF0)
      n = 4;
    else if (c >= 0xE0)
      n = 3;
    else if (c >= 0xC0)
      n = 2;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}
std::vector<std::string> byte_chars_of(const std::string& s) {
  std::vector<std::string> out;
  for (unsigned char c : s) out.push_back(byte_char(c));
  return out;
}

const char* const kWords[] = {"the", " the", "hello", " world", "ing",  " is",   "er", " a",  "Hello",
                              " 12", "34",   "  ",    "\n\n",   "café", " 한국", "어", "🙂"};

// A byte-level tokenizer.json (vocab = the 256 byte characters + chains for kWords).
json byte_level_base() {
  Vocab v;
  for (int b = 0; b < 256; ++b) v.add(byte_char(b));
  for (const char* w : kWords) v.word(byte_chars_of(w));
  json j = {
      {"version", "1.0"},
      {"added_tokens", json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", v.vocab},
        {"merges", v.merges}}}};
  return j;
}

// A sentencepiece-style tokenizer.json: characters of the texts, "▁", chains for "▁"-words, byte
// fallback tokens, <unk> <s> </s>; Llama 2's pipeline (Prepend + Replace normalizer, no
// pre-tokenizer, Replace/ByteFallback/Fuse/Strip decoder).
json spm_base() {
  Vocab v;
  for (const char* t : {"<unk>", "<s>", "</s>"}) v.add(t);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    v.add(buf);
  }
  for (char c = ' ' + 1; c < 127; ++c) v.add(std::string(1, c));
  v.add("\xE2\x96\x81");
  for (const char* w : {"▁the", "▁hello", "▁world", "ing", "▁is", "er", "▁a", "▁Hello", "▁▁", "▁▁▁▁", "é", "▁café"})
    v.word(chars_of(w));
  json j = byte_level_base();
  j["model"]["vocab"] = v.vocab;
  j["model"]["merges"] = v.merges;
  j["model"]["byte_fallback"] = true;
  j["model"]["fuse_unk"] = true;
  j["model"]["unk_token"] = "<unk>";
  j["normalizer"] = {{"type", "Sequence"},
                     {"normalizers",
                      {{{"type", "Prepend"}, {"prepend", "▁"}},
                       {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "▁"}}}}};
  j["pre_tokenizer"] = nullptr;
  j["decoder"] = {{"type", "Sequence"},
                  {"decoders",
                   {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                    {{"type", "ByteFallback"}},
                    {{"type", "Fuse"}},
                    {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}};
  j["added_tokens"] = {{{"id", 0},
                        {"content", "<unk>"},
                        {"single_word", false},
                        {"lstrip", false},
                        {"rstrip", false},
                        {"normalized", false},
                        {"special", true}},
                       {{"id", 1},
                        {"content", "<s>"},
                        {"single_word", false},
                        {"lstrip", false},
                        {"rstrip", false},
                        {"normalized", false},
                        {"special", true}},
                       {{"id", 2},
                        {"content", "</s>"},
                        {"single_word", false},
                        {"lstrip", false},
                        {"rstrip", false},
                        {"normalized", false},
                        {"special", true}}};
  return j;
}

const std::vector<std::string> kTexts = {
    "the hello world",
    "Hello world",
    " the  the   the",
    "hello\n\nworld\n",
    "testing is er a",
    "12345 678 9",
    "café CAFÉ Café",
    "cafe\xCC\x81 na\xC3\xAF"
    "ve",
    "한국어 한국 어",
    "🙂🙂 🙂",
    "  leading",
    "trailing  ",
    "tab\there",
    "MiXeD CaSe ǅ ß İ",
    "a,b;c.d!e?f",
    "x--y---z",
    "ﬁ ① Ⅻ ²",
    "<s>hi</s> <s> x",
    "<unk>",
    "",
    "\xE2\x96\x81 already",
    "don't won't I'm",
    "q",
};

// Writes `j` as tokenizer.json (and `config` as tokenizer_config.json, when not null) in a fresh folder.
QString write(QTemporaryDir& dir, const QString& name, const json& j, const json& config = nullptr) {
  const QString folder = dir.filePath(name);
  QDir().mkpath(folder);
  std::ofstream(folder.toStdString() + "/tokenizer.json") << j.dump();
  if (!config.is_null()) std::ofstream(folder.toStdString() + "/tokenizer_config.json") << config.dump();
  return folder + "/tokenizer.json";
}

// Our ids (plain encode, decode) against transformers.js for every text in kTexts.
void compare_with_js(const QString& path, const std::vector<std::string>& texts = kTexts, bool special = true) {
  const auto tok = load_tokenizer(path.toStdString());
  const jsref::Result js = jsref::tokenize(path, texts, /*plain=*/!special, /*decode=*/true);
  QVERIFY2(js.error.isEmpty(), qPrintable(js.error));
  for (std::size_t i = 0; i < texts.size(); ++i) {
    QVERIFY2(js.errors[i].isEmpty(), qPrintable(js.errors[i]));
    const std::vector<int> ours = special ? tok->encode_with_special_tokens(texts[i]) : tok->encode(texts[i]);
    QVERIFY2(ours == js.ids[i],
             qPrintable(escaped(texts[i]) + ": ours " + show(ours) + ", transformers.js " + show(js.ids[i])));
    QVERIFY2(tok->decode(js.ids[i], true) == js.texts[i],
             qPrintable(show(js.ids[i]) + ": ours " + escaped(tok->decode(js.ids[i], true)) + ", transformers.js " +
                        escaped(js.texts[i])));
  }
}

// The pieces a pre-tokenizer makes of `text` (through the tokenizer: one id per piece when every
// piece is a single token), for the cases transformers.js cannot check.
std::vector<std::string> pieces(const Tokenizer& tok, const std::string& text) {
  std::vector<std::string> out;
  for (int id : tok.encode(text)) out.push_back(tok.id_to_piece(id));
  return out;
}

json normalizer(const std::string& type, json extra = json::object()) {
  extra["type"] = type;
  return extra;
}

}  // namespace

class TestTokenizerJson : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  int n_ = 0;
  QString next(const json& j, const json& config = nullptr) { return write(tmp_, QString("t%1").arg(n_++), j, config); }

 private slots:
  void initTestCase() { REQUIRE_TRANSFORMERS_JS(); }

  // --- pre-tokenizers
  void byteLevel_data() {
    QTest::addColumn<bool>("prefix");
    QTest::newRow("add_prefix_space false") << false;
    QTest::newRow("add_prefix_space true") << true;
  }
  void byteLevel() {
    QFETCH(bool, prefix);
    json j = byte_level_base();
    j["pre_tokenizer"]["add_prefix_space"] = prefix;
    compare_with_js(next(j));
  }
  void splitRegexThenByteLevel() {  // Llama 3's shape, with Qwen's \p{N} per digit
    json j = byte_level_base();
    j["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "Split"},
                             {"pattern",
                              {{"Regex",
                                "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
                             {"behavior", "Isolated"},
                             {"invert", false}},
                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    compare_with_js(next(j));
  }
  // Removed drops the delimiters. (transformers.js keeps them for a String pattern — it splits on
  // a capturing group — so it is the reference only for the Regex form; HF's rule is spelled out
  // for the String form.)
  void splitRemoved() {
    json j = byte_level_base();
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", " "}}}, {"behavior", "Removed"}, {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    compare_with_js(next(j));
    const auto regex = load_tokenizer(next(j).toStdString());
    j["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {{"String", " "}};
    const auto literal = load_tokenizer(next(j).toStdString());
    for (const auto& t : kTexts) QCOMPARE(literal->encode(t), regex->encode(t));
    QCOMPARE(pieces(*literal, "the hello  the"), (std::vector<std::string>{"the", "hello", "the"}));
  }
  void splitInvertRemoved() {
    json j = byte_level_base();
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", "\\p{L}+|\\p{N}+"}}}, {"behavior", "Removed"}, {"invert", true}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    compare_with_js(next(j));
  }
  void digits_data() {
    QTest::addColumn<bool>("individual");
    QTest::newRow("individual") << true;
    QTest::newRow("contiguous") << false;
  }
  void digits() {
    QFETCH(bool, individual);
    json j = byte_level_base();
    j["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "Digits"}, {"individual_digits", individual}},
                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    compare_with_js(next(j));
  }
  void punctuationWhitespace_data() {
    QTest::addColumn<QString>("type");
    QTest::newRow("Punctuation") << "Punctuation";
    QTest::newRow("Whitespace") << "Whitespace";
    QTest::newRow("WhitespaceSplit") << "WhitespaceSplit";
  }
  void punctuationWhitespace() {
    QFETCH(QString, type);
    json j = byte_level_base();
    json pre = {{"type", type.toStdString()}};
    if (type == "Punctuation") pre["behavior"] = "Contiguous";  // what transformers.js implements
    j["pre_tokenizer"] = {
        {"type", "Sequence"},
        {"pretokenizers", {pre, {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    // transformers.js's \w and \d are ASCII-only: ASCII texts here.
    compare_with_js(next(j),
                    {"a,b;c.d!e?f", "x--y---z", "hello world  the", "it's 12 o'clock", "tab\there\n", "!!!", ""});
  }
  void metaspace_data() {
    QTest::addColumn<QString>("scheme");
    QTest::newRow("always") << "always";
    QTest::newRow("first") << "first";
  }
  void metaspace() {
    QFETCH(QString, scheme);
    json j = spm_base();
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"},
                          {"replacement", "▁"},
                          {"add_prefix_space", true},
                          {"prepend_scheme", scheme.toStdString()},
                          {"split", false}};
    j["decoder"] = {{"type", "Metaspace"},
                    {"replacement", "▁"},
                    {"add_prefix_space", true},
                    {"prepend_scheme", scheme.toStdString()}};
    compare_with_js(next(j));
  }
  // Metaspace split=true (HF tokenizers >= 0.19; transformers.js never splits): the text is cut
  // before each "▁", MergedWithNext, so "▁hello▁world" cannot merge across the cut.
  void metaspaceSplit() {
    json j = spm_base();
    j["normalizer"] = nullptr;
    j["pre_tokenizer"] = {{"type", "Metaspace"}, {"replacement", "▁"}, {"prepend_scheme", "always"}, {"split", true}};
    j["model"]["vocab"]["o▁w"] = 100000;  // a token across the cut, merged before anything else
    j["model"]["vocab"]["o▁"] = 100001;
    json merges = json::array({"o ▁", "o▁ w"});
    for (const auto& m : j["model"]["merges"]) merges.push_back(m);
    j["model"]["merges"] = merges;
    const auto split = load_tokenizer(next(j).toStdString());
    QCOMPARE(pieces(*split, "hello world"), (std::vector<std::string>{"▁hello", "▁world"}));
    j["pre_tokenizer"]["split"] = false;
    const auto whole = load_tokenizer(next(j).toStdString());
    QVERIFY(pieces(*whole, "hello world") != pieces(*split, "hello world"));
  }
  // HF tokenizers' documentation of SplitDelimiterBehavior, "the-final--countdown" split on "-".
  void splitBehaviors() {
    using bpe::SplitBehavior;
    bpe::Pattern dash;
    dash.literal = "-";
    const std::string s = "the-final--countdown";
    auto run = [&](SplitBehavior b) {
      std::vector<std::string> out;
      bpe::split_by(s, dash.find_all(s), b, false, out);
      return out;
    };
    using V = std::vector<std::string>;
    QCOMPARE(run(SplitBehavior::kRemoved), (V{"the", "final", "countdown"}));
    QCOMPARE(run(SplitBehavior::kIsolated), (V{"the", "-", "final", "-", "-", "countdown"}));
    QCOMPARE(run(SplitBehavior::kMergedWithPrevious), (V{"the-", "final-", "-", "countdown"}));
    QCOMPARE(run(SplitBehavior::kMergedWithNext), (V{"the", "-final", "-", "-countdown"}));
    QCOMPARE(run(SplitBehavior::kContiguous), (V{"the", "-", "final", "--", "countdown"}));
    // Through a tokenizer.json: MergedWithPrevious keeps the delimiter with the word before it.
    json j = byte_level_base();
    j["pre_tokenizer"] = {{"type", "Sequence"},
                          {"pretokenizers",
                           {{{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", "MergedWithPrevious"}},
                            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
    j["model"]["vocab"]["the-"] = 100000;
    j["model"]["merges"].push_back("the -");
    const auto tok = load_tokenizer(next(j).toStdString());
    QCOMPARE(pieces(*tok, "the-the"), (V{"the-", "the"}));
  }

  // --- normalizers
  void normalizers_data() {
    QTest::addColumn<QString>("config");
    const auto row = [](const char* name, const json& n) { QTest::newRow(name) << QString::fromStdString(n.dump()); };
    row("NFC", normalizer("NFC"));
    row("NFD", normalizer("NFD"));
    row("NFKC", normalizer("NFKC"));
    row("NFKD", normalizer("NFKD"));
    row("Lowercase", normalizer("Lowercase"));
    row("Replace String", normalizer("Replace", {{"pattern", {{"String", "the"}}}, {"content", "THE"}}));
    row("Replace Regex", normalizer("Replace", {{"pattern", {{"Regex", "\\s+"}}}, {"content", " "}}));
    row("Prepend", normalizer("Prepend", {{"prepend", "hello"}}));
    row("Strip", normalizer("Strip", {{"strip_left", true}, {"strip_right", true}}));
    row("Strip left", normalizer("Strip", {{"strip_left", true}, {"strip_right", false}}));
    row("Sequence", normalizer("Sequence", {{"normalizers", {normalizer("NFKC"), normalizer("Lowercase")}}}));
  }
  void normalizers() {
    QFETCH(QString, config);
    json j = byte_level_base();
    j["normalizer"] = json::parse(config.toStdString());
    compare_with_js(next(j));
  }

  // --- decoders and the sentencepiece-style model (Llama 2's tokenizer.json shape)
  void sentencepieceStyle() { compare_with_js(next(spm_base())); }
  void decoders_data() {
    QTest::addColumn<QString>("config");
    const auto row = [](const char* name, const json& d) { QTest::newRow(name) << QString::fromStdString(d.dump()); };
    row("Strip 2 1", {{"type", "Sequence"},
                      {"decoders",
                       {{{"type", "Replace"}, {"pattern", {{"String", "▁"}}}, {"content", " "}},
                        {{"type", "ByteFallback"}},
                        {{"type", "Strip"}, {"content", " "}, {"start", 2}, {"stop", 1}}}}});
    row("Fuse only", {{"type", "Sequence"}, {"decoders", {{{"type", "ByteFallback"}}, {{"type", "Fuse"}}}}});
    row("Replace regex",
        {{"type", "Sequence"},
         {"decoders",
          {{{"type", "Replace"}, {"pattern", {{"Regex", "▁+"}}}, {"content", "_"}}, {{"type", "ByteFallback"}}}}});
    row("Metaspace",
        {{"type", "Sequence"},
         {"decoders",
          {{{"type", "ByteFallback"}}, {{"type", "Metaspace"}, {"replacement", "▁"}, {"add_prefix_space", true}}}}});
  }
  void decoders() {
    QFETCH(QString, config);
    json j = spm_base();
    j["decoder"] = json::parse(config.toStdString());
    compare_with_js(next(j));
  }

  // --- model options
  void unknownAndFuse_data() {
    QTest::addColumn<bool>("fuse");
    QTest::newRow("fuse_unk") << true;
    QTest::newRow("no fuse") << false;
  }
  void unknownAndFuse() {
    QFETCH(bool, fuse);
    json j = spm_base();
    j["model"]["byte_fallback"] = false;  // unknown characters -> <unk>
    j["model"]["fuse_unk"] = fuse;
    compare_with_js(next(j), {"한국어 xyz", "ÀÁÂ ÃÄ", "ok", "a€b€€c"});
  }
  void ignoreMerges() {
    json j = byte_level_base();
    j["model"]["ignore_merges"] = true;
    j["model"]["vocab"]["Ġwor"] = 100000;  // reachable only whole, no merge leads to it
    j["model"]["vocab"]["helloĠ"] = 100001;
    compare_with_js(next(j), {" wor", " world", "hello", " worst", "wor"});
    QCOMPARE(load_tokenizer(next(j).toStdString())->encode(" wor"), std::vector<int>{100000});
  }
  void mergesAsPairs() {
    json j = byte_level_base();
    json pairs = json::array();
    for (const auto& m : j["model"]["merges"]) {
      const std::string s = m.get<std::string>();
      pairs.push_back({s.substr(0, s.find(' ')), s.substr(s.find(' ') + 1)});
    }
    const auto strings = load_tokenizer(next(j).toStdString());
    j["model"]["merges"] = pairs;
    const QString path = next(j);
    compare_with_js(path);
    for (const auto& t : kTexts) QCOMPARE(load_tokenizer(path.toStdString())->encode(t), strings->encode(t));
  }
  void endOfWordSuffix() {  // transformers.js implements end_of_word_suffix
    Vocab v;
    for (char c = 'a'; c <= 'z'; ++c) {
      v.add(std::string(1, c));
      v.add(std::string(1, c) + "</w>");
    }
    v.word({"t", "h", "e</w>"});
    v.word({"h", "e", "l", "l", "o</w>"});
    v.word({"i", "n", "g</w>"});
    json j = byte_level_base();
    j["model"]["vocab"] = v.vocab;
    j["model"]["merges"] = v.merges;
    j["model"]["end_of_word_suffix"] = "</w>";
    j["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
    j["decoder"] = nullptr;
    const QString path = next(j);
    const auto tok = load_tokenizer(path.toStdString());
    const jsref::Result js = jsref::tokenize(path, {"the hello singing", "he", "thing"});
    QVERIFY(js.error.isEmpty());
    QCOMPARE(tok->encode("the hello singing"), js.ids[0]);
    QCOMPARE(tok->encode("he"), js.ids[1]);
    QCOMPARE(tok->encode("thing"), js.ids[2]);
  }
  // continuing_subword_prefix (HF BPE: every symbol after a word's first carries the prefix, and a
  // merge "a ##b" makes "a" + "b"); transformers.js ignores the option.
  void continuingSubwordPrefix() {
    Vocab v;
    for (char c = 'a'; c <= 'z'; ++c) {
      v.add(std::string(1, c));
      v.add("##" + std::string(1, c));
    }
    v.add("th");
    v.merges.push_back("t ##h");
    v.add("the");
    v.merges.push_back("th ##e");
    v.add("##in");
    v.merges.push_back("##i ##n");
    json j = byte_level_base();
    j["model"]["vocab"] = v.vocab;
    j["model"]["merges"] = v.merges;
    j["model"]["continuing_subword_prefix"] = "##";
    j["pre_tokenizer"] = {{"type", "WhitespaceSplit"}};
    j["decoder"] = nullptr;
    const auto tok = load_tokenizer(next(j).toStdString());
    QCOMPARE(pieces(*tok, "the thin"), (std::vector<std::string>{"the", "th", "##in"}));
  }

  // --- added tokens
  void addedTokens_data() {
    QTest::addColumn<bool>("lstrip");
    QTest::addColumn<bool>("rstrip");
    QTest::addColumn<bool>("special");
    QTest::newRow("plain special") << false << false << true;
    QTest::newRow("lstrip") << true << false << true;
    QTest::newRow("rstrip") << false << true << true;
    QTest::newRow("both, not special") << true << true << false;
  }
  void addedTokens() {
    QFETCH(bool, lstrip);
    QFETCH(bool, rstrip);
    QFETCH(bool, special);
    json j = byte_level_base();
    j["added_tokens"] = {{{"id", 100000},
                          {"content", "<|end|>"},
                          {"single_word", false},
                          {"lstrip", lstrip},
                          {"rstrip", rstrip},
                          {"normalized", false},
                          {"special", special}},
                         {{"id", 100001},
                          {"content", "<think>"},
                          {"single_word", false},
                          {"lstrip", false},
                          {"rstrip", false},
                          {"normalized", false},
                          {"special", false}}};
    const std::vector<std::string> texts = {"a <|end|> b", "a  <|end|>\n\n b", "<|end|><|end|>", "x<think>y</think>",
                                            "<|end",       "<|end|>"};
    compare_with_js(next(j), texts, /*special=*/true);
    compare_with_js(next(j), texts, /*special=*/false);
  }
  // single_word (HF: matched only when no word character touches it) and normalized (matched in
  // the normalized text); transformers.js implements neither.
  void singleWordAndNormalized() {
    json j = byte_level_base();
    j["normalizer"] = normalizer("Lowercase");
    j["added_tokens"] = {{{"id", 100000},
                          {"content", "cat"},
                          {"single_word", true},
                          {"lstrip", false},
                          {"rstrip", false},
                          {"normalized", false},
                          {"special", false}},
                         {{"id", 100001},
                          {"content", "dog"},
                          {"single_word", false},
                          {"lstrip", false},
                          {"rstrip", false},
                          {"normalized", true},
                          {"special", false}}};
    const auto tok = load_tokenizer(next(j).toStdString());
    auto has = [&](const std::string& text, int id) {
      const auto ids = tok->encode(text);
      return std::find(ids.begin(), ids.end(), id) != ids.end();
    };
    QVERIFY(has("a cat b", 100000));
    QVERIFY(has("cat", 100000));
    QVERIFY(!has("concatenate", 100000));
    QVERIFY(!has("cats", 100000));
    QVERIFY(has("a DOG b", 100001));  // lowercased first, then matched
    QVERIFY(has("hotdogs", 100001));
    QVERIFY(!has("a CAT b", 100000));  // not normalized: matched in the raw text only
  }

  // --- post-processor and tokenizer_config.json
  void templateProcessing() {
    json j = spm_base();
    j["post_processor"] = {
        {"type", "TemplateProcessing"},
        {"single",
         {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
        {"pair", json::array()},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}};
    const QString path = next(j);
    const auto tok = load_tokenizer(path.toStdString());
    QVERIFY(tok->add_bos());
    QCOMPARE(tok->bos_id(), 1);
    const jsref::Result js = jsref::tokenize(path, kTexts, false, false, /*add_special=*/true);
    QVERIFY(js.error.isEmpty());
    for (std::size_t i = 0; i < kTexts.size(); ++i)
      QVERIFY2(tok->encode_with_special_tokens(kTexts[i], tok->add_bos()) == js.ids[i], qPrintable(escaped(kTexts[i])));
    // tokenizer_config.json's add_bos_token overrides the template; bos/eos tokens as AddedToken objects.
    const json config = {
        {"add_bos_token", false}, {"bos_token", {{"__type", "AddedToken"}, {"content", "<s>"}}}, {"eos_token", "</s>"}};
    const auto off = load_tokenizer(next(j, config).toStdString());
    QVERIFY(!off->add_bos());
    QCOMPARE(off->bos_id(), 1);
    QCOMPARE(off->eos_id(), 2);
    QCOMPARE(off->eos_ids(), std::vector<int>{2});
  }
  void realConfigs() {
    const QString llama = testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    const QString qwen = testpaths::modelFile("tokenizers/qwen3/tokenizer.json");
    REQUIRE_MODEL_FILE(llama);
    REQUIRE_MODEL_FILE(qwen);
    const auto l = load_tokenizer(llama.toStdString()), q = load_tokenizer(qwen.toStdString());
    QVERIFY(l->add_bos());                        // TemplateProcessing puts <|begin_of_text|> first
    QVERIFY(l->clean_up_tokenization_spaces());   // tokenizer_config.json says true ...
    QVERIFY(!q->clean_up_tokenization_spaces());  // ... and false
    QCOMPARE(l->bos_id(), 128000);
    QCOMPARE(l->eos_ids(), std::vector<int>{128009});  // tokenizer_config eos_token <|eot_id|>
    QCOMPARE(l->vocab_size(), 128256);
    QVERIFY(!q->add_bos());  // add_bos_token false, bos_token null
    QCOMPARE(q->bos_id(), -1);
    QCOMPARE(q->eos_ids(), std::vector<int>{151645});
    QCOMPARE(q->vocab_size(), 151669);
    QVERIFY(q->is_control(151645));
    QVERIFY(!q->is_control(*q->piece_to_id("<think>")));
  }

  // --- malformed files: the file and the JSON path in every message
  void malformed_data() {
    QTest::addColumn<QString>("mutation");
    QTest::addColumn<QStringList>("needles");
    const auto row = [](const char* name, const char* mutation, QStringList needles) {
      QTest::newRow(name) << mutation << needles;
    };
    row("not json", "garbage", {"not valid JSON"});
    row("model type", "{\"model\": {\"type\": \"WordPiece\"}}", {"model.type", "WordPiece", "only BPE"});
    row("dropout", "{\"model\": {\"dropout\": 0.1}}", {"model.dropout", "dropout"});
    row("vocab not object", "{\"model\": {\"vocab\": [1, 2]}}", {"model.vocab", "expected an object"});
    row("vocab id", "{\"model\": {\"vocab\": {\"a\": -4}}}", {"model.vocab[\"a\"]", "out of range"});
    row("merge unknown", "{\"model\": {\"merges\": [\"a zz\"]}}", {"model.merges", "\"zz\"", "not in the vocabulary"});
    row("merge shape", "{\"model\": {\"merges\": [\"abc\"]}}", {"model.merges[0]", "left right"});
    row("merge type", "{\"model\": {\"merges\": [7]}}", {"model.merges[0]", "number"});
    row("unk", "{\"model\": {\"unk_token\": \"<nope>\"}}", {"model.unk_token", "<nope>"});
    row("normalizer type", "{\"normalizer\": {\"type\": \"BertNormalizer\"}}", {"normalizer.type", "BertNormalizer"});
    row("nested normalizer",
        "{\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"NFC\"}, {\"type\": "
        "\"Precompiled\"}]}}",
        {"normalizer.normalizers[1].type", "Precompiled"});
    row("pre-tokenizer type",
        "{\"pre_tokenizer\": {\"type\": \"Sequence\", \"pretokenizers\": [{\"type\": \"BertPreTokenizer\"}]}}",
        {"pre_tokenizer.pretokenizers[0].type", "BertPreTokenizer"});
    row("bad regex",
        "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"(a\"}, \"behavior\": \"Isolated\"}}",
        {"pre_tokenizer.pattern.Regex", "'(a'", "missing closing parenthesis"});
    row("behavior",
        "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"String\": \"a\"}, \"behavior\": \"Sideways\"}}",
        {"pre_tokenizer.behavior", "Sideways"});
    row("pattern",
        "{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Glob\": \"*\"}, \"behavior\": \"Isolated\"}}",
        {"pre_tokenizer.pattern", "Regex"});
    row("decoder type", "{\"decoder\": {\"type\": \"WordPiece\"}}", {"decoder.type", "WordPiece"});
    row("metaspace char", "{\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"ab\"}}",
        {"pre_tokenizer.replacement", "one character"});
    row("post-processor", "{\"post_processor\": {\"type\": \"BertProcessing\"}}",
        {"post_processor.type", "BertProcessing"});
    row("template",
        "{\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": \"<x>\"}}], "
        "\"special_tokens\": {}}}",
        {"post_processor.special_tokens", "<x>"});
    row("added token", "{\"added_tokens\": [{\"id\": 5, \"content\": \"\"}]}", {"added_tokens[0].content", "empty"});
    row("added type", "{\"added_tokens\": [{\"id\": \"5\", \"content\": \"x\"}]}", {"added_tokens[0].id", "integer"});
    row("bool type", "{\"model\": {\"byte_fallback\": \"yes\"}}", {"model.byte_fallback", "true or false"});
  }
  void malformed() {
    QFETCH(QString, mutation);
    QFETCH(QStringList, needles);
    json j = byte_level_base();
    std::string text;
    if (mutation == "garbage") {
      text = "{not json";
    } else {
      j.merge_patch(json::parse(mutation.toStdString()));
      text = j.dump();
    }
    const QString folder = tmp_.filePath(QString("bad%1").arg(n_++));
    QDir().mkpath(folder);
    const std::string path = folder.toStdString() + "/tokenizer.json";
    std::ofstream(path) << text;
    try {
      (void)load_tokenizer(path);
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      const QString msg = QString::fromUtf8(e.what());
      QVERIFY2(msg.contains(QString::fromStdString(path)), qPrintable(msg));
      for (const QString& n : needles) QVERIFY2(msg.contains(n), qPrintable(msg + "  [missing: " + n + "]"));
    }
  }
  void malformedConfig() {
    const json config = {{"eos_token", 12}};
    const QString path = next(byte_level_base(), config);
    try {
      (void)load_tokenizer(path.toStdString());
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      const QString msg = e.what();
      QVERIFY2(msg.contains("tokenizer_config.json") && msg.contains("eos_token"), qPrintable(msg));
    }
  }
};

QTEST_GUILESS_MAIN(TestTokenizerJson)
#include "test_tokenizer_json.moc"
