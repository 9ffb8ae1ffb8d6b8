/* Private helpers shared by the OBJ reader (obj.c) and the MTL reader (mtl.c): one line-based
 * text cursor with 1-based line and column for errors, the resolution of the files an OBJ
 * names (its .mtl files, their textures), and the glTF look made of MTL materials. */
#ifndef AMI_OBJ_INTERNAL_H
#define AMI_OBJ_INTERNAL_H

#include "anymove/gltf.h"

/* ---- the text cursor of OBJ and MTL: statements are lines, `keyword args...` ---- */
typedef struct ami_text {
    const char *s, *end, *line_start, *source;
    uint32_t line;
    am_error *err;
} ami_text;

/* Skip blanks (space, tab, CR) within the line. */
void ami_text_space(ami_text *t);
/* The 1-based column of the cursor. */
uint32_t ami_text_col(const ami_text *t);
/* At the end of the statement (newline, end of text or a '#' comment), blanks skipped. */
bool ami_text_eol(ami_text *t);
/* Start a line: remember where it starts and read its keyword (kw, n: empty for a blank line). */
void ami_text_keyword(ami_text *t, const char **kw, size_t *n);
/* The next number token: AM_E_SYNTAX (no number, or garbage) or AM_E_NONFINITE at its column. */
AM_NODISCARD am_status ami_text_number(ami_text *t, double *out);
/* The rest of the line without its leading and trailing blanks (a name or file name that may
 * hold spaces, as Blender reads them): s, n (n 0 when nothing is left). */
void ami_text_rest(ami_text *t, const char **s, size_t *n);
/* Move to the start of the next line. */
void ami_text_next_line(ami_text *t);

/* ---- files an OBJ names ---- */
/* Read `name` (as written in the file: '\\' is taken as '/') from folder `dir` or else from
 * `root` (the OBJ's folder). A relative name is followed as written ("../textures/a.png"
 * too); an absolute one (a drive, a URL) is not, since it is where the file was on the
 * exporting machine: its last segment alone is looked for in dir and root, as Blender does.
 * *found is the path that was read (am_alloc'd). AM_E_READ when none could be read, with
 * err->info saying why; AM_E_NOMEM, AM_E_LIMIT (over max_bytes). */
AM_NODISCARD am_status ami_obj_file_read(const char *root, const char *dir, const char *name, size_t max_bytes,
                                         char **found, char **data, size_t *len, am_error *err);

/* ---- MTL materials as a glTF look ---- */
/* The glTF look document (materials, textures, one sampler, images with their bytes) of
 * materials [count]: image_bytes[m] / image_len[m] are the texture bytes of material m (NULL:
 * none), image_mime[m] its media type. Equal texture files (by texture path) share one image.
 * The bytes are copied. AM_E_NOMEM. */
AM_NODISCARD am_status ami_mtl_look(const am_mtl_material *materials, size_t count, const uint8_t *const *image_bytes,
                                    const size_t *image_len, const char *const *image_mime, am_gltf **out,
                                    am_error *err);
/* glTF's roughness of an MTL material: Pr when given, else 1 - sqrt(Ns / 1000) (the inverse of
 * Blender's exporter, Ns = 1000 (1 - roughness)^2, and what its importer does), else 1 (Blender
 * without Ns). */
double ami_mtl_roughness(const am_mtl_material *m);
/* Free the strings of materials [count] and the array. */
void ami_mtl_materials_free(am_mtl_material *materials, size_t count);

#endif
