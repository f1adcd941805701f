#include "app/render/link_policy.h"

#include <QDesktopServices>

namespace {
/// `link` as a URL: the text as the message has it, around white space dropped.
QUrl urlOf(const QString& link) { return QUrl(link.trimmed(), QUrl::TolerantMode); }
}  // namespace

LinkPolicy::LinkPolicy(QObject* parent) : QObject(parent) {}

bool LinkPolicy::isOpenableLink(const QUrl& url) {
  if (!url.isValid() || url.isRelative()) return false;
  const QString scheme = url.scheme();
  if (scheme.compare(QLatin1String("http"), Qt::CaseInsensitive) == 0 ||
      scheme.compare(QLatin1String("https"), Qt::CaseInsensitive) == 0)
    return !url.host().isEmpty();
  if (scheme.compare(QLatin1String("mailto"), Qt::CaseInsensitive) == 0) return !url.path().trimmed().isEmpty();
  return false;
}

bool LinkPolicy::isOpenable(const QString& link) const { return isOpenableLink(urlOf(link)); }

QString LinkPolicy::target(const QString& link) const { return urlOf(link).toString(QUrl::FullyEncoded); }

bool LinkPolicy::request(const QString& link) {
  if (!isOpenable(link)) {
    emit refused(link);
    return false;
  }
  emit confirmationRequested(link, target(link));
  return true;
}

bool LinkPolicy::open(const QString& link) {
  const QUrl url = urlOf(link);
  if (!isOpenableLink(url)) return false;
  return QDesktopServices::openUrl(url);
}
