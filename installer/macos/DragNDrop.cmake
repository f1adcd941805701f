# CPack DragNDrop settings (included by installer/Packaging.cmake on macOS). Output:
# pagedchat-<version>-Darwin.dmg holding PagedChat.app (Info.plist from installer/macos/Info.plist.in,
# Qt deployed into the bundle by macdeployqt through qt_generate_deploy_qml_app_script) and a link
# to /Applications. pagedchat-cli is installed by cli/CMakeLists.txt into bin/ of the image.
set(CPACK_DMG_VOLUME_NAME "PagedChat")
set(CPACK_DMG_FORMAT UDZO)
set(CPACK_DMG_FILESYSTEM APFS)
set(CPACK_PACKAGE_ICON "${PAGEDCHAT_INSTALLER_DIR}/macos/PagedChat.icns")
# Signing and notarisation are left to the release machine, e.g.:
#   codesign --deep --options runtime --sign "Developer ID Application: …" PagedChat.app
