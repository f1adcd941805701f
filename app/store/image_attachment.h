// ImageAttachment: a picture attached to a message (a user's, or a tool result's), and the two
// things every part of the app does with one: read it from bytes (checked by decoding it), and
// hand it to QML as a map.
#pragma once

#include <QByteArray>
#include <QString>
#include <QVariantMap>

#include <optional>

/// A picture attached to a message (schema 5): the file's bytes as they came (PNG, JPEG or WebP),
/// its MIME type and its size in pixels.
struct ImageAttachment {
  QString mime;
  QByteArray bytes;
  int width = 0, height = 0;
  bool operator==(const ImageAttachment&) const = default;
};

/// The picture in `bytes` (PNG, JPEG or WebP, sniffed from its first bytes), decoded once to check
/// it and to learn its size (engine/multimodal/image_decode.h: its limits on size and pixels).
/// Nothing when it cannot be used (it does not decode, or its sides differ by more than 200
/// times: a strip no vision model reads); `why` then gets the reason (English).
std::optional<ImageAttachment> readImageAttachment(const QByteArray& bytes, QString* why = nullptr);

/// What QML's attachment views read: {bytes, mime, width, height}.
QVariantMap imageAttachmentMap(const ImageAttachment& image);
