#include "app/engine/remote/remote_backend.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>

#include <algorithm>
#include <utility>

#include "app/engine/tool_reply.h"

#include "app/engine/sentence.h"
#include "engine/finish_reason.h"

namespace {

/// Calls one reply may stream (more are dropped: no model makes that many in one turn).
constexpr int kMaxToolCalls = 128;

/// A float setting as JSON: its shortest decimal form (0.8, not 0.800000011920929).
double jsonNumber(float x) { return QString::number(static_cast<double>(x), 'g', 7).toDouble(); }

/// The message of an OpenAI error object ({"error": {"message"}}), of vLLM's older
/// {"object": "error", "message"}, of {"error": "text"} (llama-server, Ollama) or {"detail"}; "" if none.
QString errorMessageOf(const QJsonObject& o) {
  const QJsonValue e = o.value(QLatin1String("error"));
  if (e.isObject()) return e.toObject().value(QLatin1String("message")).toString();
  if (e.isString()) return e.toString();
  if (o.value(QLatin1String("message")).isString()) return o.value(QLatin1String("message")).toString();
  if (o.value(QLatin1String("detail")).isString()) return o.value(QLatin1String("detail")).toString();
  return {};
}

/// A short plain-text form of a non-JSON error body: an HTML page (a proxy's or a web server's
/// error page) gives its <title>, or nothing; other text its first 300 bytes on one line.
QString plainTextOf(const QByteArray& body, const QString& contentType) {
  const QString text = QString::fromUtf8(body.left(4096)).simplified();
  if (contentType.contains(QLatin1String("html"), Qt::CaseInsensitive) || text.startsWith(QLatin1Char('<'))) {
    static const QRegularExpression title(QStringLiteral("<title[^>]*>([^<]*)</title>"),
                                          QRegularExpression::CaseInsensitiveOption);
    return title.match(text).captured(1).simplified().left(200);
  }
  return text.left(300);
}

}  // namespace

RemoteChatBackend::RemoteChatBackend(QObject* parent) : ChatBackend(parent) {}

RemoteChatBackend::~RemoteChatBackend() {
  // No callbacks into this half-destroyed object: the replies go with network_.
  for (QNetworkReply* reply : streams_.keys()) {
    reply->disconnect(this);
    reply->abort();
  }
  if (modelsReply_) {
    modelsReply_->disconnect(this);
    modelsReply_->abort();
  }
}

QString RemoteChatBackend::checkBaseUrl(const QString& text) {
  const QUrl url(text.trimmed(), QUrl::StrictMode);
  if (text.trimmed().isEmpty()) return tr("Enter the endpoint's base URL, e.g. http://localhost:8000/v1.");
  if (!url.isValid() || (url.scheme() != QLatin1String("http") && url.scheme() != QLatin1String("https")))
    return tr("'%1' is not an http:// or https:// URL.").arg(text.trimmed());
  if (url.host().isEmpty()) return tr("'%1' names no host.").arg(text.trimmed());
  return {};
}

void RemoteChatBackend::setEndpoint(const QUrl& baseUrl, const QString& model, const QString& apiKey) {
  QUrl url = baseUrl;
  QString path = url.path();
  while (path.endsWith(QLatin1Char('/'))) path.chop(1);
  url.setPath(path);
  if (url != baseUrl_ || model != model_) maxModelLen_ = 0;
  baseUrl_ = url;
  model_ = model;
  apiKey_ = apiKey;
}

QString RemoteChatBackend::backendLabel() const {
  return QStringLiteral("remote:%1@%2").arg(model_, baseUrl_.toString());
}

QString RemoteChatBackend::host() const {
  return baseUrl_.port() > 0 ? QStringLiteral("%1:%2").arg(baseUrl_.host()).arg(baseUrl_.port()) : baseUrl_.host();
}

QNetworkRequest RemoteChatBackend::request(const QString& path) const {
  QUrl url = baseUrl_;
  url.setPath(baseUrl_.path() + path);
  QNetworkRequest r(url);
  r.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
  if (!apiKey_.isEmpty()) r.setRawHeader("Authorization", "Bearer " + apiKey_.toUtf8());
  // A redirect is followed only to the same scheme, host and port: the API key (and the
  // conversation) never go to another server; a redirect elsewhere fails (describeFailure()).
  r.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::SameOriginRedirectPolicy);
  r.setTransferTimeout(transferTimeoutMs_);
  return r;
}

