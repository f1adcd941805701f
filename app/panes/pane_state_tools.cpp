// PaneState's tool calls: a reply's calls asked about, run through the app's ToolHost, their
// results stored as `tool` messages and sent back to the model (see pane_state.h, "Tools").
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "app/engine/chat_backend.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"
#include "app/tools/tool_host.h"

namespace {
// What the model is told for a call that did not run (English: the model reads it, not the user).
const QString kDenied = QStringLiteral("The user denied this tool call.");
const QString kStopped = QStringLiteral("The user stopped this tool call.");
const QString kNoTools = QStringLiteral("Tools are not available in this chat.");
}  // namespace

void PaneState::setToolHost(ToolHost* host) {
  disconnect(toolsConnection_);
  disconnect(toolsChangedConnection_);
  tools_ = host;
  if (host) {
    toolsConnection_ = connect(host, &ToolHost::callFinished, this, &PaneState::onToolCallFinished);
    toolsChangedConnection_ = connect(host, &ToolHost::serversChanged, this, &PaneState::toolsOfferedChanged);
  }
  emit toolsOfferedChanged();
}

bool PaneState::toolsOffered() const {
  return tools_ && settings_->tools() && tools_->toolCount(settings_->toolServersOff()) > 0;
}

QString PaneState::toolsForRequest() const {
  return toolsOffered() ? tools_->toolsJson(settings_->toolServersOff()) : QString();
}

QString PaneState::toolChoiceFor(const QList<PromptMessage>& request) const {
  // (With the pane's servers all off the choice still holds: the backend refuses, saying why.)
  if (!settings_->tools() || request.isEmpty() || request.last().role != MessageRole::kUser)
    return QStringLiteral("auto");
  return settings_->toolChoice();
}

QVariantList PaneState::toolCalls() const {
  QVariantList list;
  for (int i = 0; i < toolCalls_.size(); ++i) {
    const ToolCallState& c = toolCalls_.at(i);
    const QString state = c.answered  ? QStringLiteral("done")
                          : c.running ? QStringLiteral("running")
                                      : QStringLiteral("asking");
    list.append(QVariantMap{{QStringLiteral("index"), i},
                            {QStringLiteral("name"), c.name},
                            {QStringLiteral("arguments"), c.arguments},
                            {QStringLiteral("state"), state}});
  }
  return list;
}

void PaneState::startToolCalls(qint64 replyId, int row, const QString& calls) {
  const QJsonArray array = QJsonDocument::fromJson(calls.toUtf8()).array();
  if (array.isEmpty() || replyId == 0 || conversationId_ == 0) return;
  // The reply keeps its calls: the template writes them before their results in every request.
  const QString fields = QString::fromUtf8(
      QJsonDocument(QJsonObject{{QStringLiteral("tool_calls"), array}}).toJson(QJsonDocument::Compact));
  try {
    store_->setMessageFields(replyId, fields);
  } catch (const StoreError& e) {
    setStoreErrorText(tr("The tool calls were not run: %1").arg(store_->health()->report(e)));
    return;
  }
  messages_->setFields(row, fields);
  toolsHalted_ = false;
  for (const QJsonValue& v : array) {
    const QJsonObject call = v.toObject();
    const QJsonObject function = call.value(QLatin1String("function")).toObject();
    ToolCallState c;
    c.id = call.value(QLatin1String("id")).toString();
    c.name = function.value(QLatin1String("name")).toString();
    c.arguments = function.value(QLatin1String("arguments")).toString();
    toolCalls_.append(c);
  }
  emit busyChanged();
  emit toolCallsChanged();
  if (!tools_) {
    for (int i = 0; i < toolCalls_.size(); ++i) answerToolCall(i, kNoTools);
    return;
  }
  // A call that cannot run (no such tool, arguments that are no JSON object) is not asked about:
  // the model is told why.
  QHash<int, QString> invalid;
  for (int i = 0; i < toolCalls_.size(); ++i) {
    const QString why = tools_->whyNotRunnable(toolCalls_.at(i).name, toolCalls_.at(i).arguments,
                                               settings_->toolServersOff());
    if (!why.isEmpty()) invalid.insert(i, why);
  }
  if (toolSteps_ + toolCalls_.size() - invalid.size() > tools_->maxToolSteps()) {
    // The model would go on calling: the calls are answered, the model is not asked again.
    setErrorText(tr("Stopped: the model asked for more than %1 tool calls for one message (Settings → Tools sets "
                    "the limit).")
                     .arg(tools_->maxToolSteps()));
    toolsHalted_ = true;
    const QString text =
        QStringLiteral("Not run: the limit of %1 tool calls for one message was reached.").arg(tools_->maxToolSteps());
    for (int i = 0; i < toolCalls_.size(); ++i) answerToolCall(i, text);
    return;
  }
  for (int i = 0; i < toolCalls_.size(); ++i)
    if (!invalid.contains(i) && tools_->isAlwaysAllowed(toolCalls_.at(i).name)) runToolCall(i);
  const QList<int> bad = invalid.keys();  // the last answer may finish the set: the list is copied
  for (int i : bad)
    if (!toolCalls_.isEmpty()) answerToolCall(i, invalid.value(i));
}

