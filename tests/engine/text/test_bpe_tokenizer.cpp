// Token-exact checks of every vocabulary against outside references: llama.cpp's test vectors
// (shared/models/vocab/*.inp/.out, made with Hugging Face tokenizers, no special tokens added) for
// the GGUF vocabularies (byte-level BPE and sentencepiece) and for the tokenizer.json files and
// GGUF/HF-folder copies of the Llama 3 and Qwen vocabularies; decode(encode(x)) == x for each.
// Also: special-token handling (plain text vs templated vs with-special), the vocabulary facts
// (BOS/EOS, add_bos, eos_ids) the loaders take from the files, and bad GGUF vocabularies.
#include <QTest>

#include <chrono>

#include "engine/loader/gguf/gguf_bpe_pre.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/text/tokenizer.h"
#include "test_paths.h"
#include "tokenizer_test_utils.h"

using namespace pagedchat;
using toktest::escaped;
using toktest::show;

namespace {
QString vocab(const QString& name) { return testpaths::modelFile("vocab/ggml-vocab-" + name + ".gguf"); }

// ---- a GGUF byte builder (metadata only: vocabulary files have no tensors) ----
template <typename T>
QByteArray le(T v) {
  return QByteArray(reinterpret_cast<const char*>(&v), sizeof v);
}
QByteArray str(const std::string& s) { return le<uint64_t>(s.size()) + QByteArray(s.data(), int(s.size())); }
enum : uint32_t { U32 = 4, I32 = 5, BOOL = 7, STR = 8, ARR = 9 };
struct Gguf {
  std::vector<std::pair<std::string, std::pair<uint32_t, QByteArray>>> kv;
  void set(const std::string& k, uint32_t type, const QByteArray& payload) {
    for (auto& e : kv)
      if (e.first == k) {
        e.second = {type, payload};
        return;
      }
    kv.push_back({k, {type, payload}});
  }
  void erase(const std::string& k) {
    std::erase_if(kv, [&](const auto& e) { return e.first == k; });
  }
  QByteArray bytes() const {
    QByteArray b = QByteArray("GGUF") + le<uint32_t>(3) + le<uint64_t>(0) + le<uint64_t>(kv.size());
    for (const auto& [k, v] : kv) b += str(k) + le(v.first) + v.second;
    return b;
  }
};
QByteArray arrStr(const std::vector<std::string>& v) {
  QByteArray b = le<uint32_t>(STR) + le<uint64_t>(v.size());
  for (const auto& s : v) b += str(s);
  return b;
}
QByteArray arrI32(const std::vector<int32_t>& v) {
  QByteArray b = le<uint32_t>(I32) + le<uint64_t>(v.size());
  for (int32_t x : v) b += le(x);
  return b;
}
// GPT-2's byte -> character map, from its definition (OpenAI encoder.py bytes_to_unicode).
std::string byte_char(int b) {
  auto self = [](int k) { return (k >= 0x21 && k <= 0x7E) || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE; };
  int cp = b;
  if (!self(b)) {
    cp = 256;
    for (int k = 0; k < b; ++k) cp += !self(k);
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
// A vocabulary-only "gpt2" GGUF: the 256 byte characters, "he", "llo", "hello", <|end|> (control),
// <tool> (user-defined); merges h+e, l+l, ll+o, he+llo.
Gguf tinyGpt2(const std::string& pre = "gpt-2") {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_char(b));
  for (const char* t : {"he", "ll", "llo", "hello", "<|end|>", "<tool>"}) tokens.push_back(t);
  std::vector<int32_t> types(tokens.size(), 1);
  types[260] = 3;
  types[261] = 4;
  Gguf g;
  g.set("general.architecture", STR, str("gpt2"));
  g.set("tokenizer.ggml.model", STR, str("gpt2"));
  g.set("tokenizer.ggml.pre", STR, str(pre));
  g.set("tokenizer.ggml.tokens", ARR, arrStr(tokens));
  g.set("tokenizer.ggml.token_type", ARR, arrI32(types));
  g.set("tokenizer.ggml.merges", ARR, arrStr({"h e", "l l", "ll o", "he llo"}));
  g.set("tokenizer.ggml.eos_token_id", U32, le<uint32_t>(260));
  return g;
}
QString writeGguf(QTemporaryDir& dir, const Gguf& g, const QString& name) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (f.open(QIODevice::WriteOnly)) f.write(g.bytes());
  return path;
}
std::vector<int> concat(std::initializer_list<std::vector<int>> parts) {
  std::vector<int> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
}  // namespace

class TestBpeTokenizer : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  int n_ = 0;

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
    QTest::newRow("llama-3.1 tokenizer.json")
        << testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json") << llama_bpe << "bpe";
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
        qWarning("%s: decode(%s) = %s", qPrintable(tokenizer), qPrintable(show(t.ids)),
                 qPrintable(escaped(tok->decode(t.ids))));
      }
    }
    QCOMPARE(failed, 0);
    QCOMPARE(round_trip_failed, 0);
  }

  // A control token typed in plain text is its characters; with special tokens parsed it is the
  // control id; in a templated prompt it is matched only outside the data ranges. Non-special
  // added tokens (Qwen's <think>) are matched everywhere. Reference ids for the plain text:
  // transformers.js with the special tokens removed (tests/js/tokenize.mjs --plain).
  void specialTokens_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("llama-3.1 tokenizer.json") << testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    QTest::newRow("llama3-tiny.gguf") << testpaths::modelFile("arch/llama3-tiny.gguf");
  }
  void specialTokens() {
    QFETCH(QString, path);
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    const std::vector<int> as_text = {27, 91, 68, 354, 851, 91, 29};  // "<|eot_id|>" as characters
    QCOMPARE(tok->encode("<|eot_id|>"), as_text);
    QCOMPARE(tok->encode_with_special_tokens("<|eot_id|>"), std::vector<int>{128009});
    QCOMPARE(tok->encode_with_special_tokens("Hi<|eot_id|>", true), (std::vector<int>{128000, 13347, 128009}));
    QVERIFY(tok->is_control(128009));
    QCOMPARE(tok->decode({13347, 128009}), std::string("Hi"));
    QCOMPARE(tok->decode({13347, 128009}, true), std::string("Hi<|eot_id|>"));
    QCOMPARE(tok->id_to_piece(128009), std::string("<|eot_id|>"));
    QCOMPARE(tok->token_text(13347), std::string("Hi"));
    QCOMPARE(tok->token_text(1917), std::string(" world"));  // "Ġworld"

    TemplatedText t;
    t.append("<|start_header_id|>user<|end_header_id|>\n\n", false);
    t.append("Say <|eot_id|> now", true);
    t.append("<|eot_id|>", false);
    QCOMPARE(t.data, (std::vector<ByteRange>{{42, 60}}));
    QVERIFY(!t.is_template_text(45, 55));
    QVERIFY(t.is_template_text(60, 70));
    const std::vector<int> ids = tok->encode_templated(t);
    QCOMPARE(ids, concat({{128006}, tok->encode("user"), {128007}, tok->encode("\n\nSay <|eot_id|> now"), {128009}}));
    QCOMPARE(std::count(ids.begin(), ids.end(), 128009), 1);
    // A control token cut by a range boundary is not matched.
    TemplatedText cut;
    cut.append("<|eot", false);
    cut.append("_id|>", true);
    QCOMPARE(tok->encode_templated(cut), as_text);
    TemplatedText whole;
    whole.append("<|eot_id|>", false);
    QCOMPARE(tok->encode_templated(whole), std::vector<int>{128009});
  }
  void userDefinedTokens_data() {
    QTest::addColumn<QString>("path");
    QTest::newRow("qwen3 tokenizer.json") << testpaths::modelFile("tokenizers/qwen3/tokenizer.json");
    QTest::newRow("qwen2-tiny.gguf") << testpaths::modelFile("arch/qwen2-tiny.gguf");
  }
  void userDefinedTokens() {
    QFETCH(QString, path);
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    const auto think = tok->piece_to_id("<think>"), im_end = tok->piece_to_id("<|im_end|>");
    QVERIFY(think && im_end);
    QCOMPARE(*think, 151667);
    QVERIFY(!tok->is_control(*think));
    QVERIFY(tok->is_control(*im_end));
    QCOMPARE(tok->encode("<think>"), std::vector<int>{151667});  // matched in plain text too
    TemplatedText t;
    t.append("<|im_start|>assistant\n", false);
    t.append("<think>hmm<|im_end|></think>", true);
    const std::vector<int> ids = tok->encode_templated(t);
    QCOMPARE(ids.front(), 151644);
    QCOMPARE(std::count(ids.begin(), ids.end(), 151667), 1);
    QCOMPARE(std::count(ids.begin(), ids.end(), *im_end), 0);
    QCOMPARE(tok->decode(tok->encode("<think>\nok</think>")), std::string("<think>\nok</think>"));
  }

  // Gemma 4's "gemma4" vocabulary (BPE over SentencePiece-style text, ik_llama.cpp's
  // LLAMA_VOCAB_PRE_TYPE_GEMMA4): spaces become "▁" and are merged across (no split at spaces),
  // only newline runs split the text and a run that is a token stays whole, characters outside
  // the vocabulary fall back to <0xAB> tokens, BOS is always added. The real 262144-token vocabulary
  // is not available here: a hand-made one, each expected id derived from those rules.
  void gemma4Vocabulary() {
    std::vector<std::string> tokens = {"<pad>", "<eos>", "<bos>"};
    std::vector<int32_t> types = {3, 3, 3};
    for (int b = 0; b < 256; ++b) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "<0x%02X>", b);
      tokens.push_back(hex);
      types.push_back(6);  // BYTE
    }
    const int base = int(tokens.size());  // 259
    for (const char* t :
         {"\xE2\x96\x81", "h", "e", "l", "o", "\n", "\n\n", "he", "ll", "llo", "hello", "\xE2\x96\x81hello"}) {
      tokens.push_back(t);
      types.push_back(1);
    }
    Gguf g;
    g.set("general.architecture", STR, str("gemma4"));
    g.set("tokenizer.ggml.model", STR, str("gemma4"));
    g.set("tokenizer.ggml.tokens", ARR, arrStr(tokens));
    g.set("tokenizer.ggml.token_type", ARR, arrI32(types));
    g.set("tokenizer.ggml.merges", ARR, arrStr({"h e", "l l", "ll o", "he llo", "\xE2\x96\x81 hello"}));
    g.set("tokenizer.ggml.bos_token_id", U32, le<uint32_t>(2));
    g.set("tokenizer.ggml.eos_token_id", U32, le<uint32_t>(1));
    g.set("tokenizer.ggml.add_bos_token", BOOL, le<uint8_t>(0));  // ik overrides it to true for gemma4
    const auto tok = load_tokenizer(writeGguf(tmp_, g, "gemma4-vocab.gguf").toStdString());
    const int sp = base, h = base + 1, nl = base + 5, nl2 = base + 6, hello = base + 10, sp_hello = base + 11;
    QVERIFY(tok->add_bos());
    // "hello hello": one word "hello▁hello" -> hello, ▁hello (the last merge joins across the space).
    QCOMPARE(tok->encode("hello hello", true), (std::vector<int>{2, hello, sp_hello}));
    // Newline runs: "\n\n" is a token; "\n\n\n" is not and has no merges: three "\n".
    QCOMPARE(tok->encode("hello\n\nhello"), (std::vector<int>{hello, nl2, hello}));
    QCOMPARE(tok->encode("\n\n\n"), (std::vector<int>{nl, nl, nl}));
    // "é" (C3 A9) is not a token: its bytes. A leading space is "▁" alone (no prefix space added).
    QCOMPARE(tok->encode(" h\xC3\xA9"), (std::vector<int>{sp, h, 3 + 0xC3, 3 + 0xA9}));
    // Decoding reverses all of it: "▁" -> " ", byte tokens -> bytes.
    const std::string text = "hello hello\n\n h\xC3\xA9\n\n\n";
    QCOMPARE(tok->decode(tok->encode(text)), text);
    QCOMPARE(tok->token_text(sp_hello), std::string(" hello"));
  }

  // What the loaders take from the files (llama.cpp b4747 defaults where a key is absent).
  void vocabularyFacts() {
    struct Want {
      const char* file;
      bool add_bos;
      int bos;
      std::vector<int> eos;
      int size;
    };
    const Want wants[] = {
        {"arch/llama3-tiny.gguf", true, 128000, {128009}, 128256},  // no add_bos_token key: llama-bpe default
        {"arch/qwen2-tiny.gguf", false, 151643, {151645}, 151936},
        {"arch/llama3-tiny-hf", true, 128000, {128009}, 128256},
        {"arch/qwen3-tiny-hf", false, -1, {151645}, 151669},
        {"vocab/ggml-vocab-gpt-2.gguf", false, 50256, {50256}, 50257},  // pre gpt-2: no BOS by default
        {"vocab/ggml-vocab-deepseek-coder.gguf", true, 32013, {32014}, 32256},
        {"vocab/ggml-vocab-llama-spm.gguf", true, 1, {2}, 32000},
        {"vocab/ggml-vocab-phi-3.gguf", true, 1, {32000}, 32064},
    };
    for (const Want& w : wants) {
      const QString path = testpaths::modelFile(w.file);
      REQUIRE_MODEL_FILE(path);
      const auto tok = load_tokenizer(path.toStdString());
      QVERIFY2(tok->add_bos() == w.add_bos, w.file);
      QVERIFY2(tok->bos_id() == w.bos, w.file);
      QVERIFY2(tok->eos_ids() == w.eos, w.file);
      QVERIFY2(tok->vocab_size() == w.size, w.file);
    }
    // Qwen's GGUF pads with UNUSED [PAD] tokens: they decode to nothing.
    const auto qwen = load_tokenizer(testpaths::modelFile("arch/qwen2-tiny.gguf").toStdString());
    QCOMPARE(qwen->id_to_piece(151700), std::string("[PAD151700]"));
    QCOMPARE(qwen->decode({151700}), std::string());
    // Phi-3 (llama.cpp: its special tokens strip the whitespace after them, <s> does not).
    const auto phi3 = load_tokenizer(vocab("phi-3").toStdString());
    const std::vector<int> user = phi3->encode_with_special_tokens("<|user|>\nHi");
    QCOMPARE(user, concat({{32010}, phi3->encode("Hi")}));
  }

  // Every pre-tokenizer type llama.cpp b4747 names, and the three later names of the families
  // this engine runs (exaone4, gpt-4o, llama4: ik_llama.cpp 8337e4cd3), loads (its expressions
  // compile) and tokenizes; an unknown one is refused by name.
  void preTypes() {
    const auto& names = gguf_bpe_pre_names();
    QCOMPARE(names.size(), std::size_t(42 + 4));  // + qwen35 (Qwen3.5: letters absorb combining marks)
    for (const std::string& name : names) {
      const QString path = writeGguf(tmp_, tinyGpt2(name), QString("pre%1.gguf").arg(n_++));
      const auto tok = load_tokenizer(path.toStdString());
      const std::vector<int> ids = tok->encode("hello 123 world");
      QVERIFY2(!ids.empty() && tok->decode(ids) == "hello 123 world", name.c_str());
      QVERIFY2(ids.front() == 259, name.c_str());  // "hello" in one token for every type
    }
    const auto llama3 = gguf_bpe_pre("llama-bpe");
    QVERIFY(llama3 && llama3->ignore_merges && llama3->add_bos);
    QVERIFY(gguf_bpe_pre("qwen2")->nfc);
    QVERIFY(gguf_bpe_pre("qwen35") && gguf_bpe_pre("qwen35")->nfc && gguf_bpe_pre("qwen35")->type == "QWEN35");
    QVERIFY(!gguf_bpe_pre("qwen2")->clean_spaces);
    QVERIFY(gguf_bpe_pre("chatglm-bpe")->no_bos);
    const auto tiny = load_tokenizer(writeGguf(tmp_, tinyGpt2("llama-bpe"), "pre-llama.gguf").toStdString());
    QVERIFY(tiny->clean_up_tokenization_spaces());  // llama.cpp: BPE default true ...
    QVERIFY(tiny->add_bos() == false);              // ... (no BOS id in this file, so no BOS to add)
    QVERIFY(!load_tokenizer(writeGguf(tmp_, tinyGpt2("qwen2"), "pre-qwen.gguf").toStdString())
                 ->clean_up_tokenization_spaces());
    QCOMPARE(gguf_bpe_pre("")->type, std::string("DEFAULT"));
    QVERIFY(!gguf_bpe_pre("gpt-5"));
    const QString bad = writeGguf(tmp_, tinyGpt2("gpt-5"), "pre-unknown.gguf");
    try {
      (void)load_tokenizer(bad.toStdString());
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      const QString m = e.what();
      QVERIFY2(m.contains(bad) && m.contains("tokenizer.ggml.pre") && m.contains("'gpt-5'") &&
                   m.contains("does not know") && m.contains("llama-bpe"),
               e.what());
    }
  }

  void tinyGpt2Vocabulary() {
    const auto tok = load_tokenizer(writeGguf(tmp_, tinyGpt2(), "tiny.gguf").toStdString());
    // A sentencepiece vocabulary it is not; as a GGUF "gpt2" vocabulary it is copied as it is.
    try {
      (void)vocab_of(*tok);
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("bpe") && QString(e.what()).contains("not a sentencepiece"), e.what());
    }
    {
      const GgufVocab v = gguf_vocab_of(*tok, tok->vocab_size());
      const BpeVocab& b = std::get<BpeVocab>(v);
      QCOMPARE(int(b.tokens.size()), tok->vocab_size());
      QCOMPARE(b.tokens[259], tok->id_to_piece(259));
      const QString again = tmp_.filePath("tiny-again.gguf");
      write_gguf_vocab(v, again.toStdString());
      const auto back = load_tokenizer(again.toStdString());
      QCOMPARE(back->encode_with_special_tokens("hello<|end|>x<tool>y"),
               tok->encode_with_special_tokens("hello<|end|>x<tool>y"));
    }
    QCOMPARE(tok->kind(), std::string("bpe"));
    QCOMPARE(tok->encode("hello"), std::vector<int>{259});
    QCOMPARE(tok->encode("<|end|>").size(), std::size_t(7));  // control: text in plain encode
    QCOMPARE(tok->encode_with_special_tokens("hello<|end|>"), (std::vector<int>{259, 260}));
    QCOMPARE(tok->encode("x<tool>y"),
             (std::vector<int>{int('x'), 261, int('y')}));  // byte b is token b here; user-defined: always
    QCOMPARE(tok->decode({259, 260, 261}), std::string("hello<tool>"));
    QCOMPARE(tok->eos_ids(), std::vector<int>{260});
    QVERIFY(!tok->add_bos());
  }

  // Broken vocabularies: each error names the file and the key.
  void malformedGguf_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QStringList>("needles");
    QTest::newRow("no merges") << 0 << QStringList{"tokenizer.ggml.merges", "missing"};
    QTest::newRow("merge of unknown token")
        << 1 << QStringList{"tokenizer.ggml.merges", "\"q9\"", "not in the vocabulary"};
    QTest::newRow("merge without space") << 2 << QStringList{"tokenizer.ggml.merges", "merge 1"};
    QTest::newRow("token type 9") << 3 << QStringList{"tokenizer.ggml.token_type", "type 9"};
    QTest::newRow("bos out of range") << 4 << QStringList{"tokenizer.ggml.bos_token_id", "outside the vocabulary"};
    QTest::newRow("eot out of range") << 5 << QStringList{"tokenizer.ggml.eot_token_id", "outside the vocabulary"};
    QTest::newRow("bert") << 6 << QStringList{"tokenizer.ggml.model", "'bert'", "WordPiece", "not supported"};
    QTest::newRow("unknown model") << 7 << QStringList{"tokenizer.ggml.model", "'sentencepiece2'", "unknown"};
    QTest::newRow("empty token") << 8 << QStringList{"tokenizer.ggml.tokens", "token 3", "empty"};
    QTest::newRow("token_type count") << 9 << QStringList{"tokenizer.ggml.token_type", "values for"};
    QTest::newRow("merge result unknown")
        << 10 << QStringList{"tokenizer.ggml.merges", "makes", "not in the vocabulary"};
  }
  void malformedGguf() {
    QFETCH(int, which);
    QFETCH(QStringList, needles);
    Gguf g = tinyGpt2();
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.push_back(byte_char(b));
    for (const char* t : {"he", "ll", "llo", "hello", "<|end|>", "<tool>"}) tokens.push_back(t);
    switch (which) {
      case 0:
        g.erase("tokenizer.ggml.merges");
        break;
      case 1:
        g.set("tokenizer.ggml.merges", ARR, arrStr({"h e", "q9 e"}));
        break;
      case 2:
        g.set("tokenizer.ggml.merges", ARR, arrStr({"h e", "ll"}));
        break;
      case 3: {
        std::vector<int32_t> types(tokens.size(), 1);
        types[5] = 9;
        g.set("tokenizer.ggml.token_type", ARR, arrI32(types));
        break;
      }
      case 4:
        g.set("tokenizer.ggml.bos_token_id", U32, le<uint32_t>(5000));
        break;
      case 5:
        g.set("tokenizer.ggml.eot_token_id", U32, le<uint32_t>(262));
        break;
      case 6:
        g.set("tokenizer.ggml.model", STR, str("bert"));
        break;
      case 7:
        g.set("tokenizer.ggml.model", STR, str("sentencepiece2"));
        break;
      case 8:
        tokens[3] = "";
        g.set("tokenizer.ggml.tokens", ARR, arrStr(tokens));
        break;
      case 9:
        g.set("tokenizer.ggml.token_type", ARR, arrI32({1, 1, 1}));
        break;
      case 10:
        g.set("tokenizer.ggml.merges", ARR, arrStr({"h e", "e h"}));
        break;
    }
    const QString path = writeGguf(tmp_, g, QString("bad%1.gguf").arg(n_++));
    try {
      (void)load_tokenizer(path.toStdString());
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      const QString m = QString::fromUtf8(e.what());
      QVERIFY2(m.contains(path), e.what());
      for (const QString& n : needles) QVERIFY2(m.contains(n), qPrintable(m + "  [missing: " + n + "]"));
    }
  }

  // Encoding 1 MB of mixed text with the Llama 3 vocabulary: seconds at most (llama.cpp's league).
  void speed() {
    const QString path = testpaths::modelFile("tokenizers/llama-3.1/tokenizer.json");
    REQUIRE_MODEL_FILE(path);
    const auto tok = load_tokenizer(path.toStdString());
    std::string text;
    const auto vectors = toktest::read_vectors(vocab("llama-bpe"));
    for (int i = 0; text.size() < 1000000; ++i)
      text += vectors[std::size_t(i) % vectors.size()].text + " " + std::to_string(i * 7919) + "\n";
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int> ids = tok->encode(text);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    qInfo("1 MB -> %zu tokens in %.3f s (%.1f MB/s)", ids.size(), s, double(text.size()) / 1e6 / s);
    QVERIFY(s < 30);  // a generous bound: sanitizer builds run this too
    QCOMPARE(tok->decode(ids), text);
  }
};

QTEST_GUILESS_MAIN(TestBpeTokenizer)
#include "test_bpe_tokenizer.moc"
