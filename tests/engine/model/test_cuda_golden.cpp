// stories260K on the GPU through the whole engine (continuous batching, paged KV cache, chunked
// prefill): llama2.c's run.c goldens token for token with float32 weights and KV cache, and the
// greedy ids of bfloat16 (the GPU's "auto") following them for a measured number of tokens.
// Skips, saying why, without a CUDA device (and so in CI, which has none).
#include <QTest>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "engine/llm.h"
#include "engine_test_utils.h"
#include "kernels/backend_factory.h"

using namespace pagedchat;

namespace {

struct Golden {
  std::string prompt;
  std::vector<int> ids;
};

Golden readGolden(const QString& path) {
  QFile f(path);
  Golden g;
  if (!f.open(QIODevice::ReadOnly)) return g;
  const QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
  g.prompt = o["prompt"].toString().toStdString();
  for (const auto& x : o["generated_ids"].toArray()) g.ids.push_back(x.toInt());
  return g;
}

}  // namespace

class TestCudaGolden : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    std::string why;
    if (kernels::cuda_device_count(&why) == 0)
      QSKIP(qPrintable("no CUDA GPU here, GPU golden tests skipped: " + QString::fromStdString(why)));
  }

  void goldens_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("dtype");
    QTest::addColumn<int>("minMatch");
    for (const char* name : {"bos_only", "once_upon", "lily_tom"}) {
      QTest::addRow("float32 %s", name) << name << "float32" << -1;  // every token
      QTest::addRow("bfloat16 %s", name) << name << "auto" << 20;
    }
  }
  void goldens() {
    QFETCH(QString, name);
    QFETCH(QString, dtype);
    QFETCH(int, minMatch);
    const QString file = testpaths::stories260K() + "/golden/" + name + ".json";
    REQUIRE_MODEL_FILE(file);
    const Golden g = readGolden(file);
    QVERIFY(!g.ids.empty());
    EngineConfig c = testutil::storiesConfig();
    c.device = "cuda";
    c.dtype = pagedchat::parse_weight_dtype(dtype.toStdString());
    c.kv_cache_dtype = dtype == "float32" ? pagedchat::KvCacheDType::kFloat32 : pagedchat::KvCacheDType::kBFloat16;
    c.max_num_batched_tokens = 64;  // the prompts prefill in chunks
    LLM llm(c);
    QVERIFY2(llm.engine().backend_name().rfind("cuda:", 0) == 0, llm.engine().backend_name().c_str());
    // (The message is evaluated whether or not the check fails: it must be valid when it passes.)
    const std::vector<std::string>& warnings = llm.engine().warnings();
    QVERIFY2(warnings.empty(), warnings.empty() ? "" : warnings.front().c_str());
    // Three copies of the prompt in one batch: every one must give the golden ids.
    const auto outs = llm.generate({g.prompt, g.prompt, g.prompt}, testutil::greedy(int(g.ids.size())));
    for (const auto& o : outs) {
      const auto& ids = o.outputs[0].token_ids;
      int match = 0;
      while (match < int(ids.size()) && match < int(g.ids.size()) && ids[match] == g.ids[match]) ++match;
      qInfo("%s %s: %d of %d golden ids", qPrintable(dtype), qPrintable(name), match, int(g.ids.size()));
      QVERIFY2(match >= (minMatch < 0 ? int(g.ids.size()) : minMatch), qPrintable(QString::number(match)));
    }
  }
};

QTEST_GUILESS_MAIN(TestCudaGolden)
#include "test_cuda_golden.moc"
