#!/usr/bin/env bash
# Render speed on one core: a ~5,000-vertex skinned creature (Quaternius Spider, 5,461 vertices),
# 150 frames at 1280 x 720 to MP4, and the same at 480 px wide (the GIF-size preview). The Idle
# clip lasts 4.17 s: sampled at 36 fps (render --fps) it gives 150 distinct poses, none repeated.
# usage: bench/render.sh [build/anymove]   (prints the seconds and fps; bench/RESULTS.md keeps them)
set -euo pipefail
bin="${1:-build/anymove}"
cd "$(dirname "$0")/.."
model=../shared/data/gltf/quaternius/Spider.glb
out=$(mktemp -d /tmp/am_bench_render_XXXXXX)
trap 'rm -rf "$out"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
for size in "1280 720" "480 270"; do
  set -- $size
  start=$(date +%s.%N)
  taskset -c 0 "$bin" render "$model" --clip Idle --fps 36 --frames 0:150 --camera three-quarter \
    --size "$1" "$2" -o "$out/r.mp4" -q 2>/dev/null || "$bin" render "$model" --clip Idle --fps 36 --frames 0:150 --camera three-quarter --size "$1" "$2" -o "$out/r.mp4" -q
  end=$(date +%s.%N)
  frames=$(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$out/r.mp4")
  awk -v s="$start" -v e="$end" -v f="$frames" -v w="$1" -v h="$2" \
    'BEGIN { t = e - s; printf "%dx%d: %d frames in %.2f s = %.1f fps\n", w, h, f, t, f / t }'
done
