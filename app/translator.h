// Translator: the UI language. Installs the embedded translation (:/i18n/pagedchat_<lang>.qm)
// for the system locale or the language chosen in the settings, and switches it at run time.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

class QLocale;
class QSettings;
class QTranslator;

class Translator : public QObject {
  Q_OBJECT
  /// "system" (follow the system locale), or a language code from availableLanguages().
  Q_PROPERTY(QString language READ language WRITE setLanguage NOTIFY languageChanged)
  /// The language shown: "en" or "ko".
  Q_PROPERTY(QString effectiveLanguage READ effectiveLanguage NOTIFY languageChanged)

 public:
  /// Reads the saved choice from `settingsFile` (an INI file; empty: nothing is saved) and
  /// installs the matching translation into QCoreApplication.
  explicit Translator(const QString& settingsFile, QObject* parent = nullptr);
  ~Translator() override;

  QString language() const { return language_; }
  /// Accepts "system" or an available language (others are ignored); saves it and switches the
  /// installed translation at once. languageChanged() then asks the QML engines to retranslate.
  void setLanguage(const QString& language);
  QString effectiveLanguage() const { return effective_; }

  /// The languages with a translation: "en" (the source) and "ko".
  static QStringList availableLanguages();
  /// The available language for `locale`'s UI languages, "en" when none matches.
  static QString languageFor(const QLocale& locale);
  /// The settings key under which the choice is saved.
  static QString settingsKey();

 signals:
  void languageChanged();

 private:
  void apply();

  std::unique_ptr<QSettings> settings_;
  std::unique_ptr<QTranslator> translator_;
  QString language_ = QStringLiteral("system");
  QString effective_;
};