void PaneState::allowToolCall(int index, bool always) {
  if (index < 0 || index >= toolCalls_.size() || toolCalls_.at(index).running || toolCalls_.at(index).answered) return;
  if (!tools_) {
    answerToolCall(index, kNoTools);
    return;
  }
  if (always) tools_->setAlwaysAllowed(toolCalls_.at(index).name, true);
  runToolCall(index);
  // "Always allow" also runs the other calls of that tool waiting here.
  if (always)
    for (int i = 0; i < toolCalls_.size(); ++i)
      if (i != index && toolCalls_.at(i).name == toolCalls_.at(index).name && !toolCalls_.at(i).running &&
          !toolCalls_.at(i).answered)
        runToolCall(i);
}

void PaneState::denyToolCall(int index) {
  if (index < 0 || index >= toolCalls_.size() || toolCalls_.at(index).running || toolCalls_.at(index).answered) return;
  answerToolCall(index, kDenied);
}

void PaneState::runToolCall(int index) {
  ToolCallState& c = toolCalls_[index];
  c.running = true;
  ++toolSteps_;
  c.ticket = tools_->callTool(c.name, c.arguments);
  emit toolCallsChanged();
}

void PaneState::onToolCallFinished(int ticket, const QString& text, bool isError,
                                   const QList<ImageAttachment>& images) {
  for (int i = 0; i < toolCalls_.size(); ++i) {
    if (!toolCalls_.at(i).running || toolCalls_.at(i).ticket != ticket) continue;
    answerToolCall(i, isError && text.isEmpty() ? QStringLiteral("The tool failed.") : text, images);
    return;
  }
}

void PaneState::answerToolCall(int index, const QString& text, const QList<ImageAttachment>& images) {
  ToolCallState& c = toolCalls_[index];
  c.running = false;
  c.answered = true;
  c.result = text;
  c.images = images;
  emit toolCallsChanged();
  for (const ToolCallState& other : std::as_const(toolCalls_))
    if (!other.answered) return;
  finishToolCalls();
}

void PaneState::stopToolCalls() {
  toolsHalted_ = true;
  // Answering the last open call finishes the set: a copy of the indexes, as it clears the list.
  QList<int> open;
  for (int i = 0; i < toolCalls_.size(); ++i)
    if (!toolCalls_.at(i).answered) open.append(i);
  for (int i : open) {
    if (toolCalls_.isEmpty()) break;
    if (toolCalls_.at(i).running && tools_) tools_->cancelCall(toolCalls_.at(i).ticket);
    answerToolCall(i, kStopped);
  }
}

void PaneState::finishToolCalls() {
  const QList<ToolCallState> calls = std::exchange(toolCalls_, {});
  const bool halted = std::exchange(toolsHalted_, false);
  emit toolCallsChanged();
  bool stored = true;
  try {
    for (const ToolCallState& c : calls) {
      MessageRecord result;
      result.conversationId = conversationId_;
      result.role = MessageRole::kTool;
      result.text = c.result;
      result.attachments = c.images;
      result.createdAt = QDateTime::currentDateTimeUtc();
      result.parentId = messages_->rowCount() > 0 ? messages_->at(messages_->rowCount() - 1).id : 0;
      result.fields = QString::fromUtf8(
          QJsonDocument(QJsonObject{{QStringLiteral("tool_call_id"), c.id}, {QStringLiteral("name"), c.name}})
              .toJson(QJsonDocument::Compact));
      result.id = store_->addMessage(conversationId_, result.role, result.text, std::nullopt, result.parentId,
                                     QString(), result.fields, result.attachments);
      messages_->append(result);
    }
  } catch (const StoreError& e) {
    setStoreErrorText(tr("The tool results were not saved: %1").arg(store_->health()->report(e)));
    stored = false;
  }
  emit conversationsModified();
  const int last = messages_->rowCount() - 1;
  if (halted || !stored || last < 0 || messages_->at(last).role != MessageRole::kTool || !checkModel()) {
    emit busyChanged();
    return;
  }
  // The model reads the results: a new reply below the last one.
  if (!startReply(rows(0, last + 1), QString(), 0, messages_->at(last).id, QString(), false, QString()))
    emit busyChanged();
}
