"""Python overhead of anymove.ik against the C call alone (issue 16).
usage: python_ik.py RIG.json MOTION.json [REPEATS]: the motion's joints are the input and its
frame 0 the reference, as bench_ik does; prints the best and median wall time of
anymove.ik (everything it does: binding the positions, the motion, am_ik_run, FK of the result
and the error report) its thread CPU time, and the wall time of the am_ik_run inside it (report["solve_s"])."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import anymove  # noqa: E402

rig = anymove.load_rig(sys.argv[1])
truth = anymove.load_motion(sys.argv[2], rig)
reps = int(sys.argv[3]) if len(sys.argv) > 3 else 15
pos = truth.joints
total, cpu, solve = [], [], []
for _ in range(reps):
    t0, c0 = time.perf_counter(), time.thread_time()
    res = anymove.ik(rig, pos, fps=truth.fps, reference=truth)
    cpu.append(time.thread_time() - c0)
    total.append(time.perf_counter() - t0)
    solve.append(res.report["solve_s"])
total.sort()
cpu.sort()
solve.sort()
print(f"frames {truth.frame_count} bones {rig.bone_count} joints {rig.joint_count}: "
      f"anymove.ik best {1e3 * total[0]:.2f} ms median {1e3 * total[reps // 2]:.2f} ms; "
      f"thread cpu best {1e3 * cpu[0]:.2f} ms median {1e3 * cpu[reps // 2]:.2f} ms; "
      f"its am_ik_run wall best {1e3 * solve[0]:.2f} ms median {1e3 * solve[reps // 2]:.2f} ms")
