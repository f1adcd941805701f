// Differential test against transformers.js (@lenml/tokenizers 3.7.2 through tests/js/tokenize.mjs)
// on the two real tokenizer.json files (Llama 3.1, Qwen3): hand-picked hard cases and a few
// hundred generated texts mixing scripts, emoji, whitespace runs, digits and special-token
// strings. Three comparisons per text: encode_with_special_tokens vs transformers.js's encode
// (which always matches added tokens), plain encode vs transformers.js with the special added
// tokens removed (HF split_special_tokens=True: "<|eot_id|>" typed by a user is text), and
// decode(with_special) vs transformers.js's decode. Invalid UTF-8 is compared as the U+FFFD text
// it is read as. Fails in CI (CI=true) when node or the package is missing.
#include <QTest>

#include <random>

#include "engine/text/tokenizer.h"
#include "engine/text/utf8.h"
#include "js_reference.h"
#include "test_paths.h"
#include "tokenizer_test_utils.h"

using namespace pagedchat;
using toktest::escaped;
using toktest::show;

namespace {

const std::vector<std::string> kHandPicked = {
    "안녕하세요, 세계! 오늘은 날씨가 좋네요.",
    "한국어와 English가 섞인 문장입니다. 2024년 12월 25일",
    "emoji 🙂👍🏽 and flags 🇰🇷🇯🇵 mixed",
    "ZWJ: 👨‍👩‍👧‍👦 🏳️‍🌈 🧑🏿‍💻 👁️‍🗨️ keycap 1️⃣ #️⃣",
    "日本語のテキスト と 中文 汉字 漢字 ㄅㄆㄇ",
    "def main():\n\tif x  ==  1:\n\t\treturn   [i for i in range(10)]\n\n\n    # comment\r\n",
    "    four spaces\n        eight\n\t\t\ttabs\n \n \n",
    "numbers 1 12 123 1234 12345 123456 1234567 3.14159265358979 1,000,000 0x1F 1e-9",
    "99999999999999999999999999999999",
    "it's I'LL we'Re they've she'd 'S 'll 'M 'T 'd'",
    "cafe\xCC\x81 nai\xCC\x88"
    "ve u\xCC\x88"
    "mlaut fac\xCC\xA7"
    "ade \xE1\x84\x92\xE1\x85\xA1\xE1\x86\xAB",  // NFD accents, Hangul jamo
    "café naïve ümlaut façade 한",               // the NFC forms
    "<|eot_id|> <|begin_of_text|>hi<|start_header_id|>user<|end_header_id|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>",
    "<think>\nreasoning here\n</think>\n\nanswer <tool_call>{\"a\":1}</tool_call>",
    "<|endoftext|><|endoftext|>x<|fim_prefix|>",
    "<|eot_id",
    "  leading and trailing  ",
    "\n",
    " ",
    "\t\n\r\n\v\f",
    "Ünïcödé ₀₁₂ ½ ² ﬁ ﬀ Ⅻ ㈱ ①",  // NFKC-sensitive characters (kept: no NFKC here)
    "Привет, мир! Γειά σου κόσμε! مرحبا بالعالم שלום עולם नमस्ते दुनिया",
    "ﷺ ﷽ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝐁𝐨𝐥𝐝 🄰🄱",
    "a\xC2\xA0"
    "b\xE2\x80\x83"
    "c\xE3\x80\x80"
    "d",  // no-break, em and ideographic spaces
    "URL https://example.com/path?q=1&r=two#frag mail@x.org",
    "!!!???...,,,;;;:::---___===+++***&&&%%%$$$###@@@~~~```|||\\\\///",
    "\xF0\x9F\x98\x80\xF0\x9F\x98\x81\xF0\x9F\x98\x82\xF0\x9F\xA4\xA3",
};

// Deterministic mixed texts: pieces from many scripts and classes, joined at random.
std::vector<std::string> generated(int n, unsigned seed) {
  static const std::vector<std::string> pool = {"the",
                                                " quick",
                                                " brown",
                                                "Fox",
                                                "JUMPS",
                                                " over",
                                                "lazy",
                                                "dog",
                                                "'s",
                                                "'LL",
                                                "'re",
                                                " ",
                                                "  ",
                                                "   ",
                                                "\t",
                                                "\n",
                                                "\n\n",
                                                "\r\n",
                                                "0",
                                                "7",
                                                "42",
                                                "123",
                                                "2024",
                                                "3.14",
                                                "-",
                                                ".",
                                                ",",
                                                "!",
                                                "?",
                                                "(",
                                                ")",
                                                "[",
                                                "]",
                                                "{",
                                                "}",
                                                "\"",
                                                "'",
                                                ":",
                                                ";",
                                                "/",
                                                "\\",
                                                "#",
                                                "@",
                                                "$",
                                                "%",
                                                "^",
                                                "&",
                                                "*",
                                                "_",
                                                "=",
                                                "+",
                                                "<",
                                                ">",
                                                "|",
                                                "~",
                                                "`",
                                                "안녕",
                                                "하세요",
                                                "한국어",
                                                "세계",
                                                "日本",
                                                "語",
                                                "中文",
                                                "汉字",
                                                "テキスト",
                                                "ひらがな",
                                                "Привет",
                                                "мир",
                                                "Γειά",
                                                "مرحبا",
                                                "שלום",
                                                "नमस्ते",
                                                "ไทย",
                                                "ᄒ",
                                                "😀",
                                                "👍🏽",
                                                "🇰🇷",
                                                "👨‍👩‍👧",
                                                "❤️",
                                                "✅",
                                                "e\xCC\x81",
                                                "é",
                                                "n\xCC\x83",
                                                "ß",
                                                "ﬁ",
                                                "①",
                                                "\xC2\xA0",
                                                "\xE2\x80\x8B",
                                                "\xE2\x80\x8D",
                                                "<|eot_id|>",
                                                "<|im_end|>",
                                                "<think>",
                                                "</think>",
                                                "<|endoftext|>",
                                                "<s>",
                                                "</s>",
                                                "<|",
                                                "|>",
                                                "<0x0A>",
                                                "Ġ",
                                                "▁",
                                                "Ċ"};
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    const int len = 1 + int(rng() % 24);
    std::string s;
    for (int k = 0; k < len; ++k) s += pool[rng() % pool.size()];
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

class TestTokenizerDiff : public QObject {
  Q_OBJECT
 private slots:
  void againstTransformersJs_data() {
    QTest::addColumn<QString>("json");
    QTest::newRow("llama-3.1") << testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    QTest::newRow("qwen3") << testpaths::modelFile("tokenizers/qwen3/tokenizer.json");
  }
  void againstTransformersJs() {
    QFETCH(QString, json);
    REQUIRE_MODEL_FILE(json);
    REQUIRE_TRANSFORMERS_JS();
    std::vector<std::string> texts = kHandPicked;
    for (auto& t : generated(400, 20250107)) texts.push_back(std::move(t));
    // The llama.cpp test-vector texts too.
    for (const char* v : {"vocab/ggml-vocab-llama-bpe.gguf", "vocab/ggml-vocab-qwen2.gguf"})
      for (auto& x : toktest::read_vectors(testpaths::modelFile(v))) texts.push_back(std::move(x.text));
    const auto tok = load_tokenizer(json.toStdString());
    const jsref::Result special = jsref::tokenize(json, texts, /*plain=*/false, /*decode=*/true);
    QVERIFY2(special.error.isEmpty(), qPrintable(special.error));
    const jsref::Result plain = jsref::tokenize(json, texts, /*plain=*/true);
    QVERIFY2(plain.error.isEmpty(), qPrintable(plain.error));
    int bad = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
      if (!special.errors[i].isEmpty() || !plain.errors[i].isEmpty()) {
        if (++bad <= 10)
          qWarning("transformers.js failed on %s: %s%s", qPrintable(escaped(texts[i])), qPrintable(special.errors[i]),
                   qPrintable(plain.errors[i]));
        continue;
      }
      const std::vector<int> with = tok->encode_with_special_tokens(texts[i]), without = tok->encode(texts[i]);
      if (with != special.ids[i] && ++bad <= 10)
        qWarning("special %s: ours %s, transformers.js %s", qPrintable(escaped(texts[i])), qPrintable(show(with)),
                 qPrintable(show(special.ids[i])));
      if (without != plain.ids[i] && ++bad <= 10)
        qWarning("plain %s: ours %s, transformers.js %s", qPrintable(escaped(texts[i])), qPrintable(show(without)),
                 qPrintable(show(plain.ids[i])));
      const std::string back = tok->decode(special.ids[i], /*with_special=*/true);
      if (back != special.texts[i] && ++bad <= 10)
        qWarning("decode %s: ours %s, transformers.js %s", qPrintable(show(special.ids[i])), qPrintable(escaped(back)),
                 qPrintable(escaped(special.texts[i])));
    }
    qInfo("%zu texts compared three ways", texts.size());
    QCOMPARE(bad, 0);
  }

  // Invalid UTF-8 is read as U+FFFD (one per maximal ill-formed subpart, as TextDecoder does):
  // the ids equal transformers.js's for the repaired text.
  void invalidUtf8_data() { againstTransformersJs_data(); }
  void invalidUtf8() {
    QFETCH(QString, json);
    REQUIRE_MODEL_FILE(json);
    REQUIRE_TRANSFORMERS_JS();
    const std::vector<std::string> raw = {
        "a\xFF"
        "b",
        "\xE2\x82", "x\xF0\x9F\x98", "\xC0\xAF\xED\xA0\x80 ok", "\x80\x80\x80"};
    std::vector<std::string> repaired;
    for (const auto& r : raw) repaired.push_back(utf8::repair(r));
    QCOMPARE(repaired[0], std::string("a\xEF\xBF\xBD"
                                      "b"));
    const auto tok = load_tokenizer(json.toStdString());
    const jsref::Result js = jsref::tokenize(json, repaired, true);
    QVERIFY2(js.error.isEmpty(), qPrintable(js.error));
    for (std::size_t i = 0; i < raw.size(); ++i) QCOMPARE(tok->encode(raw[i]), js.ids[i]);
  }
};

QTEST_GUILESS_MAIN(TestTokenizerDiff)
#include "test_tokenizer_diff.moc"
