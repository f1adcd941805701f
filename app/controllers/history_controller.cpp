#include "app/controllers/history_controller.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>
#include <QThread>
#include <QTimer>

#include <cerrno>
#include <cstring>
#include <utility>

#include "app/app_errors.h"
#include "app/controllers/conversation_list_model.h"
#include "app/panes/message_list_model.h"
#include "app/panes/pane_list_model.h"
#include "app/panes/pane_state.h"
#include "app/store/chat_store.h"
#include "app/store/store_health.h"

HistoryController::HistoryController(ChatStore* store, ConversationListModel* list, PaneListModel* panes,
                                     AppErrors* errors, QObject* parent)
    : QObject(parent), store_(store), list_(list), panes_(panes), errors_(errors) {
  connect(panes_, &PaneListModel::conversationsModified, this, &HistoryController::refresh);
  connect(panes_, &PaneListModel::layoutChanged, this, &HistoryController::currentConversationChanged);
  connect(panes_, &PaneListModel::currentIndexChanged, this, &HistoryController::currentConversationChanged);
  // Waiting writes went through (a rename, a pin, a restore): the lists show them.
  connect(store_->health(), &StoreHealth::recovered, this, &HistoryController::refresh);
}

HistoryController::~HistoryController() { commitDelete(); }

QString HistoryController::undoDeleteTitle() const {
  return pendingDeletes_.isEmpty() ? QString() : pendingDeletes_.constLast().title;
}

qint64 HistoryController::currentConversationId() const {
  PaneState* s = panes_ ? panes_->currentPane() : nullptr;
  return s ? s->conversationId() : 0;
}

void HistoryController::newConversation() {
  PaneState* session = panes_->currentPane();
  if (!session) return;
  // The current pane already shows an empty conversation: use it rather than piling up empty ones.
  if (session->conversationId() != 0 && session->messages()->rowCount() == 0) return;
  try {
    const QString title = tr("New chat");
    const qint64 id = store_->createConversation(title);
    list_->reload();
    session->openConversation(id, title);
    errors_->set(QString());
  } catch (const StoreError& e) {
    errors_->reportStoreError(e);
  }
}

void HistoryController::openConversation(qint64 id) {
  const int pane = panes_->indexOfConversation(id);
  if (pane >= 0) {
    panes_->setCurrentIndex(pane);
    return;
  }
  if (PaneState* session = panes_->currentPane()) session->openConversation(id, titleOf(id));
}

void HistoryController::deleteConversation(qint64 id) {
  if (id == 0) return;
  for (const PendingDelete& p : std::as_const(pendingDeletes_))
    if (p.id == id) return;  // already hidden (a second click on the same row)
  const QString title = titleOf(id);
  try {
    store_->softDeleteConversation(id);
    // Then the panes let it go; a reply in flight is saved (stopped), so that the deletion can
    // still be undone. (A refused delete leaves the panes, and such a reply, as they were.)
    for (PaneState* s : panes_->panes())
      if (s->conversationId() == id) s->closeConversation();
    errors_->set(QString());
    PendingDelete pending;
    pending.id = id;
    pending.title = title.isEmpty() ? tr("Conversation") : title;
    pending.timer = new QTimer(this);
    pending.timer->setSingleShot(true);
    pending.timer->setInterval(undoTimeoutMs_);
    connect(pending.timer, &QTimer::timeout, this, [this, id] { commitDeleteOf(id); });
    pending.timer->start();
    pendingDeletes_.append(pending);
    emit undoDeleteChanged();
  } catch (const StoreError& e) {
    errors_->reportStoreError(e);  // not deleted (a lock, a read-only disk): the banner says why
  }
  list_->reload();
}

void HistoryController::undoDelete() {
  if (pendingDeletes_.isEmpty()) return;
  const PendingDelete pending = pendingDeletes_.takeLast();
  delete pending.timer;
  emit undoDeleteChanged();
  try {
    store_->restoreConversation(pending.id);
    list_->reload();
    // Back in the list; it replaces nothing: only an empty current pane shows it.
    PaneState* current = panes_->currentPane();
    if (current && current->conversationId() == 0) openConversation(pending.id);
  } catch (const StoreError& e) {
    // Hidden until the restore is written (retried); it must not be purged meanwhile.
    ChatStore* store = store_;
    const qint64 id = pending.id;
    errors_->reportStoreError(e, QStringLiteral("restore:%1").arg(id), [store, id] { store->restoreConversation(id); });
  }
}

