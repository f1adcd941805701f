# CPack NSIS settings (included by installer/Packaging.cmake on Windows). Output:
# pagedchat-<version>-win64.exe, installing into "Program Files\PagedChat" with a Start-menu entry
# (CPACK_PACKAGE_EXECUTABLES) and an uninstaller. Qt's DLLs, plugins and QML modules are copied
# next to bin\pagedchat.exe by the deploy script (qt_generate_deploy_qml_app_script, windeployqt).
# WiX instead: `cpack -G WIX` works with the same install tree (set CPACK_WIX_UPGRADE_GUID once).
set(CPACK_NSIS_PACKAGE_NAME "PagedChat")
set(CPACK_NSIS_DISPLAY_NAME "PagedChat ${PROJECT_VERSION}")
set(CPACK_NSIS_MUI_ICON "${PAGEDCHAT_INSTALLER_DIR}/windows/pagedchat.ico")
set(CPACK_NSIS_MUI_UNIICON "${PAGEDCHAT_INSTALLER_DIR}/windows/pagedchat.ico")
set(CPACK_NSIS_INSTALLED_ICON_NAME "bin\\pagedchat.exe")
set(CPACK_NSIS_URL_INFO_ABOUT "${PAGEDCHAT_HOMEPAGE}")
set(CPACK_NSIS_HELP_LINK "${PAGEDCHAT_HOMEPAGE}")
set(CPACK_NSIS_CONTACT "${PAGEDCHAT_PACKAGE_CONTACT}")
set(CPACK_NSIS_ENABLE_UNINSTALL_BEFORE_INSTALL ON)
set(CPACK_NSIS_MODIFY_PATH ON)  # offers to put bin\ (pagedchat-cli.exe) on PATH
set(CPACK_NSIS_EXECUTABLES_DIRECTORY bin)
set(CPACK_NSIS_MUI_FINISHPAGE_RUN "pagedchat.exe")
set(CPACK_WIX_UPGRADE_GUID "7D6C2F4E-6B0B-4C8E-9D2E-3F1A5B6C7D80")
set(CPACK_WIX_PRODUCT_ICON "${PAGEDCHAT_INSTALLER_DIR}/windows/pagedchat.ico")
