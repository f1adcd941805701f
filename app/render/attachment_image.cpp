#include "app/render/attachment_image.h"

#include <QBuffer>
#include <QImageReader>
#include <QPainter>

AttachmentImage::AttachmentImage(QQuickItem* parent) : QQuickPaintedItem(parent) {}

void AttachmentImage::setBytes(const QByteArray& bytes) {
  if (bytes == bytes_) return;
  bytes_ = bytes;
  // Upright by the file's EXIF orientation, as the engine reads it (engine/multimodal/exif_orientation.h).
  QBuffer buffer(&bytes_);
  QImageReader reader(&buffer);
  reader.setAutoTransform(true);
  image_ = reader.read();
  if (!image_.isNull() && (image_.width() > 2 * maxSide_ || image_.height() > 2 * maxSide_))
    image_ = image_.scaled(2 * maxSide_, 2 * maxSide_, Qt::KeepAspectRatio, Qt::SmoothTransformation);
  updateImplicitSize();
  emit bytesChanged();
  update();
}

void AttachmentImage::setMaxSide(int side) {
  if (side == maxSide_ || side <= 0) return;
  maxSide_ = side;
  updateImplicitSize();
  emit maxSideChanged();
  update();
}

void AttachmentImage::updateImplicitSize() {
  if (image_.isNull()) {
    setImplicitSize(0, 0);
    return;
  }
  const QSizeF s = QSizeF(image_.size()).scaled(maxSide_, maxSide_, Qt::KeepAspectRatio);
  setImplicitSize(s.width(), s.height());
}

void AttachmentImage::paint(QPainter* painter) {
  if (image_.isNull()) return;
  const QSizeF s = QSizeF(image_.size()).scaled(size(), Qt::KeepAspectRatio);
  const QRectF target((width() - s.width()) / 2, (height() - s.height()) / 2, s.width(), s.height());
  painter->setRenderHint(QPainter::SmoothPixmapTransform);
  painter->drawImage(target, image_);
}
