// summarize_model(): what the model dialog shows for a file or folder, read from headers only.
// The expected values are the files' documented facts (../shared/models/arch/README.md: shapes,
// general.file_type, context lengths, templates; stories260K's name), the parameter counts worked
// out from those shapes here, not read back through our own reader.
#include <QTest>

#include <QFile>
#include <QTemporaryDir>

#include "engine/loader/model_summary.h"
#include "test_paths.h"

using namespace pagedchat;

class TestModelSummary : public QObject {
  Q_OBJECT

  static std::string path(const QString& rel) { return testpaths::modelFile(rel).toStdString(); }

  // A Llama-shaped model's parameters: embedding, per layer two norms, q, k, v, o and the
  // gated MLP, the final norm, the classifier unless tied.
  static uint64_t llamaParams(uint64_t vocab, uint64_t dim, uint64_t layers, uint64_t heads, uint64_t kv_heads,
                              uint64_t head_dim, uint64_t ffn, bool tied) {
    const uint64_t layer = 2 * dim + dim * heads * head_dim * 2 + dim * kv_heads * head_dim * 2 + 3 * dim * ffn;
    return vocab * dim + layers * layer + dim + (tied ? 0 : vocab * dim);
  }

 private slots:
  void gguf() {
    // llama3-tiny.gguf: vocab 128256, dim 64, 2 layers, 4 heads, 2 KV heads of 16, ffn 192, tied,
    // rope_freqs [8]; general.file_type 1 (F16); context_length 131072; Llama 3.1's template.
    const std::string file = path("arch/llama3-tiny.gguf");
    REQUIRE_MODEL_FILE(QString::fromStdString(file));
    const ModelSummary s = summarize_model(file);
    QCOMPARE(s.format, std::string("gguf"));
    QCOMPARE(s.architecture, std::string("llama"));
    QVERIFY(s.supported);
    QCOMPARE(s.quantization, std::string("F16"));
    QCOMPARE(s.context_length, int64_t(131072));
    QCOMPARE(s.n_params, llamaParams(128256, 64, 2, 4, 2, 16, 192, true) + 8);
    QCOMPARE(s.size_bytes, uint64_t(QFile(QString::fromStdString(file)).size()));
    QCOMPARE(s.chat_template, std::string("llama3"));

    // qwen2-tiny.gguf: file_type 7 (Q8_0), context 32768, untied, q/k/v biases, Qwen3's template.
    const ModelSummary q = summarize_model(path("arch/qwen2-tiny.gguf"));
    QCOMPARE(q.architecture, std::string("qwen2"));
    QCOMPARE(q.quantization, std::string("Q8_0"));
    QCOMPARE(q.context_length, int64_t(32768));
    QCOMPARE(q.n_params, llamaParams(151936, 64, 2, 4, 2, 16, 192, false) + 2 * (64 + 32 + 32));
    QCOMPARE(q.chat_template, std::string("chatml"));
  }

  void huggingFaceFolder() {
    // llama3-tiny-hf: the same model without rope_freqs, BF16 weights, max_position_embeddings
    // 131072; a file inside the folder names the folder.
    const std::string dir = path("arch/llama3-tiny-hf");
    REQUIRE_MODEL_FILE(QString::fromStdString(dir));
    for (const std::string& p : {dir, dir + "/config.json", dir + "/model.safetensors"}) {
      const ModelSummary s = summarize_model(p);
      QCOMPARE(s.format, std::string("huggingface"));
      QCOMPARE(s.architecture, std::string("LlamaForCausalLM"));
      QVERIFY(s.supported);
      QCOMPARE(s.quantization, std::string("BF16"));
      QCOMPARE(s.context_length, int64_t(131072));
      QCOMPARE(s.n_params, llamaParams(128256, 64, 2, 4, 2, 16, 192, true));
      QCOMPARE(s.size_bytes, uint64_t(16616184));  // model.safetensors
      QCOMPARE(s.chat_template, std::string("llama3"));
    }
  }

  void llama2c() {
    // stories260K: dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, vocab 512, 512 positions,
    // shared classifier: 260 032 parameters ("260K"), float32, no template.
    const std::string dir = testpaths::stories260K().toStdString();
    REQUIRE_MODEL_FILE(QString::fromStdString(dir));
    const ModelSummary s = summarize_model(dir);
    QCOMPARE(s.format, std::string("llama2.c"));
    QCOMPARE(s.n_params, llamaParams(512, 64, 5, 8, 4, 8, 172, true));
    QCOMPARE(s.n_params, uint64_t(260032));
    QCOMPARE(s.context_length, int64_t(512));
    QCOMPARE(s.quantization, std::string("F32"));
    QCOMPARE(s.chat_template, std::string());
  }

  void unsupportedAndBroken() {
    QTemporaryDir tmp;
    // An architecture the engine lacks is summarised, marked unsupported.
    QFile config(tmp.filePath("config.json"));
    QVERIFY(config.open(QIODevice::WriteOnly));
    config.write(R"({"architectures": ["MambaForCausalLM"], "max_position_embeddings": 2048})");
    config.close();
    QFile weights(tmp.filePath("model.safetensors"));
    QVERIFY(weights.open(QIODevice::WriteOnly));
    const QByteArray header = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
    const quint64 n = quint64(header.size());
    weights.write(reinterpret_cast<const char*>(&n), 8);
    weights.write(header);
    weights.write(QByteArray(16, '\0'));
    weights.close();
    const ModelSummary s = summarize_model(tmp.path().toStdString());
    QCOMPARE(s.architecture, std::string("MambaForCausalLM"));
    QVERIFY(!s.supported);
    QCOMPARE(s.n_params, uint64_t(4));
    QCOMPARE(s.context_length, int64_t(2048));

    // Missing, truncated, not a model: a runtime_error naming the path.
    const std::string missing = tmp.filePath("nothing.gguf").toStdString();
    try {
      summarize_model(missing);
      QFAIL("no error for a missing file");
    } catch (const std::runtime_error& e) {
      QVERIFY2(std::string(e.what()).find(missing) != std::string::npos, e.what());
    }
    QFile cut(tmp.filePath("cut.gguf"));
    QVERIFY(cut.open(QIODevice::WriteOnly));
    cut.write("GGUF\x03\x00\x00\x00", 8);
    cut.close();
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, summarize_model(cut.fileName().toStdString()));
  }

  void fileTypeNames() {
    QCOMPARE(gguf_file_type_name(15), std::string("Q4_K_M"));
    QCOMPARE(gguf_file_type_name(15 | 1024), std::string("Q4_K_M"));  // "guessed"
    QCOMPARE(gguf_file_type_name(38), std::string("MXFP4_MOE"));
    QCOMPARE(gguf_file_type_name(4), std::string());  // removed from llama.cpp
  }
};

QTEST_GUILESS_MAIN(TestModelSummary)
#include "test_model_summary.moc"
