#include "app/render/markdown_styler.h"

#include <QQuickTextDocument>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include <vector>

#include "app/render/draft_marks.h"

MarkdownStyler::MarkdownStyler(QObject* parent) : QObject(parent) {}

void MarkdownStyler::setDocument(QQuickTextDocument* document) {
  if (document == document_) return;
  disconnect(contentsConnection_);
  document_ = document;
  if (QTextDocument* doc = document_ ? document_->textDocument() : nullptr) {
    doc->setUndoRedoEnabled(false);  // read-only text: restyling must not pile up undo steps
    contentsConnection_ = connect(doc, &QTextDocument::contentsChanged, this, &MarkdownStyler::schedule);
  }
  emit documentChanged();
  schedule();
}

void MarkdownStyler::setLinkColor(const QColor& color) {
  if (color == linkColor_) return;
  linkColor_ = color;
  emit linkColorChanged();
  schedule();
}

void MarkdownStyler::setTableBorderColor(const QColor& color) {
  if (color == tableBorderColor_) return;
  tableBorderColor_ = color;
  emit tableBorderColorChanged();
  schedule();
}

void MarkdownStyler::setDraftColor(const QColor& color) {
  if (color == draftColor_) return;
  draftColor_ = color;
  emit draftColorChanged();
  schedule();
}

void MarkdownStyler::setTintDrafts(bool on) {
  if (on == tintDrafts_) return;
  tintDrafts_ = on;
  emit tintDraftsChanged();
  schedule();
}

void MarkdownStyler::schedule() {
  if (scheduled_ || styling_) return;
  scheduled_ = true;
  // Queued: the importer may still be filling the document when it reports a change.
  QMetaObject::invokeMethod(
      this, [this] { restyle(); }, Qt::QueuedConnection);
}

int MarkdownStyler::restyle() {
  scheduled_ = false;
  QTextDocument* doc = document_ ? document_->textDocument() : nullptr;
  if (!doc) return 0;
  styling_ = true;
  const QColor draft = tintDrafts_ ? draftColor_ : QColor();
  int changed = tintDrafts(doc, draft);
  if (changed > 0) {
    appliedDraftColor_ = draft;  // a new text, just marked
  } else if (appliedDraftColor_.isValid() && appliedDraftColor_ != draft) {
    changed += recolor(doc, appliedDraftColor_, draft);  // the same text: a new colour, or none
    appliedDraftColor_ = draft;
  }
  changed += style(doc, linkColor_, tableBorderColor_);
  styling_ = false;
  return changed;
}

int MarkdownStyler::tintDrafts(QTextDocument* doc, const QColor& color) {
  // The document's raw text has one character per position (block and frame separators included).
  const QString raw = doc->toRawText();
  std::vector<int> marks;
  for (qsizetype i = 0; i < raw.size(); ++i)
    if (raw[i] == draftmarks::kBegin || raw[i] == draftmarks::kEnd) marks.push_back(int(i));
  if (marks.empty()) return 0;
  QTextCursor cursor(doc);
  cursor.beginEditBlock();
  if (color.isValid()) {
    QTextCharFormat format;
    format.setForeground(color);
    int open = -1;
    for (int at : marks) {
      if (raw[at] == draftmarks::kBegin) {
        open = at;
      } else if (open >= 0) {
        cursor.setPosition(open + 1);
        cursor.setPosition(at, QTextCursor::KeepAnchor);
        cursor.mergeCharFormat(format);
        open = -1;
      }
    }
  }
  for (auto it = marks.rbegin(); it != marks.rend(); ++it) {  // from the back: positions stay valid
    cursor.setPosition(*it);
    cursor.setPosition(*it + 1, QTextCursor::KeepAnchor);
    cursor.removeSelectedText();
  }
  cursor.endEditBlock();
  return int(marks.size());
}

int MarkdownStyler::recolor(QTextDocument* doc, const QColor& from, const QColor& to) {
  std::vector<std::pair<int, int>> ranges;
  for (QTextBlock block = doc->begin(); block.isValid(); block = block.next())
    for (auto it = block.begin(); !it.atEnd(); ++it) {
      const QTextCharFormat f = it.fragment().charFormat();
      if (f.hasProperty(QTextFormat::ForegroundBrush) && f.foreground().color() == from)
        ranges.emplace_back(it.fragment().position(), it.fragment().position() + it.fragment().length());
    }
  if (ranges.empty()) return 0;
  QTextCursor cursor(doc);
  cursor.beginEditBlock();
  for (const auto& [begin, end] : ranges) {
    cursor.setPosition(begin);
    cursor.setPosition(end, QTextCursor::KeepAnchor);
    QTextCharFormat f = cursor.charFormat();
    if (to.isValid())
      f.setForeground(to);
    else
      f.clearForeground();
    cursor.setCharFormat(f);
  }
  cursor.endEditBlock();
  return int(ranges.size());
}

int MarkdownStyler::style(QTextDocument* doc, const QColor& linkColor, const QColor& tableBorderColor) {
  int changed = 0;
  QTextCursor cursor(doc);
  bool editing = false;
  auto edit = [&] {
    if (!editing) cursor.beginEditBlock();
    editing = true;
    ++changed;
  };
  if (linkColor.isValid()) {
    // Collect first: changing a fragment's format may merge or split fragments.
    std::vector<std::pair<int, int>> links;
    for (QTextBlock block = doc->begin(); block.isValid(); block = block.next())
      for (auto it = block.begin(); !it.atEnd(); ++it) {
        const QTextFragment f = it.fragment();
        if (f.isValid() && f.charFormat().isAnchor() &&
            (f.charFormat().foreground().color() != linkColor || !f.charFormat().fontUnderline()))
          links.emplace_back(f.position(), f.position() + f.length());
      }
    QTextCharFormat format;
    format.setForeground(linkColor);
    format.setFontUnderline(true);  // also where the link colour is the text's (the user's bubble)
    for (const auto& [from, to] : links) {
      edit();
      cursor.setPosition(from);
      cursor.setPosition(to, QTextCursor::KeepAnchor);
      cursor.mergeCharFormat(format);
    }
  }
  if (tableBorderColor.isValid()) {
    std::vector<QTextFrame*> frames{doc->rootFrame()};
    while (!frames.empty()) {
      QTextFrame* frame = frames.back();
      frames.pop_back();
      for (QTextFrame* child : frame->childFrames()) frames.push_back(child);
      auto* table = qobject_cast<QTextTable*>(frame);
      if (!table) continue;
      QTextTableFormat format = table->format();
      if (format.cellPadding() == kCellPadding && format.border() == 1 && format.borderCollapse() &&
          format.borderBrush().color() == tableBorderColor)
        continue;
      edit();
      format.setCellPadding(kCellPadding);
      format.setCellSpacing(0);
      format.setBorder(1);
      format.setBorderCollapse(true);
      format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
      format.setBorderBrush(tableBorderColor);
      table->setFormat(format);
    }
  }
  if (editing) cursor.endEditBlock();
  return changed;
}
