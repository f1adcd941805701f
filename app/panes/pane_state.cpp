#include "app/panes/pane_state.h"

#include <QFile>
#include <QFileInfo>
#include <QUrl>

#include "engine/multimodal/image_decode.h"

#include <QTextBoundaryFinder>

#include <algorithm>
#include <utility>

#include "app/engine/chat_prompt.h"
#include "app/engine/local_chat_backend.h"
#include "app/engine/throughput_meter.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_settings.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"
#include "app/tools/tool_host.h"

namespace {
// Streamed text reaches the store at least this often: twice a second, so that a crash loses
// less than a second of it even when the GUI thread is late (test_crash_safety).
constexpr int kSaveIntervalMs = 500;
constexpr int kTitleLength = 40;
}  // namespace

PaneState::PaneState(ChatStore* store, LocalChatBackend* engine, QObject* parent)
    : QObject(parent),
      store_(store),
      engine_(engine),
      local_(engine),
      backend_(engine),
      messages_(new MessageListModel(this)),
      settings_(new PaneSettings(this)),
      throughput_(new ThroughputMeter(nullptr, this)) {
  connect(settings_, &PaneSettings::changed, this, &PaneState::samplingChanged);
  connect(settings_, &PaneSettings::changed, this, &PaneState::toolsOfferedChanged);
  saveTimer_.setInterval(kSaveIntervalMs);
  connect(&saveTimer_, &QTimer::timeout, this, [this] { saveReply(); });
  // "Not sent: the disk is full" is stale once the history can be written again.
  connect(store_->health(), &StoreHealth::recovered, this, [this] {
    if (!storeErrorText_.isEmpty() && errorText_ == storeErrorText_) setErrorText(QString());
  });
  connectBackend();
  connectLocal();
}

PaneState::~PaneState() {
  if (!toolCalls_.isEmpty()) stopToolCalls();
  if (!requestId_.isEmpty()) {
    backend_->cancel(requestId_);
    finishReply(pagedchat::FinishReason::kAbort);
  }
}

QAbstractItemModel* PaneState::messageModel() const { return messages_; }

QString PaneState::titleFor(const QString& firstMessage) {
  QString line = firstMessage.simplified();
  // Counted and cut in user-perceived characters (grapheme clusters), never inside an emoji's
  // surrogate pair, a ZWJ sequence or a decomposed Hangul syllable.
  QTextBoundaryFinder graphemes(QTextBoundaryFinder::Grapheme, line);
  int count = 0;
  qsizetype cut = 0;  // end of the first kTitleLength - 1 graphemes
  while (count <= kTitleLength && graphemes.toNextBoundary() != -1)
    if (++count == kTitleLength - 1) cut = graphemes.position();
  if (count > kTitleLength) line = line.left(cut).trimmed() + QChar(0x2026);
  return line.isEmpty() ? tr("New chat") : line;
}

pagedchat::SamplingParams PaneState::samplingParams() const { return settings_->samplingParams(); }

double PaneState::temperature() const { return settings_->temperature(); }
void PaneState::setTemperature(double t) { settings_->setTemperature(t); }
int PaneState::maxTokens() const { return settings_->maxTokens(); }
void PaneState::setMaxTokens(int n) { settings_->setMaxTokens(n); }
QString PaneState::systemPrompt() const { return settings_->systemPrompt(); }
void PaneState::setSystemPrompt(const QString& text) { settings_->setSystemPrompt(text); }

bool PaneState::send() {
  const QString draft = inputText_;
  if (!sendText(draft)) return false;
  // A refused request may already have put the draft back (onRequestRejected): keep that.
  if (inputText_ == draft) setInputText(QString());
  return true;
}

QVariantList PaneState::pendingImages() const {
  QVariantList out;
  for (const ImageAttachment& a : pendingImages_) out.append(imageAttachmentMap(a));
  return out;
}

bool PaneState::imagesAccepted() const { return isRemote() || (local_ != nullptr && local_->readsImages()); }