QString RemoteChatBackend::submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params,
                                  bool continueLast, const QString& reasoning, const QString& tools,
                                  const QString& /*drafts: the server decides*/, const QString& toolChoice) {
  const QString id = QStringLiteral("remote-%1").arg(nextId_++);
  QJsonArray chat;
  for (const PromptMessage& m : messages) {
    // The message's further fields (tool_calls, tool_call_id) as OpenAI's messages carry them.
    QJsonObject o = QJsonDocument::fromJson(m.fields.toUtf8()).object();
    o.insert(QStringLiteral("role"), messageRoleText(m.role));
    if (m.images.isEmpty() || m.role == MessageRole::kTool) {
      // (OpenAI's tool messages take text only: a tool result's pictures stay named in its text.)
      o.insert(QStringLiteral("content"), QString(m.text).remove(QChar(0xFFFC)));
    } else {
      // Content parts: each picture (a marker in the text) as an image_url data: URL where it stands.
      QJsonArray parts;
      const QStringList pieces = m.text.split(QChar(0xFFFC));
      for (qsizetype k = 0; k < pieces.size(); ++k) {
        if (!pieces[k].isEmpty())
          parts.append(
              QJsonObject{{QStringLiteral("type"), QStringLiteral("text")}, {QStringLiteral("text"), pieces[k]}});
        if (k + 1 < pieces.size() && k < m.images.size()) {
          const ImageAttachment& a = m.images[k];
          const QString url = QStringLiteral("data:%1;base64,%2").arg(a.mime, QString::fromLatin1(a.bytes.toBase64()));
          parts.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("image_url")},
                                   {QStringLiteral("image_url"), QJsonObject{{QStringLiteral("url"), url}}}});
        }
      }
      o.insert(QStringLiteral("content"), parts);
    }
    chat.append(o);
  }
  QJsonObject body{{QStringLiteral("messages"), chat},
                   {QStringLiteral("stream"), true},
                   {QStringLiteral("stream_options"), QJsonObject{{QStringLiteral("include_usage"), true}}},
                   {QStringLiteral("temperature"), jsonNumber(params.temperature)},
                   {QStringLiteral("top_p"), jsonNumber(params.top_p)},
                   {QStringLiteral("max_tokens"), params.max_tokens}};
  if (!model_.isEmpty()) body.insert(QStringLiteral("model"), model_);
  // vLLM's extra sampling fields (llama-server reads them too), sent only when they change something.
  if (params.top_k > 0) body.insert(QStringLiteral("top_k"), params.top_k);
  if (params.min_p > 0.0f) body.insert(QStringLiteral("min_p"), jsonNumber(params.min_p));
  if (params.repetition_penalty != 1.0f)
    body.insert(QStringLiteral("repetition_penalty"), jsonNumber(params.repetition_penalty));
  if (params.seed) body.insert(QStringLiteral("seed"), static_cast<qint64>(*params.seed));
  if (reasoning == QLatin1String("on") || reasoning == QLatin1String("off"))
    body.insert(QStringLiteral("chat_template_kwargs"),
                QJsonObject{{QStringLiteral("enable_thinking"), reasoning == QLatin1String("on")}});
  else if (!reasoning.isEmpty())
    body.insert(QStringLiteral("reasoning_effort"), reasoning);
  if (!tools.isEmpty()) {
    body.insert(QStringLiteral("tools"), QJsonDocument::fromJson(tools.toUtf8()).array());
    if (toolChoice == QLatin1String("required"))
      body.insert(QStringLiteral("tool_choice"), toolChoice);
    else if (!toolChoice.isEmpty() && toolChoice != QLatin1String("auto"))  // OpenAI's named function
      body.insert(QStringLiteral("tool_choice"),
                  QJsonObject{{QStringLiteral("type"), QStringLiteral("function")},
                              {QStringLiteral("function"), QJsonObject{{QStringLiteral("name"), toolChoice}}}});
  }
  if (continueLast) {  // vLLM's way to continue the last assistant message
    body.insert(QStringLiteral("continue_final_message"), true);
    body.insert(QStringLiteral("add_generation_prompt"), false);
  }
  if (tools.isEmpty() && !toolChoice.isEmpty() && toolChoice != QLatin1String("auto")) {
    const QString why = toolChoiceUnavailable(toolChoice);
    QMetaObject::invokeMethod(
        this, [this, id, why] { emit requestRejected(id, why); }, Qt::QueuedConnection);
    return id;
  }
  if (!baseUrl_.isValid() || baseUrl_.host().isEmpty()) {
    QMetaObject::invokeMethod(
        this, [this, id] { emit requestRejected(id, tr("No endpoint URL is set for this pane.")); },
        Qt::QueuedConnection);
    return id;
  }
  QNetworkRequest r = request(QStringLiteral("/chat/completions"));
  r.setRawHeader("Accept", "text/event-stream");
  QNetworkReply* reply = network_.post(r, QJsonDocument(body).toJson(QJsonDocument::Compact));
  Stream s;
  s.requestId = id;
  streams_.insert(reply, std::move(s));
  connect(reply, &QNetworkReply::readyRead, this, [this, reply] { onReadyRead(reply); });
  connect(reply, &QNetworkReply::finished, this, [this, reply] { onFinished(reply); });
  return id;
}

