// ChatBackend: what a chat pane sends its requests to — the local engine or a remote endpoint.
#pragma once

#include <QList>
#include <QObject>
#include <QString>

#include "app/engine/chat_prompt.h"
#include "app/engine/request_delta.h"
#include "engine/sample/sampling_params.h"

/// The pane's side of a chat request, whoever answers it: LocalChatBackend (the engine in this
/// process, its worker thread) or RemoteChatBackend (an OpenAI-compatible endpoint over HTTP).
/// Runs on the GUI thread. submit() returns at once with a request id; the reply comes as
/// stepFinished() deltas (RequestDelta: new text, tokens, the finish reason on the last one) or
/// as requestRejected(): before any delta it means the request was not taken (the pane takes its
/// turn back), after one that it broke off (the pane keeps the text so far and shows the message).
class ChatBackend : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;

  /// Queues a chat turn: `messages` is the whole conversation (buildChatMessages()). With
  /// `continueLast` the last message is an assistant reply to continue. `reasoning`: the pane's
  /// reasoning choice (PaneSettings::reasoning: "" = the model's default, "on", "off", "low",
  /// "medium", "high"). `tools`: the tools offered, an OpenAI tools array's JSON text ("" = none);
  /// the last delta then carries the calls made (RequestDelta::toolCalls). `drafts`: who proposes
  /// the local engine's draft tokens for this request (PaneSettings::drafts: "auto", "mtp",
  /// "draft", "ngram", "off"; the reply is the same). `toolChoice` (PaneSettings::toolChoice):
  /// "auto" (the model decides), "required" (it must call one of `tools`) or a tool's name (it
  /// must call that one), OpenAI's tool_choice. Returns the request id.
  virtual QString submit(const QList<PromptMessage>& messages, const pagedchat::SamplingParams& params,
                         bool continueLast = false, const QString& reasoning = QString(),
                         const QString& tools = QString(), const QString& drafts = QStringLiteral("auto"),
                         const QString& toolChoice = QStringLiteral("auto")) = 0;
  /// Stops a request; its last delta has finish reason "abort".
  virtual void cancel(const QString& requestId) = 0;
  /// Names who answers, as stored with each reply (ChatStore's messages.backend): "local:<model
  /// name>" or "remote:<model>@<base URL>".
  virtual QString backendLabel() const = 0;
  /// True for an endpoint over the network (no token counts before a request, no engine view).
  virtual bool isRemote() const { return false; }

 signals:
  /// Deltas of one engine step (local), or of one received event (remote), in the GUI thread.
  /// A local request still reading its prompt also gets progress-only deltas (no text, no
  /// tokens, numComputedPromptTokens set), when a step starts and after it.
  void stepFinished(const QList<RequestDelta>& deltas);
  void requestRejected(const QString& requestId, const QString& message);
  /// The conversation of `requestId` outgrew the context: the engine left out `count` of its
  /// messages (submit()'s list) from index `first` (the context overflow policy). Local only.
  void contextTrimmed(const QString& requestId, int first, int count);
};
