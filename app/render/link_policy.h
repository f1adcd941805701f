// LinkPolicy: which links in a message may be opened, and opening them once the user agreed.
#pragma once

#include <QtQml/qqmlregistration.h>
#include <QObject>
#include <QString>
#include <QUrl>

/// A message's links come from a model or a remote endpoint, so they are never opened at once:
/// only web links (http, https, with a host) and mail links (mailto, with an address) may be
/// opened at all, and only after the user saw the full target and chose Open (Main.qml's
/// OpenLinkDialog). file:, data:, javascript:, ftp:, any other scheme, relative and empty links
/// are never opened. The scheme is compared without regard to case. QML: the LinkPolicy singleton
/// (MessageContent.qml calls request() for an activated link; Main.qml asks and calls open()).
class LinkPolicy : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_SINGLETON

 public:
  explicit LinkPolicy(QObject* parent = nullptr);

  /// True when `url` may be opened (after the user's confirmation): an absolute http or https
  /// URL with a host, or a mailto URL with an address.
  static bool isOpenableLink(const QUrl& url);
  /// isOpenableLink() of a link as a text item's linkActivated gives it.
  Q_INVOKABLE bool isOpenable(const QString& link) const;
  /// The full target of `link` as the confirmation shows it: percent-encoded, with the host in
  /// its ASCII form, so that no look-alike letter hides where it leads.
  Q_INVOKABLE QString target(const QString& link) const;
  /// A link in a message was activated: asks the user (confirmationRequested()) when it may be
  /// opened, else refuses it (refused()); opens nothing itself. Returns whether it asked.
  Q_INVOKABLE bool request(const QString& link);
  /// The user chose Open: hands `link` to the desktop (QDesktopServices::openUrl) when it may be
  /// opened. Returns whether it was handed over.
  Q_INVOKABLE bool open(const QString& link);

 signals:
  /// The user is to be asked whether to open `link`, which leads to `target` (target()).
  void confirmationRequested(const QString& link, const QString& target);
  /// `link` was activated but is never opened (another scheme, relative, empty).
  void refused(const QString& link);
};
