# Install layout and CPack packaging, included by the top-level CMakeLists.txt after app/ and engine/
#
#   Linux    DEB (dependencies from dpkg-shlibdeps + the QML modules and fonts the app loads at run
#            time) and TGZ: bin/pagedchat, bin/pagedchat-cli, the .desktop file, hicolor icons
#            (SVG + PNGs rendered from it with rsvg-convert), AppStream metainfo, man pages.
#
# Linux only: nothing builds or is tested on Windows or macOS (the engine's CPU kernels, its
# thread pool and the app's crash handling are written for Linux), so no package claims them.
# `cmake --build build --target package` (or `cpack` in the build folder) writes both packages
# into the build folder; `cpack -G DEB` / `-G TGZ` picks one.
# Packages are meant to be built with -DPAGEDCHAT_ENABLE_CUDA=OFF; a CUDA build packages too, but
# the CUDA runtime (libcudart, libcublas) comes from NVIDIA, not a Debian package, so it is not in
# Depends (dpkg-shlibdeps runs with --ignore-missing-info and warns) and the binaries carry an
# RPATH to the toolkit's lib folder (CMAKE_INSTALL_RPATH_USE_LINK_PATH).
# No model is packaged: the installed app is started with --model PATH (or $PAGEDCHAT_MODEL).

include(GNUInstallDirs)

# `package` builds everything first (as before), but cpack's per-generator "preinstall" step does
# not re-check every target: with Makefiles that check (one job, every autogen step of ~60 test
# targets) took about 3.5 minutes per generator of a fully built tree. Build before `cpack` or
# `cmake --install` (as README says).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(PAGEDCHAT_APP_ID "io.github.pagedchat.PagedChat")
set(PAGEDCHAT_HOMEPAGE "https://github.com/pagedchat/pagedchat" CACHE STRING
    "Project homepage (packages, AppStream metainfo)")
set(PAGEDCHAT_SCREENSHOT_URL "https://raw.githubusercontent.com/pagedchat/pagedchat/main/docs/screenshot-light.png"
    CACHE STRING "Screenshot in the AppStream metainfo (docs/screenshot-light.png as published)")
set(PAGEDCHAT_PACKAGE_CONTACT "PagedChat developers <pagedchat@users.noreply.github.com>" CACHE STRING
    "Maintainer of the packages (Debian Maintainer field)")
set(PAGEDCHAT_INSTALLER_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(PAGEDCHAT_ICON_SVG "${CMAKE_SOURCE_DIR}/resources/icons/${PAGEDCHAT_APP_ID}.svg")

# Installed binaries find Qt and sentencepiece in the system folders: no RPATH (Qt's
# qt_standard_project_setup() would add $ORIGIN and $ORIGIN/../lib). Libraries linked from outside
# the system folders (the CUDA toolkit) are found through CMAKE_INSTALL_RPATH_USE_LINK_PATH, set in
# the top-level CMakeLists.txt before the targets are made.
if(UNIX AND NOT APPLE)
  foreach(target IN ITEMS pagedchat pagedchat-cli)
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES INSTALL_RPATH "")
    endif()
  endforeach()
endif()

