#include "app/translator.h"

#include <QCoreApplication>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

Translator::Translator(const QString& settingsFile, QObject* parent) : QObject(parent) {
  if (!settingsFile.isEmpty()) {
    settings_ = std::make_unique<QSettings>(settingsFile, QSettings::IniFormat);
    const QString saved = settings_->value(settingsKey(), language_).toString();
    if (saved == QLatin1String("system") || availableLanguages().contains(saved)) language_ = saved;
  }
  apply();
}

Translator::~Translator() {
  if (translator_) QCoreApplication::removeTranslator(translator_.get());
}

QStringList Translator::availableLanguages() { return {QStringLiteral("en"), QStringLiteral("ko")}; }

QString Translator::settingsKey() { return QStringLiteral("ui/language"); }

QString Translator::languageFor(const QLocale& locale) {
  for (const QString& ui : locale.uiLanguages()) {
    const QString code = ui.section(QLatin1Char('-'), 0, 0).section(QLatin1Char('_'), 0, 0).toLower();
    if (availableLanguages().contains(code)) return code;
  }
  return QStringLiteral("en");
}

void Translator::setLanguage(const QString& language) {
  if (language != QLatin1String("system") && !availableLanguages().contains(language)) return;
  if (language == language_) return;
  language_ = language;
  if (settings_) {
    settings_->setValue(settingsKey(), language_);
    settings_->sync();
  }
  apply();
}

void Translator::apply() {
  const bool followSystem = language_ == QLatin1String("system");
  const QLocale locale = followSystem ? QLocale::system() : QLocale(language_);
  const QString effective = followSystem ? languageFor(QLocale::system()) : language_;
  QLocale::setDefault(locale);  // dates and numbers follow the UI language

  auto next = std::make_unique<QTranslator>();
  const QString file = QStringLiteral(":/i18n/pagedchat_%1.qm").arg(effective);
  if (!next->load(file)) {
    qWarning("pagedchat: cannot load the translation %s", qPrintable(file));
    next.reset();
  }
  if (translator_) QCoreApplication::removeTranslator(translator_.get());
  translator_ = std::move(next);
  if (translator_) QCoreApplication::installTranslator(translator_.get());
  effective_ = effective;
  emit languageChanged();
}
