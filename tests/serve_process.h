// A `pagedchat-cli serve` child process for tests that talk to the server as outside programs do
// (tests/engine/entrypoints/test_server, tests/app/engine/test_remote_pane). Needs PAGEDCHAT_CLI (the binary's path).
#pragma once

#include <QElapsedTimer>
#include <QProcess>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

namespace {

/// A `pagedchat-cli serve` child process on a free port.
class Server {
 public:
  explicit Server(const QStringList& args) {
    proc_.setProcessChannelMode(QProcess::SeparateChannels);
    proc_.start(QStringLiteral(PAGEDCHAT_CLI), QStringList{"serve", "--port", "0", "--threads", "1"} + args);
  }
  ~Server() {
    if (proc_.state() != QProcess::NotRunning) {
      proc_.terminate();
      if (!proc_.waitForFinished(30000)) proc_.kill();
      proc_.waitForFinished(5000);
    }
  }
  /// Waits for the "serving ... on http://127.0.0.1:PORT/v1" line; false when the process ended.
  bool waitReady(int timeoutMs = 120000) {
    QElapsedTimer t;
    t.start();
    static const QRegularExpression re("serving .* on (http://[^/ ]+)/v1");
    while (t.elapsed() < timeoutMs) {
      err_ += proc_.readAllStandardError();
      const auto m = re.match(QString::fromUtf8(err_));
      if (m.hasMatch()) {
        base_ = m.captured(1);
        return true;
      }
      if (proc_.state() == QProcess::NotRunning) return false;
      proc_.waitForReadyRead(200);
    }
    return false;
  }
  QString base() const { return base_; }
  QString v1() const { return base_ + "/v1"; }
  QByteArray stderrText() {
    err_ += proc_.readAllStandardError();
    return err_;
  }
  QProcess& process() { return proc_; }

 private:
  QProcess proc_;
  QByteArray err_;
  QString base_;
};

}  // namespace
