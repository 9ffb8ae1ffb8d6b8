/* Bone names: normalisation (case, separators, side tokens, exporter prefixes, numbering
 * suffixes) and the role table. Names are hints for the matcher (map.c), never the last word:
 * a name's side loses to the side of X the bone is on, and a name match that contradicts the
 * skeleton's structure is not taken.
 *
 * The role table covers the naming conventions of:
 * - Mixamo (mixamorig:Hips, Spine1, LeftUpLeg, LeftLeg, LeftToeBase, LeftHandThumb1, HeadTop_End)
 * - Unreal's Mannequin (pelvis, spine_01, clavicle_l, upperarm_l, lowerarm_l, thigh_l, calf_l,
 *   ball_l, upperarm_twist_01_l, ik_foot_l)
 * - Rigify and Blender's metarigs (DEF-upper_arm.L, ORG-shin.R, MCH-..., spine.003, f_index.01.L)
 * - SMPL and joint-named BVH (L_Hip, left_knee, L_Ankle, L_Collar, L_Shoulder, L_Elbow, L_Wrist)
 * - CMU and BVH libraries (LHipJoint, LowerBack, Neck1, LThumb; Poser's lShldr, rButtock)
 * - 3ds Max Biped / Truebones (Bip01 L Thigh, Bip01 L Calf, Bip01 L HorseLink, Bip01 Tail1)
 * - Bandai Namco's motion dataset (UpperArm_L, LowerLeg_R, Toes_L)
 * - the Quaternius Animal and Human armatures (Body, Back, Torso2, FrontUpperLeg.L,
 *   BackLowerLeg.R, IKBackLeg.L, PoleTarget.L; Abdomen, UpperArm.L, Palm.L, Fingers.L)
 * - the Khronos / glTF sample rigs (b_Spine01_02, b_LeftForeArm_010)
 * - Blender's defaults (Bone, Bone.001: no role, the structure decides). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "retarget_internal.h"

static const char *const ami_role_names[AMI_ROLE_COUNT] = {
    "none", "root", "hips", "spine", "chest", "neck", "head", "face", "tail", "wing", "clavicle", "upper arm",
    "forearm", "hand", "finger", "hip bone", "thigh", "shin", "foot", "toe", "leg", "twist"};

const char *ami_role_name(ami_role role) { return role < AMI_ROLE_COUNT ? ami_role_names[role] : "?"; }

/* Exporters' prefixes, lowercase, each with its separator: stripped (repeatedly) before the name
 * is split. "mch-" marks a mechanism bone of Rigify: a helper. */
static const char *const ami_prefixes[] = {
    "mixamorig_", "mixamorig", "valvebiped.", "bip001_", "bip001 ", "bip01_", "bip01 ", "def-", "org-", "mch-",
    "cc_base_",   "character1_", "j_bip_", "jnt_", "bn_", "b_", "j_", "rig_", NULL};

#define AMI_MAX_TOKENS 16
typedef struct ami_tokens {
    size_t n;
    char t[AMI_MAX_TOKENS][40];
    uint8_t after_sep[AMI_MAX_TOKENS]; /* the token followed a separator ('_', '.', ' ', '-') */
} ami_tokens;

static bool ami_is_sep(char c) { return c == '_' || c == '.' || c == '-' || c == ' ' || c == ':' || c == '|'; }
static bool ami_is_digit(char c) { return c >= '0' && c <= '9'; }
static bool ami_is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool ami_is_lower(char c) { return (c >= 'a' && c <= 'z') || (unsigned char)c >= 0x80; }

static void ami_push(ami_tokens *tk, const char *s, size_t n, bool after_sep)
{
    if (!n || tk->n >= AMI_MAX_TOKENS) return;
    if (n >= sizeof tk->t[0]) n = sizeof tk->t[0] - 1;
    for (size_t i = 0; i < n; i++) tk->t[tk->n][i] = (char)tolower((unsigned char)s[i]);
    tk->t[tk->n][n] = '\0';
    tk->after_sep[tk->n] = after_sep;
    tk->n++;
}

/* Split at separators, at lower->Upper ("upLeg"), at Upper->Upper+lower ("LHip" -> L, Hip) and
 * between letters and digits ("Spine01"). */
static void ami_tokenize(const char *s, ami_tokens *tk)
{
    tk->n = 0;
    size_t n = strlen(s), start = 0;
    bool sep = false;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? s[i] : '\0';
        if (i == n || ami_is_sep(c)) {
            ami_push(tk, s + start, i - start, sep);
            start = i + 1;
            sep = i < n;
            continue;
        }
        if (i == start) continue;
        char p = s[i - 1];
        bool cut = (ami_is_lower(p) && ami_is_upper(c)) || (ami_is_digit(p) != ami_is_digit(c)) ||
                   (ami_is_upper(p) && ami_is_upper(c) && i + 1 < n && ami_is_lower(s[i + 1]));
        if (cut) {
            ami_push(tk, s + start, i - start, sep);
            start = i;
            sep = false;
        }
    }
}

