// IncrementalDetokenizer on byte-level vocabularies (Llama 3.1, Qwen3 tokenizer.json; the Llama 3
// GGUF): a Korean syllable or an emoji whose bytes are spread over several tokens is never shown
// half, no U+FFFD appears mid-stream for a sequence that completes later, a sequence that can no
// longer complete becomes U+FFFD as soon as that is certain, and the deltas plus flush() equal
// decode() of the whole sequence (minus the prompt's text).
#include <QTest>

#include "engine/text/tokenizer.h"
#include "engine/text/utf8.h"
#include "test_paths.h"
#include "tokenizer_test_utils.h"

using namespace pagedchat;

namespace {

const std::vector<std::string> kTexts = {
    "안녕하세요, 세계! 오늘은 날씨가 좋네요.",
    " this is 🦙.cpp",
    "emoji 🙂👍🏽 and flags 🇰🇷 mixed 👨‍👩‍👧‍👦",
    "日本語のテキスト と 中文 ﷽ 𝔘𝔫𝔦",
    "line one\nline two\n\n  indented\ttab",
    "<think>\n생각\n</think>\n답: 🏳️‍🌈",
};

QString tokenizerPath(const QString& name) {
  if (name == "llama-3.1") return testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
  if (name == "qwen3") return testpaths::modelFile("tokenizers/qwen3/tokenizer.json");
  return testpaths::modelFile("arch/llama3-tiny.gguf");
}

}  // namespace

class TestDetokenizer : public QObject {
  Q_OBJECT
 private slots:
  void streaming_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("llama-3.1") << "llama-3.1";
    QTest::newRow("qwen3") << "qwen3";
    QTest::newRow("llama3-tiny.gguf") << "llama3-gguf";
  }
  void streaming() {
    QFETCH(QString, name);
    const QString path = tokenizerPath(name);
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    int partial_tokens = 0, held = 0;
    for (const std::string prompt : {"", "Hello", "한국"}) {
      for (const std::string& text : kTexts) {
        const std::vector<int> prompt_ids = tok->encode(prompt);
        const std::vector<int> out = tok->encode(text);
        IncrementalDetokenizer d(*tok, prompt_ids);
        std::string joined;
        for (int id : out) {
          if (!utf8::is_valid(tok->token_text(id))) ++partial_tokens;
          const std::string delta = d.add_token(id);
          if (delta.empty()) ++held;
          QVERIFY2(utf8::is_valid(delta), qPrintable(toktest::escaped(text)));
          QVERIFY2(delta.find(utf8::kReplacement) == std::string::npos,
                   qPrintable("U+FFFD mid-stream in " + toktest::escaped(text)));
          joined += delta;
        }
        joined += d.flush();
        std::vector<int> all = prompt_ids;
        all.insert(all.end(), out.begin(), out.end());
        QCOMPARE(joined, tok->decode(all).substr(tok->decode(prompt_ids).size()));
        QCOMPARE(joined, text);  // byte-level vocabularies round-trip exactly
        QCOMPARE(d.text(), text);
      }
    }
    // The texts do put characters across tokens (llama.cpp's vectors: "🦙" is 3 Llama 3 tokens).
    QVERIFY(partial_tokens > 10);
    QVERIFY(held > 10);
  }

  void llamaSplitsTheLlama() {
    const QString path = tokenizerPath("llama-3.1");
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    // From llama.cpp's tests/test-tokenizer-0.cpp (Llama 3): " this is 🦙.cpp" -> 420 374 11410 99 247 13 11055.
    const std::vector<int> ids = {420, 374, 11410, 99, 247, 13, 11055};
    QCOMPARE(tok->encode(" this is 🦙.cpp"), ids);
    IncrementalDetokenizer d(*tok, {});
    QCOMPARE(d.add_token(420), std::string(" this"));
    QCOMPARE(d.add_token(374), std::string(" is"));
    QCOMPARE(d.add_token(11410), std::string(" "));  // " \xF0\x9F" : the space now, the emoji's lead bytes held
    QCOMPARE(d.add_token(99), std::string());
    QCOMPARE(d.add_token(247), std::string("🦙"));
    QCOMPARE(d.add_token(13), std::string("."));
    QCOMPARE(d.flush(), std::string());
  }

  // Bytes that cannot become a character: U+FFFD as soon as that is certain, then go on.
  void invalidSequences() {
    const QString path = tokenizerPath("llama-3.1");
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    // GPT-2 byte-level characters for single bytes: 0xF0 is "ð", 0xFF "ÿ", 'a' is "a".
    const auto f0 = tok->piece_to_id("ð"), ff = tok->piece_to_id("ÿ"), a = tok->piece_to_id("a");
    QVERIFY(f0 && ff && a);
    IncrementalDetokenizer d(*tok, {});
    QCOMPARE(d.add_token(*f0), std::string());  // could still become a 4-byte character
    QCOMPARE(d.add_token(*a), std::string("\xEF\xBF\xBD"
                                          "a"));              // now it cannot
    QCOMPARE(d.add_token(*ff), std::string("\xEF\xBF\xBD"));  // never valid: at once
    QCOMPARE(d.add_token(*f0), std::string());
    QCOMPARE(d.flush(), std::string("\xEF\xBF\xBD"));  // incomplete at the end
    QCOMPARE(d.text(), tok->decode({*f0, *a, *ff, *f0}));
    QCOMPARE(tok->decode_bytes({*f0, *a, *ff, *f0}), std::string("\xF0"
                                                                 "a\xFF\xF0"));
  }

  // Control tokens stream as nothing; the text after them keeps its own spaces.
  void controlTokens() {
    const QString path = tokenizerPath("qwen3");
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    const auto im_end = tok->piece_to_id("<|im_end|>");
    QVERIFY(im_end && tok->is_control(*im_end));
    std::vector<int> ids = tok->encode("Hi there");
    ids.push_back(*im_end);
    const std::vector<int> more = tok->encode(" again");
    ids.insert(ids.end(), more.begin(), more.end());
    IncrementalDetokenizer d(*tok, tok->encode("<|im_start|>assistant\n"));
    std::string joined;
    for (int id : ids) joined += d.add_token(id);
    joined += d.flush();
    QCOMPARE(joined, std::string("Hi there again"));
  }
};

QTEST_GUILESS_MAIN(TestDetokenizer)
#include "test_detokenizer.moc"
