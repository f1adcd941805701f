# CPack DEB settings (included by installer/Packaging.cmake). Output: pagedchat_<version>-1_<arch>.deb
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "${PAGEDCHAT_HOMEPAGE}")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Shared libraries (Qt, sentencepiece, libstdc++, ...): found by dpkg-shlibdeps in the binaries.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What the app loads at run time and dpkg-shlibdeps cannot see: the QML modules it imports (and
# their own imports), the SQLite driver of Qt SQL, and fonts for CJK text and emoji in chats.
set(PAGEDCHAT_DEB_RUNTIME_DEPENDS
  qml6-module-qtquick
  qml6-module-qtquick-controls
  qml6-module-qtquick-layouts
  qml6-module-qtquick-window
  qml6-module-qtquick-templates
  qml6-module-qtqml-workerscript
  qml6-module-qtquick-dialogs
  qml6-module-qt-labs-platform
  qml6-module-qt-labs-folderlistmodel  # the non-native FileDialog/FolderDialog (QtQuick.Dialogs) imports it
  qml6-module-qtcore
  libqt6sql6-sqlite
  fonts-noto-cjk
  fonts-noto-color-emoji
)
if(TARGET pagedchat)  # not for a build of pagedchat-cli alone (-DPAGEDCHAT_BUILD_APP=OFF)
  list(JOIN PAGEDCHAT_DEB_RUNTIME_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
  # Input-method/theme platform plugins and native Wayland windows (XWayland works without it).
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-qpa-plugins, qt6-wayland")
endif()
