// AppController: search, export and import (the history actions of the sidebar and search panel).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include "app/app_controller.h"
#include "app/chat_session.h"

namespace {
QString localPath(const QUrl& file) { return file.isLocalFile() ? file.toLocalFile() : file.toString(); }
}  // namespace

QVariantList AppController::search(const QString& text) const {
  QVariantList out;
  try {
    for (const SearchHit& h : store_->search(text)) {
      out.append(QVariantMap{{QStringLiteral("messageId"), h.messageId},
                             {QStringLiteral("conversationId"), h.conversationId},
                             {QStringLiteral("title"), h.conversationTitle},
                             {QStringLiteral("role"), h.role},
                             {QStringLiteral("snippet"), h.snippetHtml}});
    }
  } catch (const StoreError& e) {
    qWarning("pagedchat: search: %s", e.what());
  }
  return out;
}

void AppController::openSearchResult(qint64 conversationId, qint64 messageId) {
  openConversation(conversationId);
  const int pane = panes_->indexOfConversation(conversationId);
  if (ChatSession* s = panes_->sessionAt(pane)) s->showMessage(messageId);
}

bool AppController::exportConversation(qint64 id, const QUrl& file, const QString& format) {
  const QString path = localPath(file);
  QByteArray bytes;
  try {
    if (format == QLatin1String("json"))
      bytes = store_->exportJson(id);
    else if (format == QLatin1String("markdown"))
      bytes = store_->exportMarkdown(id).toUtf8();
    else
      return false;
  } catch (const StoreError& e) {
    setErrorText(QString::fromUtf8(e.what()));
    return false;
  }
  QSaveFile out(path);  // written completely or not at all
  if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.commit()) {
    setErrorText(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), out.errorString()));
    return false;
  }
  setErrorText(QString());
  return true;
}

qint64 AppController::importConversation(const QUrl& file) {
  const QString path = localPath(file);
  QFile in(path);
  if (!in.open(QIODevice::ReadOnly)) {
    setErrorText(tr("Cannot read %1: %2").arg(QDir::toNativeSeparators(path), in.errorString()));
    return 0;
  }
  constexpr qint64 kMaxImportBytes = 512LL << 20;  // far above any real conversation
  if (in.size() > kMaxImportBytes) {
    setErrorText(tr("Cannot import %1: the file is larger than %2 MB")
                     .arg(QDir::toNativeSeparators(path))
                     .arg(kMaxImportBytes >> 20));
    return 0;
  }
  qint64 id = 0;
  try {
    id = store_->importJson(in.readAll());
  } catch (const StoreError& e) {
    setErrorText(tr("%1 (file: %2)").arg(QString::fromUtf8(e.what()), QDir::toNativeSeparators(path)));
    return 0;
  }
  setErrorText(QString());
  conversations_->reload();
  openConversation(id);
  return id;
}
