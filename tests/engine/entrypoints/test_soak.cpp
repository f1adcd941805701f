// The 30-second version of `pagedchat-cli bench soak` (the 10-minute run is in docs/reliability.md):
// 8 stories260K sessions generating without pause on a KV cache for 4 sequences, with random
// stops, edits and new chats. Every block comes back, resident memory stays flat after the
// warm-up, no request gets stuck, and the random actions really happened.
#include <QTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include "test_paths.h"

// g++ defines __SANITIZE_ADDRESS__; clang 14 tells it by __has_feature only.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

class TestSoak : public QObject {
  Q_OBJECT
 private slots:
  void thirtySeconds() {
    REQUIRE_MODEL_FILE(testpaths::stories260K() + "/stories260K.bin");
    QProcess p;
    // 4 full-length sequences of 256 positions (stories260K: 10 KiB per 16-token block in bfloat16).
    p.start(QStringLiteral(PAGEDCHAT_CLI), {"bench",
                                            "soak",
                                            "--model",
                                            testpaths::stories260K(),
                                            "--sessions",
                                            "8",
                                            "--duration",
                                            "30",
                                            "--warmup",
                                            "10",
                                            "--max-model-len",
                                            "256",
                                            "--kv-cache-bytes",
                                            QString::number(4 * 16 * 10240),
                                            "--max-output",
                                            "96",
                                            "--threads",
                                            "1",
                                            "--seed",
                                            "15",
                                            "--json"});
    QVERIFY(p.waitForFinished(120000));
    const QByteArray err = p.readAllStandardError();
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    const QJsonObject j = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
    QVERIFY2(!j.isEmpty(), err.constData());
    qInfo("%s", QJsonDocument(j).toJson(QJsonDocument::Compact).left(900).constData());
    QCOMPARE(p.exitCode(), 0);
    QCOMPARE(j["engine"].toObject()["num_blocks"].toInt(), 64);
    QCOMPARE(j["num_free_blocks_at_end"].toInt(), j["num_total_blocks"].toInt());
    QCOMPARE(j["block_leak"].toBool(), false);
    QCOMPARE(j["stuck"].toBool(), false);
    QVERIFY(j["stuck_requests"].toArray().isEmpty());
    QVERIFY(j["requests_finished"].toInt() > 50);
    QVERIFY(j["requests_aborted"].toInt() > 0);
    QVERIFY(j["edits"].toInt() > 0);
    QVERIFY(j["new_chats"].toInt() > 0);
    QVERIFY(j["num_preemptions"].toInt() > 0);
    // Flat: at most 4 MiB more than right after the warm-up, whatever the run's length. Not under
    // AddressSanitizer: its quarantine keeps freed memory resident by design (up to 256 MB), so
    // resident memory grows there whatever the code does; LeakSanitizer checks leaks instead.
    const double growth = j["rss_max_after_warmup_bytes"].toDouble() - j["rss_after_warmup_bytes"].toDouble();
    if (kAddressSanitizer)
      qInfo("resident memory growth %.0f bytes, not checked under AddressSanitizer", growth);
    else
      QVERIFY2(growth < 4.0 * 1048576, qPrintable(QString::number(growth)));
  }
};

QTEST_GUILESS_MAIN(TestSoak)
#include "test_soak.moc"
