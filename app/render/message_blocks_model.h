// MessageBlocksModel: a message's prose and code blocks, for MessageContent.qml.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QAbstractListModel>
#include <QElapsedTimer>
#include <QTimer>

#include "app/render/markdown_blocks.h"

/// List model of one message's blocks (splitMarkdownBlocks()). Roles: kind ("prose"/"code"),
/// text, plainText (the text without draft marks, draft_marks.h: what Copy copies), language,
/// closed. Prose is given as withoutRemoteContent() makes it: shown, it loads
/// nothing (no image, no HTML background or style sheet), from the network or from disk. Setting `text` re-splits the
/// message and touches only the rows that changed (while a reply streams, that is the last one), so the view re-lays
/// out only the last block. While `streaming`, updates are coalesced to at most one per kMinIntervalMs (10 a second): a
/// token arriving sooner is shown with the next update; the final text always is shown at once when streaming ends.
class MessageBlocksModel : public QAbstractListModel {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QString text READ text WRITE setText NOTIFY textChanged)
  Q_PROPERTY(bool streaming READ isStreaming WRITE setStreaming NOTIFY streamingChanged)
  Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
  /// Re-splits done so far (tests and the rendering benchmark count them).
  Q_PROPERTY(int updateCount READ updateCount NOTIFY countChanged)

 public:
  enum Roles { KindRole = Qt::UserRole + 1, TextRole, LanguageRole, ClosedRole, PlainTextRole };
  static constexpr int kMinIntervalMs = 100;

  explicit MessageBlocksModel(QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QHash<int, QByteArray> roleNames() const override;

  QString text() const { return text_; }
  void setText(const QString& text);
  bool isStreaming() const { return streaming_; }
  void setStreaming(bool streaming);
  int updateCount() const { return updateCount_; }
  const QList<MarkdownBlock>& blocks() const { return blocks_; }

  /// Applies a pending text now (the timer's job; tests call it).
  Q_INVOKABLE void flush();

 signals:
  void textChanged();
  void streamingChanged();
  void countChanged();

 private:
  void update();

  QString text_;
  QString shownText_;
  bool streaming_ = false;
  QList<MarkdownBlock> blocks_;
  QTimer timer_;
  QElapsedTimer sinceUpdate_;
  int updateCount_ = 0;
};
