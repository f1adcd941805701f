#include "app/render/message_blocks_model.h"

#include "app/render/draft_marks.h"

MessageBlocksModel::MessageBlocksModel(QObject* parent) : QAbstractListModel(parent) {
  timer_.setSingleShot(true);
  connect(&timer_, &QTimer::timeout, this, &MessageBlocksModel::flush);
}

int MessageBlocksModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(blocks_.size());
}

QVariant MessageBlocksModel::data(const QModelIndex& index, int role) const {
  if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
  const MarkdownBlock& b = blocks_.at(index.row());
  switch (role) {
    case KindRole:
      return b.kind == MarkdownBlock::Kind::Code ? QStringLiteral("code") : QStringLiteral("prose");
    case Qt::DisplayRole:
    case TextRole:
      return b.text;
    case LanguageRole:
      return b.language;
    case ClosedRole:
      return b.closed;
    case PlainTextRole:
      return draftmarks::remove(b.text);
    default:
      return {};
  }
}

QHash<int, QByteArray> MessageBlocksModel::roleNames() const {
  return {{KindRole, "kind"},
          {TextRole, "text"},
          {LanguageRole, "language"},
          {ClosedRole, "closed"},
          {PlainTextRole, "plainText"}};
}

void MessageBlocksModel::setText(const QString& text) {
  if (text == text_) return;
  text_ = text;
  emit textChanged();
  if (!streaming_ || !sinceUpdate_.isValid() || sinceUpdate_.elapsed() >= kMinIntervalMs) {
    update();
  } else if (!timer_.isActive()) {
    timer_.start(static_cast<int>(kMinIntervalMs - sinceUpdate_.elapsed()));
  }
}

void MessageBlocksModel::setStreaming(bool streaming) {
  if (streaming == streaming_) return;
  streaming_ = streaming;
  emit streamingChanged();
  if (!streaming_) flush();
}

void MessageBlocksModel::flush() {
  timer_.stop();
  if (text_ != shownText_) update();
}

void MessageBlocksModel::update() {
  timer_.stop();
  sinceUpdate_.start();
  shownText_ = text_;
  ++updateCount_;
  QList<MarkdownBlock> next = splitMarkdownBlocks(text_);
  // The text came from a model or a server: its prose may make the renderer load nothing (an
  // image, an HTML background); images show as links with their alt text.
  // U+FFFC (QChar::ObjectReplacementCharacter, which a model can emit) marks an inline object to
  // Qt's text layout: with none there, the whole block showed empty. It is shown as U+FFFD.
  for (MarkdownBlock& b : next) {
    if (b.kind == MarkdownBlock::Kind::Prose) b.text = withoutRemoteContent(b.text);
    b.text.replace(QChar::ObjectReplacementCharacter, QChar::ReplacementCharacter);
    b.language = draftmarks::remove(b.language);
  }
  const int oldCount = static_cast<int>(blocks_.size());
  const int newCount = static_cast<int>(next.size());
  const int common = qMin(oldCount, newCount);
  // Rows in both: only those that differ change (a streaming reply: the last one).
  for (int i = 0; i < common; ++i) {
    if (blocks_[i] == next[i]) continue;
    const bool kindChanged = blocks_[i].kind != next[i].kind;
    blocks_[i] = next[i];
    if (kindChanged) {  // another delegate type: recreate the row
      beginRemoveRows(QModelIndex(), i, i);
      MarkdownBlock b = blocks_.takeAt(i);
      endRemoveRows();
      beginInsertRows(QModelIndex(), i, i);
      blocks_.insert(i, b);
      endInsertRows();
    } else {
      emit dataChanged(index(i), index(i));
    }
  }
  if (newCount > oldCount) {
    beginInsertRows(QModelIndex(), oldCount, newCount - 1);
    for (int i = oldCount; i < newCount; ++i) blocks_.append(next[i]);
    endInsertRows();
  } else if (newCount < oldCount) {
    beginRemoveRows(QModelIndex(), newCount, oldCount - 1);
    blocks_.resize(newCount);
    endRemoveRows();
  }
  emit countChanged();
}
