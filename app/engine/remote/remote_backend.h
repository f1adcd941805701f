// RemoteChatBackend: a pane's chat requests sent to an OpenAI-compatible endpoint (vLLM,
// llama-server, Ollama, pagedchat-cli serve) over Qt Network, answers streamed as server-sent events.
#pragma once

#include <QHash>
#include <QNetworkAccessManager>
#include <QPointer>
#include <QStringList>
#include <QUrl>

#include "app/engine/chat_backend.h"
#include "app/engine/remote/sse_parser.h"

class QNetworkReply;

/// Talks to `<baseUrl>/chat/completions` (stream: true, stream_options.include_usage) and
/// `<baseUrl>/models`, with `Authorization: Bearer <apiKey>` when a key is set. Each SSE chunk's
/// choices[0].delta.content becomes a RequestDelta (one token per chunk until the final usage
/// counts replace the tally); a reasoning server's delta.reasoning_content (vLLM's reasoning
/// parsers, llama-server) is wrapped in <think>…</think> as local reasoning replies are.
///
/// Failures reach the pane as requestRejected() with a sentence naming the host: unreachable
/// (refused, unknown host, no route), TLS (certificate, handshake), an HTTP error status with the
/// server's OpenAI error message (401: check the API key), no data for transferTimeoutMs (a slow
/// or hung endpoint), a stream that ends before its finish reason ("cut"), a redirect to another
/// server (scheme, host or port: never followed, so the API key and the conversation stay with
/// the endpoint; a redirect on the same server is followed). Before the first event the pane
/// takes its turn back; after it the text so far stays. Other panes are untouched: every request
/// is its own QNetworkReply.
class RemoteChatBackend : public ChatBackend {
  Q_OBJECT

 public:
  /// A slow endpoint: no byte for this long stops the request (a long prompt's prefill included).
  static constexpr int kDefaultTransferTimeoutMs = 120000;

  explicit RemoteChatBackend(QObject* parent = nullptr);
  ~RemoteChatBackend() override;

  /// The API's base, e.g. "http://gpu-box:8000/v1" (a trailing '/' is dropped). Returns "" or why
  /// `text` is not one (not http/https, no host).
  static QString checkBaseUrl(const QString& text);
  void setEndpoint(const QUrl& baseUrl, const QString& model, const QString& apiKey);
  QUrl baseUrl() const { return baseUrl_; }
  QString model() const { return model_; }
  bool hasApiKey() const { return !apiKey_.isEmpty(); }
  void setTransferTimeout(int ms) { transferTimeoutMs_ = ms; }
  /// The model's context length as its /models entry gave it (vLLM's max_model_len; 0 = unknown).
  int maxModelLen() const { return maxModelLen_; }

  /// A reasoning choice goes as the API spells it: "low" / "medium" / "high" as OpenAI's
  /// `reasoning_effort`, "on" / "off" as `chat_template_kwargs.enable_thinking` (vLLM,
  /// llama-server and PagedChat's server read it).
  /// `tools` go as the request's `tools` (with `toolChoice` as its `tool_choice` when not "auto");
  /// the streamed `tool_calls` deltas are put together into the last delta's toolCalls.
  QString submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params,
                 bool continueLast = false, const QString& reasoning = QString(), const QString& tools = QString(),
                 const QString& drafts = QStringLiteral("auto"),
                 const QString& toolChoice = QStringLiteral("auto")) override;
  void cancel(const QString& requestId) override;
  /// "remote:<model>@<baseUrl>".
  QString backendLabel() const override;
  bool isRemote() const override { return true; }

  /// GET <baseUrl>/models; answers with modelsListed().
  void listModels();

 signals:
  /// The endpoint's model ids, or `error` (a sentence) when they could not be read.
  void modelsListed(const QStringList& models, const QString& error);

 private:
  /// One streamed request.
  struct Stream {
    QString requestId;
    SseParser parser;
    bool anyEvent = false;  ///< an event arrived: the endpoint took the request
    bool done = false;      ///< "[DONE]" arrived
    bool cancelled = false;
    bool inReasoning = false;
    std::optional<pagedchat::FinishReason> finishReason;
    QString streamError;   ///< an error object sent inside the stream
    int tokens = 0;        ///< content chunks so far
    int promptTokens = 0;  ///< from usage
    int completionTokens = -1;
    QJsonArray toolCalls;  ///< the calls streamed so far, by their index
  };

  QNetworkRequest request(const QString& path) const;
  void onReadyRead(QNetworkReply* reply);
  void onFinished(QNetworkReply* reply);
  /// Applies one event's JSON to `s`, appending its text to `text`.
  void readEvent(Stream& s, const QByteArray& data, QString& text);
  /// A sentence for a failed reply (network error or HTTP status with the server's message).
  QString describeFailure(QNetworkReply* reply, const QByteArray& body) const;
  QString host() const;

  QNetworkAccessManager network_;
  QUrl baseUrl_;
  QString model_;
  QString apiKey_;
  int transferTimeoutMs_ = kDefaultTransferTimeoutMs;
  int maxModelLen_ = 0;
  qint64 nextId_ = 1;
  QHash<QNetworkReply*, Stream> streams_;
  QPointer<QNetworkReply> modelsReply_;
};
