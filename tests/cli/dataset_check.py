"""dataset's pictures against its meta: front_uv and side_uv are SPEC 3's projection of joints_m
through the layout to 1e-6 px, the pose stands on the ground (lowest joint z >= 0), and in each
PNG the pixels that are not the backdrop (neither meta's wall nor floor colour) enclose every
joint's pixel within 6 px (a bone shape tapers to a point at its joints: its last pixels blend
into the backdrop) and reach no further than 40 px past them (the bone shapes' waists). A wrong
layout, a flipped axis or a pose drawn other than the one recorded misses by tens of pixels.
usage: dataset_check.py DIR COUNT"""
import json
import subprocess
import sys

d, count = sys.argv[1], int(sys.argv[2])


def pixels(path):
    out = subprocess.run(['ffprobe', '-v', 'error', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', path],
                         check=True, capture_output=True, text=True).stdout.strip().split(',')
    w, h = int(out[0]), int(out[1])
    raw = subprocess.run(['ffmpeg', '-v', 'error', '-i', path, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-'],
                         check=True, capture_output=True).stdout
    return w, h, raw


def creature_box(path, wall, floor):
    w, h, raw = pixels(path)
    lo, hi = [w, h], [-1, -1]
    for y in range(h):
        row = raw[y * w * 3:(y + 1) * w * 3]
        for x in range(w):
            p = row[x * 3:x * 3 + 3]
            if all(abs(p[c] - wall[c]) <= 6 for c in range(3)) or all(abs(p[c] - floor[c]) <= 6 for c in range(3)):
                continue
            lo = [min(lo[0], x), min(lo[1], y)]
            hi = [max(hi[0], x + 1), max(hi[1], y + 1)]
    return lo, hi


worst_uv, worst_in, worst_out, low = 0.0, 0.0, 0.0, 0.0
for i in range(count):
    m = json.load(open(f'{d}/{i}_meta.json'))
    L = m['layout']
    W, S, G, M = L['W_FRONT'], L['W_SIDE'], L['GROUND_V'], L['M_PER_PX']
    low = min(low, min(p[2] for p in m['joints_m']))
    for p, f, s in zip(m['joints_m'], m['front_uv'], m['side_uv']):
        want_f = (W / 2 + p[0] / M, G - p[2] / M)
        want_s = (W + S / 2 - p[1] / M, G - p[2] / M)
        worst_uv = max(worst_uv, abs(f[0] - want_f[0]), abs(f[1] - want_f[1]), abs(s[0] - want_s[0]), abs(s[1] - want_s[1]))
    wall, floor = m['backdrop']['wall'], m['backdrop']['floor']
    for view, uvs, x0 in (('front', m['front_uv'], 0.0), ('side', m['side_uv'], W)):
        lo, hi = creature_box(f'{d}/{i}_{view}.png', wall, floor)
        ulo = [min(u[0] - x0 for u in uvs), min(u[1] for u in uvs)]
        uhi = [max(u[0] - x0 for u in uvs), max(u[1] for u in uvs)]
        for c in range(2):
            worst_in = max(worst_in, lo[c] - ulo[c], uhi[c] - hi[c])
            worst_out = max(worst_out, ulo[c] - lo[c], hi[c] - uhi[c])
ok = worst_uv < 1e-6 and low >= -1e-6 and worst_in <= 6 and worst_out <= 40
print(json.dumps({'poses': count, 'uv_vs_spec3_px': worst_uv, 'lowest_joint_z': low,
                  'joint_outside_creature_px': worst_in, 'creature_past_joints_px': worst_out, 'ok': ok}))
sys.exit(0 if ok else 1)
