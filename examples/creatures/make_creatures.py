#!/usr/bin/env python3
"""Writes rig.json and creature.json of the body plans the fitter is judged on beyond the wolf,
dino and spider it was tuned on (issue 12): trex, lizard, bird, hexapod and snake.

- trex: the Quaternius Trex (../shared/data/gltf/quaternius/Trex.glb, CC0) read through
  `anymove convert` and scaled to metres (x 0.087: 2.6 m long). Its glTF skeleton drives the
  feet by IK targets under a helper root, so the chain is rebuilt here: hips, spine, neck and
  head, five tail bones, two small arms, and legs pelvis -> thigh -> shin -> foot -> toe (a long
  foot split at the ball: heel, ball and toe tip all reach the ground). Joint positions are the
  model's (the ball is the midpoint of its foot).
- lizard: a sprawling quadruped (upper limbs out sideways, lower limbs down), long tail.
- bird: a biped with a long neck, folded wings, legs thigh -> shank -> tarsus -> toe.
- hexapod: an insect: thorax, head, abdomen, six legs of coxa, femur, tibia, tarsus.
- snake: a limbless chain of ten body bones and a head, lying on the ground (no contacts).

Standard library only (the Trex positions are written out below as read from the model, so
the script needs no data to run). Rerun from this folder to regenerate; the output is committed.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def mirror(joints, bones, limits):
    """Add the _R side of every _L joint and bone (x negated; limits mirror by the rig rule)."""
    for n, p in list(joints.items()):
        if n.endswith("_L"):
            joints[n[:-2] + "_R"] = [-p[0], p[1], p[2]]
    for b in list(bones):
        if b[0].endswith("_L"):
            r = lambda s: s[:-2] + "_R" if s and s.endswith("_L") else s
            bones.append([r(b[0]), r(b[1]), r(b[2]), r(b[3])])
    return joints, bones, limits


def write(name, joints, bones, limits, feet, contacts, m_per_px=0.0026389, extra=None):
    d = os.path.join(HERE, name)
    os.makedirs(d, exist_ok=True)
    rig = {"name": name, "joints": {k: [round(v, 4) for v in p] for k, p in joints.items()},
           "bones": bones, "limits_deg": limits}
    cr = {"name": name, "layout": {"W_FRONT": 420, "W_SIDE": 860, "GROUND_V": 650, "M_PER_PX": m_per_px},
          "feet": feet, "contacts": contacts}
    if extra:
        cr.update(extra)
    with open(os.path.join(d, "rig.json"), "w") as f:
        json.dump(rig, f, indent=1)
        f.write("\n")
    with open(os.path.join(d, "creature.json"), "w") as f:
        json.dump(cr, f, indent=1)
        f.write("\n")


# ---------------------------------------------------------------- trex (Quaternius Trex x 0.087)
S = 0.087
Q = {  # the model's joints (convert's rig.json, model units), left side
    "Hips": [0.0, -1.43, 9.54], "Torso": [0.0, -3.5, 9.71], "Shoulders": [-0.13, -6.02, 11.41],
    "Neck": [0.0, -7.8, 12.24], "Head": [0.0, -9.46, 13.09], "Head_end": [-0.01, -13.52, 12.97],
    "Back": [0.0, -0.67, 9.71], "Tail1": [0.0, 1.09, 9.6], "Tail2": [0.0, 4.38, 8.92],
    "Tail3": [0.0, 7.43, 8.85], "Tail4": [0.0, 11.47, 9.48], "Tail5": [0.0, 14.43, 9.62],
    "Tail5_end": [0.0, 16.38, 9.08],
    "FrontLeg.L": [0.52, -4.86, 9.83], "FrontUpLeg.L": [1.97, -4.86, 9.83], "FrontLowLeg.L": [2.07, -5.36, 8.17],
    "FrontFoot.L": [1.66, -6.54, 7.46], "FrontFoot.L_end": [1.66, -6.21, 5.94],
    "BackLeg.L": [0.69, -0.4, 9.08], "BackUpLeg.L": [3.34, -0.4, 9.08], "BackLowLeg.L": [2.88, 1.28, 3.27],
    "BackLowLeg.L_end": [2.88, 0.75, 0.26], "BackFoot.L_end": [2.9, -2.21, 0.26],
}
q = lambda n: [v * S for v in Q[n]]
ball = [0.5 * (a + b) * S for a, b in zip(Q["BackLowLeg.L_end"], Q["BackFoot.L_end"])]
J = {"hips": q("Back"), "chest": q("Torso"), "shoulders": [0.0, q("Shoulders")[1], q("Shoulders")[2]],
     "neck": q("Neck"), "head": q("Head"), "snout": [0.0, q("Head_end")[1], q("Head_end")[2]],
     "tail1": q("Tail1"), "tail2": q("Tail2"), "tail3": q("Tail3"), "tail4": q("Tail4"),
     "tail5": q("Tail5"), "tail_tip": q("Tail5_end"),
     "shoulder_L": q("FrontUpLeg.L"), "elbow_L": q("FrontLowLeg.L"),
     "wrist_L": q("FrontFoot.L"), "claw_L": q("FrontFoot.L_end"),
     "hip_L": q("BackUpLeg.L"), "knee_L": q("BackLowLeg.L"), "ankle_L": q("BackLowLeg.L_end"),
     "ball_L": ball, "toe_L": q("BackFoot.L_end")}
for k in ("ankle_L", "ball_L", "toe_L"):
    J[k][2] = 0.02
B = [["spine", "hips", "chest", None], ["torso", "chest", "shoulders", "spine"],
     ["neck", "shoulders", "neck", "torso"], ["head", "neck", "head", "neck"], ["jaw", "head", "snout", "head"],
     ["tail1", "hips", "tail1", "spine"], ["tail2", "tail1", "tail2", "tail1"], ["tail3", "tail2", "tail3", "tail2"],
     ["tail4", "tail3", "tail4", "tail3"], ["tail5", "tail4", "tail5", "tail4"], ["tail6", "tail5", "tail_tip", "tail5"],
     ["clavicle_L", "chest", "shoulder_L", "spine"], ["upperarm_L", "shoulder_L", "elbow_L", "clavicle_L"],
     ["forearm_L", "elbow_L", "wrist_L", "upperarm_L"], ["hand_L", "wrist_L", "claw_L", "forearm_L"],
     ["pelvis_L", "hips", "hip_L", "spine"], ["thigh_L", "hip_L", "knee_L", "pelvis_L"],
     ["shin_L", "knee_L", "ankle_L", "thigh_L"], ["foot_L", "ankle_L", "ball_L", "shin_L"],
     ["toe_L", "ball_L", "toe_L", "foot_L"]]
L = {"torso": [[-20, 20], [-10, 10], [-20, 20]], "neck": [[-40, 40], [-20, 20], [-35, 35]],
     "head": [[-35, 35], [-15, 15], [-30, 30]], "jaw": [[-5, 35], [-3, 3], [-3, 3]],
     "tail1": [[-25, 25], [-8, 8], [-30, 30]], "tail2": [[-25, 25], [-8, 8], [-30, 30]],
     "tail3": [[-25, 25], [-8, 8], [-30, 30]], "tail4": [[-25, 25], [-8, 8], [-30, 30]],
     "tail5": [[-25, 25], [-8, 8], [-30, 30]], "tail6": [[-25, 25], [-8, 8], [-30, 30]],
     "clavicle": [[-10, 10], [-5, 5], [-10, 10]], "upperarm": [[-50, 50], [-15, 15], [-25, 25]],
     "forearm": [[-10, 90], [-5, 5], [-5, 5]], "hand": [[-30, 40], [-5, 5], [-8, 8]],
     "pelvis": [[-8, 8], [-4, 4], [-4, 4]], "thigh": [[-55, 45], [-10, 10], [-20, 20]],
     "shin": [[-45, 60], [-4, 4], [-4, 4]], "foot": [[-50, 50], [-4, 4], [-8, 8]],
     "toe": [[-60, 40], [-3, 3], [-5, 5]]}
write("trex", *mirror(J, B, L), feet=["toe_L", "toe_R"], contacts=["ankle_L", "toe_L", "ankle_R", "toe_R"])

# ---------------------------------------------------------------- lizard (1.7 m, sprawling)
J = {"pelvis": [0.0, 0.20, 0.16], "chest": [0.0, -0.25, 0.17], "neck": [0.0, -0.40, 0.20],
     "head": [0.0, -0.50, 0.22], "snout": [0.0, -0.70, 0.19],
     "tail1": [0.0, 0.40, 0.15], "tail2": [0.0, 0.62, 0.13], "tail3": [0.0, 0.82, 0.10],
     "tail4": [0.0, 0.98, 0.07], "tail_tip": [0.0, 1.10, 0.05],
     "shoulder_L": [0.07, -0.24, 0.15], "elbow_L": [0.20, -0.26, 0.15], "wrist_L": [0.22, -0.27, 0.03],
     "fhand_L": [0.25, -0.33, 0.01],
     "hip_L": [0.07, 0.20, 0.14], "knee_L": [0.22, 0.18, 0.14], "ankle_L": [0.24, 0.22, 0.03],
     "hfoot_L": [0.28, 0.16, 0.01]}
B = [["spine", "pelvis", "chest", None], ["neck", "chest", "neck", "spine"], ["head", "neck", "head", "neck"],
     ["snout", "head", "snout", "head"], ["tail1", "pelvis", "tail1", "spine"], ["tail2", "tail1", "tail2", "tail1"],
     ["tail3", "tail2", "tail3", "tail2"], ["tail4", "tail3", "tail4", "tail3"], ["tail5", "tail4", "tail_tip", "tail4"],
     ["scapula_L", "chest", "shoulder_L", "spine"], ["humerus_L", "shoulder_L", "elbow_L", "scapula_L"],
     ["radius_L", "elbow_L", "wrist_L", "humerus_L"], ["hand_L", "wrist_L", "fhand_L", "radius_L"],
     ["hipbone_L", "pelvis", "hip_L", "spine"], ["femur_L", "hip_L", "knee_L", "hipbone_L"],
     ["tibia_L", "knee_L", "ankle_L", "femur_L"], ["foot_L", "ankle_L", "hfoot_L", "tibia_L"]]
L = {"neck": [[-30, 30], [-15, 15], [-35, 35]], "head": [[-30, 30], [-15, 15], [-30, 30]],
     "snout": [[-5, 5], [-3, 3], [-3, 3]],
     "tail1": [[-15, 15], [-8, 8], [-35, 35]], "tail2": [[-15, 15], [-8, 8], [-35, 35]],
     "tail3": [[-15, 15], [-8, 8], [-35, 35]], "tail4": [[-15, 15], [-8, 8], [-35, 35]],
     "tail5": [[-15, 15], [-8, 8], [-35, 35]], "scapula": [[-8, 8], [-4, 4], [-8, 8]],
     "humerus": [[-40, 40], [-20, 20], [-45, 45]], "radius": [[-30, 60], [-8, 8], [-10, 10]],
     "hand": [[-40, 40], [-5, 5], [-10, 10]], "hipbone": [[-8, 8], [-4, 4], [-8, 8]],
     "femur": [[-40, 40], [-20, 20], [-45, 45]], "tibia": [[-30, 60], [-8, 8], [-10, 10]],
     "foot": [[-40, 40], [-5, 5], [-10, 10]]}
write("lizard", *mirror(J, B, L), feet=["fhand_L", "fhand_R", "hfoot_L", "hfoot_R"],
      contacts=["fhand_L", "fhand_R", "hfoot_L", "hfoot_R"])

# ---------------------------------------------------------------- bird (1.5 m tall, ostrich-like)
J = {"hips": [0.0, 0.05, 0.95], "chest": [0.0, -0.25, 1.00], "neck1": [0.0, -0.32, 1.20],
     "neck2": [0.0, -0.34, 1.40], "neck3": [0.0, -0.33, 1.58], "head": [0.0, -0.36, 1.66],
     "beak": [0.0, -0.52, 1.63], "tail": [0.0, 0.30, 1.02],
     "shoulder_L": [0.16, -0.20, 1.05], "elbow_L": [0.22, 0.02, 1.00], "wing_L": [0.20, 0.30, 0.95],
     "hip_L": [0.13, 0.05, 0.88], "knee_L": [0.15, -0.12, 0.66], "ankle_L": [0.15, 0.06, 0.40],
     "ball_L": [0.15, 0.00, 0.03], "toe_L": [0.15, -0.18, 0.01]}
B = [["spine", "hips", "chest", None], ["neck1", "chest", "neck1", "spine"], ["neck2", "neck1", "neck2", "neck1"],
     ["neck3", "neck2", "neck3", "neck2"], ["head", "neck3", "head", "neck3"], ["beak", "head", "beak", "head"],
     ["tail", "hips", "tail", "spine"],
     ["humerus_L", "shoulder_L", "elbow_L", "spine"], ["ulna_L", "elbow_L", "wing_L", "humerus_L"],
     ["femur_L", "hip_L", "knee_L", "spine"], ["tibia_L", "knee_L", "ankle_L", "femur_L"],
     ["tarsus_L", "ankle_L", "ball_L", "tibia_L"], ["toe_L", "ball_L", "toe_L", "tarsus_L"]]
L = {"neck1": [[-35, 35], [-15, 15], [-30, 30]], "neck2": [[-35, 35], [-15, 15], [-30, 30]],
     "neck3": [[-35, 35], [-15, 15], [-30, 30]], "head": [[-40, 40], [-20, 20], [-30, 30]],
     "beak": [[-3, 3], [-2, 2], [-2, 2]], "tail": [[-25, 25], [-8, 8], [-20, 20]],
     "humerus": [[-20, 30], [-10, 10], [-20, 40]], "ulna": [[-20, 20], [-5, 5], [-30, 10]],
     "femur": [[-45, 45], [-8, 8], [-15, 15]], "tibia": [[-60, 40], [-4, 4], [-4, 4]],
     "tarsus": [[-40, 70], [-4, 4], [-6, 6]], "toe": [[-70, 40], [-3, 3], [-5, 5]]}
write("bird", *mirror(J, B, L), feet=["toe_L", "toe_R"], contacts=["ball_L", "toe_L", "ball_R", "toe_R"])

# ---------------------------------------------------------------- hexapod (1.2 m long insect)
J = {"thorax": [0.0, 0.0, 0.30], "prothorax": [0.0, -0.20, 0.31], "head": [0.0, -0.30, 0.33],
     "mandible": [0.0, -0.40, 0.28], "waist": [0.0, 0.12, 0.30], "abdomen": [0.0, 0.55, 0.34]}
for i, (y, sy) in enumerate(((-0.15, -1.0), (0.0, 0.0), (0.10, 1.0)), 1):
    J.update({f"coxa{i}_L": [0.06, y, 0.28], f"femur{i}_L": [0.14, y + 0.02 * sy, 0.30],
              f"knee{i}_L": [0.34, y + 0.10 * sy, 0.42], f"ankle{i}_L": [0.50, y + 0.16 * sy, 0.06],
              f"tip{i}_L": [0.56, y + 0.20 * sy, 0.01]})
B = [["body", "thorax", "prothorax", None], ["neck", "prothorax", "head", "body"],
     ["jaw", "head", "mandible", "neck"], ["petiole", "waist", "abdomen", "body"]]
for i in (1, 2, 3):
    B += [[f"coxa{i}_L", f"coxa{i}_L", f"femur{i}_L", "body"], [f"femur{i}_L", f"femur{i}_L", f"knee{i}_L", f"coxa{i}_L"],
          [f"tibia{i}_L", f"knee{i}_L", f"ankle{i}_L", f"femur{i}_L"],
          [f"tarsus{i}_L", f"ankle{i}_L", f"tip{i}_L", f"tibia{i}_L"]]
L = {"neck": [[-25, 25], [-10, 10], [-25, 25]], "jaw": [[-5, 5], [-3, 3], [-3, 3]],
     "petiole": [[-20, 20], [-8, 8], [-20, 20]]}
for i in (1, 2, 3):
    L.update({f"coxa{i}": [[-10, 10], [-5, 5], [-25, 25]], f"femur{i}": [[-30, 30], [-8, 8], [-15, 15]],
              f"tibia{i}": [[-35, 35], [-4, 4], [-4, 4]], f"tarsus{i}": [[-30, 30], [-4, 4], [-8, 8]]})
write("hexapod", *mirror(J, B, L), feet=[f"tip{i}_{s}" for s in "LR" for i in (1, 2, 3)],
      contacts=[f"tip{i}_{s}" for s in "LR" for i in (1, 2, 3)])

# ---------------------------------------------------------------- snake (2.2 m, on the ground)
J = {"head": [0.0, -0.95, 0.12], "snout": [0.0, -1.08, 0.10]}
ys = [-0.85 + 0.21 * k for k in range(11)]
for k, y in enumerate(ys):
    J[f"s{k}"] = [0.0, y, 0.06 if k else 0.09]
B = [["body0", "s0", "s1", None], ["neck", "s0", "head", "body0"], ["head", "head", "snout", "neck"]]
for k in range(1, 10):
    B.append([f"body{k}", f"s{k}", f"s{k + 1}", f"body{k - 1}"])
L = {"neck": [[-30, 40], [-10, 10], [-35, 35]], "head": [[-30, 30], [-10, 10], [-30, 30]]}
for k in range(1, 10):
    L[f"body{k}"] = [[-12, 12], [-6, 6], [-35, 35]]
write("snake", J, B, L, feet=[], contacts=[])