bool PaneState::attachImageFile(const QUrl& url) {
  QFile f(url.isLocalFile() ? url.toLocalFile() : url.toString());
  if (!f.open(QIODevice::ReadOnly)) {
    setErrorText(tr("The image %1 cannot be opened: %2").arg(f.fileName(), f.errorString()));
    return false;
  }
  if (f.size() > qint64(pagedchat::ImageLimits{}.max_file_bytes)) {
    setErrorText(tr("The image %1 is larger than 64 MiB.").arg(f.fileName()));
    return false;
  }
  return attachImage(f.readAll(), QFileInfo(f.fileName()).fileName());
}

bool PaneState::attachImageData(const QByteArray& bytes) { return attachImage(bytes, QString()); }

bool PaneState::attachImage(const QByteArray& bytes, const QString& name) {
  if (!imagesAccepted()) {
    setErrorText(
        tr("This model cannot read images: open it with its image projector (an mmproj file in the "
           "model's folder)."));
    return false;
  }
  if (pendingImages_.size() >= kMaxPendingImages) {
    setErrorText(tr("At most %n images go with one message.", nullptr, kMaxPendingImages));
    return false;
  }
  QString why;
  const std::optional<ImageAttachment> a = readImageAttachment(bytes, &why);
  if (!a) {
    setErrorText(name.isEmpty() ? tr("The image cannot be used: %1").arg(why)
                                : tr("The image %1 cannot be used: %2").arg(name, why));
    return false;
  }
  pendingImages_.append(*a);
  setErrorText(QString());
  emit pendingImagesChanged();
  return true;
}

void PaneState::removePendingImage(int index) {
  if (index < 0 || index >= pendingImages_.size()) return;
  pendingImages_.removeAt(index);
  emit pendingImagesChanged();
}

bool PaneState::checkModel() {
  if (remote_) return true;                                    // the endpoint says what is wrong, if anything
  if (local_->isLoaded() || local_->isLoading()) return true;  // while one loads, requests wait for it
  setErrorText(local_->loadError().isEmpty()
                   ? tr("No model is loaded. Open one with the Model button in the tool bar (Ctrl+O) to chat.")
                   : tr("No model is loaded: %1").arg(local_->loadError()));
  return false;
}

bool PaneState::sendText(const QString& draft) {
  if (!sendText(draft, pendingImages_)) return false;
  clearPendingImages();
  return true;
}

void PaneState::clearPendingImages() {
  if (pendingImages_.isEmpty()) return;
  pendingImages_.clear();
  emit pendingImagesChanged();
}

bool PaneState::sendText(const QString& draft, const QList<ImageAttachment>& images) {
  const QString text = draft.trimmed();
  if ((text.isEmpty() && images.isEmpty()) || isBusy()) return false;
  emit flushRepliesWanted();
  if (!checkModel()) return false;
  if (!images.isEmpty() && !imagesAccepted()) {
    setErrorText(
        tr("This model cannot read images. Remove them, or open the model with its image projector "
           "(an mmproj file in the model's folder)."));
    return false;
  }
  const QList<MessageRecord> history = rows(0, messages_->rowCount());
  bool createdConversation = false;
  QString titleBefore;
  try {
    if (conversationId_ == 0) {
      title_ = titleFor(text.isEmpty() ? tr("Image") : text);
      conversationId_ = store_->createConversation(title_);
      createdConversation = true;
      emit conversationChanged();
      emit titleChanged();
    } else if (history.isEmpty() && title_ == tr("New chat")) {
      titleBefore = title_;
      setTitle(titleFor(text));
      store_->renameConversation(conversationId_, title_);
    }
  } catch (const StoreError& e) {
    reportNotSent(e, draft);
    emit conversationsModified();
    return false;
  }
  const qint64 parent = history.isEmpty() ? 0 : history.constLast().id;
  return startReply(history, text, parent, 0, draft, createdConversation, titleBefore, images);
}

