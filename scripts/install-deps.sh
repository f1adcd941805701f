#!/usr/bin/env bash
# Installs what PagedChat needs to build, test and run on Debian 12 (run as root, or with sudo).
# Only Debian packages; the CUDA toolkit is optional (found at /usr/local/cuda when present).
set -euo pipefail
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
PACKAGES=(
  # toolchain (scripts/test.sh builds with Ninja; clang-format for its optional format check)
  cmake g++ make ninja-build pkg-config clang-format
  # engine: sentencepiece, JSON, CLI; PCRE2 (BPE pre-tokenizer expressions) and ICU (NFC)
  libsentencepiece-dev nlohmann-json3-dev libcli11-dev libpcre2-dev libicu-dev
  # the OpenAI-compatible server (engine/entrypoints/openai): GNU libmicrohttpd; curl for its tests
  libmicrohttpd-dev curl
  # model downloads from the Hugging Face hub (engine/loader/hub): libcurl (OpenSSL), SHA-256 from libcrypto
  libcurl4-openssl-dev libssl-dev
  # images (engine/multimodal): PNG, JPEG and WebP decoding
  libpng-dev libturbojpeg0-dev libwebp-dev
  # GGUF vocabularies -> sentencepiece ModelProto (protoc; static libprotobuf-lite, see engine/CMakeLists.txt)
  protobuf-compiler libprotobuf-dev
  # app: Qt 6 (Quick, Controls, SQL with the SQLite driver, Test, Linguist tools)
  qt6-base-dev qt6-declarative-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools libqt6sql6-sqlite
  qml6-module-qtquick qml6-module-qtquick-controls qml6-module-qtquick-layouts qml6-module-qtquick-window
  qml6-module-qtquick-templates qml6-module-qtqml-workerscript qml6-module-qtquick-dialogs
  qml6-module-qt-labs-platform qml6-module-qt-labs-folderlistmodel qml6-module-qtcore qml6-module-qttest
  # app: remote endpoints' API keys in the system keychain
  qtkeychain-qt6-dev
  # qmllint's type information for QtQml's own types (Timer, Binding, Connections, ListModel)
  qml6-module-qtqml qml6-module-qtqml-models
  # scripts/test.sh's ASan/UBSan and libFuzzer build (clang; the TSan build uses g++); lld links
  clang libclang-rt-14-dev lld
  libsqlite3-dev libgl1-mesa-dri fonts-noto-cjk fonts-dejavu-core
  # screenshots test (tests/app/gui/test_screenshots): a virtual X server with OpenGL (Mesa)
  xvfb xauth
  # packages (installer/, tests/packaging): CPack DEB with dpkg-shlibdeps, icons rendered from SVG,
  # .desktop and AppStream checks, man page checks; fonts-noto-color-emoji is a run-time dependency
  dpkg-dev file librsvg2-bin desktop-file-utils appstream groff-base fonts-noto-color-emoji
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Outside references the tests compare against (tests/js/package.json): @huggingface/jinja and
# @lenml/tokenizers from the npm registry, under Node.js (Debian's nodejs/npm when none is installed).
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-deps: installing nodejs npm"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
js_dir="$(cd "$(dirname "$0")/../tests/js" && pwd)"
if ! cmp -s "$js_dir/package-lock.json" "$js_dir/node_modules/.pagedchat-installed-lock.json" 2>/dev/null; then
  echo "install-deps: npm ci in tests/js"
  (cd "$js_dir" && npm ci --no-audit --no-fund --loglevel=error &&
    cp package-lock.json node_modules/.pagedchat-installed-lock.json)
fi
