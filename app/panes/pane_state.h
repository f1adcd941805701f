// PaneState: what one chat pane shows and does.
#pragma once

#include <QAbstractItemModel>
#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QString>
#include <QTimer>

#include "app/engine/chat_prompt.h"
#include "app/engine/request_delta.h"
#include "app/engine/throughput_meter.h"
#include "app/panes/pane_settings.h"
#include "engine/sample/sampling_params.h"

class ChatBackend;
class ChatStore;
class StoreError;
class LocalChatBackend;
class MessageListModel;
class RemoteChatBackend;
class ToolHost;

/// The state of one chat pane: the conversation it shows (0 = none yet), its messages, the draft
/// in the input box, and the generation in flight. The turn (the user's message and the reply)
/// is written to the store as soon as the engine has taken the request (its first delta), or when
/// it is stopped or the app quits before that; a request the engine refuses (prompt too long, no
/// model) is taken back: its rows go, the conversation is as before, the text returns to the input
/// box and errorText says why. The streamed reply is written to the store at least once a second
/// (kSaveIntervalMs) and when it finishes or is stopped; a write that fails waits in StoreHealth
/// and is retried. Runs on the GUI thread.
///
/// A conversation is a tree of messages (ChatStore); the pane shows one branch, root to the
/// conversation's current leaf, and every request sends exactly that branch. regenerate() and
/// editMessage() add siblings (the old branch stays), switchBranch() moves between them, and
/// continueReply() appends to a cut-off answer (pane_state_branches.cpp).
class PaneState : public QObject {
  Q_OBJECT
  Q_PROPERTY(qint64 conversationId READ conversationId NOTIFY conversationChanged)
  Q_PROPERTY(QString title READ title NOTIFY titleChanged)
  Q_PROPERTY(QAbstractItemModel* messages READ messageModel CONSTANT)
  Q_PROPERTY(QString inputText READ inputText WRITE setInputText NOTIFY inputTextChanged)
  Q_PROPERTY(bool busy READ isBusy NOTIFY busyChanged)
  /// While the engine reads the request's prompt: its tokens computed so far (the prefix cache's
  /// included) and its length; both 0 otherwise (not started, or answering).
  Q_PROPERTY(int promptTokensRead READ promptTokensRead NOTIFY promptProgressChanged)
  Q_PROPERTY(int promptTokensTotal READ promptTokensTotal NOTIFY promptProgressChanged)
  /// The conversation outgrew the context: the rows the model did not see in the latest request
  /// (the context overflow policy left them out), first and last, or -1; and how many messages.
  Q_PROPERTY(int unseenFirstRow READ unseenFirstRow NOTIFY unseenChanged)
  Q_PROPERTY(int unseenLastRow READ unseenLastRow NOTIFY unseenChanged)
  Q_PROPERTY(int unseenMessages READ unseenMessages NOTIFY unseenChanged)
  Q_PROPERTY(QString errorText READ errorText NOTIFY errorTextChanged)
  /// Pictures attached to the next message: a list of {bytes, mime, width, height}.
  Q_PROPERTY(QVariantList pendingImages READ pendingImages NOTIFY pendingImagesChanged)
  /// The pane's model can be sent pictures: a local model loaded with its image projector, or a
  /// remote endpoint (which answers for itself).
  Q_PROPERTY(bool imagesAccepted READ imagesAccepted NOTIFY contextChanged)
  Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY samplingChanged)
  Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY samplingChanged)
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY samplingChanged)
  /// The pane's system prompt and sampling settings (every request uses them).
  Q_PROPERTY(PaneSettings* settings READ settings CONSTANT)
  /// This pane's generation speed while it streams (ThroughputMeter of its own deltas).
  Q_PROPERTY(ThroughputMeter* throughput READ throughput CONSTANT)
  /// Decode tokens/s of the last finished reply: the tokens after the first over their time, the
  /// prompt's not counted (-1 = none: no reply yet, or one of fewer than two tokens).
  Q_PROPERTY(double lastReplyRate READ lastReplyRate NOTIFY contextChanged)
  /// Speculative decoding in the latest reply (local engine): the share of draft tokens accepted
  /// (0 .. 1; -1 = no drafts were verified) and the mean tokens one step gave where drafts were
  /// verified (1 + accepted / verifications, vLLM's mean acceptance length; 0 = none).
  Q_PROPERTY(double draftAcceptance READ draftAcceptance NOTIFY contextChanged)
  Q_PROPERTY(double meanAcceptedLength READ meanAcceptedLength NOTIFY contextChanged)
  /// Who proposed those drafts: "mtp" (the model's MTP layers), "ngram", "draft_model"; "" none.
  Q_PROPERTY(QString draftMethod READ draftMethod NOTIFY contextChanged)
  /// Context use of the current branch: the latest request's prompt tokens plus the tokens
  /// generated for it (0 until the pane's first request), and the model's max positions (0 =
  /// unknown, no model yet).
  Q_PROPERTY(int contextUsed READ contextUsed NOTIFY contextChanged)
  Q_PROPERTY(int contextLimit READ contextLimit NOTIFY contextChanged)
  /// The pane talks to a remote OpenAI-compatible endpoint instead of the local engine.
  Q_PROPERTY(bool remote READ isRemote NOTIFY backendChanged)
  /// The remote endpoint's base URL and model ("" for the local engine).
  Q_PROPERTY(QString endpointUrl READ endpointUrl NOTIFY backendChanged)
  Q_PROPERTY(QString endpointModel READ endpointModel NOTIFY backendChanged)
  /// The local model that answers (or would, were no endpoint set): the app's main one unless
  /// the pane picked another (useLocalModel()).
  Q_PROPERTY(LocalChatBackend* localEngine READ localEngine NOTIFY backendChanged)
  /// The pane answers with a local model other than the main one.
  Q_PROPERTY(bool otherLocalModel READ usesOtherLocalModel NOTIFY backendChanged)
  /// The tool calls of the latest reply that wait for the user or run (pane_state_tools.cpp): one
  /// map each: index, name, arguments (a JSON object's text), state ("asking" or "running").
  Q_PROPERTY(QVariantList toolCalls READ toolCalls NOTIFY toolCallsChanged)
  /// The next request offers the app's tools (some are set up, and this pane has them on).
  Q_PROPERTY(bool toolsOffered READ toolsOffered NOTIFY toolsOfferedChanged)
  /// The app's tools (AppController.tools), or null.
  Q_PROPERTY(ToolHost* toolHost READ toolHost NOTIFY toolsOfferedChanged)

 public:
  PaneState(ChatStore* store, LocalChatBackend* engine, QObject* parent = nullptr);
  /// Stops a running generation and saves its text (finish reason "abort").
  ~PaneState() override;

  /// Sends the draft (inputText) as the next user message: what Enter in the input box does.
  /// Creates a conversation first when the pane has none. The request carries the whole
  /// conversation (system prompt, earlier messages, the new one: buildChatMessages()), which the
  /// engine worker renders with the model's chat template; the repeated turns come from the
  /// prefix cache. Returns false when nothing was sent (empty draft, already generating, no
  /// model, store error).
  Q_INVOKABLE bool send();
  /// Sends `text` as the next user message without touching the draft in the input box (what
  /// "send to all panes" does for the other panes). Same rules and result as send(); a refused
  /// request puts `text` into the input box.
  Q_INVOKABLE bool sendText(const QString& text);
  /// sendText() with `images` as the message's pictures (send to all panes: the typing pane's),
  /// leaving this pane's own pending pictures alone.
  bool sendText(const QString& text, const QList<ImageAttachment>& images);
  QList<ImageAttachment> pendingImageList() const { return pendingImages_; }
  void clearPendingImages();
  /// Attaches the picture at `url` (a local file: PNG, JPEG or WebP) to the next message; false,
  /// with errorText saying why, for a file that cannot be read or decoded, a model that reads no
  /// images, or more than kMaxPendingImages.
  Q_INVOKABLE bool attachImageFile(const QUrl& url);
  /// The same for a picture's encoded bytes (a paste).
  Q_INVOKABLE bool attachImageData(const QByteArray& bytes);
  Q_INVOKABLE void removePendingImage(int index);
  /// Shows `text` as the pane's error (what the QML cannot do itself: a file dialog that failed).
  Q_INVOKABLE void showError(const QString& text) { setErrorText(text); }
  static constexpr int kMaxPendingImages = 8;
  QVariantList pendingImages() const;
  bool imagesAccepted() const;
  /// `text` went out after all (a "send to all" that works now): takes out of the input box the
  /// copy a refused try put back there (at its top), so that Enter does not send it again.
  void dropGivenBackDraft(const QString& text);
  /// Stops the generation in flight; the reply keeps the text so far.
  Q_INVOKABLE void stop();

  // Message actions (pane_state_branches.cpp). None runs while a reply is generated; each
  // returns false (and sets errorText when it is worth saying why) when nothing was done.
  /// Generates a new answer to the last question: a new assistant message beside the last one
  /// (same parent); the old answer stays as a sibling branch. An answer to tool results is
  /// generated again from the same results.
  Q_INVOKABLE bool regenerate();
  /// Sends `text` in place of the user message at `row`: a new user message beside it (same
  /// parent) and a new answer; the old branch stays and can be switched back to.
  Q_INVOKABLE bool editMessage(int row, const QString& text);
  /// Shows the sibling `step` places from the message at `row` (-1 previous, +1 next) and below
  /// it the branch this pane showed there last (the newest one when none, or when that is gone).
  Q_INVOKABLE bool switchBranch(int row, int step);
  /// Continues the last answer when it was cut off (finish reason "length", "abort" or none):
  /// the conversation is sent with that answer open at the end, and the new text is appended to it.
  Q_INVOKABLE bool continueReply();
  /// True when continueReply() applies to the last row.
  Q_INVOKABLE bool canContinue() const;
  /// Shows message `messageId` (switching to a branch through it when needed) and emits
  /// messageShown(row) for the view to scroll to and highlight it.
  Q_INVOKABLE bool showMessage(qint64 messageId);
  /// The messages of the latest request (tests, debugging).
  QList<PromptMessage> lastRequest() const { return lastRequest_; }

  /// Shows conversation `id` (stopping and saving a generation in flight first).
  void openConversation(qint64 id, const QString& title);
  /// Writes the streamed text of the reply in progress that is not saved yet, if any (the save
  /// timer does it every 500 ms; this is for before work that keeps the GUI thread busy).
  void flushReply() { saveReply(); }
  /// Shows no conversation. With `deleted`, the current one is gone: nothing more is written.
  void closeConversation(bool deleted = false);
  void setTitle(const QString& title);

  qint64 conversationId() const { return conversationId_; }
  QString title() const { return title_; }
  MessageListModel* messages() const { return messages_; }
  QAbstractItemModel* messageModel() const;
  QString inputText() const { return inputText_; }
  void setInputText(const QString& text);
  /// A reply is being generated, or its tool calls wait for the user or run.
  bool isBusy() const { return !requestId_.isEmpty() || !toolCalls_.isEmpty(); }
  QString errorText() const { return errorText_; }
  QString requestId() const { return requestId_; }
  /// Shortcuts to settings(): temperature, max tokens, system prompt.
  double temperature() const;
  void setTemperature(double t);
  int maxTokens() const;
  void setMaxTokens(int n);
  /// System message put before the conversation of every request (empty = none).
  QString systemPrompt() const;
  void setSystemPrompt(const QString& text);
  pagedchat::SamplingParams samplingParams() const;
  PaneSettings* settings() const { return settings_; }
  ThroughputMeter* throughput() const { return throughput_; }
  double lastReplyRate() const { return lastReplyRate_; }
  double draftAcceptance() const {
    return specDraftTokens_ > 0 ? double(specAcceptedTokens_) / double(specDraftTokens_) : -1.0;
  }
  double meanAcceptedLength() const {
    return specDrafts_ > 0 ? 1.0 + double(specAcceptedTokens_) / double(specDrafts_) : 0.0;
  }
  QString draftMethod() const { return specMethod_; }
  int promptTokensRead() const { return promptRead_; }
  int promptTokensTotal() const { return promptTotal_; }
  int unseenFirstRow() const { return unseenFirst_; }
  int unseenLastRow() const { return unseenLast_; }
  int unseenMessages() const { return unseenMessages_; }
  /// Tokens the conversation takes in the context: the latest request's prompt plus its reply
  /// so far, or, before any request of this pane (a conversation just opened, another branch
  /// shown, the model reloaded), the conversation as the next request would send it, counted by
  /// the engine with the chat template (oldest turns dropped when it does not fit:
  /// countContext()); 0 while unknown.
  int contextUsed() const {
    return promptTokens_ + replyTokens_ > 0 ? promptTokens_ + replyTokens_ : qMax(0, countedTokens_);
  }
  int contextLimit() const;
  /// Prompt tokens of the latest request (the rendered conversation), and how many of them the
  /// prefix cache supplied; 0 until its first delta arrives.
  int promptTokens() const { return promptTokens_; }
  int cachedPromptTokens() const { return cachedPromptTokens_; }

  // The backend (pane_state_backend.cpp): the local engine unless a remote endpoint is set.
  /// From now on sends to the OpenAI-compatible endpoint at `baseUrl` (e.g. http://host:8000/v1)
  /// with `model` and `apiKey` ("" = none). A generation in flight is stopped first (its text kept).
  void useRemoteEndpoint(const QUrl& baseUrl, const QString& model, const QString& apiKey);
  /// Back to the main local model (a generation in flight is stopped first).
  void useLocalEngine();
  /// From now on sends to `backend`, a local model (LocalModels: the main one or another); null
  /// means the main one. A generation in flight is stopped first; a remote endpoint is dropped.
  /// The backend must outlive its use here (LocalModels keeps it while the pane uses it).
  void useLocalModel(LocalChatBackend* backend);
  LocalChatBackend* localEngine() const { return local_; }
  bool usesOtherLocalModel() const { return local_ != engine_; }
  bool isRemote() const { return remote_ != nullptr; }
  QString endpointUrl() const;
  QString endpointModel() const;
  /// The remote backend, or nullptr for the local engine.
  RemoteChatBackend* remoteBackend() const { return remote_; }
  /// Who answers this pane's requests (the label stored with each reply).
  ChatBackend* backend() const { return backend_; }

  /// Title given to a conversation from its first message.
  static QString titleFor(const QString& firstMessage);

  // Tools (pane_state_tools.cpp). A reply that calls tools (RequestDelta::toolCalls) keeps the
  // calls in its fields; each call runs once the user allows it (or at once for a tool always
  // allowed), its result becomes a `tool` message below the reply, and when every call is
  // answered the model is asked again with the results, up to ToolHost::maxToolSteps() calls per
  // user message. stop() stops a running call and answers the others "stopped".
  /// The app's tools (may be null: none); it must outlive the pane.
  void setToolHost(ToolHost* host);
  ToolHost* toolHost() const { return tools_; }
  QVariantList toolCalls() const;
  bool toolsOffered() const;
  /// Runs call `index` of toolCalls(); with `always`, the tool runs without asking from now on.
  Q_INVOKABLE void allowToolCall(int index, bool always = false);
  /// Answers call `index` with "denied" instead of running it.
  Q_INVOKABLE void denyToolCall(int index);

 signals:
  void pendingImagesChanged();
  void conversationChanged();
  void titleChanged();
  void inputTextChanged();
  void busyChanged();
  void promptProgressChanged();
  void unseenChanged();
  void errorTextChanged();
  void samplingChanged();
  void contextChanged();
  /// The store's conversation list changed (created, renamed, new message): reload lists.
  void conversationsModified();
  /// Emitted before work that may keep the GUI thread busy for a while (a new conversation shown,
  /// a message sent: list models reset, delegates made): every pane's streamed text is saved
  /// first (PaneListModel), so a crash during that work loses nothing already shown.
  void flushRepliesWanted();
  /// A reply finished, and why.
  void replyFinished(pagedchat::FinishReason finishReason);
  /// `text` was appended to reply `replyId` (as the pane shows it; the --automation hook).
  void replyTextAppended(qint64 replyId, const QString& text);
  /// Reply `replyId` was written to the store whole, with its finish reason.
  void replySaved(qint64 replyId, pagedchat::FinishReason finishReason);
  /// showMessage() put the message at `row`: scroll there and highlight it.
  void messageShown(int row, qint64 messageId);
  /// useRemoteEndpoint() / useLocalEngine() changed the backend.
  void backendChanged();
  void toolCallsChanged();
  void toolsOfferedChanged();

 private:
  /// attachImageData's work; `name` (a file's name, or empty for a paste) goes into the error.
  bool attachImage(const QByteArray& bytes, const QString& name);
  /// Routes backend_'s deltas and rejections to this pane (and no other backend's).
  void connectBackend();
  /// Follows local_'s state (its model loaded, its token counts).
  void connectLocal();
  /// Stops a generation in flight (text kept) before the backend changes.
  void stopForBackendChange();
  void onStepFinished(const QList<RequestDelta>& deltas);
  void setPromptProgress(int read, int total);
  void onContextTrimmed(const QString& requestId, int first, int count);
  void setUnseen(int first, int last, int messages);
  void onRequestRejected(const QString& requestId, const QString& message);
  bool commitTurn();
  /// Starts a reply: adds the user message `userText` under `userParentId` (unless
  /// `existingUserId` names the question being answered again) and an empty answer, then submits
  /// `history` + the question. `draft` goes back to the input box if the engine refuses. A null
  /// `userText` (tool results answered) submits `history` as it is, the answer below
  /// `existingUserId` (the last result).
  /// `images`: the question's pictures (stored with a new question; sent either way).
  bool startReply(const QList<MessageRecord>& history, const QString& userText, qint64 userParentId,
                  qint64 existingUserId, const QString& draft, bool createdConversation, const QString& titleBefore,
                  const QList<ImageAttachment>& images = {});
  /// Re-reads the shown branch from the store.
  void reloadBranch();
  /// Asks the engine to count the shown conversation's tokens (contextUsed() before a request).
  void countContext();
  /// Before the pane leaves the branch through the message at `row` (switch, edit, regenerate):
  /// remembers the leaf shown below it, for switchBranch() to show on return.
  void rememberShownLeaf(int row);
  /// Sets the sibling position of `row` (its message is the newest of its siblings).
  void refreshSiblings(int row);
  QList<MessageRecord> rows(int from, int to) const;
  /// True when a model is loaded or loading; else sets errorText (no model / its load error).
  bool checkModel();
  void finishReply(pagedchat::FinishReason finishReason, bool save = true);
  void saveReply(std::optional<pagedchat::FinishReason> finishReason = std::nullopt);
  /// A turn could not be saved, so it was not sent: the banner says why (StoreHealth), the pane
  /// that it was not sent. `draft` is the user's text as typed (null for a regenerate): it is never
  /// lost, so unless the input box still holds it (send()), it goes back there (an edit, whose
  /// editor closed with its row, or another pane's "send to all"), and the pane says where it is.
  void reportNotSent(const StoreError& e, const QString& draft);
  /// Puts `draft` into the input box, above what the box holds, unless it is there already.
  void giveBackDraft(const QString& draft);
  /// The input box holds `draft`, alone or above other text (where giveBackDraft() puts it).
  bool draftInInputBox(const QString& draft) const;
  /// Sets errorText to `text`, a store problem's consequence: it goes once the store recovers.
  void setStoreErrorText(const QString& text);
  void setErrorText(const QString& text);

  /// One call of the reply being answered.
  struct ToolCallState {
    QString id, name, arguments;
    int ticket = 0;  ///< ToolHost's, while it runs
    bool running = false;
    bool answered = false;
    QString result;                 ///< what the model gets, once answered
    QList<ImageAttachment> images;  ///< the result's pictures (stored with it, shown, read by a model that can)
  };
  /// The reply `replyId` (at `row`) ended with `calls` (an OpenAI tool_calls array's text).
  void startToolCalls(qint64 replyId, int row, const QString& calls);
  void runToolCall(int index);
  void onToolCallFinished(int ticket, const QString& text, bool isError, const QList<ImageAttachment>& images);
  /// Keeps `text` (and `images`) as the result of call `index`; once all are answered,
  /// finishToolCalls().
  void answerToolCall(int index, const QString& text, const QList<ImageAttachment>& images = {});
  /// Stores the results (one `tool` message each, in the calls' order) and, unless the calls
  /// were stopped, sends the conversation with them back to the model: a new reply below them.
  void finishToolCalls();
  /// Answers every open call "stopped" (a running one is cancelled); nothing is asked again.
  void stopToolCalls();
  /// The tools the next request offers (ToolHost::toolsJson()), "" for none.
  QString toolsForRequest() const;
  /// The tool_choice of `request` (ChatBackend::submit()): the pane's (PaneSettings::toolChoice)
  /// for a reply to the user's message, "auto" after tool results and with the tools switch off.
  QString toolChoiceFor(const QList<PromptMessage>& request) const;

  ChatStore* store_;
  LocalChatBackend* engine_;  ///< the app's main model
  LocalChatBackend* local_;   ///< engine_ or another local model (useLocalModel())
  QList<QMetaObject::Connection> localConnections_;
  ChatBackend* backend_;                 ///< local_ or remote_
  RemoteChatBackend* remote_ = nullptr;  ///< owned (a child) when the pane uses an endpoint
  QList<QMetaObject::Connection> backendConnections_;
  MessageListModel* messages_;
  qint64 conversationId_ = 0;
  QString title_;
  QString inputText_;
  QString errorText_;
  QString storeErrorText_;  ///< errorText_ as a store error set it: cleared once the store recovers
  PaneSettings* settings_;
  ThroughputMeter* throughput_;
  QElapsedTimer firstTokenClock_;         ///< started at the reply's first token (remote backends' timing)
  double decodeSeconds_ = 0.0;            ///< the engine's decode time of the reply so far (RequestDelta)
  int promptRead_ = 0, promptTotal_ = 0;  ///< prompt progress (promptTokensRead/Total)
  int unseenFirst_ = -1, unseenLast_ = -1, unseenMessages_ = 0;  ///< rows the model did not see
  double lastReplyRate_ = -1.0;
  int specDrafts_ = 0, specDraftTokens_ = 0, specAcceptedTokens_ = 0;  ///< the latest reply's (RequestDelta)
  QString specMethod_;
  int replyTokens_ = 0;  ///< tokens generated for the latest request
  int promptTokens_ = 0;
  int cachedPromptTokens_ = 0;
  int countedTokens_ = -1;  ///< the shown conversation counted by the engine (-1: not known)
  int countTicket_ = 0;     ///< the count asked for last (older answers are ignored)
  /// Per message the pane left (rememberShownLeaf()): the leaf shown under it then.
  QHash<qint64, qint64> lastLeafUnder_;

  /// The turn in flight until the engine takes it: its rows are only in messages_, and what
  /// send() changed in the store is undone if the engine refuses the request.
  struct PendingTurn {
    bool active = false;
    QString draft;                  ///< the input box as sent, given back on rejection
    QString text;                   ///< the user's message
    QList<ImageAttachment> images;  ///< its new pictures, given back to pendingImages_ on rejection
    int userRow = -1;
    qint64 userId = 0, replyId = 0;                       ///< store ids, written before the request is submitted
    bool createdConversation = false;                     ///< send() created conversationId_
    QString titleBefore;                                  ///< null unless send() renamed the conversation
    qint64 leafBefore = 0;                                ///< the shown branch before (restored on rejection)
    bool continuation = false;                            ///< continueReply(): nothing new in the store
    std::optional<pagedchat::FinishReason> finishBefore;  ///< the continued reply's finish reason before
  };
  PendingTurn pending_;
  QString requestId_;   ///< request in flight, empty when idle
  qint64 replyId_ = 0;  ///< store id of the assistant message being streamed
  int replyRow_ = -1;   ///< its row in messages_
  QString replyText_;
  bool replyDirty_ = false;  ///< text not yet written to the store
  QTimer saveTimer_;
  QList<PromptMessage> lastRequest_;
  QList<ImageAttachment> pendingImages_;  ///< attached to the next message
  ToolHost* tools_ = nullptr;
  QMetaObject::Connection toolsConnection_, toolsChangedConnection_;
  QList<ToolCallState> toolCalls_;  ///< open calls: empty unless the pane waits for tools
  int toolSteps_ = 0;               ///< calls run since the user's latest message
  bool toolsHalted_ = false;        ///< the open calls were stopped: the model is not asked again
};