QList<MessageRecord> PaneState::rows(int from, int to) const {
  QList<MessageRecord> out;
  for (int i = qMax(0, from); i < qMin(to, messages_->rowCount()); ++i) out.append(messages_->at(i));
  return out;
}

bool PaneState::startReply(const QList<MessageRecord>& history, const QString& userText, qint64 userParentId,
                           qint64 existingUserId, const QString& draft, bool createdConversation,
                           const QString& titleBefore, const QList<ImageAttachment>& images) {
  // The user's message (and an empty reply) are committed before the request is submitted; if the
  // engine refuses it, onRequestRejected() takes them out again.
  PendingTurn turn;
  turn.active = true;
  turn.draft = draft;
  turn.text = userText;
  if (existingUserId == 0) turn.images = images;
  turn.createdConversation = createdConversation;
  turn.titleBefore = titleBefore;
  MessageRecord reply;
  reply.conversationId = conversationId_;
  reply.createdAt = QDateTime::currentDateTimeUtc();
  reply.role = MessageRole::kAssistant;
  setErrorText(QString());
  try {
    turn.leafBefore = store_->conversation(conversationId_).currentLeafId;
    qint64 userId = existingUserId;
    if (existingUserId == 0) {
      MessageRecord user;
      user.conversationId = conversationId_;
      user.parentId = userParentId;
      user.role = MessageRole::kUser;
      user.text = userText;
      user.attachments = images;
      user.createdAt = reply.createdAt;
      userId = turn.userId = store_->addMessage(conversationId_, user.role, userText, std::nullopt, userParentId,
                                                QString(), QString(), images);
      user.id = userId;
      turn.userRow = messages_->append(user);
      refreshSiblings(turn.userRow);
    }
    reply.parentId = userId;
    reply.backend = backend_->backendLabel();
    reply.id = turn.replyId = store_->addMessage(conversationId_, reply.role, QString(), std::nullopt, userId,
                                                 reply.backend);
  } catch (const StoreError& e) {
    if (turn.userId != 0) {
      try {
        store_->deleteMessage(turn.userId);
      } catch (const StoreError&) {
      }
    }
    reloadBranch();
    reportNotSent(e, draft);  // (the pictures are still the sender's: sendText() keeps them)
    emit conversationsModified();
    return false;
  }
  replyRow_ = messages_->append(reply, /*streaming=*/true);
  if (turn.userRow < 0) turn.userRow = replyRow_;
  refreshSiblings(replyRow_);
  pending_ = turn;
  replyId_ = turn.replyId;
  replyText_.clear();
  replyDirty_ = false;
  promptTokens_ = cachedPromptTokens_ = replyTokens_ = 0;
  if (userText.isNull()) {
    lastRequest_ = buildConversationMessages(systemPrompt(), history);
  } else {
    lastRequest_ = buildChatMessages(systemPrompt(), history, userText, images);
    toolSteps_ = 0;  // a new question: its own tool calls
  }
  setUnseen(-1, -1, 0);  // the engine says again what this request leaves out
  requestId_ = backend_->submit(lastRequest_, samplingParams(), /*continueLast=*/false, settings_->reasoning(),
                                toolsForRequest(), settings_->drafts(), toolChoiceFor(lastRequest_));
  firstTokenClock_.invalidate();
  decodeSeconds_ = 0.0;
  specDrafts_ = specDraftTokens_ = specAcceptedTokens_ = 0;
  specMethod_.clear();
  saveTimer_.start();
  emit contextChanged();
  emit busyChanged();
  emit conversationsModified();
  return true;
}

void PaneState::stop() {
  if (!toolCalls_.isEmpty())
    stopToolCalls();
  else if (isBusy())
    backend_->cancel(requestId_);
}

