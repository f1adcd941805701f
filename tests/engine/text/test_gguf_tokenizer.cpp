// GGUF vocabularies as sentencepiece models: the tokenizer built from stories260K.gguf's
// tokenizer.ggml.* metadata, and one built from the Llama 2 tokenizer.model's pieces, give the same
// ids as the original sentencepiece models (ASCII, Korean, emoji, whitespace runs, newlines).
#include <QTest>

#include <sentencepiece_processor.h>
#include <QTemporaryDir>

#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/loader/gguf/gguf_writer.h"
#include "engine/text/sentencepiece_tokenizer.h"
#include "sentencepiece_model.pb.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {
// No runs of spaces: tok512.model collapses those (see whitespaceRuns).
const std::vector<std::string> kTexts = {
    "Once upon a time",
    "Lily and Tom went to the park. They saw a big, red ball!",
    "안녕하세요, 세계! 한국어 문장입니다.",
    "emoji 😀🎉 and 🙂 here",
    "line one\nline two\n\nafter a blank line\n",
    "tabs\tand\tcarriage\r\nreturns",
    "日本語のテキスト と 中文",
    "numbers 12345 67.89 and symbols #$%^&*()",
    "café naïve ümlaut façade",
    "a",
    "",
};
const std::vector<std::string> kWhitespaceRuns = {
    "  two leading spaces",
    "trailing spaces   ",
    "many     inner      spaces",
    " \n  \n mixed  \t runs ",
};

QString tok512() { return testpaths::stories260K() + "/tok512.model"; }
QString llama2() { return testpaths::modelFile("llama2-tokenizer/tokenizer.model"); }

std::unique_ptr<sentencepiece::SentencePieceProcessor> loadSp(const QString& path) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  if (!sp->Load(path.toStdString()).ok()) return nullptr;
  return sp;
}
std::vector<int> spEncode(const sentencepiece::SentencePieceProcessor& sp, const std::string& text) {
  std::vector<int> ids;
  sp.Encode(text, &ids);
  ids.insert(ids.begin(), sp.bos_id());
  return ids;
}
QString show(const std::vector<int>& ids) {
  QStringList s;
  for (int id : ids) s << QString::number(id);
  return "[" + s.join(",") + "]";
}
/// Compares `tok` with `sp` on `texts`: ids (with BOS) and the decoded text.
void expectSameIds(const Tokenizer& tok, const sentencepiece::SentencePieceProcessor& sp,
                   const std::vector<std::string>& texts) {
  for (const auto& text : texts) {
    const std::vector<int> want = spEncode(sp, text), got = tok.encode(text, true);
    QVERIFY2(got == want, qPrintable(QString::fromStdString(text) + ": " + show(got) + " vs " + show(want)));
    std::string want_text;
    sp.Decode(want, &want_text);
    // libsentencepiece 0.1.97 drops the "▁" of every piece while its output is still empty, so a
    // text that starts with spaces loses them all ("  two" -> "two"); HF's Llama tokenizers and
    // llama.cpp drop only the dummy-prefix space, so such a text round-trips.
    const std::string got_text = tok.decode(got);
    QVERIFY2(got_text == want_text || (text.rfind(' ', 0) == 0 && got_text == text),
             qPrintable(QString::fromStdString(text) + " decoded as " + QString::fromStdString(got_text)));
  }
}
}  // namespace

