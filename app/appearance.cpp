#include "app/appearance.h"

#include <QSettings>
#include <QtGlobal>

#include "app/translator.h"

namespace {
const QString kThemeKey = QStringLiteral("appearance/theme");
const QString kFontSizeKey = QStringLiteral("appearance/fontSize");

bool isTheme(const QString& name) {
  return name == QLatin1String("light") || name == QLatin1String("dark") || name == QLatin1String("system");
}
}  // namespace

Appearance::Appearance(QSettings* settings, Translator* translator, QObject* parent)
    : QObject(parent), settings_(settings), translator_(translator) {
  const QString theme = settings_->value(kThemeKey, theme_).toString();
  if (isTheme(theme)) theme_ = theme;
  fontSize_ = qBound(kMinFontSize, settings_->value(kFontSizeKey, kDefaultFontSize).toInt(), kMaxFontSize);
  connect(translator_, &Translator::languageChanged, this, &Appearance::languageChanged);
}

void Appearance::setTheme(const QString& theme) {
  if (!isTheme(theme) || theme == theme_) return;
  theme_ = theme;
  settings_->setValue(kThemeKey, theme_);
  emit changed();
}

void Appearance::setFontSize(int pixels) {
  pixels = qBound(kMinFontSize, pixels, kMaxFontSize);
  if (pixels == fontSize_) return;
  fontSize_ = pixels;
  settings_->setValue(kFontSizeKey, fontSize_);
  emit changed();
}

QString Appearance::language() const { return translator_->language(); }

void Appearance::setLanguage(const QString& language) { translator_->setLanguage(language); }
