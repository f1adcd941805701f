// Appearance: the colour theme, the font size and the UI language, saved in pagedchat.ini.
#pragma once

#include <QObject>
#include <QString>

class QSettings;
class Translator;

/// What the window looks like and speaks (Settings > Appearance). Each change is saved at once in
/// the app's settings file (appearance/theme, appearance/fontSize; the language through the
/// Translator) and applies at once.
class Appearance : public QObject {
  Q_OBJECT
  /// The colour theme: "light", "dark" or "system".
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY changed)
  /// The base font size of messages and controls in pixels, kMinFontSize..kMaxFontSize.
  Q_PROPERTY(int fontSize READ fontSize WRITE setFontSize NOTIFY changed)
  /// The UI language: "system", "en" or "ko" (Translator::setLanguage: switches at once).
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)

 public:
  static constexpr int kMinFontSize = 10;
  static constexpr int kMaxFontSize = 28;
  static constexpr int kDefaultFontSize = 15;

  /// Reads the saved theme and font size from `settings`; `settings` and `translator` must
  /// outlive this object.
  Appearance(QSettings* settings, Translator* translator, QObject* parent = nullptr);

  QString theme() const { return theme_; }
  /// Unknown names are ignored.
  void setTheme(const QString& theme);
  int fontSize() const { return fontSize_; }
  void setFontSize(int pixels);  ///< clamped to kMinFontSize..kMaxFontSize
  QString language() const;
  void setLanguage(const QString& language);

 signals:
  void changed();
  void languageChanged();

 private:
  QSettings* settings_;
  Translator* translator_;
  QString theme_ = QStringLiteral("system");
  int fontSize_ = kDefaultFontSize;
};
