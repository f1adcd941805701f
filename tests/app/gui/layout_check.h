// A check of what a person sees in a window: no control cut, none outside its parent, no button
// covered by something that takes its clicks. Used by test_layout, which walks every dialog of
// the real window at two sizes and in both languages.
//
// The rules, over the visible items below a root (a window's content item or a popup's item):
// - A control (any Qt Quick Controls item) and the painted text of a Text lies inside the
//   window and inside every clipping ancestor. Inside a Flickable (a list, a scrolled page) only
//   the directions it cannot scroll bound it: what scrolls into view is not cut.
// - A Text that elides (`truncated`), or a ComboBox's entry wider than its box, is cut when
//   what it shows is one of the app's own strings (any source or translation in
//   translations/*.ts, with its %1 placeholders) and no tool tip shows it whole; names, titles
//   and paths that users bring may elide.
// - A button's text (a CheckBox's label too) stays inside the button.
// - The middle of an enabled button takes the button's clicks: the topmost item that accepts mouse
//   buttons there is the button or one of its children.
#pragma once

#include <algorithm>
#include <limits>

#include <QFile>
#include <QQuickItem>
#include <QRegularExpression>
#include <QStringList>
#include <QXmlStreamReader>

namespace apptest {

/// The app's own strings, as regular expressions matching a whole shown text: every <source>,
/// <translation> and <numerusform> of the Qt Linguist files `tsFiles`, with %1.. and %n standing
/// for anything. Strings with fewer than 3 letters besides placeholders are left out (they would
/// match any text). Unreadable files add nothing (the caller checks the count).
inline QList<QRegularExpression> uiStringPatterns(const QStringList& tsFiles) {
  QList<QRegularExpression> patterns;
  QStringList seen;
  const QRegularExpression placeholder(QStringLiteral("%(\\d+|n|L\\d+)"));
  for (const QString& path : tsFiles) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) continue;
    QXmlStreamReader xml(&file);
    while (!xml.atEnd()) {
      xml.readNext();
      if (!xml.isStartElement()) continue;
      const auto name = xml.name();
      if (name != QLatin1String("source") && name != QLatin1String("translation") &&
          name != QLatin1String("numerusform"))
        continue;
      const QString text = xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
      if (text.isEmpty() || seen.contains(text)) continue;
      seen.append(text);
      QString literal = text;
      literal.remove(placeholder);
      if (std::count_if(literal.cbegin(), literal.cend(), [](QChar c) { return c.isLetter(); }) < 3) continue;
      QString regex;
      qsizetype at = 0;
      for (auto it = placeholder.globalMatch(text); it.hasNext();) {
        const auto m = it.next();
        regex += QRegularExpression::escape(text.mid(at, m.capturedStart() - at)) + QStringLiteral(".*");
        at = m.capturedEnd();
      }
      regex += QRegularExpression::escape(text.mid(at));
      patterns.append(QRegularExpression(QStringLiteral("\\A(?:") + regex + QStringLiteral(")\\z"),
                                         QRegularExpression::DotMatchesEverythingOption));
    }
  }
  return patterns;
}

/// Finds what is cut or unreachable below `root`; one line per problem ("" none). `window` is
/// the area everything must lie in (scene coordinates); `ui` from uiStringPatterns().
class LayoutCheck {
 public:
  LayoutCheck(QQuickItem* windowRoot, const QRectF& window, const QList<QRegularExpression>& ui)
      : windowRoot_(windowRoot), window_(window), ui_(ui) {}

  /// Checks `root` and its visible descendants; returns the problems found.
  QStringList run(QQuickItem* root) {
    problems_.clear();
    visit(root, window_, window_, QString());
    return problems_;
  }

 private:
  static constexpr qreal kSlack = 1.0;  // sub-pixel rounding of layouts
  static constexpr qreal kInf = std::numeric_limits<qreal>::max() / 4;

  static QString label(QQuickItem* item) {
    QString text = item->property("text").toString();
    if (text.size() > 40) text = text.left(37) + QStringLiteral("...");
    QString name = item->objectName();
    if (name.isEmpty()) name = QString::fromLatin1(item->metaObject()->className()).section(QLatin1Char('_'), 0, 0);
    return text.isEmpty() ? name : QStringLiteral("%1 \"%2\"").arg(name, text);
  }
  static QString rectText(const QRectF& r) {
    return QStringLiteral("(%1,%2 %3x%4)").arg(r.x()).arg(r.y()).arg(r.width()).arg(r.height());
  }
  static bool inside(const QRectF& outer, const QRectF& r) {
    return r.left() >= outer.left() - kSlack && r.top() >= outer.top() - kSlack &&
           r.right() <= outer.right() + kSlack && r.bottom() <= outer.bottom() + kSlack;
  }

  bool isUiString(const QString& text) const {
    return std::any_of(ui_.cbegin(), ui_.cend(),
                       [&](const QRegularExpression& re) { return re.match(text).hasMatch(); });
  }

  // Whether hovering shows `text` whole: a ToolTip attached to `item` or to an ancestor up to the
  // control it belongs to holds it.
  static bool toolTipShows(QQuickItem* item, const QString& text) {
    for (QQuickItem* a = item; a; a = a->parentItem()) {
      for (QObject* child : a->children())
        if (child->inherits("QQuickToolTipAttached") && child->property("text").toString().contains(text)) return true;
      if (a->inherits("QQuickControl")) break;
    }
    return false;
  }

