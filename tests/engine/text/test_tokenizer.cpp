// The sentencepiece Tokenizer: round trips, known ids, and the incremental detokenizer's UTF-8 safety.
#include <QTest>

#include "engine/text/tokenizer.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {
const std::vector<std::string> kTexts = {
    "Once upon a time",
    "안녕하세요, 세계! 오늘은 날씨가 좋네요.",
    "emoji 🙂👍🏽 and flags 🇰🇷 mixed",
    "line one\nline two\n\n  indented\ttab",
    "mixed 한국어 and English — dashes “quotes” …",
};

bool validUtf8(const std::string& s) {
  return QString::fromUtf8(s.data(), qsizetype(s.size())).toUtf8() == QByteArray(s.data(), qsizetype(s.size())) &&
         !QString::fromUtf8(s.data(), qsizetype(s.size())).contains(QChar::ReplacementCharacter);
}
}  // namespace

class TestTokenizer : public QObject {
  Q_OBJECT
 private slots:
  void roundTrip_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("tok512") << testpaths::stories260K() + "/tok512.model";
    QTest::newRow("llama2") << testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  }
  void roundTrip() {
    QFETCH(QString, model);
    REQUIRE_MODEL_FILE(model);
    const auto tok_ptr = load_tokenizer(model.toStdString());
    const Tokenizer& tok = *tok_ptr;
    for (const auto& text : kTexts) {
      const auto ids = tok.encode(text, true);
      QCOMPARE(ids.front(), tok.bos_id());
      // tok512 was trained with sentencepiece's default normalizer, which folds runs of spaces
      // into one (remove_extra_whitespaces); the Llama 2 model keeps them.
      const bool folds_spaces = model.contains("tok512") && text.find("  ") != std::string::npos;
      if (folds_spaces)
        QCOMPARE(tok.decode(ids), std::string("line one\nline two\n\n indented\ttab"));
      else
        QCOMPARE(tok.decode(ids), text);
      const auto no_bos = tok.encode(text, false);
      QCOMPARE(no_bos.size() + 1, ids.size());
    }
  }

  void knownIds() {
    const QString model = testpaths::stories260K() + "/tok512.model";
    REQUIRE_MODEL_FILE(model);
    const auto tok_ptr = load_tokenizer(model.toStdString());
    const Tokenizer& tok = *tok_ptr;
    QCOMPARE(tok.vocab_size(), 512);
    QCOMPARE(tok.bos_id(), 1);
    QCOMPARE(tok.eos_id(), 2);
    // From golden/once_upon.json (llama2.c's encoding).
    QCOMPARE(tok.encode("Once upon a time", true), (std::vector<int>{1, 403, 407, 261, 378}));
    QVERIFY(tok.add_bos());
    QCOMPARE(tok.kind(), std::string("sentencepiece"));
    QCOMPARE(tok.eos_ids(), std::vector<int>{2});
  }

  // Each streamed delta is valid UTF-8 (never a partial character) and the deltas concatenate to
  // the full decode, for text whose characters span several byte-fallback tokens.
  void incrementalDetokenizer_data() {
    QTest::addColumn<QString>("model");
    QTest::newRow("tok512") << testpaths::stories260K() + "/tok512.model";
    QTest::newRow("llama2") << testpaths::modelFile("llama2-tokenizer/tokenizer.model");
  }
  void incrementalDetokenizer() {
    QFETCH(QString, model);
    REQUIRE_MODEL_FILE(model);
    const auto tok_ptr = load_tokenizer(model.toStdString());
    const Tokenizer& tok = *tok_ptr;
    for (const auto& prompt : {std::string(""), std::string("Hello"), std::string("한국")})
      for (const auto& text : kTexts) {
        const auto prompt_ids = tok.encode(prompt, true);
        const auto all = tok.encode(prompt + text, true);
        // The continuation's ids: everything after the prompt's ids when they are a prefix.
        std::vector<int> out_ids;
        if (std::equal(prompt_ids.begin(), prompt_ids.end(), all.begin()))
          out_ids.assign(all.begin() + prompt_ids.size(), all.end());
        else
          out_ids = tok.encode(text, false);
        IncrementalDetokenizer detok(tok, prompt_ids);
        std::string joined;
        int held = 0;
        for (int id : out_ids) {
          const std::string delta = detok.add_token(id);
          if (delta.empty()) ++held;
          QVERIFY2(validUtf8(delta),
                   qPrintable(QString("invalid UTF-8 delta for %1").arg(QString::fromStdString(text))));
          joined += delta;
        }
        joined += detok.flush();
        std::vector<int> full = prompt_ids;
        full.insert(full.end(), out_ids.begin(), out_ids.end());
        const std::string expected = tok.decode(full).substr(tok.decode(prompt_ids).size());
        QCOMPARE(joined, expected);
        QCOMPARE(detok.text(), expected);
        if (text.find("안녕") != std::string::npos && model.contains("tok512")) QVERIFY(held > 0);
      }
  }

  void missingFile() {
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, load_tokenizer("/nonexistent/tok.model"));
    try {
      (void)load_tokenizer("/nonexistent/tok.model");
    } catch (const std::runtime_error& e) {
      QVERIFY(std::string(e.what()).find("/nonexistent/tok.model") != std::string::npos);
    }
  }

  void notAModel() {
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.model");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a protobuf sentencepiece model at all");
    f.close();
    try {
      (void)load_tokenizer(path.toStdString());
      QFAIL("expected an exception");
    } catch (const std::runtime_error& e) {
      QVERIFY(std::string(e.what()).find(path.toStdString()) != std::string::npos);
    }
  }
};

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