static bool ami_tok(const ami_tokens *tk, const char *w)
{
    for (size_t i = 0; i < tk->n; i++)
        if (strcmp(tk->t[i], w) == 0) return true;
    return false;
}

/* Words that follow a one-letter side glued to them ("lhand", "rthigh", "lshldr"). */
static const char *const ami_glued[] = {"hand", "thigh", "shin", "foot", "shldr", "forearm", "collar", "buttock",
                                        "fingers", "thumb", "hip", "knee", "ankle", "toe", "arm", "leg", "uparm",
                                        "elbow", "wrist", "shoulder", "clavicle", "eye", "ear", NULL};

/* Remove side tokens, returning the side they name. */
static int ami_take_side(ami_tokens *tk)
{
    int side = 0;
    size_t w = 0;
    for (size_t i = 0; i < tk->n; i++) {
        char *t = tk->t[i];
        int s = 0;
        if (strcmp(t, "l") == 0 || strcmp(t, "left") == 0) s = 1;
        else if (strcmp(t, "r") == 0 || strcmp(t, "right") == 0) s = -1;
        if (s) {
            side = s;
            continue;
        }
        /* "leftupleg" written in one case, "lhand" */
        size_t skip = 0;
        if (strncmp(t, "left", 4) == 0 && t[4]) skip = 4, s = 1;
        else if (strncmp(t, "right", 5) == 0 && t[5]) skip = 5, s = -1;
        else if ((t[0] == 'l' || t[0] == 'r') && t[1])
            for (const char *const *g = ami_glued; *g; g++)
                if (strcmp(t + 1, *g) == 0) {
                    skip = 1;
                    s = t[0] == 'l' ? 1 : -1;
                    break;
                }
        if (skip) {
            side = s;
            memmove(t, t + skip, strlen(t + skip) + 1);
        }
        if (w != i) {
            memcpy(tk->t[w], t, sizeof tk->t[0]);
            tk->after_sep[w] = tk->after_sep[i];
        }
        w++;
    }
    tk->n = w;
    return side;
}

static const char *ami_strip_prefixes(const char *name, bool *mechanism)
{
    const char *s = name;
    const char *ns = strrchr(s, ':');
    if (ns && ns[1]) s = ns + 1;
    const char *bar = strrchr(s, '|');
    if (bar && bar[1]) s = bar + 1;
    for (bool again = true; again;) {
        again = false;
        for (const char *const *p = ami_prefixes; *p; p++) {
            size_t n = strlen(*p);
            if (strlen(s) > n && strncasecmp(s, *p, n) == 0) {
                if (strcmp(*p, "mch-") == 0) *mechanism = true;
                s += n;
                again = true;
                break;
            }
        }
    }
    return s;
}

/* The family rules a rig's names call for. */
typedef struct ami_family {
    bool joint_named; /* joints, not bones, give the names (SMPL, joint-named BVH): "hip" is the
                         thigh, "knee" the shin, "shoulder" the upper arm, "foot" the toes */
    bool has_arm;     /* "arm"/"upperarm"/"shldr" exist: "shoulder" is the clavicle */
    bool has_thigh;   /* "upleg"/"thigh"/"upperleg" exist: a bare "leg" is the shin */
} ami_family;

