// Malformed GGUF files: truncated anywhere, huge counts, bad magic/version, wrong types, tensor
// data out of the file or overlapping, shape/type mismatches, missing keys/tensors, unsupported
// variants, non-UTF-8 text -> std::runtime_error naming the file and the key or tensor, never a
// crash (the ASan/UBSan build runs this too).
#include <QTest>

#include <QFile>
#include <QTemporaryDir>
#include <random>

#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/gguf/gguf_reader.h"
#include "engine/loader/gguf/gguf_tokenizer.h"
#include "engine/loader/model_loader.h"
#include "test_paths.h"

using namespace pagedchat;

namespace {
// ---- A GGUF byte builder independent of engine/loader/gguf/gguf_writer.cpp -------------------------
template <typename T>
QByteArray le(T v) {
  return QByteArray(reinterpret_cast<const char*>(&v), sizeof v);
}
QByteArray str(const std::string& s) { return le<uint64_t>(s.size()) + QByteArray(s.data(), int(s.size())); }
enum : uint32_t { U8 = 0, U32 = 4, I32 = 5, F32 = 6, BOOL = 7, STR = 8, ARR = 9 };

struct Kv {
  std::string key;
  uint32_t type;
  QByteArray payload;  // the value's bytes after the type
};
struct Tensor {
  std::string name;
  std::vector<uint64_t> ne;
  uint32_t type = 0;    // ggml type
  int64_t offset = -1;  // -1: computed
  uint64_t bytes = 0;   // data size; computed for F32
};
struct Gguf {
  QByteArray magic = "GGUF";
  uint32_t version = 3;
  std::vector<Kv> kv;
  std::vector<Tensor> tensors;
  int64_t n_tensors = -1, n_kv = -1;  // -1: the real counts

