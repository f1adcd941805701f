// pagedchat-cli pull / search against a stand-in for the Hugging Face hub (tests/js/fake_hub.mjs:
// the hub's routes and headers on loopback, a redirect to a "CDN" on another host name): the GGUF
// files of a repository with their quantizations and the recommended one, a download whose bytes
// equal the hub's and that the engine then opens, a split model, a safetensors folder, a gated
// repository with no token, a wrong one and the granted one (never sent to the CDN), a file
// whose SHA-256 is not the announced one (nothing kept), a transfer broken halfway (resumed with a
// Range request, in the same run and in the next one), a missing repository and quantization.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "fake_hub.h"
#include "test_paths.h"

using testhub::sha256;

namespace {

struct Run {
  int exitCode = -1;
  QByteArray out, err;
};

}  // namespace

class TestCliPull : public QObject {
  Q_OBJECT

 private:
  testhub::FakeHub hub_;
  QTemporaryDir modelsDir_;
  int hubPort_ = 0;
  QString tinyGguf_ = testpaths::modelFile("arch/qwen3-tiny.gguf");
  QString tinyHf_ = testpaths::modelFile("arch/qwen3-tiny-hf");

  QString repoFile(const QString& repo, const QString& file) const { return hub_.repoFile(repo, file); }
  QString local(const QString& repo, const QString& file) const { return modelsDir_.path() + "/" + repo + "/" + file; }

  void addFile(const QString& repo, const QString& file, const QString& copyOf = {}, int randomBytes = 0) {
    QVERIFY(hub_.addFile(repo, file, copyOf, randomBytes));
  }