static ami_role ami_role_of(const ami_tokens *tk, const ami_family *fam, bool sided)
{
    bool front = ami_tok(tk, "front") || ami_tok(tk, "fore") || ami_tok(tk, "frontleg");
    bool hind = ami_tok(tk, "hind") || ami_tok(tk, "rear") || (ami_tok(tk, "back") && tk->n > 1);
    ami_role r = AMI_ROLE_NONE;
    if (ami_tok(tk, "twist") || ami_tok(tk, "roll")) return AMI_ROLE_TWIST;
    if (ami_tok(tk, "tail")) return AMI_ROLE_TAIL;
    if (ami_tok(tk, "wing")) return AMI_ROLE_WING;
    static const char *const face[] = {"jaw", "mouth", "tongue", "eye", "eyes", "ear", "nose", "lip",
                                       "brow", "teeth", "beak", "horn", "eyelid", NULL};
    for (const char *const *f = face; *f; f++)
        if (ami_tok(tk, *f)) return AMI_ROLE_FACE;
    bool up = ami_tok(tk, "up") || ami_tok(tk, "upper"), low = ami_tok(tk, "lower") || ami_tok(tk, "low");
    if (ami_tok(tk, "thumb") || ami_tok(tk, "index") || ami_tok(tk, "middle") || ami_tok(tk, "ring") ||
        ami_tok(tk, "pinky") || ami_tok(tk, "little") || ami_tok(tk, "finger") || ami_tok(tk, "fingers") ||
        ami_tok(tk, "digit") || ami_tok(tk, "f"))
        r = AMI_ROLE_FINGER;
    else if (ami_tok(tk, "toe") || ami_tok(tk, "toes") || ami_tok(tk, "toebase") || ami_tok(tk, "ball") ||
             ami_tok(tk, "toe0"))
        r = AMI_ROLE_TOE;
    else if (ami_tok(tk, "buttock") || (ami_tok(tk, "hip") && ami_tok(tk, "joint")))
        r = AMI_ROLE_HIPBONE;
    else if (ami_tok(tk, "forearm") || (ami_tok(tk, "fore") && ami_tok(tk, "arm")) || ami_tok(tk, "lowerarm") ||
             (low && ami_tok(tk, "arm")) || ami_tok(tk, "radius") || ami_tok(tk, "ulna") ||
             (fam->joint_named && ami_tok(tk, "elbow")))
        r = AMI_ROLE_FOREARM;
    else if (ami_tok(tk, "upperarm") || (up && ami_tok(tk, "arm")) || ami_tok(tk, "uparm") || ami_tok(tk, "shldr") ||
             ami_tok(tk, "humerus") || ami_tok(tk, "arm") ||
             (ami_tok(tk, "shoulder") && !front && !hind && (fam->joint_named || !fam->has_arm)))
        r = AMI_ROLE_UPPERARM;
    else if (ami_tok(tk, "clavicle") || ami_tok(tk, "collar") || ami_tok(tk, "collarbone") ||
             ami_tok(tk, "scapula") || ami_tok(tk, "shoulder"))
        r = AMI_ROLE_CLAVICLE;
    else if (ami_tok(tk, "hand") || ami_tok(tk, "palm") || ami_tok(tk, "manus") || ami_tok(tk, "carpal") ||
             ami_tok(tk, "wrist"))
        r = fam->joint_named && ami_tok(tk, "hand") ? AMI_ROLE_FINGER : AMI_ROLE_HAND;
    else if (ami_tok(tk, "thigh") || ami_tok(tk, "upleg") || ami_tok(tk, "upperleg") || ami_tok(tk, "femur") ||
             (up && ami_tok(tk, "leg")) || (sided && fam->joint_named && ami_tok(tk, "hip")))
        r = AMI_ROLE_THIGH;
    else if (ami_tok(tk, "shin") || ami_tok(tk, "calf") || ami_tok(tk, "lowerleg") || (low && ami_tok(tk, "leg")) ||
             ami_tok(tk, "tibia") || ami_tok(tk, "knee") || (ami_tok(tk, "horse") && ami_tok(tk, "link")))
        r = AMI_ROLE_SHIN;
    else if (ami_tok(tk, "foot") || ami_tok(tk, "ankle") || ami_tok(tk, "paw") || ami_tok(tk, "hoof") ||
             ami_tok(tk, "heel"))
        r = fam->joint_named && ami_tok(tk, "foot") ? AMI_ROLE_TOE : AMI_ROLE_FOOT;
    else if (ami_tok(tk, "leg"))
        r = (fam->has_thigh && !front && !hind) ? AMI_ROLE_SHIN : AMI_ROLE_LEG;
    else if (ami_tok(tk, "neck") || ami_tok(tk, "lowerneck") || ami_tok(tk, "upperneck"))
        r = AMI_ROLE_NECK;
    else if (ami_tok(tk, "head") || ami_tok(tk, "skull") || ami_tok(tk, "cranium"))
        r = AMI_ROLE_HEAD;
    else if (ami_tok(tk, "chest") || ami_tok(tk, "thorax") || ami_tok(tk, "ribcage") || ami_tok(tk, "upperchest"))
        r = AMI_ROLE_CHEST;
    else if (ami_tok(tk, "spine") || ami_tok(tk, "back") || ami_tok(tk, "lowerback") || ami_tok(tk, "abdomen") ||
             ami_tok(tk, "torso") || ami_tok(tk, "waist") || ami_tok(tk, "belly") || ami_tok(tk, "stomach") ||
             ami_tok(tk, "lumbar"))
        r = AMI_ROLE_SPINE;
    else if (ami_tok(tk, "hips") || ami_tok(tk, "pelvis") || ami_tok(tk, "cog") || (!sided && ami_tok(tk, "hip")))
        r = AMI_ROLE_HIPS;
    else if (ami_tok(tk, "root") || ami_tok(tk, "master") || ami_tok(tk, "reference") || ami_tok(tk, "armature") ||
             ami_tok(tk, "rootjoint"))
        r = AMI_ROLE_ROOT;
    /* A front leg is an arm, segment for segment; a hind leg a leg. */
    if (front) {
        if (r == AMI_ROLE_THIGH) r = AMI_ROLE_UPPERARM;
        else if (r == AMI_ROLE_SHIN) r = AMI_ROLE_FOREARM;
        else if (r == AMI_ROLE_FOOT) r = AMI_ROLE_HAND;
        else if (r == AMI_ROLE_TOE) r = AMI_ROLE_FINGER;
        else if (r == AMI_ROLE_HIPBONE) r = AMI_ROLE_CLAVICLE;
    } else if (hind && r == AMI_ROLE_CLAVICLE) {
        r = AMI_ROLE_HIPBONE;
    }
    return r;
}

