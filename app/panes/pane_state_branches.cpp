// PaneState's message actions: regenerate, edit and resend, switch branch, continue, and
// showing a message found by search. The conversation is a tree (ChatStore); the pane shows
// one branch, and every request carries exactly that branch (root -> the question).
#include <algorithm>

#include "app/engine/chat_prompt.h"
#include "app/engine/local_chat_backend.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"

void PaneState::reloadBranch() {
  if (conversationId_ == 0) {
    messages_->clear();
    return;
  }
  try {
    messages_->setMessages(store_->branch(conversationId_));
  } catch (const StoreError& e) {
    store_->health()->report(e);
  }
  // Another branch: the latest request's figures were about the old one.
  promptTokens_ = cachedPromptTokens_ = replyTokens_ = 0;
  lastReplyRate_ = -1.0;
  specDrafts_ = specDraftTokens_ = specAcceptedTokens_ = 0;
  specMethod_.clear();
  countContext();
  emit contextChanged();
}

void PaneState::refreshSiblings(int row) {
  if (row < 0 || row >= messages_->rowCount()) return;
  try {
    const int count = static_cast<int>(store_->siblings(messages_->at(row).id).size());
    messages_->setSiblings(row, qMax(0, count - 1), qMax(1, count));
  } catch (const StoreError& e) {
    store_->health()->report(e);  // only the "2/3" figure is missing
  }
}

bool PaneState::regenerate() {
  const int last = messages_->rowCount() - 1;
  if (isBusy() || last < 1 || conversationId_ == 0) return false;
  const MessageRecord answer = messages_->at(last);
  const MessageRecord question = messages_->at(last - 1);
  const bool afterTools = question.role == MessageRole::kTool;  // an answer to tool results
  if (answer.role != MessageRole::kAssistant || (question.role != MessageRole::kUser && !afterTools) ||
      answer.parentId != question.id)
    return false;
  if (!checkModel()) return false;
  rememberShownLeaf(last);
  messages_->removeFrom(last);  // the old answer stays in the store, a sibling of the new one
  if (afterTools)               // the same results read again: the conversation up to them, as it is
    return startReply(rows(0, last), QString(), 0, question.id, QString(), false, QString());
  return startReply(rows(0, last - 1), question.text, question.parentId, question.id, QString(), false, QString(),
                    question.attachments);
}

bool PaneState::editMessage(int row, const QString& text) {
  const QString trimmed = text.trimmed();
  if (isBusy() || row < 0 || row >= messages_->rowCount() || trimmed.isEmpty()) return false;
  const MessageRecord old = messages_->at(row);
  if (old.role != MessageRole::kUser) return false;
  if (!checkModel()) return false;
  rememberShownLeaf(row);
  messages_->removeFrom(row);  // the old question and what follows stay as a sibling branch
  return startReply(rows(0, row), trimmed, old.parentId, 0, text, false, QString(), old.attachments);
}

void PaneState::rememberShownLeaf(int row) {
  if (row >= 0 && row < messages_->rowCount() && messages_->at(row).id != 0)
    lastLeafUnder_.insert(messages_->at(row).id, messages_->at(messages_->rowCount() - 1).id);
}

bool PaneState::switchBranch(int row, int step) {
  if (isBusy() || row < 0 || row >= messages_->rowCount() || step == 0) return false;
  try {
    const QList<MessageRecord> siblings = store_->siblings(messages_->at(row).id);
    int index = -1;
    for (int i = 0; i < siblings.size(); ++i)
      if (siblings.at(i).id == messages_->at(row).id) index = i;
    const int target = index + step;
    if (index < 0 || target < 0 || target >= siblings.size()) return false;
    // Coming back to a branch shows the part of it seen last (as chat apps do), else its newest.
    rememberShownLeaf(row);
    const qint64 targetId = siblings.at(target).id;
    qint64 leaf = store_->newestLeafUnder(targetId);
    if (const auto seen = lastLeafUnder_.constFind(targetId); seen != lastLeafUnder_.constEnd()) {
      const QList<MessageRecord> path = store_->pathTo(seen.value());  // empty once deleted
      const bool under = std::any_of(path.begin(), path.end(),
                                     [&](const MessageRecord& m) { return m.id == targetId; });
      if (under && store_->newestLeafUnder(seen.value()) == seen.value()) leaf = seen.value();
    }
    store_->setCurrentLeaf(conversationId_, leaf);
  } catch (const StoreError& e) {
    store_->health()->report(e);
    return false;
  }
  reloadBranch();
  return true;
}

bool PaneState::canContinue() const {
  const int last = messages_->rowCount() - 1;
  if (isBusy() || last < 0) return false;
  const MessageRecord& m = messages_->at(last);
  return m.role == MessageRole::kAssistant && m.id != 0 &&
         (m.finishReason == pagedchat::FinishReason::kLength || m.finishReason == pagedchat::FinishReason::kAbort ||
          !m.finishReason);
}

bool PaneState::continueReply() {
  if (!canContinue()) return false;
  if (!checkModel()) return false;
  if (const StoreError* readOnly = store_->readOnlyCause()) {
    // The continued reply could not be saved (a send is refused the same way).
    setStoreErrorText(tr("Not continued: %1").arg(StoreHealth::userMessage(*readOnly)));
    return false;
  }
  const int last = messages_->rowCount() - 1;
  const QList<PromptMessage> request = buildContinuationMessages(systemPrompt(), rows(0, last + 1));
  if (request.isEmpty()) return false;
  PendingTurn turn;
  turn.active = true;
  turn.continuation = true;
  turn.finishBefore = messages_->at(last).finishReason;
  setErrorText(QString());
  pending_ = turn;
  replyRow_ = last;
  replyId_ = messages_->at(last).id;
  replyText_ = messages_->at(last).text;
  replyDirty_ = false;
  promptTokens_ = cachedPromptTokens_ = replyTokens_ = 0;
  messages_->setStreaming(last, true);
  lastRequest_ = request;
  setUnseen(-1, -1, 0);
  requestId_ = backend_->submit(request, samplingParams(), /*continueLast=*/true, settings_->reasoning(),
                                toolsForRequest(), settings_->drafts());
  firstTokenClock_.invalidate();
  decodeSeconds_ = 0.0;
  specDrafts_ = specDraftTokens_ = specAcceptedTokens_ = 0;
  specMethod_.clear();
  saveTimer_.start();
  emit contextChanged();
  emit busyChanged();
  return true;
}

bool PaneState::showMessage(qint64 messageId) {
  int row = messages_->rowOfMessage(messageId);
  if (row < 0) {
    if (isBusy() || conversationId_ == 0) return false;
    try {
      store_->setCurrentLeaf(conversationId_, store_->newestLeafUnder(messageId));
    } catch (const StoreError& e) {
      store_->health()->report(e);
      return false;
    }
    reloadBranch();
    row = messages_->rowOfMessage(messageId);
    if (row < 0) return false;
  }
  emit messageShown(row, messageId);
  return true;
}
