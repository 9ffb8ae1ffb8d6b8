#!/usr/bin/env bash
# Installs what anymove needs on Debian 12: the build tools and libraries from Debian's
# packages (and Blender, one of the consumers our GLBs are tested in) (as root; otherwise prints the exact apt-get line and stops), and the npm test
# tools (the Khronos glTF Validator) into .deps/npm, which git ignores.
# Quick when everything is present: it only checks.
# `scripts/deps.sh debian` stops after the Debian packages and `scripts/deps.sh npm` does only
# the npm tools: `make test` builds while npm downloads (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
case "$what" in all | debian | npm) ;; *) echo "usage: scripts/deps.sh [all|debian|npm]" >&2; exit 2 ;; esac

if [ "$what" != npm ]; then

PACKAGES=(build-essential cmake pkg-config libjansson-dev libzip-dev zlib1g-dev libsuitesparse-dev
          libhdf5-dev
          clang libclang-rt-14-dev blender python3-numpy
          python3-pytest python3-pip python3-setuptools python3-venv
          slurmctld slurmd slurm-client munge
          libpng-dev libavcodec-dev libavformat-dev libswscale-dev libavutil-dev ffmpeg chromium)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js may come from Debian or from elsewhere (a newer build): any working node + npm will do.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "scripts/deps.sh: missing Debian packages; run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "scripts/deps.sh: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

fi
[ "$what" != debian ] || exit 0

if [ ! -f .deps/npm/node_modules/gltf-validator/package.json ]; then
  echo "scripts/deps.sh: installing the Khronos glTF Validator (npm gltf-validator) into .deps/npm" >&2
  mkdir -p .deps/npm
  (cd .deps/npm && [ -f package.json ] || echo '{"name":"anymove-test-tools","private":true}' > package.json)
  npm install --prefix .deps/npm --no-audit --no-fund --silent gltf-validator@2.0.0-dev.3.10 >&2
fi
if [ ! -f .deps/npm/node_modules/three/package.json ]; then
  echo "scripts/deps.sh: installing three.js (npm three) into .deps/npm for the consumer tests" >&2
  npm install --prefix .deps/npm --no-audit --no-fund --silent three@0.160.0 >&2
fi
if [ ! -f .deps/npm/node_modules/playwright-core/package.json ]; then
  echo "scripts/deps.sh: installing playwright-core (npm) into .deps/npm to drive Debian's chromium in the report tests" >&2
  npm install --prefix .deps/npm --no-audit --no-fund --silent playwright-core@1.40.0 >&2
fi