void HistoryController::commitDelete() {
  while (!pendingDeletes_.isEmpty()) commitDeleteOf(pendingDeletes_.constFirst().id);
}

void HistoryController::commitDeleteOf(qint64 id) {
  for (qsizetype i = 0; i < pendingDeletes_.size(); ++i) {
    if (pendingDeletes_.at(i).id != id) continue;
    const PendingDelete pending = pendingDeletes_.takeAt(i);
    pending.timer->stop();
    pending.timer->deleteLater();  // may be the timer whose timeout called us
    emit undoDeleteChanged();
    try {
      store_->deleteConversation(id);
    } catch (const StoreError& e) {
      // Still hidden; purged on the next start.
      qWarning("pagedchat: %s", e.what());
    }
    return;
  }
}

void HistoryController::renameConversation(qint64 id, const QString& title) {
  const QString t = title.simplified();
  if (t.isEmpty()) return;
  try {
    store_->renameConversation(id, t);
    errors_->set(QString());
  } catch (const StoreError& e) {
    ChatStore* store = store_;
    errors_->reportStoreError(e, QStringLiteral("rename:%1").arg(id),
                              [store, id, t] { store->renameConversation(id, t); });
  }
  refresh();
}

void HistoryController::setPinned(qint64 id, bool pinned) {
  try {
    store_->setPinned(id, pinned);
  } catch (const StoreError& e) {
    ChatStore* store = store_;
    errors_->reportStoreError(e, QStringLiteral("pin:%1").arg(id),
                              [store, id, pinned] { store->setPinned(id, pinned); });
  }
  refresh();
}

void HistoryController::refresh() {
  panes_->flushReplies();  // before the sidebar's reload, which may keep this thread busy
  // Something was written: the writes still waiting (a lock gone, space freed) may go now.
  if (store_->health()->pendingCount() > 0) store_->health()->retryNow();
  try {
    list_->reload();
  } catch (const StoreError& e) {
    errors_->reportStoreError(e);
    return;
  }
  for (PaneState* s : panes_->panes())
    if (s->conversationId() != 0) s->setTitle(titleOf(s->conversationId()));
}

QString HistoryController::titleOf(qint64 id) const {
  const int row = list_->rowOf(id);
  if (row >= 0) return list_->conversations().at(row).title;
  try {  // not among the loaded rows
    return store_->conversation(id).title;
  } catch (const StoreError&) {
    return QString();
  }
}

bool HistoryController::conversationExists(qint64 id) const {
  if (id == 0) return false;
  if (list_->rowOf(id) >= 0) return true;
  try {
    return !store_->conversation(id).deletedAt.isValid();
  } catch (const StoreError&) {
    return false;
  }
}

QString HistoryController::localPathOf(const QUrl& file) {
  QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
  // An absolute path typed into a file dialog's name field comes back appended to the dialog's
  // folder ("/home/me/Documents//tmp/x.json"): the typed path wins.
  const qsizetype twoSlashes = path.indexOf(QLatin1String("//"), 1);
  if (twoSlashes > 0) path = path.mid(twoSlashes + 1);
  return path.isEmpty() ? path : QDir::cleanPath(path);
}

QUrl HistoryController::documentsFolder() const {
  const QString docs = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  return QUrl::fromLocalFile(!docs.isEmpty() && QFileInfo(docs).isDir() ? docs : QDir::homePath());
}

QVariantList HistoryController::search(const QString& text) const {
  QVariantList out;
  try {
    for (const SearchHit& h : store_->search(text)) {
      out.append(QVariantMap{{QStringLiteral("messageId"), h.messageId},
                             {QStringLiteral("conversationId"), h.conversationId},
                             {QStringLiteral("title"), h.conversationTitle},
                             {QStringLiteral("role"), messageRoleText(h.role)},
                             {QStringLiteral("snippet"), h.snippetHtml}});
    }
  } catch (const StoreError& e) {
    qWarning("pagedchat: search: %s", e.what());
  }
  return out;
}

