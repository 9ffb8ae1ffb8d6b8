#!/usr/bin/python3
"""Exploration (DEV half only, not the product): a candidate-scoring automatic up for
`anymove align`, tried in the truth's own frame (the score uses only dot products, distances and
speeds, so it is rotation-invariant and the frame does not matter). For each of 1500 Fibonacci
directions n: the floor F (25th percentile over frames of each frame's second-lowest of 300 tracks
along n), the entries within 1.5 % of the body size of it, their common velocity w (the median),
and the score = (entries moving within 0.25 x the body's median speed relative to w: contacts that
rest on a common ground, in place or travelling) x (share of frames touching F), zero when more
than 1 % of the entries are 2 eps below F. Prints the angle of the best n to +Z.

  align_up_proto.py CLIP_DIR...   (dirs of tracks.npz, e.g. bench/align_bench.py's cache)
"""
import numpy as np, sys, os
def fib(n):
    i=np.arange(n); z=1-(2*i+1)/n; r=np.sqrt(1-z*z); ph=np.pi*(3-np.sqrt(5))*i
    return np.stack([r*np.cos(ph),r*np.sin(ph),z],1)
D=fib(1500)
def score_all(p,v):
    T,N,_=p.shape
    idx=np.linspace(0,N-1,min(N,300)).astype(int); p=p[:,idx]; v=v[:,idx]
    size=np.linalg.norm(np.ptp(p[0][v[0]],0))
    P=np.where(v[...,None],p,np.nan)
    vel=np.full_like(P,np.nan); k=4
    vel[k:-k]=(P[2*k:]-P[:-2*k])/(2*k)
    h=np.einsum('tnk,dk->dtn',P,D)              # D,T,N
    hs=np.sort(np.where(np.isnan(h),np.inf,h),axis=2)
    Ft=hs[:,:,1]; F=np.quantile(Ft,0.25,axis=1)
    eps=0.015*size
    near=np.abs(h-F[:,None,None])<eps
    below=(h-F[:,None,None]< -2*eps)
    spd=np.linalg.norm(vel,axis=2)
    out=[]
    for d in range(len(D)):
        m=near[d]&np.isfinite(spd)
        if m.sum()<5: out.append(0);continue
        vv=vel[m]; w=np.median(vv,0)
        rel=np.linalg.norm(vv-w,axis=1)
        bodyv=np.nanmedian(np.linalg.norm(vel-w,axis=2))
        still=(rel<0.25*max(bodyv,1e-9)).sum()
        fb=np.nanmean(below[d][v]) if True else 0
        # frames touching
        touch=(np.abs(Ft[d]-F[d])<eps).mean()
        sc=still*touch*(fb<0.01)
        out.append(sc)
    out=np.array(out); b=np.argmax(out)
    return D[b], out
for d in sys.argv[1:]:
    z=np.load(d+'/tracks.npz'); p=z['points'].astype(float); v=z['visible'] if 'visible' in z else np.isfinite(p[...,0])
    n,sc=score_all(p,v)
    print("%-40s err %.1f deg  n=%s"%(os.path.basename(d),np.degrees(np.arccos(np.clip(n[2],-1,1))),np.round(n,2)))
