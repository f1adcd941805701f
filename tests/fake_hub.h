// FakeHub: tests/js/fake_hub.mjs (a stand-in for the Hugging Face hub on loopback, see its header)
// as a child process of a test, with the helpers to fill its folder and read its request log.
// Needs PAGEDCHAT_JS_DIR (tests/js) and `node` on PATH.
#pragma once

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

namespace testhub {

/// The SHA-256 of the file at `path`, lower-case hex ("" when it cannot be read).
inline QByteArray sha256(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash h(QCryptographicHash::Sha256);
  h.addData(&f);
  return h.result().toHex();
}

class FakeHub {
 public:
  ~FakeHub() {
    if (process_.state() != QProcess::NotRunning) {
      process_.kill();
      process_.waitForFinished(5000);
    }
  }

  /// The repositories' folder (ROOT of fake_hub.mjs).
  QString root() const { return dir_.path(); }
  QString repoFile(const QString& repo, const QString& file) const { return root() + "/" + repo + "/" + file; }

  /// Puts `file` into `repo`: a copy of `copyOf`, else `randomBytes` bytes (seeded by the name).
  [[nodiscard]] bool addFile(const QString& repo, const QString& file, const QString& copyOf = {},
                             int randomBytes = 0) {
    const QString path = repoFile(repo, file);
    if (!QDir().mkpath(QFileInfo(path).path())) return false;
    if (!copyOf.isEmpty()) return QFile::copy(copyOf, path);
    QRandomGenerator g(quint32(qHash(repo + file)));
    QByteArray data(randomBytes, Qt::Uninitialized);
    for (char& c : data) c = char(g.generate() & 0xff);
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
  }
  /// hub.json: gated repositories, corrupt and flaky files, download counts (fake_hub.mjs).
  [[nodiscard]] bool setSettings(const QByteArray& json) {
    QFile f(root() + "/hub.json");
    return f.open(QIODevice::WriteOnly) && f.write(json) == json.size();
  }

  /// Starts the server; "" when it runs (port()), else why not.
  QString start() {
    const QString node = QStandardPaths::findExecutable("node");
    if (node.isEmpty()) return "node is not on PATH (scripts/install-deps.sh installs it)";
    process_.start(node, {QStringLiteral(PAGEDCHAT_JS_DIR "/fake_hub.mjs"), root()});
    if (!process_.waitForStarted(10000)) return "node did not start";
    for (int i = 0; i < 200 && !process_.canReadLine(); ++i) process_.waitForReadyRead(100);
    port_ = QJsonDocument::fromJson(process_.readLine()).object().value("hub").toInt();
    return port_ > 0 ? QString() : "fake_hub.mjs did not start: " + QString::fromUtf8(process_.readAllStandardError());
  }
  int port() const { return port_; }
  /// The value of HF_ENDPOINT for this hub.
  QString endpoint() const { return QString("http://127.0.0.1:%1").arg(port_); }

  /// The requests so far: {port: "hub"|"cdn", method, url, range, authorization} objects.
  QList<QJsonObject> requests() const {
    QFile f(root() + "/requests.log");
    QList<QJsonObject> out;
    if (!f.open(QIODevice::ReadOnly)) return out;
    for (const QByteArray& line : f.readAll().split('\n'))
      if (!line.isEmpty()) out.append(QJsonDocument::fromJson(line).object());
    return out;
  }

 private:
  QTemporaryDir dir_;
  QProcess process_;
  int port_ = 0;
};

}  // namespace testhub