void HistoryController::openSearchResult(qint64 conversationId, qint64 messageId) {
  openConversation(conversationId);
  const int pane = panes_->indexOfConversation(conversationId);
  if (PaneState* s = panes_->paneAt(pane)) s->showMessage(messageId);
}

bool HistoryController::exportConversation(qint64 id, const QUrl& file, const QString& format) {
  const QString path = localPathOf(file);
  if (path.isEmpty()) {
    errors_->set(tr("No file name was given for the export."));
    return false;
  }
  if (!QFileInfo(QFileInfo(path).absolutePath()).isDir()) {
    errors_->set(tr("Cannot write %1: the folder %2 does not exist.")
                     .arg(QDir::toNativeSeparators(path), QDir::toNativeSeparators(QFileInfo(path).absolutePath())));
    return false;
  }
  if (QFileInfo(path).isSymLink()) {  // QSaveFile would write wherever the link points
    errors_->set(tr("Cannot write %1: it is a symbolic link (to %2); choose the file itself.")
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
    errors_->reportStoreError(e);
    return false;
  }
  QSaveFile out(path);  // written completely or not at all
  if (!out.open(QIODevice::WriteOnly) || out.write(bytes) != bytes.size() || !out.commit()) {
    errors_->set(tr("Cannot write %1: %2").arg(QDir::toNativeSeparators(path), out.errorString()));
    return false;
  }
  errors_->set(QString());
  return true;
}

namespace {

constexpr qint64 kMaxImportBytes = 512LL << 20;  // far above any real conversation

// The bytes of `path` when it is a regular file of at most kMaxImportBytes; otherwise `error`
// says why. Opened without blocking (a FIFO or a device never holds the caller) and read with a
// bound (QFile::size() is 0 for /dev/zero, which never ends). Safe on any thread.
QByteArray readImportFile(const QString& path, QString& error) {
  const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = QString::fromLocal8Bit(std::strerror(errno));
    return {};
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    error = HistoryController::tr("it is not a regular file");
    return {};
  }
  QFile in;
  if (!in.open(fd, QIODevice::ReadOnly, QFileDevice::AutoCloseHandle)) {
    ::close(fd);
    error = in.errorString();
    return {};
  }
  const QByteArray bytes = in.read(kMaxImportBytes + 1);
  if (bytes.size() > kMaxImportBytes) {
    error = HistoryController::tr("the file is larger than %1 MB").arg(kMaxImportBytes >> 20);
    return {};
  }
  if (in.error() != QFileDevice::NoError) error = in.errorString();
  return bytes;
}

}  // namespace

qint64 HistoryController::importConversation(const QUrl& file) {
  const QString path = localPathOf(file);
  if (importing_) return 0;  // one import at a time (the window stays live while a file is read)
  importing_ = true;
  // The file is read on a thread of its own while the window keeps answering: a slow disk or a
  // network mount never freezes it.
  QString error;
  QByteArray bytes;
  QThread* reader = QThread::create([&] { bytes = readImportFile(path, error); });
  QEventLoop wait;
  connect(reader, &QThread::finished, &wait, &QEventLoop::quit);
  reader->start();
  if (!reader->isFinished()) wait.exec(QEventLoop::ExcludeUserInputEvents);
  reader->wait();
  delete reader;
  importing_ = false;
  if (!error.isEmpty()) {
    errors_->set(tr("Cannot import %1: %2").arg(QDir::toNativeSeparators(path), error));
    return 0;
  }
  qint64 id = 0;
  try {
    id = store_->importJson(bytes);
  } catch (const StoreError& e) {
    if (e.kind() != StoreError::Kind::kInvalidImport) {  // the database failed, not the file
      errors_->reportStoreError(e);
      return 0;
    }
    errors_->set(tr("%1 (file: %2)").arg(QString::fromUtf8(e.what()), QDir::toNativeSeparators(path)));
    return 0;
  }
  errors_->set(QString());
  list_->reload();
  openConversation(id);
  return id;
}
