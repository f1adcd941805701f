#include "app/automation.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QSocketNotifier>

#include <cstdio>

#include <unistd.h>

#include "app/controllers/app_controller.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/finish_reason_text.h"

namespace {
/// The monotonic clock in ms (CLOCK_MONOTONIC on Linux: the same in every process).
qint64 now() {
  QElapsedTimer t;
  t.start();
  return t.msecsSinceReference();
}
}  // namespace

Automation::Automation(AppController* app) : QObject(app), app_(app) {
  notifier_ = new QSocketNotifier(STDIN_FILENO, QSocketNotifier::Read, this);
  connect(notifier_, &QSocketNotifier::activated, this, &Automation::onReadable);
  auto checkReady = [this] {
    if (readySent_ || !app_->engine()->isReady()) return;
    readySent_ = true;
    emitEvent({{QStringLiteral("event"), QStringLiteral("ready")}});
  };
  connect(app_->engine(), &LocalChatBackend::stateChanged, this, checkReady);
  checkReady();
  for (PaneState* s : app_->panes()->panes()) watch(s);
  connect(app_->panes(), &PaneListModel::countChanged, this, [this] {
    for (PaneState* s : app_->panes()->panes()) watch(s);
  });
}

int Automation::paneOf(const PaneState* session) const {
  return static_cast<int>(app_->panes()->panes().indexOf(const_cast<PaneState*>(session)));
}

void Automation::watch(PaneState* session) {
  if (watched_.contains(session)) return;
  watched_.insert(session);
  connect(session, &QObject::destroyed, this, [this, session] { watched_.remove(session); });
  connect(session, &PaneState::replyTextAppended, this, [this, session](qint64 replyId, const QString& text) {
    emitEvent({{QStringLiteral("event"), QStringLiteral("delta")},
               {QStringLiteral("pane"), paneOf(session)},
               {QStringLiteral("replyId"), replyId},
               {QStringLiteral("text"), text},
               {QStringLiteral("t"), now()}});
  });
  connect(session, &PaneState::replySaved, this, [this, session](qint64 replyId, pagedchat::FinishReason reason) {
    emitEvent({{QStringLiteral("event"), QStringLiteral("finished")},
               {QStringLiteral("pane"), paneOf(session)},
               {QStringLiteral("replyId"), replyId},
               {QStringLiteral("reason"), finishReasonText(reason)},
               {QStringLiteral("t"), now()}});
  });
}

void Automation::onReadable() {
  char chunk[4096];
  const ssize_t n = ::read(STDIN_FILENO, chunk, sizeof chunk);
  if (n <= 0) {  // the test closed its end: nothing more will come
    notifier_->setEnabled(false);
    return;
  }
  buffer_.append(chunk, n);
  for (qsizetype end = buffer_.indexOf('\n'); end >= 0; end = buffer_.indexOf('\n')) {
    const QByteArray line = buffer_.left(end).trimmed();
    buffer_.remove(0, end + 1);
    if (!line.isEmpty()) run(line);
  }
}

void Automation::run(const QByteArray& line) {
  const QString text = QString::fromUtf8(line);
  const QString command = text.section(QLatin1Char(' '), 0, 0);
  const QString arg = text.section(QLatin1Char(' '), 1, 1);
  const QString rest = text.section(QLatin1Char(' '), 2);
  PaneListModel* panes = app_->panes();
  PaneState* session = panes->paneAt(arg.toInt());
  if (command == QLatin1String("panes")) {
    while (panes->count() < arg.toInt() && panes->addPane()) {
    }
  } else if (command == QLatin1String("send") && session) {
    const bool ok = session->sendText(rest);
    QJsonObject event{{QStringLiteral("event"), QStringLiteral("sent")},
                      {QStringLiteral("pane"), arg.toInt()},
                      {QStringLiteral("ok"), ok},
                      {QStringLiteral("text"), rest},
                      {QStringLiteral("t"), now()}};
    const MessageListModel* m = session->messages();
    if (ok && m->rowCount() >= 2) {
      event.insert(QStringLiteral("conversationId"), session->conversationId());
      event.insert(QStringLiteral("userId"), m->at(m->rowCount() - 2).id);
      event.insert(QStringLiteral("replyId"), m->at(m->rowCount() - 1).id);
    }
    if (!ok) event.insert(QStringLiteral("error"), session->errorText());
    emitEvent(event);
  } else if (command == QLatin1String("new") && session) {
    session->closeConversation();
  } else if (command == QLatin1String("stop") && session) {
    session->stop();
  } else if (command == QLatin1String("rename")) {
    app_->history()->renameConversation(arg.toLongLong(), rest);
    emitEvent({{QStringLiteral("event"), QStringLiteral("renamed")},
               {QStringLiteral("conversationId"), arg.toLongLong()},
               {QStringLiteral("title"), rest},
               {QStringLiteral("ok"), app_->errors()->text().isEmpty()},
               {QStringLiteral("t"), now()}});
  } else if (command == QLatin1String("delete")) {
    app_->history()->deleteConversation(arg.toLongLong());
    emitEvent({{QStringLiteral("event"), QStringLiteral("deleted")},
               {QStringLiteral("conversationId"), arg.toLongLong()},
               {QStringLiteral("ok"), app_->errors()->text().isEmpty()},
               {QStringLiteral("t"), now()}});
  } else if (command == QLatin1String("purge")) {
    app_->history()->commitDelete();
    emitEvent({{QStringLiteral("event"), QStringLiteral("purged")}, {QStringLiteral("t"), now()}});
  } else {
    emitEvent({{QStringLiteral("event"), QStringLiteral("error")}, {QStringLiteral("text"), text}});
  }
}

void Automation::emitEvent(QJsonObject event) {
  const QByteArray line = QJsonDocument(event).toJson(QJsonDocument::Compact) + '\n';
  std::fwrite(line.constData(), 1, static_cast<size_t>(line.size()), stdout);
  std::fflush(stdout);
}