# ---------------------------------------------------------------------------------------------
# Linux desktop integration: .desktop, icons, AppStream metainfo, man pages
# ---------------------------------------------------------------------------------------------
if(UNIX AND NOT APPLE)
  set(linux_dir "${PAGEDCHAT_INSTALLER_DIR}/linux")
  set(gen_dir "${CMAKE_BINARY_DIR}/installer")
  file(MAKE_DIRECTORY "${gen_dir}")

  if(TARGET pagedchat)
    install(FILES "${linux_dir}/${PAGEDCHAT_APP_ID}.desktop"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/applications")

    configure_file("${linux_dir}/${PAGEDCHAT_APP_ID}.metainfo.xml.in"
                   "${gen_dir}/${PAGEDCHAT_APP_ID}.metainfo.xml" @ONLY)
    install(FILES "${gen_dir}/${PAGEDCHAT_APP_ID}.metainfo.xml"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/metainfo")

    install(FILES "${PAGEDCHAT_ICON_SVG}"
            DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps")
    find_program(RSVG_CONVERT_EXECUTABLE rsvg-convert)
    if(RSVG_CONVERT_EXECUTABLE)
      set(icon_pngs "")
      foreach(size IN ITEMS 16 24 32 48 64 128 256 512)
        set(png "${gen_dir}/icons/${size}x${size}/${PAGEDCHAT_APP_ID}.png")
        add_custom_command(OUTPUT "${png}"
          COMMAND ${CMAKE_COMMAND} -E make_directory "${gen_dir}/icons/${size}x${size}"
          COMMAND "${RSVG_CONVERT_EXECUTABLE}" -w ${size} -h ${size} -o "${png}" "${PAGEDCHAT_ICON_SVG}"
          DEPENDS "${PAGEDCHAT_ICON_SVG}"
          COMMENT "Rendering the ${size}x${size} icon"
          VERBATIM)
        list(APPEND icon_pngs "${png}")
        install(FILES "${png}" DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps")
      endforeach()
      add_custom_target(pagedchat_icons ALL DEPENDS ${icon_pngs})
    else()
      message(WARNING "rsvg-convert (librsvg2-bin) not found: the packages get the SVG icon only")
    endif()

    # pagedchat(1): written by hand (the app's few options).
    set(app_man_gz "${gen_dir}/man/pagedchat.1.gz")
    add_custom_command(OUTPUT "${app_man_gz}"
      COMMAND ${CMAKE_COMMAND} -DINPUT=${linux_dir}/pagedchat.1 -DOUTPUT=${app_man_gz}
              -P "${linux_dir}/GzipFile.cmake"
      DEPENDS "${linux_dir}/pagedchat.1" "${linux_dir}/GzipFile.cmake"
      COMMENT "Compressing pagedchat.1"
      VERBATIM)
    add_custom_target(pagedchat_app_man ALL DEPENDS "${app_man_gz}")
    install(FILES "${app_man_gz}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
  endif()

  # pagedchat-cli(1): the hand-written parts (installer/linux/pagedchat-cli.1.in, man/*.man) plus
  # every subcommand's options, taken from the built binary's --help so the page cannot drift.
  if(TARGET pagedchat-cli AND NOT CMAKE_CROSSCOMPILING)
    set(cli_man_gz "${gen_dir}/man/pagedchat-cli.1.gz")
    file(GLOB cli_man_parts CONFIGURE_DEPENDS "${linux_dir}/man/*.man")
    add_custom_command(OUTPUT "${cli_man_gz}"
      COMMAND ${CMAKE_COMMAND} -DCLI=$<TARGET_FILE:pagedchat-cli> -DTEMPLATE=${linux_dir}/pagedchat-cli.1.in
              -DPARTS_DIR=${linux_dir}/man -DVERSION=${PROJECT_VERSION} -DOUTPUT=${gen_dir}/man/pagedchat-cli.1
              -P "${linux_dir}/GenerateCliManPage.cmake"
      COMMAND ${CMAKE_COMMAND} -DINPUT=${gen_dir}/man/pagedchat-cli.1 -DOUTPUT=${cli_man_gz}
              -P "${linux_dir}/GzipFile.cmake"
      DEPENDS pagedchat-cli "${linux_dir}/pagedchat-cli.1.in" "${linux_dir}/GenerateCliManPage.cmake"
              "${linux_dir}/GzipFile.cmake" ${cli_man_parts}
      COMMENT "Generating the pagedchat-cli(1) man page"
      VERBATIM)
    add_custom_target(pagedchat_cli_man ALL DEPENDS "${cli_man_gz}")
    install(FILES "${cli_man_gz}" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1")
  endif()
endif()

# The licence and the third-party notices, in every package (Debian: /usr/share/doc/pagedchat/).
install(FILES "${CMAKE_SOURCE_DIR}/LICENSE" "${CMAKE_SOURCE_DIR}/THIRD_PARTY_NOTICES"
        DESTINATION "${CMAKE_INSTALL_DATADIR}/doc/pagedchat")
set(CPACK_RESOURCE_FILE_LICENSE "${CMAKE_SOURCE_DIR}/LICENSE")

# ---------------------------------------------------------------------------------------------
# CPack
# ---------------------------------------------------------------------------------------------
set(CPACK_PACKAGE_NAME "pagedchat")
set(CPACK_PACKAGE_VENDOR "PagedChat")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Desktop chat with a local language model")
set(CPACK_PACKAGE_DESCRIPTION
    "PagedChat is a Qt Quick chat application with an LLM inference engine in the same process.
The engine follows vLLM's PagedAttention design: the KV cache lives in fixed-size blocks and a
scheduler batches every running chat into each forward step, so several conversations generate
side by side. It opens the models users download as GGUF files or Hugging Face folders (Llama,
Qwen2/2.5/3/3.5, Gemma 3/4, gpt-oss, Phi-4-mini, SmolLM3, EXAONE 4 and llama2.c checkpoints),
quantized weights kept in their type; no model is included. The package also contains
pagedchat-cli: the engine from the command line (chat, generate, an OpenAI-compatible server,
convert, benchmarks).")
set(CPACK_PACKAGE_HOMEPAGE_URL "${PAGEDCHAT_HOMEPAGE}")
set(CPACK_PACKAGE_CONTACT "${PAGEDCHAT_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "PagedChat")
set(CPACK_PACKAGE_EXECUTABLES "pagedchat;PagedChat")
set(CPACK_PACKAGE_CHECKSUM SHA256)
set(CPACK_STRIP_FILES ON)
set(CPACK_VERBATIM_VARIABLES ON)
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\.git(/|$)" "/build[^/]*/" "/\\.cache/" "/\\.gl/" "/\\.whl/")

set(CPACK_GENERATOR DEB TGZ)
include("${PAGEDCHAT_INSTALLER_DIR}/linux/DEB.cmake")

include(CPack)
