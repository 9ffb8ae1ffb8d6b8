"""Compare the leaf tips of a Track2Rig motion (tip_boneNN) with the End Sites (boneNN_end) of the
same motion written to BVH and read back: a tip depends on its bone's whole transform, loc
included. Prints 'tips COUNT worst METRES ok|BAD'. Usage: loc_tips.py RIGDIR BVHDIR"""
import json
import sys

a = json.load(open(sys.argv[1] + '/motion.json'))
b = json.load(open(sys.argv[2] + '/motion.json'))
assert any(abs(v) > 1e-4 for f in a['loc'] for l in f for v in l), 'no loc to round-trip'
ia = {n: i for i, n in enumerate(a['joint_names'])}
ib = {n: i for i, n in enumerate(b['joint_names'])}
worst, tips = 0.0, 0
for name in ia:
    if not name.startswith('tip_'):
        continue
    other = name[4:] + '_end'
    if other not in ib:
        continue
    tips += 1
    for fa, fb in zip(a['joints'], b['joints']):
        pa, pb = fa[ia[name]], fb[ib[other]]
        worst = max(worst, sum((x - y) ** 2 for x, y in zip(pa, pb)) ** 0.5)
print('tips %d worst %.3g %s' % (tips, worst, 'ok' if worst < 1e-5 else 'BAD'))
