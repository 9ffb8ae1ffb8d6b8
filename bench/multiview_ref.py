#!/usr/bin/env python3
"""Helpers of bench/multiview.sh (numpy only):
  det-from-p2d P2D.npz CALIB.toml OUT.npz   aniposelib's p2d [C, N, 2] as a det.npz (N frames, 1 joint)
  cut-joints DET.npz J OUT.npz                 keep the first J joints of a det.npz
  dlt P2D.npz CALIB.toml                       a plain numpy DLT beside ours (OpenCV's undistortPoints
                                               loop, homogeneous SVD, no RANSAC): the anchor
  reproj P2D.npz CALIB.toml JOINTS.npz          aniposelib's statistic for our points: per point the mean
                                               reprojection error over the cameras that see it, median
  split P2D.npz OUT_PREFIX                     the points' first and second halves (in file order) as
                                               OUT_PREFIX{a,b}.npz (p2d) for a held-out score
"""
import re, sys, time
import numpy as np

def load_calib(path):
    txt = open(path).read()
    cams = []
    for blk in re.split(r'\n(?=\[)', txt):
        if not blk.startswith('[cam_'):
            continue
        def arr(k):
            return np.array(eval(re.search(k + r' = (.*)', blk).group(1)), float)
        name = re.search(r'name = "(.*?)"', blk).group(1)
        cams.append(dict(name=name, K=arr('matrix'), d=(list(arr('distortions')) + [0] * 5)[:5],
                         r=arr('rotation'), t=arr('translation')))
    return cams

def rod(r):
    th = np.linalg.norm(r)
    if th < 1e-12:
        return np.eye(3)
    k = r / th
    Kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * Kx + (1 - np.cos(th)) * Kx @ Kx

def undistort(c, uv):
    K = c['K']; k1, k2, p1, p2, k3 = c['d']
    xd = (uv[:, 0] - K[0, 2]) / K[0, 0]; yd = (uv[:, 1] - K[1, 2]) / K[1, 1]
    x, y = xd.copy(), yd.copy()
    for _ in range(5):
        r2 = x * x + y * y
        icd = 1 / (1 + k1 * r2 + k2 * r2 ** 2 + k3 * r2 ** 3)
        x = (xd - (2 * p1 * x * y + p2 * (r2 + 2 * x * x))) * icd
        y = (yd - (p1 * (r2 + 2 * y * y) + 2 * p2 * x * y)) * icd
    return np.stack([x, y], 1)

def project(c, X):
    xc = X @ rod(c['r']).T + c['t']
    a = xc[:, 0] / xc[:, 2]; b = xc[:, 1] / xc[:, 2]
    k1, k2, p1, p2, k3 = c['d']
    r2 = a * a + b * b; rad = 1 + k1 * r2 + k2 * r2 ** 2 + k3 * r2 ** 3
    ad = a * rad + 2 * p1 * a * b + p2 * (r2 + 2 * a * a)
    bd = b * rad + p1 * (r2 + 2 * b * b) + 2 * p2 * a * b
    K = c['K']
    return np.stack([K[0, 0] * ad + K[0, 1] * bd + K[0, 2], K[1, 1] * bd + K[1, 2]], 1)

def per_point_median(cams, p2d, X):
    err = np.stack([np.linalg.norm(project(c, X) - p2d[k], axis=1) for k, c in enumerate(cams)])
    with np.errstate(invalid='ignore'):
        return np.nanmedian(np.nanmean(err, 0)), np.nanmedian(err)

def main():
    cmd = sys.argv[1]
    if cmd == 'det-from-p2d':
        p2d = np.load(sys.argv[2])['p2d']; cams = load_calib(sys.argv[3])
        uv = p2d[:, :, None, :].astype(np.float32)
        conf = np.where(np.isnan(uv[..., 0]), 0, 1).astype(np.float32)
        np.savez(sys.argv[4], uv=uv, conf=conf, cameras=np.array([c['name'] for c in cams]),
                 names=np.array(['point']), fps=np.float64(30))
    elif cmd == 'cut-joints':
        d = dict(np.load(sys.argv[2])); J = int(sys.argv[3])
        d['uv'] = d['uv'][:, :, :J]; d['conf'] = d['conf'][:, :, :J]; d['names'] = d['names'][:J]
        np.savez(sys.argv[4], **d)
    elif cmd == 'dlt':
        p2d = np.load(sys.argv[2])['p2d']; cams = load_calib(sys.argv[3])
        C, N, _ = p2d.shape
        t0 = time.time()
        und = np.stack([undistort(c, p2d[k]) for k, c in enumerate(cams)])
        P = np.stack([np.hstack([rod(c['r']), c['t'][:, None]]) for c in cams])
        seen = ~np.isnan(und[..., 0])
        A = np.zeros((N, 2 * C, 4))
        A[:, 0::2] = (und[..., 0].T[..., None] * P[None, :, 2] - P[None, :, 0])
        A[:, 1::2] = (und[..., 1].T[..., None] * P[None, :, 2] - P[None, :, 1])
        A[np.repeat(~seen.T, 2, axis=1)] = 0
        _, _, vh = np.linalg.svd(A)
        X = vh[:, -1, :3] / vh[:, -1, 3:]
        X[seen.sum(0) < 2] = np.nan
        dt = time.time() - t0
        a, b = per_point_median(cams, p2d, X)
        print('numpy DLT: %d points in %.2f s; median per-point mean reprojection %.2f px, median per detection %.2f px'
              % (np.isfinite(X[:, 0]).sum(), dt, a, b))
    elif cmd == 'split':
        p2d = np.load(sys.argv[2])['p2d']; h = p2d.shape[1] // 2
        np.savez(sys.argv[3] + 'a.npz', p2d=p2d[:, :h]); np.savez(sys.argv[3] + 'b.npz', p2d=p2d[:, h:])
    elif cmd == 'reproj':
        p2d = np.load(sys.argv[2])['p2d']; cams = load_calib(sys.argv[3])
        X = np.load(sys.argv[4])['joints'][:, 0, :]
        a, b = per_point_median(cams, p2d, X)
        print('%d points triangulated; median per-point mean reprojection %.2f px, median per detection %.2f px'
              % (np.isfinite(X[:, 0]).sum(), a, b))

if __name__ == '__main__':
    main()