void PaneState::openConversation(qint64 id, const QString& title) {
  closeConversation();
  QList<MessageRecord> records;
  try {
    records = store_->branch(id);
  } catch (const StoreError& e) {
    store_->health()->report(e);
    return;
  }
  conversationId_ = id;
  messages_->setMessages(records);
  countContext();
  emit conversationChanged();
  setTitle(title);
}

void PaneState::countContext() {
  countedTokens_ = -1;
  const QList<PromptMessage> conversation = buildConversationMessages(systemPrompt(), rows(0, messages_->rowCount()));
  if (conversation.isEmpty() || remote_ || !local_->isLoaded()) {  // remote: counted by its first answer
    countTicket_ = 0;                                              // an answer still on its way is stale
    return;
  }
  countTicket_ = local_->countTokens(conversation, maxTokens());
}

void PaneState::closeConversation(bool deleted) {
  if (!deleted) emit flushRepliesWanted();
  if (!toolCalls_.isEmpty()) {
    if (!deleted) {
      stopToolCalls();  // answered "stopped" in the conversation being left
    } else {            // nothing more is written: running calls are stopped, the rest dropped
      for (const ToolCallState& c : std::as_const(toolCalls_))
        if (c.running && tools_) tools_->cancelCall(c.ticket);
      toolCalls_.clear();
      toolsHalted_ = false;
      emit toolCallsChanged();
      emit busyChanged();
    }
  }
  if (!requestId_.isEmpty()) {
    backend_->cancel(requestId_);
    finishReply(pagedchat::FinishReason::kAbort, /*save=*/!deleted);
  }
  setErrorText(QString());
  messages_->clear();
  setUnseen(-1, -1, 0);
  promptTokens_ = cachedPromptTokens_ = replyTokens_ = 0;
  countedTokens_ = -1;
  countTicket_ = 0;
  lastLeafUnder_.clear();
  lastReplyRate_ = -1.0;
  specDrafts_ = specDraftTokens_ = specAcceptedTokens_ = 0;
  specMethod_.clear();
  emit contextChanged();
  if (conversationId_ != 0) {
    conversationId_ = 0;
    emit conversationChanged();
  }
  setTitle(QString());
}

void PaneState::setTitle(const QString& title) {
  if (title == title_) return;
  title_ = title;
  emit titleChanged();
}

void PaneState::setInputText(const QString& text) {
  if (text == inputText_) return;
  inputText_ = text;
  emit inputTextChanged();
}

void PaneState::onStepFinished(const QList<RequestDelta>& deltas) {
  if (!isBusy()) return;
  for (const RequestDelta& d : deltas) {
    if (d.requestId != requestId_) continue;
    if (d.numComputedPromptTokens >= 0 && d.newTokens == 0 && !d.finished && d.text.isEmpty()) {
      setPromptProgress(d.numComputedPromptTokens, d.numPromptTokens);  // still reading the prompt
      return;
    }
    setPromptProgress(0, 0);
    if (pending_.active && !commitTurn()) backend_->cancel(requestId_);  // cannot be saved: stop
    if (d.numPromptTokens > 0) {
      promptTokens_ = d.numPromptTokens;
      cachedPromptTokens_ = d.numCachedTokens;
    }
    if (d.newTokens > 0) {
      if (replyTokens_ == 0) firstTokenClock_.start();
      replyTokens_ += d.newTokens;
    }
    decodeSeconds_ = std::max(decodeSeconds_, d.decodeSeconds);
    if (d.numSpecDrafts >= specDrafts_) {  // cumulative per request
      specDrafts_ = d.numSpecDrafts;
      specDraftTokens_ = d.numSpecDraftTokens;
      specAcceptedTokens_ = d.numSpecAcceptedTokens;
      specMethod_ = d.specMethod;
    }
    throughput_->addStep(local_->clockMs(), d.newTokens, d.finished ? 0 : 1);
    if (d.numPromptTokens > 0 || d.newTokens > 0) emit contextChanged();
    if (!d.text.isEmpty()) {
      replyText_ += d.text;
      replyDirty_ = true;
      messages_->appendText(replyRow_, d.text, d.draftSpans);
      emit replyTextAppended(replyId_, d.text);
    }
    if (d.finished) {
      const qint64 reply = replyId_;
      const int row = replyRow_;
      const pagedchat::FinishReason reason = d.finishReason.value_or(pagedchat::FinishReason::kStop);
      finishReply(reason);
      if (!d.toolCalls.isEmpty() && reason == pagedchat::FinishReason::kStop) startToolCalls(reply, row, d.toolCalls);
    }
    return;
  }
}

