#include "app/render/attachment_image.h"

#include <QPainter>

#include <cstring>
#include <span>

#include "engine/multimodal/image_decode.h"

AttachmentImage::AttachmentImage(QQuickItem* parent) : QQuickPaintedItem(parent) {}

void AttachmentImage::setBytes(const QByteArray& bytes) {
  if (bytes == bytes_) return;
  bytes_ = bytes;
  image_ = QImage();
  try {
    const pagedchat::RgbImage rgb = pagedchat::decode_image(
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes_.constData()), std::size_t(bytes_.size())));
    image_ = QImage(rgb.width, rgb.height, QImage::Format_RGB888);
    for (int y = 0; y < rgb.height; ++y)
      std::memcpy(image_.scanLine(y), rgb.pixels.data() + std::size_t(y) * std::size_t(rgb.width) * 3,
                  std::size_t(rgb.width) * 3);
  } catch (const pagedchat::ImageError&) {
  }
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