  Run cli(const QStringList& args, const QString& token = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("HF_ENDPOINT", QString("http://127.0.0.1:%1/").arg(hubPort_));
    env.remove("HF_TOKEN");
    env.remove("HUGGING_FACE_HUB_TOKEN");
    env.insert("HF_HOME", modelsDir_.path() + "/no-hf-home");  // no token file
    env.insert("XDG_DATA_HOME", modelsDir_.path() + "/xdg");
    if (!token.isEmpty()) env.insert("HF_TOKEN", token);
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(PAGEDCHAT_CLI), args);
    Run r;
    if (!p.waitForStarted(30000) || !p.waitForFinished(120000)) return r;
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
  }
  Run pull(const QString& target, QStringList extra = {}, const QString& token = {}) {
    return cli(QStringList{"pull", target, "--models-dir", modelsDir_.path()} + extra, token);
  }

  QList<QJsonObject> requests() const { return hub_.requests(); }

 private slots:
  void initTestCase() {
    REQUIRE_MODEL_FILE(tinyGguf_);
    REQUIRE_MODEL_FILE(tinyHf_ + "/config.json");
    addFile("acme/tiny-GGUF", "tiny-Q4_K_M.gguf", tinyGguf_);
    addFile("acme/tiny-GGUF", "tiny-Q8_0.gguf", {}, 300000);
    addFile("acme/tiny-GGUF", "tiny-F16.gguf", {}, 600000);
    addFile("acme/tiny-GGUF", "mmproj-tiny-F16.gguf", {}, 1000);
    addFile("acme/tiny-GGUF", "README.md", {}, 100);
    addFile("acme/split-GGUF", "Q4_K_M/big-Q4_K_M-00001-of-00002.gguf", {}, 200000);
    addFile("acme/split-GGUF", "Q4_K_M/big-Q4_K_M-00002-of-00002.gguf", {}, 150000);
    addFile("acme/gated-GGUF", "g-Q4_K_M.gguf", {}, 50000);
    addFile("acme/corrupt-GGUF", "c-Q4_K_M.gguf", {}, 80000);
    addFile("acme/flaky-GGUF", "f-Q4_K_M.gguf", {}, 2000000);
    addFile("acme/flaky2-GGUF", "f-Q4_K_M.gguf", {}, 2000000);
    for (const QString& f : QDir(tinyHf_).entryList(QDir::Files)) addFile("acme/tiny-hf", f, tinyHf_ + "/" + f);
    QVERIFY(hub_.setSettings(R"({"gated": {"acme/gated-GGUF": "hf_granted"},
                       "corrupt": ["acme/corrupt-GGUF/c-Q4_K_M.gguf"],
                       "interrupt": ["acme/flaky-GGUF/f-Q4_K_M.gguf", "acme/flaky2-GGUF/f-Q4_K_M.gguf"],
                       "downloads": {"acme/tiny-GGUF": 500, "acme/split-GGUF": 900}})"));
    const QString why = hub_.start();
    if (!why.isEmpty()) {
      if (testpaths::inCI()) QFAIL(qPrintable(why));
      QSKIP(qPrintable(why));
    }
    hubPort_ = hub_.port();
  }

  void listsQuantizations() {
    const Run r = pull("acme/tiny-GGUF", {"--list"});
    QCOMPARE(r.exitCode, 0);
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains(QRegularExpression(R"(\* Q4_K_M +\d)")), r.out.constData());  // recommended
    QVERIFY2(out.contains(QRegularExpression(R"(  Q8_0 +[0-9.]+ kB +yes +tiny-Q8_0\.gguf)")), r.out.constData());
    QVERIFY(out.contains("tiny-F16.gguf"));
    QVERIFY(!out.contains("mmproj"));  // a projector is not a model
    QVERIFY(!out.contains("README"));
    QVERIFY(!QDir(modelsDir_.path() + "/acme").exists());  // --list downloads nothing
  }

  void pullsTheRecommendedFileAndTheEngineOpensIt() {
    const Run r = pull("acme/tiny-GGUF");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString path = local("acme/tiny-GGUF", "tiny-Q4_K_M.gguf");
    QCOMPARE(QString::fromUtf8(r.out.trimmed()), path);
    QCOMPARE(sha256(path), sha256(tinyGguf_));
    QVERIFY(!QFile::exists(path + ".part"));
    // The token is never sent anywhere without HF_TOKEN; the file came from the CDN host.
    bool fromCdn = false;
    for (const QJsonObject& q : requests()) {
      QVERIFY(q.value("authorization").isNull());
      fromCdn |= q.value("port").toString() == "cdn" && q.value("url").toString().contains("tiny-Q4_K_M");
    }
    QVERIFY(fromCdn);
    const Run gen = cli({"generate", "--model", path, "--prompt", "Hello", "--max-tokens", "4", "--threads", "1"});
    QVERIFY2(gen.exitCode == 0, gen.err.constData());

    // Again: already there, nothing fetched from the CDN.
    const qsizetype before = requests().size();
    const Run again = pull("acme/tiny-GGUF");
    QCOMPARE(again.exitCode, 0);
    QVERIFY2(again.err.contains("already downloaded"), again.err.constData());
    for (const QJsonObject& q : requests().mid(before)) QVERIFY(q.value("port").toString() != "cdn");
  }

  void pullsByQuantization() {
    Run r = pull("acme/tiny-GGUF:q8_0");  // case-insensitive
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(sha256(local("acme/tiny-GGUF", "tiny-Q8_0.gguf")), sha256(repoFile("acme/tiny-GGUF", "tiny-Q8_0.gguf")));
    // A pasted address works as the id.
    r = pull(QString("https://huggingface.co/acme/tiny-GGUF:F16"));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY(QFile::exists(local("acme/tiny-GGUF", "tiny-F16.gguf")));
    // A file's address as a browser shows it: that file.
    QFile::remove(local("acme/tiny-GGUF", "tiny-Q8_0.gguf"));
    r = pull(QString("https://huggingface.co/acme/tiny-GGUF/blob/main/tiny-Q8_0.gguf"));
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(QString::fromUtf8(r.out.trimmed()), local("acme/tiny-GGUF", "tiny-Q8_0.gguf"));
    r = pull("acme/tiny-GGUF:Q2_K");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("no Q2_K") && r.err.contains("Q4_K_M") && r.err.contains("Q8_0"), r.err.constData());
  }

  void pullsEveryPartOfASplitModel() {
    const Run r = pull("acme/split-GGUF");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(QString::fromUtf8(r.out.trimmed()), local("acme/split-GGUF", "Q4_K_M/big-Q4_K_M-00001-of-00002.gguf"));
    for (const char* part : {"Q4_K_M/big-Q4_K_M-00001-of-00002.gguf", "Q4_K_M/big-Q4_K_M-00002-of-00002.gguf"})
      QCOMPARE(sha256(local("acme/split-GGUF", part)), sha256(repoFile("acme/split-GGUF", part)));
  }

  void pullsAHuggingFaceFolder() {
    const Run r = pull("acme/tiny-hf");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    const QString folder = local("acme/tiny-hf", "").chopped(1);
    QCOMPARE(QString::fromUtf8(r.out.trimmed()), folder);
    for (const QString& f : QDir(tinyHf_).entryList(QDir::Files))
      QCOMPARE(sha256(folder + "/" + f), sha256(tinyHf_ + "/" + f));
    const Run gen = cli({"generate", "--model", folder, "--prompt", "Hello", "--max-tokens", "4", "--threads", "1"});
    QVERIFY2(gen.exitCode == 0, gen.err.constData());
  }

  void gatedRepository() {
    Run r = pull("acme/gated-GGUF");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("gated") && r.err.contains("HF_TOKEN") &&
                 r.err.contains(QString("http://127.0.0.1:%1/acme/gated-GGUF").arg(hubPort_).toUtf8()),
             r.err.constData());
    r = pull("acme/gated-GGUF", {}, "hf_someone_else");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("not been granted access"), r.err.constData());
    const qsizetype before = requests().size();
    r = pull("acme/gated-GGUF", {}, "hf_granted");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(sha256(local("acme/gated-GGUF", "g-Q4_K_M.gguf")), sha256(repoFile("acme/gated-GGUF", "g-Q4_K_M.gguf")));
    // The token went to the hub, never to the CDN host the download was redirected to.
    int hubWithToken = 0, cdn = 0;
    for (const QJsonObject& q : requests().mid(before)) {
      if (q.value("port").toString() == "cdn") {
        ++cdn;
        QVERIFY(q.value("authorization").isNull());
      } else {
        hubWithToken += q.value("authorization").toString() == "Bearer hf_granted";
      }
    }
    QVERIFY(cdn >= 1);
    QVERIFY(hubWithToken >= 2);  // the file list and the resolve
  }

  void checksumMismatchKeepsNothing() {
    const Run r = pull("acme/corrupt-GGUF");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("SHA-256") && r.err.contains("deleted"), r.err.constData());
    QVERIFY(!QFile::exists(local("acme/corrupt-GGUF", "c-Q4_K_M.gguf")));
    QVERIFY(!QFile::exists(local("acme/corrupt-GGUF", "c-Q4_K_M.gguf.part")));
  }

  void brokenTransferResumes() {
    // In the same run: the first transfer breaks halfway, the retry asks for the rest.
    Run r = pull("acme/flaky-GGUF");
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QVERIFY2(r.err.contains("resuming"), r.err.constData());
    QCOMPARE(sha256(local("acme/flaky-GGUF", "f-Q4_K_M.gguf")), sha256(repoFile("acme/flaky-GGUF", "f-Q4_K_M.gguf")));
    bool ranged = false;
    for (const QJsonObject& q : requests())
      ranged |= q.value("port").toString() == "cdn" && q.value("url").toString().contains("flaky-GGUF") &&
                q.value("range").toString().startsWith("bytes=") && q.value("range").toString() != "bytes=0-";
    QVERIFY(ranged);

    // Across runs: no retry, the partial file stays; the next run resumes it.
    r = pull("acme/flaky2-GGUF", {"--retries", "0"});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("run again to resume") || r.err.contains("no answer"), r.err.constData());
    const QString part = local("acme/flaky2-GGUF", "f-Q4_K_M.gguf.part");
    QVERIFY(QFile::exists(part));
    const qint64 half = QFileInfo(part).size();
    QVERIFY(half > 0 && half < 2000000);
    r = pull("acme/flaky2-GGUF", {"--retries", "0"});
    QVERIFY2(r.exitCode == 0, r.err.constData());
    QCOMPARE(sha256(local("acme/flaky2-GGUF", "f-Q4_K_M.gguf")), sha256(repoFile("acme/flaky2-GGUF", "f-Q4_K_M.gguf")));
    bool resumed = false;
    for (const QJsonObject& q : requests())
      resumed |= q.value("port").toString() == "cdn" && q.value("url").toString().contains("flaky2-GGUF") &&
                 q.value("range").toString() == QString("bytes=%1-").arg(half);
    QVERIFY(resumed);
  }

  void missingRepositoryAndBadIds() {
    Run r = pull("acme/no-such-GGUF");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("not found") && r.err.contains("HF_TOKEN"), r.err.constData());
    r = pull("acme/no-such-GGUF", {}, "hf_any");
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("not found"), r.err.constData());
    for (const char* bad : {"../etc", "acme", "acme/../x", "a/b/c"}) {
      r = pull(bad);
      QVERIFY(r.exitCode != 0);
      QVERIFY2(r.err.contains("not a Hugging Face repository"), r.err.constData());
    }
  }

  void searchesGgufRepositories() {
    const Run r = cli({"search", "GGUF"});
    QCOMPARE(r.exitCode, 0);
    const QList<QByteArray> lines = r.out.trimmed().split('\n');
    QVERIFY2(lines.size() >= 5, r.out.constData());
    QVERIFY(lines[0].startsWith("acme/split-GGUF"));  // most downloaded first
    QVERIFY(lines[1].startsWith("acme/tiny-GGUF"));
    QVERIFY(!r.out.contains("tiny-hf"));  // no GGUF in it
    QVERIFY(r.out.contains("acme/gated-GGUF") && r.out.contains("(gated)"));
  }
};

QTEST_GUILESS_MAIN(TestCliPull)
#include "test_cli_pull.moc"