void RemoteChatBackend::cancel(const QString& requestId) {
  for (auto it = streams_.begin(); it != streams_.end(); ++it) {
    if (it->requestId != requestId) continue;
    QNetworkReply* reply = it.key();
    streams_.erase(it);
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
    // As the local engine does: the final delta comes later, never inside cancel().
    QMetaObject::invokeMethod(
        this,
        [this, requestId] {
          RequestDelta d;
          d.requestId = requestId;
          d.finished = true;
          d.finishReason = pagedchat::FinishReason::kAbort;
          emit stepFinished({d});
        },
        Qt::QueuedConnection);
    return;
  }
}

void RemoteChatBackend::readEvent(Stream& s, const QByteArray& data, QString& text) {
  if (data.trimmed() == "[DONE]") {
    s.done = true;
    return;
  }
  const QJsonDocument doc = QJsonDocument::fromJson(data);
  if (!doc.isObject()) {
    s.streamError = tr("it sent an event that is not JSON");
    return;
  }
  const QJsonObject o = doc.object();
  if (o.contains(QLatin1String("error"))) {
    s.streamError = errorMessageOf(o);
    return;
  }
  const QJsonArray choices = o.value(QLatin1String("choices")).toArray();
  if (!choices.isEmpty()) {
    const QJsonObject choice = choices.first().toObject();
    const QJsonObject delta = choice.value(QLatin1String("delta")).toObject();
    QString reasoning = delta.value(QLatin1String("reasoning_content")).toString();
    if (reasoning.isEmpty()) reasoning = delta.value(QLatin1String("reasoning")).toString();
    const QString content = delta.value(QLatin1String("content")).toString();
    if (!reasoning.isEmpty()) {
      if (!s.inReasoning) text += QStringLiteral("<think>\n");
      s.inReasoning = true;
      text += reasoning;
    }
    if (!content.isEmpty()) {
      if (s.inReasoning) text += QStringLiteral("\n</think>\n\n");
      s.inReasoning = false;
      text += content;
    }
    if (!reasoning.isEmpty() || !content.isEmpty()) ++s.tokens;
    // Calls stream as OpenAI sends them: the id and name once, the arguments in pieces, by index.
    for (const QJsonValue& v : delta.value(QLatin1String("tool_calls")).toArray()) {
      const QJsonObject piece = v.toObject();
      const int index = piece.value(QLatin1String("index")).toInt(-1);
      if (index < 0 || index > s.toolCalls.size() || index >= kMaxToolCalls) continue;  // out of order: dropped
      if (index == s.toolCalls.size())
        s.toolCalls.append(QJsonObject{{QStringLiteral("type"), QStringLiteral("function")}});
      QJsonObject call = s.toolCalls.at(index).toObject();
      QJsonObject function = call.value(QLatin1String("function")).toObject();
      const QJsonObject f = piece.value(QLatin1String("function")).toObject();
      if (piece.contains(QLatin1String("id"))) call.insert(QStringLiteral("id"), piece.value(QLatin1String("id")));
      if (f.contains(QLatin1String("name"))) function.insert(QStringLiteral("name"), f.value(QLatin1String("name")));
      function.insert(QStringLiteral("arguments"), function.value(QLatin1String("arguments")).toString() +
                                                       f.value(QLatin1String("arguments")).toString());
      call.insert(QStringLiteral("function"), function);
      s.toolCalls.replace(index, call);
      ++s.tokens;
    }
    // Another server's reason ("content_filter", "tool_calls"): the answer ended normally, as a stop.
    const QString finish = choice.value(QLatin1String("finish_reason")).toString();
    if (!finish.isEmpty())
      s.finishReason = pagedchat::parse_finish_reason(finish.toStdString()).value_or(pagedchat::FinishReason::kStop);
  }
  const QJsonObject usage = o.value(QLatin1String("usage")).toObject();
  if (!usage.isEmpty()) {
    s.promptTokens = usage.value(QLatin1String("prompt_tokens")).toInt();
    s.completionTokens = usage.value(QLatin1String("completion_tokens")).toInt(-1);
  }
}