class TestGgufTokenizer : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;

 private slots:
  // llama.cpp's converter copied tok512's pieces, scores and types into the GGUF.
  void stories260KVocabulary() {
    const QString path = testpaths::stories260K() + "/stories260K.gguf";
    REQUIRE_MODEL_FILE(path);
    const auto sp = loadSp(tok512());
    QVERIFY(sp);
    const SpmVocab g = read_gguf_vocab(GgufFile::open(path.toStdString()));
    const SpmVocab o = vocab_from_sentencepiece(*sp, tok512().toStdString());
    QCOMPARE(g.pieces, o.pieces);
    QCOMPARE(g.scores, o.scores);
    QCOMPARE(g.types, o.types);
    QCOMPARE(g.unk_id, 0);
    QCOMPARE(g.bos_id, 1);
    QCOMPARE(g.eos_id, 2);
    QCOMPARE(g.pad_id, -1);  // the file says uint32 -1
    QVERIFY(g.add_space_prefix);
    QVERIFY(!g.remove_extra_whitespaces);  // llama.cpp never collapses whitespace ...
    QVERIFY(o.remove_extra_whitespaces);   // ... tok512.model does (sentencepiece's default)
  }

  void stories260KIds() {
    const QString path = testpaths::stories260K() + "/stories260K.gguf";
    REQUIRE_MODEL_FILE(path);
    const auto sp = loadSp(tok512());
    QVERIFY(sp);
    const auto tok = load_gguf_tokenizer(GgufFile::open(path.toStdString()));
    QCOMPARE(tok->vocab_size(), 512);
    QCOMPARE(tok->bos_id(), 1);
    QCOMPARE(tok->eos_id(), 2);
    QCOMPARE(tok->id_to_piece(13), std::string("<0x0A>"));
    expectSameIds(*tok, *sp, kTexts);
  }

  // Whitespace runs: the GGUF says nothing, so they are kept as llama.cpp keeps them; that equals
  // tok512.model with remove_extra_whitespaces switched off, and differs from tok512.model itself.
  void whitespaceRuns() {
    const QString path = testpaths::stories260K() + "/stories260K.gguf";
    REQUIRE_MODEL_FILE(path);
    const auto sp = loadSp(tok512());
    QVERIFY(sp);
    pagedchat::spm::ModelProto m;
    QVERIFY(m.ParseFromString(sp->serialized_model_proto()));
    m.mutable_normalizer_spec()->set_remove_extra_whitespaces(false);
    sentencepiece::SentencePieceProcessor keep;
    QVERIFY(keep.LoadFromSerializedProto(m.SerializeAsString()).ok());
    const auto tok = load_gguf_tokenizer(GgufFile::open(path.toStdString()));
    expectSameIds(*tok, keep, kTexts);
    expectSameIds(*tok, keep, kWhitespaceRuns);
    QVERIFY(tok->encode("many     spaces", true) != spEncode(*sp, "many     spaces"));
  }

  // write_gguf_vocab stores remove_extra_whitespaces, so tok512 survives a round trip exactly.
  void tok512RoundTrip() {
    REQUIRE_MODEL_FILE(tok512());
    const auto sp = loadSp(tok512());
    QVERIFY2(sp, "tok512.model does not load");
    const std::string out = tmp_.filePath("tok512-vocab.gguf").toStdString();
    write_gguf_vocab(vocab_from_sentencepiece(*sp, tok512().toStdString()), out);
    const GgufFile f = GgufFile::open(out);
    QCOMPARE(f.tensors().size(), std::size_t(0));
    const auto tok = load_gguf_tokenizer(f);
    expectSameIds(*tok, *sp, kTexts);
    expectSameIds(*tok, *sp, kWhitespaceRuns);
  }

  // Llama 2's 32000-piece vocabulary: proto builder directly, then through a vocabulary-only GGUF.
  void llama2Vocabulary() {
    REQUIRE_MODEL_FILE(llama2());
    const auto sp = loadSp(llama2());
    QVERIFY(sp);
    const SpmVocab v = vocab_from_sentencepiece(*sp, llama2().toStdString());
    QCOMPARE(v.pieces.size(), std::size_t(32000));
    QVERIFY(!v.remove_extra_whitespaces);
    const auto direct = SentencePieceTokenizer::from_serialized_proto(build_sentencepiece_proto(v), "llama2 pieces");
    expectSameIds(*direct, *sp, kTexts);
    expectSameIds(*direct, *sp, kWhitespaceRuns);

    const std::string out = tmp_.filePath("llama2-vocab.gguf").toStdString();
    write_gguf_vocab(v, out);
    const GgufFile f = GgufFile::open(out);
    const SpmVocab back = read_gguf_vocab(f);
    QCOMPARE(back.pieces, v.pieces);
    QCOMPARE(back.scores, v.scores);
    QCOMPARE(back.types, v.types);
    const auto tok = load_gguf_tokenizer(f);
    qInfo("Llama 2 vocabulary-only GGUF: %zu bytes", f.file_size());
    expectSameIds(*tok, *sp, kTexts);
    expectSameIds(*tok, *sp, kWhitespaceRuns);
    for (int id : {0, 1, 2, 3, 13, 259, 31999}) QCOMPARE(tok->id_to_piece(id), sp->IdToPiece(id));
  }

  // Special tokens are found by their text, whatever it is.
  void renamedSpecialTokens() {
    REQUIRE_MODEL_FILE(tok512());
    const auto sp = loadSp(tok512());
    QVERIFY2(sp, "tok512.model does not load");
    SpmVocab v = vocab_from_sentencepiece(*sp, "tok512");
    v.pieces[1] = "<bos>";
    v.pieces[2] = "<|end|>";
    const auto tok = SentencePieceTokenizer::from_serialized_proto(build_sentencepiece_proto(v), "renamed");
    QCOMPARE(tok->bos_id(), 1);
    QCOMPARE(tok->eos_id(), 2);
    QCOMPARE(tok->encode("Once upon a time", true), spEncode(*sp, "Once upon a time"));
  }
};

QTEST_GUILESS_MAIN(TestGgufTokenizer)
#include "test_gguf_tokenizer.moc"
