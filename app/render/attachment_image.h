// AttachmentImage: a picture attached to a message, drawn from its encoded bytes (a thumbnail in a
// message bubble or in the input's pending strip).
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QByteArray>
#include <QImage>
#include <QQuickPaintedItem>

/// Paints `bytes` (PNG, JPEG or WebP) scaled to fit the item, aspect kept, centred, decoded as the
/// engine decodes them (engine/multimodal/image_decode.h: the same formats and limits, upright by
/// the EXIF orientation, alpha dropped), so the thumbnail is the picture the model reads.
/// implicitWidth / implicitHeight: the picture scaled to fit `maxSide`. Nothing is drawn for bytes
/// the engine refuses (valid() false).
class AttachmentImage : public QQuickPaintedItem {
  Q_OBJECT
  QML_ELEMENT
  Q_PROPERTY(QByteArray bytes READ bytes WRITE setBytes NOTIFY bytesChanged)
  Q_PROPERTY(int maxSide READ maxSide WRITE setMaxSide NOTIFY maxSideChanged)
  Q_PROPERTY(bool valid READ valid NOTIFY bytesChanged)

 public:
  explicit AttachmentImage(QQuickItem* parent = nullptr);
  QByteArray bytes() const { return bytes_; }
  void setBytes(const QByteArray& bytes);
  int maxSide() const { return maxSide_; }
  void setMaxSide(int side);
  bool valid() const { return !image_.isNull(); }
  void paint(QPainter* painter) override;

 signals:
  void bytesChanged();
  void maxSideChanged();

 private:
  void updateImplicitSize();
  QByteArray bytes_;
  QImage image_;  // scaled down to at most 2 x maxSide_ a side (crisp on high-DPI screens)
  int maxSide_ = 160;
};
