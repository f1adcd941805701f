// A loopback HTTP peer for the app's tests: whole requests in, one answer each.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QTcpSocket>

#include <functional>
#include <memory>

namespace apptest {

/// Calls `answer` with each whole HTTP request (head, and the body its Content-Length announces)
/// that arrives on `socket`; what `answer` returns is written back and the connection closed.
inline void answerRequests(QTcpSocket* socket, std::function<QByteArray(const QByteArray& request)> answer) {
  auto buffer = std::make_shared<QByteArray>();
  QObject::connect(socket, &QTcpSocket::readyRead, socket, [socket, buffer, answer] {
    *buffer += socket->readAll();
    const qsizetype headEnd = buffer->indexOf("\r\n\r\n");
    if (headEnd < 0) return;
    qsizetype length = 0;
    for (const QByteArray& line : buffer->left(headEnd).split('\n'))
      if (line.toLower().startsWith("content-length:")) length = line.mid(15).trimmed().toLongLong();
    if (buffer->size() < headEnd + 4 + length) return;
    socket->write(answer(*buffer));
    socket->disconnectFromHost();
    buffer->clear();
  });
}

}  // namespace apptest
