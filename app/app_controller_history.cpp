// AppController: search, export and import (the history actions of the sidebar and search panel).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include "app/app_controller.h"
#include "app/chat_session.h"

#include <QStandardPaths>

QString AppController::localPathOf(const QUrl& file) {
  QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
  // An absolute path typed into a file dialog's name field comes back appended to the dialog's
  // folder ("/home/me/Documents//tmp/x.json"): the typed path wins.
  const qsizetype twoSlashes = path.indexOf(QLatin1String("//"), 1);
  if (twoSlashes > 0) path = path.mid(twoSlashes + 1);
  return path.isEmpty() ? path : QDir::cleanPath(path);
}

QUrl AppController::documentsFolder() const {
  const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  return QUrl::fromLocalFile(!docs.isEmpty() && QFileInfo(docs).isDir() ? docs : QDir::homePath());
}

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
  const QString path = localPathOf(file);
  if (path.isEmpty()) {
    setErrorText(tr("No file name was given for the export."));
    return false;
  }
  if (!QFileInfo(QFileInfo(path).absolutePath()).isDir()) {
    setErrorText(tr("Cannot write %1: the folder %2 does not exist.")
                     .arg(QDir::toNativeSeparators(path), QDir::toNativeSeparators(QFileInfo(path).absolutePath())));
    return false;
  }
  if (QFileInfo(path).isSymLink()) {  // QSaveFile would write wherever the link points
    setErrorText(tr("Cannot write %1: it is a symbolic link (to %2); choose the file itself.")
                     .arg(QDir::toNativeSeparators(path), QDir::toNativeSeparators(QFileInfo(path).symLinkTarget())));
    return false;
  }
  QByteArray bytes;
  try {
    if (format == QLatin1String("json"))
      bytes = store_->exportJson(id);
    else if (format == QLatin1String("markdown"))
      bytes = store_->exportMarkdown(id).toUtf8();
    else
      return false;
  } catch (const StoreError& e) {
    reportStoreError(e);
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
  const QString path = localPathOf(file);
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
    if (e.kind() != StoreError::Kind::kInvalidImport) {  // the database failed, not the file
      reportStoreError(e);
      return 0;
    }
    setErrorText(tr("%1 (file: %2)").arg(QString::fromUtf8(e.what()), QDir::toNativeSeparators(path)));
    return 0;
  }
  setErrorText(QString());
  conversations_->reload();
  openConversation(id);
  return id;
}
