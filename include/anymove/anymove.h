/* anymove: motion to game-ready skeletal animation. Umbrella header. */
#ifndef ANYMOVE_H
#define ANYMOVE_H
#include "core.h"
#include "math.h"
#include "rig.h"
#include "io.h"
#include "gltf.h"
#include "bvh.h"
#include "ik.h"
#include "metrics.h"
#include "opt.h"
#include "capture.h"
#include "decompose.h"
#include "synth.h"
#include "bind.h"
#include "shape.h"
#include "camera.h"
#include "mocap.h"
#include "multiview.h"
#include "retarget.h"
#include "align.h"
#include "render.h"
#endif