void PaneState::setPromptProgress(int read, int total) {
  if (read == promptRead_ && total == promptTotal_) return;
  promptRead_ = read;
  promptTotal_ = total;
  emit promptProgressChanged();
}

void PaneState::onContextTrimmed(const QString& requestId, int first, int count) {
  if (requestId != requestId_ || first < 0 || count <= 0) return;
  int lo = -1, hi = -1;
  for (int i = first; i < first + count && i < lastRequest_.size(); ++i) {
    const PromptMessage& m = lastRequest_.at(i);
    if (m.firstRow < 0) continue;
    lo = lo < 0 ? m.firstRow : std::min(lo, m.firstRow);
    hi = std::max(hi, m.lastRow);
  }
  setUnseen(lo, hi, count);
}

void PaneState::setUnseen(int first, int last, int messages) {
  if (first == unseenFirst_ && last == unseenLast_ && messages == unseenMessages_) return;
  unseenFirst_ = first;
  unseenLast_ = last;
  unseenMessages_ = messages;
  emit unseenChanged();
}

void PaneState::onRequestRejected(const QString& requestId, const QString& message) {
  if (requestId != requestId_ || requestId_.isEmpty()) return;
  if (!pending_.active) {  // failed after it started (engine error): keep the text so far
    setErrorText(message);
    finishReply(pagedchat::FinishReason::kAbort);
    return;
  }
  // Refused before it started: take the turn back as if it had not been sent.
  const PendingTurn turn = std::exchange(pending_, {});
  saveTimer_.stop();
  requestId_.clear();
  if (turn.continuation) {  // nothing new was stored: the reply is as it was
    messages_->finish(replyRow_, turn.finishBefore);
    replyId_ = 0;
    replyRow_ = -1;
    setErrorText(tr("Not continued: %1").arg(message));
    emit busyChanged();
    return;
  }
  replyId_ = 0;
  replyRow_ = -1;
  try {
    store_->deleteMessage(turn.replyId);
    if (turn.userId != 0) store_->deleteMessage(turn.userId);
    if (turn.createdConversation) {
      store_->deleteConversation(conversationId_);
      conversationId_ = 0;
      emit conversationChanged();
      setTitle(QString());
    } else {
      store_->setCurrentLeaf(conversationId_, turn.leafBefore);
      if (!turn.titleBefore.isNull()) {
        store_->renameConversation(conversationId_, turn.titleBefore);
        setTitle(turn.titleBefore);
      }
    }
  } catch (const StoreError&) {
    // Best effort: the conversation then stays in the list, empty, under the new title.
  }
  reloadBranch();
  if (!turn.images.isEmpty()) {  // the pictures go back with the text
    pendingImages_ = turn.images + pendingImages_;
    emit pendingImagesChanged();
  }
  if (turn.draft.isNull()) {
    setErrorText(tr("No new answer: %1").arg(message));
  } else {
    giveBackDraft(turn.draft);
    setErrorText(tr("Not sent: %1 Your text is back in the input box.").arg(message));
  }
  emit busyChanged();
  emit conversationsModified();
}

/// The engine has taken the pending turn (its messages are already in the store).
bool PaneState::commitTurn() {
  pending_ = {};
  return true;
}

