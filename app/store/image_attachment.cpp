#include "app/store/image_attachment.h"

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>

#include "engine/multimodal/image_decode.h"

std::optional<ImageAttachment> readImageAttachment(const QByteArray& bytes, QString* why) {
  const std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(bytes.constData()),
                                      static_cast<std::size_t>(bytes.size()));
  ImageAttachment a;
  try {
    const pagedchat::RgbImage img = pagedchat::decode_image(data);
    a.width = img.width;
    a.height = img.height;
  } catch (const pagedchat::ImageError& e) {
    if (why) *why = QString::fromStdString(e.what());
    return std::nullopt;
  }
  // A strip (sides more than 200 times apart) no vision model reads: transformers' Qwen-VL
  // processors refuse it, and it is no picture a thumbnail could show.
  if (std::max(a.width, a.height) > 200 * std::min(a.width, a.height)) {
    if (why) *why = QStringLiteral("a %1x%2 picture's sides differ by more than 200 times").arg(a.width).arg(a.height);
    return std::nullopt;
  }
  a.mime = QStringLiteral("image/") + QString::fromStdString(pagedchat::sniff_image_format(data));
  a.bytes = bytes;
  return a;
}

QVariantMap imageAttachmentMap(const ImageAttachment& image) {
  return {{QStringLiteral("bytes"), image.bytes},
          {QStringLiteral("mime"), image.mime},
          {QStringLiteral("width"), image.width},
          {QStringLiteral("height"), image.height}};
}
