// PaneListModel: the chat panes shown side by side.
#pragma once

#include <QAbstractListModel>
#include <QList>

#include "app/panes/pane_state.h"

class ChatStore;
class LocalChatBackend;
class ToolHost;

/// List model of the side-by-side chat panes (1 to maxPanes), one PaneState each (role
/// "session"). Tracks which pane is current: the conversation list opens conversations there.
class PaneListModel : public QAbstractListModel {
  Q_OBJECT
  Q_PROPERTY(int count READ count NOTIFY countChanged)
  Q_PROPERTY(int maxPanes READ maxPanes CONSTANT)
  Q_PROPERTY(bool canAddPane READ canAddPane NOTIFY countChanged)
  Q_PROPERTY(bool canClosePane READ canClosePane NOTIFY countChanged)
  Q_PROPERTY(int currentIndex READ currentIndex WRITE setCurrentIndex NOTIFY currentIndexChanged)
  Q_PROPERTY(PaneState* currentPane READ currentPane NOTIFY currentIndexChanged)
  /// "Send to all panes" is on: Enter in any pane's input box sends its text to every pane.
  Q_PROPERTY(bool sendToAllEnabled READ sendToAllEnabled WRITE setSendToAllEnabled NOTIFY sendToAllEnabledChanged)
  /// Some pane is generating.
  Q_PROPERTY(bool anyBusy READ anyBusy NOTIFY anyBusyChanged)

 public:
  enum Roles { PaneRole = Qt::UserRole + 1 };
  static constexpr int kMaxPanes = 4;

  PaneListModel(ChatStore* store, LocalChatBackend* engine, QObject* parent = nullptr);
  ~PaneListModel() override;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  /// The app's tools for every pane, those there and those added later (may be null).
  void setToolHost(ToolHost* host);
  /// Adds an empty pane at the end and makes it current; returns it (nullptr at the maximum).
  Q_INVOKABLE PaneState* addPane();
  /// Closes pane `index` (stopping its generation); the last pane cannot be closed.
  Q_INVOKABLE void closePane(int index);
  Q_INVOKABLE PaneState* paneAt(int index) const;
  /// Sends `text` to every pane (each creates its own conversation if it has none); they all
  /// stream at once. Panes already generating are skipped. Returns how many panes sent it.
  /// `from`: the pane it was typed in: its pictures waiting to be sent go to every pane (a pane
  /// whose model reads no images refuses the message and says so).
  Q_INVOKABLE int sendToAll(const QString& text, PaneState* from = nullptr);
  /// Stops every pane's generation.
  Q_INVOKABLE void stopAll();
  /// Pane showing conversation `id`, or -1.
  Q_INVOKABLE int indexOfConversation(qint64 id) const;

  int count() const { return static_cast<int>(panes_.size()); }
  int maxPanes() const { return kMaxPanes; }
  bool canAddPane() const { return panes_.size() < kMaxPanes; }
  bool canClosePane() const { return panes_.size() > 1; }
  int currentIndex() const { return currentIndex_; }
  void setCurrentIndex(int index);
  PaneState* currentPane() const { return paneAt(currentIndex_); }
  const QList<PaneState*>& panes() const { return panes_; }
  /// Saves every pane's streamed text not saved yet (PaneState::flushReply()).
  void flushReplies();
  bool sendToAllEnabled() const { return sendToAllEnabled_; }
  void setSendToAllEnabled(bool on);
  bool anyBusy() const;

 signals:
  void countChanged();
  void currentIndexChanged();
  /// A pane was added or closed, or a pane switched conversation, settings or backend (for saving the layout).
  void layoutChanged();
  /// Forwarded from any session: the store's conversation list changed.
  void conversationsModified();
  void sendToAllEnabledChanged();
  void anyBusyChanged();
  /// sendToAll() sent `text` to the panes `sent` (indexes).
  void sentToAll(const QString& text, const QList<int>& sent);

 private:
  ChatStore* store_;
  LocalChatBackend* engine_;
  ToolHost* tools_ = nullptr;
  QList<PaneState*> panes_;
  int currentIndex_ = 0;
  bool sendToAllEnabled_ = false;
};
