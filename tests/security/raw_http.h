// tests/security/raw_http.h
// A bare HTTP/1.1 client over a loopback TCP socket, for attacks a real client library would not
// send: bodies that never end, bytes dripped one at a time, pipelined requests, a half-closed
// socket, hostile headers. Every read has a deadline, so a test never hangs on the server.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QString>

namespace rawhttp {

/// One TCP connection to 127.0.0.1:port; closed on destruction.
class Conn {
 public:
  explicit Conn(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) close();
  }
  ~Conn() { close(); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  /// Sends all of `bytes`; false when the server closed or refused them (EPIPE, ECONNRESET).
  bool send(const QByteArray& bytes) {
    qsizetype off = 0;
    while (off < bytes.size() && fd_ >= 0) {
      const ssize_t n = ::send(fd_, bytes.constData() + off, static_cast<size_t>(bytes.size() - off), MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += n;
    }
    return fd_ >= 0;
  }
  void shutdownWrite() { ::shutdown(fd_, SHUT_WR); }
  /// Bytes the server sent within `ms` (until it closes, or until `until` returns true on what came).
  template <class Pred>
  QByteArray readUntil(int ms, Pred until) {
    QByteArray out;
    QElapsedTimer t;
    t.start();
    while (fd_ >= 0 && t.elapsed() < ms && !until(out)) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closedByPeer_ = true;
        break;
      }
      out.append(buf, n);
    }
    return out;
  }
  QByteArray readAll(int ms) {
    return readUntil(ms, [](const QByteArray&) { return false; });
  }
  bool closedByPeer() const { return closedByPeer_; }

 private:
  int fd_ = -1;
  bool closedByPeer_ = false;
};

/// The status codes of the responses in `bytes`, in order ("HTTP/1.1 200 OK" lines).
inline QList<int> statuses(const QByteArray& bytes) {
  QList<int> out;
  for (qsizetype at = bytes.indexOf("HTTP/1.1 "); at >= 0; at = bytes.indexOf("HTTP/1.1 ", at + 9))
    out << bytes.mid(at + 9, 3).toInt();
  return out;
}

/// The status of the first response in `bytes`, or -1.
inline int status(const QByteArray& bytes) {
  const QList<int> s = statuses(bytes);
  return s.isEmpty() ? -1 : s.first();
}

/// The body after the first header block.
inline QByteArray body(const QByteArray& bytes) {
  const qsizetype at = bytes.indexOf("\r\n\r\n");
  return at < 0 ? QByteArray() : bytes.mid(at + 4);
}

/// A request with `headers` (each "Name: value") and a Content-Length body; Connection: close
/// unless a Connection header is given.
inline QByteArray request(const QByteArray& method, const QByteArray& path, int port, const QByteArray& body = {},
                          const QList<QByteArray>& headers = {}) {
  QByteArray r = method + " " + path + " HTTP/1.1\r\n";
  bool host = false, conn = false, type = false;
  for (const QByteArray& h : headers) {
    host |= h.toLower().startsWith("host:");
    conn |= h.toLower().startsWith("connection:");
    type |= h.toLower().startsWith("content-type:");
  }
  if (!host) r += "Host: 127.0.0.1:" + QByteArray::number(port) + "\r\n";
  if (!conn) r += "Connection: close\r\n";
  if (!type && !body.isNull()) r += "Content-Type: application/json\r\n";
  for (const QByteArray& h : headers) r += h + "\r\n";
  if (!body.isNull()) r += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
  return r + "\r\n" + body;
}

/// One request on a connection of its own; the whole answer (the server closes after it).
inline QByteArray roundTrip(int port, const QByteArray& bytes, int ms = 60000) {
  Conn c(port);
  if (!c.ok() || !c.send(bytes)) return {};
  return c.readAll(ms);
}

}  // namespace rawhttp
