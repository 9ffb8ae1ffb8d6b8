#!/usr/bin/env bash
# Validate .glb/.gltf files with the Khronos glTF Validator: 0 errors and 0 warnings or exit 1.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
exec node "$here/gltf_validate.js" "$@"