void PaneState::finishReply(pagedchat::FinishReason finishReason, bool save) {
  saveTimer_.stop();
  setPromptProgress(0, 0);
  throughput_->addStep(local_->clockMs(), 0, 0);
  // Decode speed: the tokens after the first over the time they took, as the engine timed them
  // (deltas can reach the GUI thread in bursts, so the GUI's clock would overstate it); a backend
  // without engine timings (remote) is timed from its first token's arrival. The prompt's time is
  // not in it, and a reply of fewer than two tokens (stopped at once) has no rate.
  double seconds = decodeSeconds_;
  if (seconds <= 0.0 && firstTokenClock_.isValid()) seconds = firstTokenClock_.nsecsElapsed() / 1e9;
  lastReplyRate_ = replyTokens_ >= 2 && seconds > 0.0 ? (replyTokens_ - 1) / seconds : -1.0;
  emit contextChanged();
  if (save) commitTurn();  // stopped (or the app quit) before the engine's first delta
  pending_ = {};
  const bool saved = save && replyId_ != 0;
  if (save) saveReply(finishReason);
  if (saved && !store_->health()->isPending(QStringLiteral("reply:%1").arg(replyId_)))
    emit replySaved(replyId_, finishReason);

  messages_->finish(replyRow_, finishReason);
  requestId_.clear();
  replyId_ = 0;
  replyRow_ = -1;
  emit busyChanged();
  emit replyFinished(finishReason);
  // The saved reply moved the conversation's "updated" time (a continued or regenerated answer
  // of an older conversation now belongs under Today): the sidebar reloads.
  if (saved) emit conversationsModified();
}

void PaneState::saveReply(std::optional<pagedchat::FinishReason> finishReason) {
  if (replyId_ == 0 || (!finishReason && !replyDirty_)) return;
  StoreHealth* health = store_->health();
  const QString key = QStringLiteral("reply:%1").arg(replyId_);
  try {
    store_->updateMessage(replyId_, replyText_, finishReason);
    replyDirty_ = false;
    health->resolved(key);
  } catch (const StoreError& e) {
    // Kept (the text so far, under this reply's key) and written again by StoreHealth, also
    // after the reply has ended: nothing streamed is lost while the app runs.
    ChatStore* store = store_;
    const qint64 id = replyId_;
    const QString text = replyText_;
    health->report(e, key, [store, id, text, finishReason] { store->updateMessage(id, text, finishReason); });
  }
}

void PaneState::reportNotSent(const StoreError& e, const QString& draft) {
  const QString message = store_->health()->report(e);
  if (draft.isNull()) {
    setStoreErrorText(tr("No new answer: %1").arg(message));
  } else if (draft.trimmed().isEmpty()) {
    setStoreErrorText(tr("Not sent: %1").arg(message));
  } else if (draftInInputBox(draft)) {  // send(), or a "send to all" tried again
    setStoreErrorText(tr("Not sent: %1 Your text is still in the input box.").arg(message));
  } else {  // an edit, or another pane's "send to all": the text would be gone otherwise
    giveBackDraft(draft);
    setStoreErrorText(tr("Not sent: %1 Your text is back in the input box.").arg(message));
  }
}

void PaneState::giveBackDraft(const QString& draft) {
  if (draftInInputBox(draft)) return;
  setInputText(inputText_.trimmed().isEmpty() ? draft : draft + QLatin1Char('\n') + inputText_);
}

void PaneState::dropGivenBackDraft(const QString& text) {
  if (inputText_ == text)
    setInputText(QString());
  else if (inputText_.startsWith(text + QLatin1Char('\n')))
    setInputText(inputText_.mid(text.size() + 1));
}

bool PaneState::draftInInputBox(const QString& draft) const {
  return inputText_ == draft || inputText_.startsWith(draft + QLatin1Char('\n'));
}

void PaneState::setStoreErrorText(const QString& text) {
  setErrorText(text);
  storeErrorText_ = text;
}

void PaneState::setErrorText(const QString& text) {
  storeErrorText_.clear();
  if (text == errorText_) return;
  errorText_ = text;
  emit errorTextChanged();
}
