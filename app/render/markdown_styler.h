// MarkdownStyler: link colours and table borders for a Markdown TextEdit, per theme and bubble.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QColor>
#include <QObject>
#include <QPointer>
#include <QQuickTextDocument>

class QTextDocument;

/// Restyles the document of a TextEdit showing Markdown (TextEdit.MarkdownText) after every parse:
/// links (anchors) take `linkColor`, underlined, and tables get `tableBorderColor` borders with cell padding.
/// Qt's Markdown importer colours links with the application palette's link colour, the same in
/// every theme and bubble (unreadable on dark or indigo backgrounds), and lays tables out with no
/// padding or borders. Text between draftmarks::kBegin and kEnd (a reply's accepted draft tokens,
/// draft_marks.h) takes `draftColor` and the marks are removed, in any document (plain text too).
/// The restyle runs once per change, queued behind the parse (before the next
/// frame is drawn) and coalesced; the document's undo stack is switched off (the edit is read-only).
class MarkdownStyler : public QObject {
  Q_OBJECT
  QML_ELEMENT
  /// The TextEdit's `textDocument`.
  Q_PROPERTY(QQuickTextDocument* document READ document WRITE setDocument NOTIFY documentChanged)
  Q_PROPERTY(QColor linkColor READ linkColor WRITE setLinkColor NOTIFY linkColorChanged)
  Q_PROPERTY(QColor tableBorderColor READ tableBorderColor WRITE setTableBorderColor NOTIFY tableBorderColorChanged)
  /// The colour of marked draft text; invalid (the default): the marks are removed, nothing tinted.
  Q_PROPERTY(QColor draftColor READ draftColor WRITE setDraftColor NOTIFY draftColorChanged)
  /// False: draft text is not tinted, and text tinted before is given back its own colour (a
  /// plain-text edit keeps its document when the same text, unmarked, is set again).
  Q_PROPERTY(bool tintDrafts READ tintDrafts WRITE setTintDrafts NOTIFY tintDraftsChanged)

 public:
  /// Padding inside table cells, in pixels.
  static constexpr qreal kCellPadding = 4;

  explicit MarkdownStyler(QObject* parent = nullptr);

  QQuickTextDocument* document() const { return document_; }
  void setDocument(QQuickTextDocument* document);
  QColor linkColor() const { return linkColor_; }
  void setLinkColor(const QColor& color);
  QColor tableBorderColor() const { return tableBorderColor_; }
  void setTableBorderColor(const QColor& color);
  QColor draftColor() const { return draftColor_; }
  void setDraftColor(const QColor& color);
  bool tintDrafts() const { return tintDrafts_; }
  void setTintDrafts(bool on);

  /// Applies the styles now (normally queued after each change); returns how many links and
  /// tables it had to change.
  Q_INVOKABLE int restyle();
  /// Styles `document` directly (restyle() for one QTextDocument); returns the number changed.
  static int style(QTextDocument* document, const QColor& linkColor, const QColor& tableBorderColor);
  /// Gives the text between draft marks `color` (none when invalid) and removes every mark;
  /// returns the number of marks removed.
  static int tintDrafts(QTextDocument* document, const QColor& color);
  /// Gives the characters in `from` the colour `to` (invalid: their format's own, none); returns
  /// the number of fragments changed.
  static int recolor(QTextDocument* document, const QColor& from, const QColor& to);

 signals:
  void documentChanged();
  void linkColorChanged();
  void tableBorderColorChanged();
  void draftColorChanged();
  void tintDraftsChanged();

 private:
  void schedule();

  QPointer<QQuickTextDocument> document_;
  QMetaObject::Connection contentsConnection_;
  QColor linkColor_;
  QColor tableBorderColor_;
  QColor draftColor_;
  bool tintDrafts_ = true;
  QColor appliedDraftColor_;  ///< the colour drafts have in the document now (invalid: none)
  bool scheduled_ = false;
  bool styling_ = false;
};