  Kv* find(const std::string& k) {
    for (auto& e : kv)
      if (e.key == k) return &e;
    return nullptr;
  }
  void set(const std::string& k, uint32_t type, const QByteArray& payload) {
    if (Kv* e = find(k))
      *e = {k, type, payload};
    else
      kv.push_back({k, type, payload});
  }
  void erase(const std::string& k) {
    std::erase_if(kv, [&](const Kv& e) { return e.key == k; });
  }
  Tensor* tensor(const std::string& n) {
    for (auto& t : tensors)
      if (t.name == n) return &t;
    return nullptr;
  }
  QByteArray bytes() const {
    QByteArray b = magic + le(version) + le<uint64_t>(n_tensors < 0 ? tensors.size() : n_tensors) +
                   le<uint64_t>(n_kv < 0 ? kv.size() : n_kv);
    for (const auto& e : kv) b += str(e.key) + le(e.type) + e.payload;
    uint64_t off = 0;
    std::vector<uint64_t> offs;
    for (const auto& t : tensors) {
      b += str(t.name) + le<uint32_t>(t.ne.size());
      for (uint64_t n : t.ne) b += le(n);
      offs.push_back(t.offset >= 0 ? uint64_t(t.offset) : off);
      b += le(t.type) + le(offs.back());
      off = (offs.back() + t.bytes + 31) / 32 * 32;
    }
    b.append(QByteArray((32 - b.size() % 32) % 32, '\0'));
    const qsizetype data = b.size();
    for (std::size_t i = 0; i < tensors.size(); ++i) {  // data for tensors at computed offsets
      const qsizetype end = data + qsizetype(offs[i] + tensors[i].bytes);
      if (tensors[i].offset < 0 && tensors[i].bytes < (1u << 28) && end > b.size())
        b.append(QByteArray(end - b.size(), '\0'));
    }
    return b;
  }
};
QByteArray arrStr(const std::vector<std::string>& v) {
  QByteArray b = le<uint32_t>(STR) + le<uint64_t>(v.size());
  for (const auto& s : v) b += str(s);
  return b;
}
template <typename T>
QByteArray arr(uint32_t type, const std::vector<T>& v) {
  QByteArray b = le<uint32_t>(type) + le<uint64_t>(v.size());
  for (T x : v) b += le(x);
  return b;
}

// A valid tiny Llama: dim 32, hidden 64, 1 layer, 2 heads (head size 16), 1 KV head; vocab 263
// (<unk> <s> </s>, 256 byte tokens, 4 pieces); all weights F32 zeros.
Gguf tinyLlama() {
  Gguf g;
  g.set("general.architecture", STR, str("llama"));
  g.set("llama.context_length", U32, le<uint32_t>(64));
  g.set("llama.embedding_length", U32, le<uint32_t>(32));
  g.set("llama.block_count", U32, le<uint32_t>(1));
  g.set("llama.feed_forward_length", U32, le<uint32_t>(64));
  g.set("llama.attention.head_count", U32, le<uint32_t>(2));
  g.set("llama.attention.head_count_kv", U32, le<uint32_t>(1));
  g.set("llama.rope.dimension_count", U32, le<uint32_t>(16));
  g.set("llama.attention.layer_norm_rms_epsilon", F32, le<float>(1e-5f));
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int i = 0; i < 256; ++i) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", i);
    tokens.push_back(buf);
    types.push_back(6);
  }
  for (const char* p : {"\xE2\x96\x81", "a", "b",
                        "\xE2\x96\x81"
                        "a"})
    tokens.push_back(p), types.push_back(1);
  g.set("tokenizer.ggml.model", STR, str("llama"));
  g.set("tokenizer.ggml.tokens", ARR, arrStr(tokens));
  g.set("tokenizer.ggml.scores", ARR, arr<float>(F32, std::vector<float>(tokens.size(), 0.0f)));
  g.set("tokenizer.ggml.token_type", ARR, arr<int32_t>(I32, types));
  g.set("tokenizer.ggml.bos_token_id", U32, le<uint32_t>(1));
  g.set("tokenizer.ggml.eos_token_id", U32, le<uint32_t>(2));
  g.set("tokenizer.ggml.unknown_token_id", U32, le<uint32_t>(0));
  auto add = [&](const std::string& n, std::vector<uint64_t> ne) {
    uint64_t count = 1;
    for (uint64_t x : ne) count *= x;
    g.tensors.push_back({n, ne, 0, -1, count * 4});
  };
  add("token_embd.weight", {32, tokens.size()});
  add("blk.0.attn_norm.weight", {32});
  add("blk.0.attn_q.weight", {32, 32});
  add("blk.0.attn_k.weight", {32, 16});
  add("blk.0.attn_v.weight", {32, 16});
  add("blk.0.attn_output.weight", {32, 32});
  add("blk.0.ffn_norm.weight", {32});
  add("blk.0.ffn_gate.weight", {32, 64});
  add("blk.0.ffn_down.weight", {64, 32});
  add("blk.0.ffn_up.weight", {32, 64});
  add("output_norm.weight", {32});
  return g;
}

/// Loads `bytes` both ways (from memory: parse + model + vocabulary; from a file: load_gguf);
/// returns "" when both throw std::runtime_error naming the file and every needle, else what went wrong.
QString expectRejected(const QByteArray& bytes, const QString& path, const QStringList& needles) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return "cannot write " + path;
  f.close();
  const std::string name = path.toStdString();
  auto check = [&](auto&& fn, const char* how) -> QString {
    try {
      fn();
    } catch (const std::runtime_error& e) {
      const QString msg = QString::fromUtf8(e.what());
      if (!msg.contains(path)) return QString(how) + ": message '" + msg + "' does not name the file";
      for (const auto& n : needles)
        if (!msg.contains(n)) return QString(how) + ": message '" + msg + "' lacks '" + n + "'";
      return {};
    } catch (const std::exception& e) {
      return QString(how) + ": not a runtime_error: " + e.what();
    }
    return QString(how) + ": no exception";
  };
  QString err = check([&] { load_gguf(name); }, "load_gguf");
  if (err.isEmpty())
    err = check(
        [&] {
          GgufFile g = GgufFile::parse(reinterpret_cast<const uint8_t*>(bytes.constData()), bytes.size(), name);
          load_gguf_model(g);
          build_sentencepiece_proto(read_gguf_vocab(g));
          read_gguf_chat_template(g);
        },
        "parse");
  return err;
}
}  // namespace

class TestGgufParser : public QObject {
  Q_OBJECT
  QTemporaryDir tmp_;
  int n_ = 0;
  QString next() { return tmp_.filePath(QString("f%1.gguf").arg(n_++)); }

