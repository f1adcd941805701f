#include "app/panes/pane_list_model.h"

#include "app/panes/pane_state.h"

PaneListModel::PaneListModel(ChatStore* store, LocalChatBackend* engine, QObject* parent)
    : QAbstractListModel(parent), store_(store), engine_(engine) {
  addPane();
}

PaneListModel::~PaneListModel() { qDeleteAll(std::exchange(panes_, {})); }

int PaneListModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(panes_.size());
}

QVariant PaneListModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  if (role == PaneRole) return QVariant::fromValue(panes_.at(index.row()));
  return {};
}

QHash<int, QByteArray> PaneListModel::roleNames() const { return {{PaneRole, "paneState"}}; }

PaneState* PaneListModel::addPane() {
  if (!canAddPane()) return nullptr;
  auto* session = new PaneState(store_, engine_, this);
  session->setToolHost(tools_);
  connect(session, &PaneState::conversationsModified, this, &PaneListModel::conversationsModified);
  connect(session, &PaneState::flushRepliesWanted, this, &PaneListModel::flushReplies);
  connect(session, &PaneState::conversationChanged, this, &PaneListModel::layoutChanged);
  connect(session, &PaneState::busyChanged, this, &PaneListModel::anyBusyChanged);
  connect(session, &PaneState::samplingChanged, this, &PaneListModel::layoutChanged);
  connect(session, &PaneState::backendChanged, this, &PaneListModel::layoutChanged);
  const int row = static_cast<int>(panes_.size());
  beginInsertRows(QModelIndex(), row, row);
  panes_.append(session);
  endInsertRows();
  emit countChanged();
  setCurrentIndex(row);
  emit layoutChanged();
  return session;
}

void PaneListModel::closePane(int index) {
  if (!canClosePane() || index < 0 || index >= panes_.size()) return;
  beginRemoveRows(QModelIndex(), index, index);
  PaneState* session = panes_.takeAt(index);
  endRemoveRows();
  session->disconnect(this);
  delete session;  // stops and saves its generation
  emit countChanged();
  if (currentIndex_ >= panes_.size() || currentIndex_ > index) {
    currentIndex_ = qMax(0, currentIndex_ - 1);
  }
  emit currentIndexChanged();
  emit layoutChanged();
  emit anyBusyChanged();
}

void PaneListModel::setToolHost(ToolHost* host) {
  tools_ = host;
  for (PaneState* pane : std::as_const(panes_)) pane->setToolHost(host);
}

PaneState* PaneListModel::paneAt(int index) const {
  return index >= 0 && index < panes_.size() ? panes_.at(index) : nullptr;
}

int PaneListModel::indexOfConversation(qint64 id) const {
  if (id == 0) return -1;
  for (qsizetype i = 0; i < panes_.size(); ++i)
    if (panes_[i]->conversationId() == id) return static_cast<int>(i);
  return -1;
}

void PaneListModel::setCurrentIndex(int index) {
  if (index < 0 || index >= panes_.size() || index == currentIndex_) return;
  currentIndex_ = index;
  emit currentIndexChanged();
}

int PaneListModel::sendToAll(const QString& text, PaneState* from) {
  const QList<ImageAttachment> images = from ? from->pendingImageList() : QList<ImageAttachment>();
  if (text.trimmed().isEmpty() && images.isEmpty()) return 0;
  QList<int> sent;
  // A copy: a pane's send may emit signals that reach QML, which must not change the list meanwhile.
  const QList<PaneState*> sessions = panes_;
  for (qsizetype i = 0; i < sessions.size(); ++i)
    if (!sessions[i]->isBusy() && sessions[i]->sendText(text, images)) {
      sessions[i]->dropGivenBackDraft(text);  // a refused earlier try's copy: sent now
      sent.append(static_cast<int>(i));
    }
  if (from && !sent.isEmpty()) from->clearPendingImages();
  if (!sent.isEmpty()) emit sentToAll(text, sent);
  return static_cast<int>(sent.size());
}

void PaneListModel::stopAll() {
  for (PaneState* s : std::as_const(panes_)) s->stop();
}

void PaneListModel::setSendToAllEnabled(bool on) {
  if (on == sendToAllEnabled_) return;
  sendToAllEnabled_ = on;
  emit sendToAllEnabledChanged();
}

bool PaneListModel::anyBusy() const {
  for (PaneState* s : panes_)
    if (s->isBusy()) return true;
  return false;
}

void PaneListModel::flushReplies() {
  for (PaneState* s : std::as_const(panes_)) s->flushReply();
}
