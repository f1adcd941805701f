// Token-exact checks of every vocabulary against outside references: llama.cpp's test vectors
// (shared/models/vocab/*.inp/.out, made with Hugging Face tokenizers, no special tokens added) for
// the GGUF vocabularies (byte-level BPE and sentencepiece) and for the tokenizer.json files and
// GGUF/HF-folder copies of the Llama 3 and Qwen vocabularies; decode(encode(x)) == x for each.
// Also: special-token handling (plain text vs templated vs with-special), the vocabulary facts
// (BOS/EOS, add_bos, eos_ids) the loaders take from the files, and bad GGUF vocabularies.
#include <QtTest>

#include <chrono>

#include "engine/loader/gguf/gguf_bpe_pre.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/text/tokenizer.h"
#include "test_paths.h"
#include "tokenizer_test_utils.h"

using namespace pagedchat;
using toktest::escaped;
using toktest::show;

namespace {
QString vocab(const QString& name) { return testpaths::modelFile("vocab/ggml-vocab-" + name + ".gguf"); }
}  // namespace

class TestBpeTokenizer : public QObject {
  Q_OBJECT
 private slots:
  void vectors_data() {
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<QString>("vectors");
    QTest::addColumn<QString>("kind");
    QTest::newRow("gpt-2.gguf") << vocab("gpt-2") << vocab("gpt-2") << "bpe";
    QTest::newRow("deepseek-coder.gguf") << vocab("deepseek-coder") << vocab("deepseek-coder") << "bpe";
    QTest::newRow("llama-spm.gguf") << vocab("llama-spm") << vocab("llama-spm") << "sentencepiece";
    QTest::newRow("phi-3.gguf") << vocab("phi-3") << vocab("phi-3") << "sentencepiece";
    const QString llama_bpe = vocab("llama-bpe"), qwen2 = vocab("qwen2");
    QTest::newRow("llama-3.1 tokenizer.json") << testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json") << llama_bpe << "bpe";
    QTest::newRow("llama3-tiny.gguf") << testpaths::modelFile("arch/llama3-tiny.gguf") << llama_bpe << "bpe";
    QTest::newRow("llama3-tiny-hf/") << testpaths::modelFile("arch/llama3-tiny-hf") << llama_bpe << "bpe";
    QTest::newRow("qwen3 tokenizer.json") << testpaths::modelFile("tokenizers/qwen3/tokenizer.json") << qwen2 << "bpe";
    QTest::newRow("qwen2-tiny.gguf") << testpaths::modelFile("arch/qwen2-tiny.gguf") << qwen2 << "bpe";
    QTest::newRow("qwen3-tiny.gguf") << testpaths::modelFile("arch/qwen3-tiny.gguf") << qwen2 << "bpe";
    QTest::newRow("qwen3-tiny-hf/") << testpaths::modelFile("arch/qwen3-tiny-hf") << qwen2 << "bpe";
  }
  void vectors() {
    QFETCH(QString, tokenizer);
    QFETCH(QString, vectors);
    QFETCH(QString, kind);
    REQUIRE_MODEL_FILE(tokenizer);
    REQUIRE_MODEL_FILE(vectors + ".inp");
    const auto tok = load_tokenizer(tokenizer.toStdString());
    QCOMPARE(QString::fromStdString(tok->kind()), kind);
    const auto tests = toktest::read_vectors(vectors);
    QCOMPARE(tests.size(), std::size_t(46));
    int failed = 0, round_trip_failed = 0;
    for (const auto& t : tests) {
      const std::vector<int> got = tok->encode(t.text);
      if (got != t.ids) {
        ++failed;
        qWarning("%s: %s -> %s, expected %s", qPrintable(tokenizer), qPrintable(escaped(t.text)), qPrintable(show(got)),
                 qPrintable(show(t.ids)));
      }
      if (tok->decode(t.ids) != t.text) {
        ++round_trip_failed;
        qWarning("%s: decode(%s) = %s", qPrintable(tokenizer), qPrintable(show(t.ids)), qPrintable(escaped(tok->decode(t.ids))));
      }
    }
    QCOMPARE(failed, 0);
    QCOMPARE(round_trip_failed, 0);
  }
};

QTEST_GUILESS_MAIN(TestBpeTokenizer)
#include "test_bpe_tokenizer.moc"