void RemoteChatBackend::onReadyRead(QNetworkReply* reply) {
  const auto it = streams_.find(reply);
  if (it == streams_.end()) return;
  if (reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() >= 300) return;  // read when finished
  Stream& s = *it;
  const int tokensBefore = s.tokens;
  const bool firstEvent = !s.anyEvent;
  QString text;
  const QList<QByteArray> events = s.parser.feed(reply->readAll());
  for (const QByteArray& e : events) readEvent(s, e, text);
  if (events.isEmpty()) return;
  s.anyEvent = true;
  if (text.isEmpty() && s.tokens == tokensBefore && !firstEvent) return;
  RequestDelta d;
  d.requestId = s.requestId;
  d.text = text;
  d.newTokens = s.tokens - tokensBefore;
  emit stepFinished({d});
}

void RemoteChatBackend::onFinished(QNetworkReply* reply) {
  reply->deleteLater();
  const auto it = streams_.find(reply);
  if (it == streams_.end()) return;
  Stream s = std::move(*it);
  streams_.erase(it);
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QByteArray rest = reply->isOpen() ? reply->readAll() : QByteArray();  // closed after a timeout
  if (status >= 300 || (reply->error() != QNetworkReply::NoError && !s.anyEvent && !s.finishReason)) {
    emit requestRejected(s.requestId, describeFailure(reply, rest));
    return;
  }
  QString text;
  const int tokensBefore = s.tokens;
  for (const QByteArray& e : s.parser.feed(rest)) readEvent(s, e, text);
  if (s.inReasoning) text += QStringLiteral("\n</think>\n\n");
  RequestDelta d;
  d.requestId = s.requestId;
  d.text = text;
  d.newTokens = s.tokens - tokensBefore;
  d.numPromptTokens = s.promptTokens;
  // "abort" here is the server's own doing (a user's stop never reaches onFinished: cancel()).
  const bool serverAborted = s.finishReason == pagedchat::FinishReason::kAbort;
  if (s.finishReason && !serverAborted && s.streamError.isEmpty()) {
    if (s.completionTokens >= 0) d.newTokens = std::max(0, s.completionTokens - tokensBefore);
    d.finished = true;
    d.finishReason = s.finishReason;
    if (!s.toolCalls.isEmpty())
      d.toolCalls = QString::fromUtf8(QJsonDocument(s.toolCalls).toJson(QJsonDocument::Compact));
    emit stepFinished({d});
    return;
  }
  // Broken off: what arrived is kept; the pane says why.
  if (!d.text.isEmpty() || d.newTokens > 0) emit stepFinished({d});
  QString why;
  if (!s.streamError.isEmpty())
    why = tr("%1 stopped the answer: %2").arg(host(), sentence(s.streamError));
  else if (serverAborted)
    why =
        tr("%1 stopped the answer before it was complete (it aborted the request; is it shutting down?).").arg(host());
  else if (reply->error() != QNetworkReply::NoError)
    why = describeFailure(reply, QByteArray());
  else
    why = tr("The connection to %1 ended before the answer was complete.").arg(host());
  emit requestRejected(s.requestId, why);
}