  // The scene rectangle a Text paints: its box, widened to its content when the text runs over.
  static QRectF paintedRect(QQuickItem* text) {
    const qreal w = std::max(text->width(), text->property("contentWidth").toReal());
    const qreal h = std::max(text->height(), text->property("contentHeight").toReal());
    // Horizontal alignment: AlignLeft 1, AlignRight 2, AlignHCenter 4.
    const int align = text->property("effectiveHorizontalAlignment").toInt();
    qreal x = 0;
    if (align == Qt::AlignRight)
      x = text->width() - w;
    else if (align == Qt::AlignHCenter)
      x = (text->width() - w) / 2;
    return text->mapRectToScene(QRectF(x, 0, w, h));
  }

  // `bounds`: where the item must lie; `shown`: the part of the window its clipping ancestors
  // let show now (a scrolled list's view).
  void visit(QQuickItem* item, const QRectF& bounds, const QRectF& shown, const QString& path) {
    if (!item->isVisible() || item->opacity() <= 0.01) return;
    const QRectF r = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
    const bool isText = item->inherits("QQuickText");
    const bool isControl = item->inherits("QQuickControl");
    const QString here = path.isEmpty() ? label(item) : path;
    if (isText && !item->property("text").toString().trimmed().isEmpty()) {
      const QString text = item->property("text").toString();
      if (item->property("truncated").toBool() && isUiString(text) && !toolTipShows(item, text))
        problems_.append(QStringLiteral("cut: %1 shows only part of \"%2\" in %3").arg(here, text, rectText(r)));
      const QRectF painted = paintedRect(item);
      // A control's own text (its label) stays in the control: past it, it runs into its
      // neighbours (a squeezed CheckBox's label under the next item).
      QQuickItem* owner = item->parentItem();
      while (owner && !owner->inherits("QQuickControl") && owner->parentItem() && owner->width() == 0)
        owner = owner->parentItem();
      if (owner && owner->inherits("QQuickAbstractButton") &&
          !inside(owner->mapRectToScene(QRectF(0, 0, owner->width(), owner->height())), painted))
        problems_.append(QStringLiteral("overflows: text \"%1\" %2 runs out of its %3")
                             .arg(text.left(60), rectText(painted), label(owner)));
      if (!inside(bounds, painted))
        problems_.append(QStringLiteral("outside: text \"%1\" %2 beyond %3 (in %4)")
                             .arg(text.left(60), rectText(painted), rectText(bounds), here));
    } else if (item->inherits("QQuickTextInput") && item->property("readOnly").toBool()) {
      // A ComboBox's shown entry (a read-only field): cut when wider than its box.
      const QString text = item->property("displayText").toString();
      if (item->property("contentWidth").toReal() > item->width() + kSlack && isUiString(text))
        problems_.append(QStringLiteral("cut: %1 shows only part of \"%2\" in %3").arg(here, text, rectText(r)));
    } else if (isControl && r.width() > 0 && r.height() > 0 && !inside(bounds, r)) {
      problems_.append(QStringLiteral("outside: %1 %2 beyond %3").arg(label(item), rectText(r), rectText(bounds)));
    }
    if (item->inherits("QQuickAbstractButton") && item->isEnabled() && r.width() > 0 && r.height() > 0 &&
        inside(bounds, r) && shown.contains(r.center())) {
      const QPointF middle = r.center();
      QQuickItem* top = topAt(windowRoot_, middle);
      if (top && top != item && !item->isAncestorOf(top))
        problems_.append(
            QStringLiteral("covered: a click on the middle of %1 reaches %2").arg(label(item), label(top)));
    }

    QRectF childBounds = bounds, childShown = shown;
    if (item->clip()) {
      childBounds &= r;
      childShown &= r;
    }
    if (item->inherits("QQuickFlickable")) {
      // Scrollable directions are not bounds: what is out of view scrolls in.
      const bool scrollsX = item->property("contentWidth").toReal() > item->width() + kSlack;
      const bool scrollsY = item->property("contentHeight").toReal() > item->height() + kSlack;
      childBounds = QRectF(QPointF(scrollsX ? -kInf : std::max(bounds.left(), r.left()),
                                   scrollsY ? -kInf : std::max(bounds.top(), r.top())),
                           QPointF(scrollsX ? kInf : std::min(bounds.right(), r.right()),
                                   scrollsY ? kInf : std::min(bounds.bottom(), r.bottom())));
    }
    QString childPath = path;
    if (isControl || !item->objectName().isEmpty()) childPath = label(item);
    for (QQuickItem* child : item->childItems()) visit(child, childBounds, childShown, childPath);
  }

  // The topmost visible, enabled item below `item` at scene point `p` that accepts mouse
  // buttons (paint order: higher z, then later siblings, on top), or nullptr.
  static QQuickItem* topAt(QQuickItem* item, const QPointF& p) {
    if (!item->isVisible() || !item->isEnabled() || item->opacity() <= 0.01) return nullptr;
    const QPointF local = item->mapFromScene(p);
    const bool contains = QRectF(0, 0, item->width(), item->height()).contains(local);
    if (item->clip() && !contains) return nullptr;
    QList<QQuickItem*> children = item->childItems();
    std::stable_sort(children.begin(), children.end(), [](QQuickItem* a, QQuickItem* b) { return a->z() < b->z(); });
    for (auto it = children.crbegin(); it != children.crend(); ++it)
      if (QQuickItem* found = topAt(*it, p)) return found;
    return contains && item->acceptedMouseButtons() != Qt::NoButton ? item : nullptr;
  }

  QQuickItem* windowRoot_;
  QRectF window_;
  const QList<QRegularExpression>& ui_;
  QStringList problems_;
};

}  // namespace apptest
