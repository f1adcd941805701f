// ClipboardImage: a picture on the system clipboard, for pasting into a message (QML singleton).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QByteArray>
#include <QObject>

class ClipboardImage : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  explicit ClipboardImage(QObject* parent = nullptr);
  /// The clipboard holds a picture (an image/png, image/jpeg or image/webp file's bytes, or an
  /// image other programs put there).
  Q_INVOKABLE bool hasImage() const;
  /// The clipboard's picture as file bytes: PNG, JPEG or WebP as it came, else the image encoded
  /// as PNG; empty when there is none.
  Q_INVOKABLE QByteArray imageData() const;
};