QString RemoteChatBackend::describeFailure(QNetworkReply* reply, const QByteArray& body) const {
  if (reply->error() == QNetworkReply::InsecureRedirectError) {
    const QUrl to = reply->url().resolved(QUrl::fromEncoded(reply->rawHeader("Location")));
    return tr("%1 redirected the request to another server (%2); PagedChat did not follow it, so that your API key and "
              "messages stay with %1. Set the pane's URL to the server that answers.")
        .arg(host(), to.isValid() && !to.host().isEmpty()
                         ? to.adjusted(QUrl::RemoveUserInfo | QUrl::RemoveQuery).toString()
                         : tr("another address"));
  }
  const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (status >= 300) {
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    QString message = doc.isObject() ? errorMessageOf(doc.object()) : QString();
    if (message.isEmpty()) message = plainTextOf(body, reply->header(QNetworkRequest::ContentTypeHeader).toString());
    const QString reason = reply->attribute(QNetworkRequest::HttpReasonPhraseAttribute).toString();
    if (status == 401 || status == 403)
      return tr("%1 refused the request (HTTP %2 %3): %4 Check the API key in the pane's settings.")
          .arg(host())
          .arg(status)
          .arg(reason, sentence(message));
    if (message.isEmpty()) return tr("%1 answered HTTP %2 %3.").arg(host()).arg(status).arg(reason);
    return tr("%1 answered HTTP %2 %3: %4").arg(host()).arg(status).arg(reason, sentence(message));
  }
  switch (reply->error()) {
    case QNetworkReply::ConnectionRefusedError:
      return tr("Cannot reach %1: the connection was refused (is the server running on that port?).").arg(host());
    case QNetworkReply::HostNotFoundError:
      return tr("Cannot reach %1: the host name is unknown.").arg(host());
    case QNetworkReply::TimeoutError:
    case QNetworkReply::OperationCanceledError:  // the transfer timeout (cancel() never gets here)
      return tr("%1 sent nothing for %2 s; the request was stopped.").arg(host()).arg(transferTimeoutMs_ / 1000.0);
    case QNetworkReply::SslHandshakeFailedError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::UnknownNetworkError:
      if (reply->url().scheme() == QLatin1String("https"))
        return tr("TLS error with %1: %2").arg(host(), sentence(reply->errorString()));
      break;
    case QNetworkReply::RemoteHostClosedError:
      return tr("%1 closed the connection before the answer was complete.").arg(host());
    default:
      break;
  }
  return tr("Network error with %1: %2").arg(host(), sentence(reply->errorString()));
}

void RemoteChatBackend::listModels() {
  if (modelsReply_) {
    modelsReply_->disconnect(this);
    modelsReply_->abort();
    modelsReply_->deleteLater();
  }
  if (!baseUrl_.isValid() || baseUrl_.host().isEmpty()) {
    emit modelsListed({}, tr("No endpoint URL is set for this pane."));
    return;
  }
  QNetworkReply* reply = network_.get(request(QStringLiteral("/models")));
  modelsReply_ = reply;
  connect(reply, &QNetworkReply::finished, this, [this, reply] {
    reply->deleteLater();
    const QByteArray body = reply->isOpen() ? reply->readAll() : QByteArray();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (reply->error() != QNetworkReply::NoError || status >= 300) {
      emit modelsListed({}, describeFailure(reply, body));
      return;
    }
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    const QJsonArray data = doc.object().value(QLatin1String("data")).toArray();
    if (!doc.isObject() || !doc.object().value(QLatin1String("data")).isArray()) {
      emit modelsListed({}, tr("%1 did not answer with an OpenAI model list.").arg(host()));
      return;
    }
    QStringList ids;
    for (const QJsonValue& v : data) {
      const QJsonObject m = v.toObject();
      const QString id = m.value(QLatin1String("id")).toString();
      if (id.isEmpty()) continue;
      ids.append(id);
      if (id == model_) maxModelLen_ = m.value(QLatin1String("max_model_len")).toInt();
    }
    emit modelsListed(ids, QString());
  });
}