static bool ami_all_digits(const char *s)
{
    if (!*s) return false;
    for (; *s; s++)
        if (!ami_is_digit(*s)) return false;
    return true;
}

void ami_names_analyse(const am_rig *rig, ami_bone_name *out)
{
    size_t B = rig->bone_count;
    ami_family fam = {0};
    /* Pass 1: tokens of every bone, for the family rules and the numbering test. */
    size_t numbered = 0, distinct = 0;
    long *last_num = am_alloc_array(B ? B : 1, sizeof *last_num);
    for (size_t b = 0; b < B; b++) {
        bool mech = false;
        ami_tokens tk;
        ami_tokenize(ami_strip_prefixes(rig->bone_names[b], &mech), &tk);
        ami_take_side(&tk);
        if (ami_tok(&tk, "knee") || ami_tok(&tk, "elbow") || ami_tok(&tk, "wrist") || ami_tok(&tk, "ankle"))
            fam.joint_named = true;
        if (ami_tok(&tk, "arm") || ami_tok(&tk, "upperarm") || ami_tok(&tk, "shldr") || ami_tok(&tk, "uparm") ||
            (ami_tok(&tk, "upper") && ami_tok(&tk, "arm")))
            fam.has_arm = true;
        if (ami_tok(&tk, "upleg") || ami_tok(&tk, "thigh") || ami_tok(&tk, "upperleg") ||
            (ami_tok(&tk, "up") && ami_tok(&tk, "leg")) || (ami_tok(&tk, "upper") && ami_tok(&tk, "leg")))
            fam.has_thigh = true;
        if (last_num) last_num[b] = -1;
        if (last_num && tk.n >= 2 && ami_all_digits(tk.t[tk.n - 1]) && tk.after_sep[tk.n - 1]) {
            last_num[b] = strtol(tk.t[tk.n - 1], NULL, 10);
            numbered++;
        }
    }
    /* Khronos-style numbering ("b_Hip_01" ... "b_RightFoot02_022"): most bones end in a number
     * after a separator and no two share it. Rigify's "spine.003" repeats per chain. */
    bool global_numbering = false;
    if (last_num && numbered * 10 >= B * 6) {
        distinct = 1;
        for (size_t a = 0; a < B && distinct; a++)
            for (size_t b = a + 1; b < B; b++)
                if (last_num[a] >= 0 && last_num[a] == last_num[b]) {
                    distinct = 0;
                    break;
                }
        global_numbering = distinct != 0;
    }
    for (size_t b = 0; b < B; b++) {
        ami_bone_name *nm = &out[b];
        memset(nm, 0, sizeof *nm);
        bool mech = false;
        ami_tokens tk;
        ami_tokenize(ami_strip_prefixes(rig->bone_names[b], &mech), &tk);
        nm->side = ami_take_side(&tk);
        if (global_numbering && last_num && last_num[b] >= 0) tk.n--;
        nm->ordinal = -1;
        size_t used = 0;
        for (size_t i = 0; i < tk.n; i++) {
            if (ami_all_digits(tk.t[i])) {
                nm->ordinal = (int)strtol(tk.t[i], NULL, 10);
                continue;
            }
            size_t len = strlen(tk.t[i]);
            if (used + len + 1 < sizeof nm->norm) {
                memcpy(nm->norm + used, tk.t[i], len);
                used += len;
            }
        }
        if (nm->ordinal >= 0 && used + 12 < sizeof nm->norm) used += (size_t)snprintf(nm->norm + used, 12, "%d", nm->ordinal);
        nm->norm[used] = '\0';
        nm->role = ami_role_of(&tk, &fam, nm->side != 0);
        static const char *const helper_words[] = {"pole", "target", "ctrl", "control", "handle", "locator", "ik", NULL};
        for (const char *const *h = helper_words; *h; h++)
            if (ami_tok(&tk, *h)) nm->helper = 1;
        if (mech) nm->helper = 1;
        if (tk.n && (strcmp(tk.t[tk.n - 1], "end") == 0 || strcmp(tk.t[tk.n - 1], "nub") == 0 ||
                     strcmp(tk.t[tk.n - 1], "tip") == 0 || strcmp(tk.t[tk.n - 1], "site") == 0))
            nm->end = 1;
    }
    am_free(last_num);
}
