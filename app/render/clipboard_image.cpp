#include "app/render/clipboard_image.h"

#include <QBuffer>
#include <QClipboard>
#include <QGuiApplication>
#include <QImage>
#include <QMimeData>

ClipboardImage::ClipboardImage(QObject* parent) : QObject(parent) {}

bool ClipboardImage::hasImage() const {
  const QMimeData* m = QGuiApplication::clipboard()->mimeData();
  return m && (m->hasImage() || m->hasFormat(QStringLiteral("image/png")) ||
               m->hasFormat(QStringLiteral("image/jpeg")) || m->hasFormat(QStringLiteral("image/webp")));
}

QByteArray ClipboardImage::imageData() const {
  const QMimeData* m = QGuiApplication::clipboard()->mimeData();
  if (!m) return {};
  for (const char* type : {"image/png", "image/jpeg", "image/webp"})
    if (m->hasFormat(QLatin1String(type))) {
      const QByteArray bytes = m->data(QLatin1String(type));
      if (!bytes.isEmpty()) return bytes;
    }
  if (!m->hasImage()) return {};
  const QImage image = qvariant_cast<QImage>(m->imageData());
  if (image.isNull()) return {};
  QByteArray png;
  QBuffer buffer(&png);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  return png;
}
