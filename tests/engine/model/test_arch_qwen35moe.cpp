// Qwen3.5-MoE (GGUF qwen35moe: Qwen3.5's hybrid layers with a mixture of experts and a gated
// shared expert) against ik_llama.cpp. The model is written by the test itself from
// ../shared/models/arch/qwen35-tiny.gguf: the same keys under the qwen35moe prefix, the same
// attention and Gated DeltaNet tensors, and in place of each dense FFN 8 experts of width 32
// (top-2, softmax then renormalised) plus a shared expert of width 48 behind
// ffn_gate_inp_shexp's sigmoid gate, with weights from a fixed generator (uniform, std 0.02;
// router std 0.3). tests/data/qwen35moe/golden.json holds what ik_llama.cpp (commit 8337e4cd3,
// CPU, 1 thread, K F32 / V F16, no flash attention, the prompt in one batch, then greedy one token
// per decode; /work/bench/ikref/ik_logits.cpp) computed on that exact file: per prompt the greedy
// ids and each step's top-20 [id, logit]. QWEN35MOE_TINY_OUT=path keeps the written file (how the
// golden was made; the command is in tests/data/qwen35moe/README.md).
#include <QTest>

#include <QFile>
#include <QTemporaryDir>
#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "arch_golden.h"
#include "engine/loader/gguf/gguf_model.h"
#include "engine/loader/model_loader.h"
#include "kernels/cpu/cpu_backend.h"
#include "qwen35moe_tiny.h"

using namespace pagedchat;
using namespace qwen35moe_tiny;

class TestArchQwen35Moe : public QObject {
  Q_OBJECT

 private slots:
  void matchesIkLlama() {
    const QString src = archtest::archPath("qwen35-tiny.gguf");
    REQUIRE_MODEL_FILE(src);
    QTemporaryDir tmp;
    const char* keep_path = std::getenv("QWEN35MOE_TINY_OUT");
    const QString path = keep_path ? QString(keep_path) : tmp.filePath("qwen35moe-tiny.gguf");
    std::vector<std::vector<float>> keep;
    writeModel(src, path, keep);

    QFile jf(QStringLiteral(QWEN35MOE_GOLDEN));
    QVERIFY2(jf.open(QIODevice::ReadOnly), qPrintable(jf.fileName()));
    const nlohmann::json golden = nlohmann::json::parse(jf.readAll().toStdString());

    EngineConfig ec;
    ec.model = path.toStdString();
    const ModelBundle b = load_model(ec);
    const ModelConfig& c = b.model.config;
    QCOMPARE(c.architecture, std::string("qwen35moe"));
    QCOMPARE(c.moe.num_experts, kExperts);
    QCOMPARE(c.moe.shared_expert_intermediate_size, kSharedWidth);
    QVERIFY(c.moe.shared_expert_gated);
    QCOMPARE(c.num_recurrent_layers(), 3);
    auto backend = kernels::make_cpu_backend(2);
    DecoderModel m(c, b.model.weights, *backend);
    const IkComparison r = compareWithIk(m, golden);
    QVERIFY2(r.mismatch.empty(), r.mismatch.c_str());
    const double worst = r.worst;
    const int checked = r.checked;
    qInfo(
        "qwen35moe-tiny vs ik_llama.cpp: max |dlogit| %.3g over every step's top-20; argmax equal at %d steps with "
        "gap > 1e-2",
        worst, checked);
    // Float activations against ik's Q8-rounded ones for the Q8_0 embedding and classifier
    // (../shared/models/arch/README.md: <= 1e-2); a dropped shared-expert gate or unnormalised
    // top-k costs far more.
    QVERIFY2(worst <= 1e-2, qPrintable(QString::number(worst)));
    QVERIFY(checked >= 10);
  }
};

QTEST_GUILESS_MAIN(TestArchQwen35Moe)
#include "test_arch_qwen35moe.moc"
