// What the tool tests share: the npm MCP server-everything (tests/js) as a user's mcpServers
// document would start it, and a model on loopback that calls tools the way an OpenAI-compatible
// server streams them.
#pragma once

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>

#include <memory>

#include "http_test_util.h"

namespace apptest {

inline QString everything() {
  return QStringLiteral(PAGEDCHAT_JS_DIR "/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
}

/// The mcpServers document a user would paste: server-everything over stdio.
inline QString everythingConfig() {
  const QJsonObject server{{"command", QStandardPaths::findExecutable("node")},
                           {"args", QJsonArray{everything(), "stdio"}}};
  return QString::fromUtf8(
      QJsonDocument(QJsonObject{{"mcpServers", QJsonObject{{"everything", server}}}}).toJson(QJsonDocument::Compact));
}

/// One streamed chat completion: `calls` (name, arguments text) as tool_calls deltas, the
/// arguments in two pieces, or `text`.
inline QByteArray stream(const QList<QPair<QString, QString>>& calls, const QString& text) {
  QByteArray out;
  auto event = [&out](const QJsonObject& delta, const QString& finish = QString()) {
    QJsonObject choice{{"index", 0}, {"delta", delta}};
    choice.insert("finish_reason", finish.isEmpty() ? QJsonValue() : QJsonValue(finish));
    out += "data: " + QJsonDocument(QJsonObject{{"choices", QJsonArray{choice}}}).toJson(QJsonDocument::Compact) +
           "\n\n";
  };
  if (!text.isEmpty()) event(QJsonObject{{"role", "assistant"}, {"content", text}});
  for (int i = 0; i < calls.size(); ++i) {
    const QString& args = calls[i].second;
    const qsizetype half = args.size() / 2;
    event(QJsonObject{
        {"tool_calls", QJsonArray{QJsonObject{
                           {"index", i},
                           {"id", QStringLiteral("call_%1").arg(i)},
                           {"type", "function"},
                           {"function", QJsonObject{{"name", calls[i].first}, {"arguments", args.left(half)}}}}}}});
    event(QJsonObject{{"tool_calls", QJsonArray{QJsonObject{
                                         {"index", i}, {"function", QJsonObject{{"arguments", args.mid(half)}}}}}}});
  }
  event(QJsonObject{}, calls.isEmpty() ? "stop" : "tool_calls");
  return out + "data: [DONE]\n\n";
}

/// A model on loopback: a request whose last message is a tool result is answered with text
/// ("Done: " and the result), any other with `calls`. Keeps every request body.
class FakeModel : public QObject {
 public:
  QList<QPair<QString, QString>> calls;
  QList<QJsonObject> bodies;

  bool listen() {
    if (!server_.listen(QHostAddress::LocalHost)) return false;
    connect(&server_, &QTcpServer::newConnection, this, [this] {
      answerRequests(server_.nextPendingConnection(), [this](const QByteArray& http) {
        QByteArray body;
        if (http.startsWith("POST")) {
          const QJsonObject request = QJsonDocument::fromJson(http.mid(http.indexOf("\r\n\r\n") + 4)).object();
          bodies.append(request);
          const QJsonObject last = request.value("messages").toArray().last().toObject();
          body = last.value("role").toString() == "tool" ? stream({}, "Done: " + last.value("content").toString())
                                                         : stream(calls, QString());
        }
        return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
               QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      });
    });
    return true;
  }
  QString url() const { return QStringLiteral("http://127.0.0.1:%1/v1").arg(server_.serverPort()); }

 private:
  QTcpServer server_;
};

}  // namespace apptest