 private slots:
  void validTinyModel() {
    const QString path = next();
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(tinyLlama().bytes());
    f.close();
    const GgufModel m = load_gguf(path.toStdString());
    QCOMPARE(m.model.config.vocab_size, 263);
    QCOMPARE(m.model.config.head_dim, 16);
    QVERIFY(m.model.config.shared_classifier);
    QCOMPARE(m.tokenizer->encode("ab", true), (std::vector<int>{1, 262, 261}));  // ▁a b
  }

  void utf8Validator() {
    for (const char* ok :
         {"", "abc", "\xED\x95\x9C", "\xF0\x9F\x98\x80", "\xC3\xA9", "\xE2\x96\x81\x61", "\xF4\x8F\xBF\xBF"})
      QVERIFY2(is_valid_utf8(ok), ok);
    for (const char* bad : {"\xC0\x80", "\xE0\x80\x80", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xFF", "\xE2\x96", "a\x80",
                            "\xC3", "\xF0\x9F\x98"})
      QVERIFY2(!is_valid_utf8(bad), bad);
  }

  void nestedArrays() {
    Gguf g = tinyLlama();
    QByteArray inner = arrStr({"x", "y"});
    g.set("test.nested", ARR, le<uint32_t>(ARR) + le<uint64_t>(2) + inner + arr<uint8_t>(U8, {7}));
    const QByteArray b = g.bytes();
    const GgufFile f = GgufFile::parse(reinterpret_cast<const uint8_t*>(b.constData()), b.size(), "nested");
    const GgufValue* v = f.find("test.nested");
    QVERIFY(v && v->is_array() && v->elem_type == GgufType::kArray && v->arrays.size() == 2);
    QCOMPARE(v->arrays[0].strings, (std::vector<std::string>{"x", "y"}));
    QCOMPARE(v->arrays[1].uints, (std::vector<uint64_t>{7}));
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, f.get_string("test.nested"));
  }

  void malformed_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QStringList>("needles");
    auto row = [](const char* name, auto&& mutate, QStringList needles) {
      Gguf g = tinyLlama();
      mutate(g);
      QTest::newRow(name) << g.bytes() << needles;
    };
    auto patch = [](const char* name, qsizetype at, QByteArray with, QStringList needles) {
      QByteArray b = tinyLlama().bytes();
      b.replace(at, with.size(), with);
      QTest::newRow(name) << b << needles;
    };
    row("bad magic", [](Gguf& g) { g.magic = "GGML"; }, {"magic"});
    row("version 1", [](Gguf& g) { g.version = 1; }, {"version 1"});
    row("version 4", [](Gguf& g) { g.version = 4; }, {"version 4"});
    row("big-endian", [](Gguf& g) { g.version = 0x03000000; }, {"big-endian"});
    row("huge tensor count", [](Gguf& g) { g.n_tensors = int64_t(1) << 40; }, {"tensor count"});
    row("huge kv count", [](Gguf& g) { g.n_kv = int64_t(1) << 40; }, {"metadata count"});
    row("more kv than present", [](Gguf& g) { g.n_kv = int64_t(g.kv.size()) + 1; }, {});
    patch("huge key length", 24, le<uint64_t>(uint64_t(1) << 62), {"length"});
    row("huge array", [](Gguf& g) { g.set("x.arr", ARR, le<uint32_t>(U32) + le<uint64_t>(uint64_t(1) << 60)); },
        {"x.arr", "array"});
    row("huge string", [](Gguf& g) { g.set("x.str", STR, le<uint64_t>(uint64_t(1) << 50)); }, {"x.str", "length"});
    row("unknown value type", [](Gguf& g) { g.set("x.t", 13, le<uint32_t>(0)); }, {"x.t", "unknown value type 13"});
    row("bool 2", [](Gguf& g) { g.set("x.b", BOOL, le<uint8_t>(2)); }, {"x.b", "bool"});
    row("deep nesting",
        [](Gguf& g) {
          QByteArray v = arr<uint8_t>(U8, {1});
          for (int i = 0; i < 9; ++i) v = le<uint32_t>(ARR) + le<uint64_t>(1) + v;
          g.set("x.deep", ARR, v);
        },
        {"x.deep", "nested"});
    row("non-UTF-8 key", [](Gguf& g) { g.set("bad\xFF\xFEkey", U32, le<uint32_t>(1)); }, {"UTF-8"});
    row("empty key", [](Gguf& g) { g.set("", U32, le<uint32_t>(1)); }, {"empty key"});
    row("duplicate key", [](Gguf& g) { g.kv.push_back(g.kv[1]); }, {"llama.context_length", "twice"});
    row("alignment string", [](Gguf& g) { g.set("general.alignment", STR, str("32")); },
        {"general.alignment", "uint32"});
    row("alignment 48", [](Gguf& g) { g.set("general.alignment", U32, le<uint32_t>(48)); },
        {"general.alignment", "power of two"});
    row("5 dims", [](Gguf& g) { g.tensors[0].ne = {32, 263, 1, 1, 1}; }, {"token_embd.weight", "dimensions"});
    row("0 dims", [](Gguf& g) { g.tensors[1].ne = {}; }, {"blk.0.attn_norm.weight", "dimensions"});
    row("shape overflow",
        [](Gguf& g) {
          g.tensors[1].ne = {uint64_t(1) << 40, uint64_t(1) << 40};
        },
        {"blk.0.attn_norm.weight", "overflow"});
    row("unknown ggml type", [](Gguf& g) { g.tensors[2].type = 99; }, {"blk.0.attn_q.weight", "unknown ggml type 99"});
    row("row not whole blocks",
        [](Gguf& g) {
          g.tensors[1].type = 8;
          g.tensors[1].ne = {8};
        },
        {"blk.0.attn_norm.weight", "block size"});
    row("data outside file", [](Gguf& g) { g.tensors.back().offset = 1 << 20; }, {"output_norm.weight", "outside"});
    row("data huge",
        [](Gguf& g) {
          g.tensors.back().ne = {uint64_t(1) << 40};
          g.tensors.back().bytes = uint64_t(1) << 42;
        },
        {"output_norm.weight", "outside"});
    row("overlap", [](Gguf& g) { g.tensors[3].offset = int64_t(g.tensors[0].bytes / 32 * 32 - 32); }, {"overlap"});
    row("misaligned", [](Gguf& g) { g.tensors[1].offset = int64_t(g.tensors[0].bytes) + 4; },
        {"blk.0.attn_norm.weight", "alignment"});
    row("duplicate tensor", [](Gguf& g) { g.tensors[2].name = g.tensors[1].name; },
        {"blk.0.attn_norm.weight", "twice"});
    row("non-UTF-8 tensor name", [](Gguf& g) { g.tensors[2].name = "blk.\xC0\x80"; }, {"UTF-8"});
    row("arch falcon", [](Gguf& g) { g.set("general.architecture", STR, str("falcon")); }, {"falcon", "qwen2"});
    row("no arch", [](Gguf& g) { g.erase("general.architecture"); }, {"general.architecture"});
    row("dim as string", [](Gguf& g) { g.set("llama.embedding_length", STR, str("32")); },
        {"llama.embedding_length", "string"});
    row("no block_count", [](Gguf& g) { g.erase("llama.block_count"); }, {"llama.block_count", "missing"});
    row("no context_length", [](Gguf& g) { g.erase("llama.context_length"); }, {"llama.context_length"});
    row("heads 0", [](Gguf& g) { g.set("llama.attention.head_count", U32, le<uint32_t>(0)); },
        {"llama.attention.head_count"});
    row("kv heads 3", [](Gguf& g) { g.set("llama.attention.head_count_kv", U32, le<uint32_t>(3)); }, {"head_count_kv"});
    // Partial rotary (rope.dimension_count < head size) is served; dims that cannot rotate are not.
    row("rope dims 17", [](Gguf& g) { g.set("llama.rope.dimension_count", U32, le<uint32_t>(17)); },
        {"llama.rope.dimension_count", "16"});
    row("rope dims 32", [](Gguf& g) { g.set("llama.rope.dimension_count", U32, le<uint32_t>(32)); },
        {"llama.rope.dimension_count", "16"});
    row("rope scaling dynamic",
        [](Gguf& g) {
          g.set("llama.rope.scaling.type", STR, str("dynamic"));
          g.set("llama.rope.scaling.factor", F32, le<float>(2.0f));
        },
        {"RoPE scaling", "dynamic", "llama.rope.scaling.type"});
    row("rope scaling yarn without its original context",
        [](Gguf& g) {
          g.set("llama.rope.scaling.type", STR, str("yarn"));
          g.set("llama.rope.scaling.factor", F32, le<float>(2.0f));
        },
        {"llama.rope.scaling.original_context_length"});
    row("rope scaling yarn log multiplier",
        [](Gguf& g) {
          g.set("llama.rope.scaling.type", STR, str("yarn"));
          g.set("llama.rope.scaling.factor", F32, le<float>(2.0f));
          g.set("llama.rope.scaling.original_context_length", U32, le<uint32_t>(64));
          g.set("llama.rope.scaling.yarn_log_multiplier", F32, le<float>(0.1f));
        },
        {"llama.rope.scaling.yarn_log_multiplier"});
    row("rope scaling yarn ext factor",
        [](Gguf& g) {
          g.set("llama.rope.scaling.type", STR, str("yarn"));
          g.set("llama.rope.scaling.factor", F32, le<float>(4.0f));
          g.set("llama.rope.scaling.original_context_length", U32, le<uint32_t>(64));
          g.set("llama.rope.scaling.yarn_ext_factor", F32, le<float>(0.5f));
        },
        {"llama.rope.scaling.yarn_ext_factor"});
    row("rope scaling yarn below 1",
        [](Gguf& g) {
          g.set("llama.rope.scaling.type", STR, str("yarn"));
          g.set("llama.rope.scaling.factor", F32, le<float>(0.5f));
        },
        {"YaRN factor", "llama.rope.scaling.factor"});
    row("rope scaling longrope", [](Gguf& g) { g.set("llama.rope.scaling.type", STR, str("longrope")); }, {"longrope"});
    row("rope attn_factor", [](Gguf& g) { g.set("llama.rope.scaling.attn_factor", F32, le<float>(0.5f)); },
        {"llama.rope.scaling.attn_factor"});
    row("sliding window", [](Gguf& g) { g.set("llama.attention.sliding_window", U32, le<uint32_t>(16)); },
        {"llama.attention.sliding_window", "sliding-window"});
    row("value_length", [](Gguf& g) { g.set("llama.attention.value_length", U32, le<uint32_t>(8)); },
        {"llama.attention.value_length", "8"});
    row("key_length odd", [](Gguf& g) { g.set("llama.attention.key_length", U32, le<uint32_t>(15)); }, {"odd"});
    row("experts", [](Gguf& g) { g.set("llama.expert_count", U32, le<uint32_t>(8)); }, {"expert"});
    row("missing tensor", [](Gguf& g) { g.tensors.erase(g.tensors.begin() + 9); }, {"blk.0.ffn_up.weight", "missing"});
    row("wrong shape",
        [](Gguf& g) {
          g.tensor("blk.0.attn_q.weight")->ne = {32, 16};
          g.tensor("blk.0.attn_q.weight")->bytes = 2048;
        },
        {"blk.0.attn_q.weight", "shape"});
    // IQ3_S (type 21): a real ggml type without kernels here; 256 values per 110-byte block.
    row("unsupported type",
        [](Gguf& g) {
          Tensor* t = g.tensor("blk.0.attn_q.weight");
          t->type = 21;
          t->bytes = 4 * 110;
        },
        {"blk.0.attn_q.weight", "iq3_s"});
    row("ffn bias tensor",
        [](Gguf& g) {
          g.tensors.push_back({"blk.0.ffn_up.bias", {64}, 0, -1, 256});
        },
        {"blk.0.ffn_up.bias", "bias", "'llama'"});
    row("unknown tensor",
        [](Gguf& g) {
          g.tensors.push_back({"blk.0.attn_q_norm.weight", {16}, 0, -1, 64});
        },
        {"blk.0.attn_q_norm.weight", "unknown tensor"});
    row("q bias wrong shape",
        [](Gguf& g) {
          g.tensors.push_back({"blk.0.attn_q.bias", {16}, 0, -1, 64});
        },
        {"blk.0.attn_q.bias", "shape"});
    row("rope_freqs wrong shape",
        [](Gguf& g) {
          g.tensors.push_back({"rope_freqs.weight", {4}, 0, -1, 16});
        },
        {"rope_freqs.weight", "shape"});
    row("rope_freqs zeros",
        [](Gguf& g) {
          g.tensors.push_back({"rope_freqs.weight", {8}, 0, -1, 32});
        },
        {"rope_freqs.weight", "positive"});
    auto rename = [](Gguf& g, const std::string& arch) {
      g.set("general.architecture", STR, str(arch));
      for (auto& e : g.kv)
        if (e.key.rfind("llama.", 0) == 0) e.key = arch + e.key.substr(5);
    };
    row("qwen2 without biases", [rename](Gguf& g) { rename(g, "qwen2"); }, {"blk.0.attn_q.bias", "missing"});
    row("qwen3 without q/k norms", [rename](Gguf& g) { rename(g, "qwen3"); }, {"blk.0.attn_q_norm.weight", "missing"});
    row("qwen2 rope_freqs",
        [rename](Gguf& g) {
          rename(g, "qwen2");
          for (const char* b : {"blk.0.attn_q.bias", "blk.0.attn_k.bias", "blk.0.attn_v.bias"})
            g.tensors.push_back({b, {std::string(b).find("_q.") != std::string::npos ? 32u : 16u}, 0, -1, 0});
          for (auto& t : g.tensors)
            if (t.name.size() > 5 && t.name.compare(t.name.size() - 5, 5, ".bias") == 0) t.bytes = t.ne[0] * 4;
          g.tensors.push_back({"rope_freqs.weight", {8}, 0, -1, 32});
        },
        {"rope_freqs.weight", "'qwen2'"});
    row("qwen2 experts",
        [rename](Gguf& g) {
          rename(g, "qwen2");
          g.set("qwen2.expert_count", U32, le<uint32_t>(4));
        },
        {"qwen2.expert_count", "mixture-of-experts"});
    row("tokenizer gpt2", [](Gguf& g) { g.set("tokenizer.ggml.model", STR, str("gpt2")); }, {"gpt2"});
    row("no tokenizer", [](Gguf& g) { g.erase("tokenizer.ggml.model"); }, {"tokenizer.ggml.model"});
    row("tokens as ints",
        [](Gguf& g) {
          g.set("tokenizer.ggml.tokens", ARR, arr<int32_t>(I32, {1, 2}));
        },
        {"tokenizer.ggml.tokens"});
    row("scores short", [](Gguf& g) { g.set("tokenizer.ggml.scores", ARR, arr<float>(F32, {0.0f})); },
        {"tokenizer.ggml.scores"});
    row("token type 9",
        [](Gguf& g) {
          std::vector<int32_t> t(263, 1);
          t[5] = 9;
          g.set("tokenizer.ggml.token_type", ARR, arr<int32_t>(I32, t));
        },
        {"type 9"});
    row("bos out of vocab", [](Gguf& g) { g.set("tokenizer.ggml.bos_token_id", U32, le<uint32_t>(9999)); },
        {"tokenizer.ggml.bos_token_id", "9999"});
    row("token not UTF-8",
        [](Gguf& g) {
          std::vector<std::string> t = {"<unk>", "<s>", "</s>", "\xFF"};
          g.set("tokenizer.ggml.tokens", ARR, arrStr(t));
        },
        {"token 3", "UTF-8"});
    row("chat template not UTF-8", [](Gguf& g) { g.set("tokenizer.chat_template", STR, str("{{ \xFF }}")); },
        {"tokenizer.chat_template", "UTF-8"});
  }
  void malformed() {
    QFETCH(QByteArray, bytes);
    QFETCH(QStringList, needles);
    const QString err = expectRejected(bytes, next(), needles);
    QVERIFY2(err.isEmpty(), qPrintable(err));
  }

  // Vocabulary and weights of different sizes: refused when they meet.
  void vocabularyMismatch() {
    Gguf g = tinyLlama();
    g.tensors[0].ne = {32, 300};
    g.tensors[0].bytes = 32 * 300 * 4;
    const QString path = next();
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(g.bytes());
    f.close();
    EngineConfig c;
    c.model = path.toStdString();
    try {
      load_model(c);
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QVERIFY2(QString(e.what()).contains("263") && QString(e.what()).contains("300"), e.what());
    }
  }

  // The real file cut at every section boundary (and next to it) and at random lengths.
  void truncatedRealFile() {
    const QString path = testpaths::stories260K() + "/stories260K.gguf";
    REQUIRE_MODEL_FILE(path);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray full = f.readAll();
    const GgufFile whole = GgufFile::parse(reinterpret_cast<const uint8_t*>(full.constData()), full.size(), "whole");
    // Section boundaries, found by walking the file: header fields, each key-value pair (after its
    // type and after its value), inside string array elements, each tensor info, each tensor's data
    // (start and middle).
    std::vector<qsizetype> cuts = {0, 3, 4, 8, 16, 24};
    qsizetype pos = 24;
    auto u64 = [&](qsizetype at) {
      uint64_t v;
      std::memcpy(&v, full.constData() + at, 8);
      return v;
    };
    auto u32 = [&](qsizetype at) {
      uint32_t v;
      std::memcpy(&v, full.constData() + at, 4);
      return v;
    };
    for (std::size_t i = 0; i < whole.metadata().size(); ++i) {
      pos += 8 + qsizetype(u64(pos));  // key
      const uint32_t type = u32(pos);
      pos += 4;
      cuts.push_back(pos);
      auto skip_scalar = [&](uint32_t t) {
        static const int sizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
        pos += t == STR ? 8 + qsizetype(u64(pos)) : sizes[t];
      };
      if (type == ARR) {
        const uint32_t et = u32(pos);
        const uint64_t n = u64(pos + 4);
        pos += 12;
        for (uint64_t k = 0; k < n; ++k) {
          // Inside a string element's bytes (after its length): the length then points past the end.
          if (et == STR && (k < 3 || k + 3 >= n)) cuts.push_back(pos + 8 + qsizetype(u64(pos)) / 2);
          skip_scalar(et);
        }
      } else {
        skip_scalar(type);
      }
      cuts.push_back(pos);
    }
    for (const auto& t : whole.tensors()) {
      pos += 8 + qsizetype(t.name.size()) + 4 + 8 * qsizetype(t.ne.size()) + 4 + 8;
      cuts.push_back(pos);
      cuts.push_back(qsizetype(whole.data_offset() + t.offset));
      cuts.push_back(qsizetype(whole.data_offset() + t.offset + t.n_bytes / 2));
    }
    QCOMPARE(uint64_t(pos + 31) / 32 * 32, whole.data_offset());  // the walk agrees with the reader
    std::mt19937 rng(42);
    for (int i = 0; i < 300; ++i) cuts.push_back(qsizetype(rng() % full.size()));
    int checked = 0;
    for (qsizetype cut : cuts)
      for (qsizetype len : {cut - 1, cut, cut + 1}) {
        if (len < 0 || len >= full.size()) continue;
        const QByteArray part = full.left(len);
        try {
          GgufFile g = GgufFile::parse(reinterpret_cast<const uint8_t*>(part.constData()), part.size(), "cut");
          load_gguf_model(g);
          QFAIL(qPrintable(QString("truncation to %1 bytes accepted").arg(len)));
        } catch (const std::runtime_error& e) {
          QVERIFY2(QString(e.what()).contains("'cut'") && QString(e.what()).contains("truncated"), e.what());
        }
        ++checked;
      }
    qInfo("%d truncations rejected", checked);
    for (qsizetype len :
         {qsizetype(0), qsizetype(10), qsizetype(5000), qsizetype(whole.data_offset()), full.size() - 1}) {
      const QString err = expectRejected(full.left(len), next(), {});
      QVERIFY2(err.isEmpty() || (len == 0 && err.contains("empty")), qPrintable(err));
    }
  }

  // Random byte changes in the metadata and tensor infos: loaded or refused, never a crash.
  void corruptedBytes() {
    const QByteArray base = tinyLlama().bytes();
    std::mt19937 rng(1234);
    int refused = 0, loaded = 0;
    for (int i = 0; i < 3000; ++i) {
      QByteArray b = base;
      for (int k = 0, n = 1 + int(rng() % 4); k < n; ++k) b[qsizetype(rng() % 16000)] = char(rng());
      try {
        GgufFile g = GgufFile::parse(reinterpret_cast<const uint8_t*>(b.constData()), b.size(), "corrupt");
        load_gguf_model(g);
        load_gguf_tokenizer(g);
        ++loaded;
      } catch (const std::runtime_error&) {
        ++refused;
      }
    }
    qInfo("corrupted files: %d refused, %d still loadable", refused, loaded);
  }
};

QTEST_GUILESS_MAIN(TestGgufParser)
#include "test_gguf_parser.moc"
