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
/// padding or borders. The restyle runs once per change, queued behind the parse (before the next
/// frame is drawn) and coalesced; the document's undo stack is switched off (the edit is read-only).
class MarkdownStyler : public QObject {
  Q_OBJECT
  QML_ELEMENT
  /// The TextEdit's `textDocument`.
  Q_PROPERTY(QQuickTextDocument* document READ document WRITE setDocument NOTIFY documentChanged)
  Q_PROPERTY(QColor linkColor READ linkColor WRITE setLinkColor NOTIFY linkColorChanged)
  Q_PROPERTY(QColor tableBorderColor READ tableBorderColor WRITE setTableBorderColor NOTIFY tableBorderColorChanged)

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

  /// Applies the styles now (normally queued after each change); returns how many links and
  /// tables it had to change.
  Q_INVOKABLE int restyle();
  /// Styles `document` directly (restyle() for one QTextDocument); returns the number changed.
  static int style(QTextDocument* document, const QColor& linkColor, const QColor& tableBorderColor);

 signals:
  void documentChanged();
  void linkColorChanged();
  void tableBorderColorChanged();

 private:
  void schedule();

  QPointer<QQuickTextDocument> document_;
  QMetaObject::Connection contentsConnection_;
  QColor linkColor_;
  QColor tableBorderColor_;
  bool scheduled_ = false;
  bool styling_ = false;
};
