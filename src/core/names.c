/* Name -> index maps: open addressing with linear probing over FNV-1a hashes.
 *
 * Every loader that matches names (rig bones and joints, BVH joints, glTF nodes, motion bones)
 * goes through one of these, so a file with 100,000 names costs 100,000 hash probes rather
 * than 5e9 string comparisons. A hand-written table rather than a library one: hsearch_r
 * allocates with malloc (bypassing the call's allocator and limits) and is a GNU extension,
 * uthash exits the process on allocation failure unless every call site handles its
 * non-fatal mode; this is sixty lines that report AM_E_NOMEM through the current scope. */
#include <string.h>

#include "core/internal.h"

static uint32_t ami_names_hash(const char *key, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 16777619u;
    }
    return h;
}

static ami_name_slot *ami_names_probe(const ami_names *m, const char *key, size_t len,
                                      uint32_t hash)
{
    size_t mask = m->cap - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        ami_name_slot *s = &m->slots[i];
        if (!s->key) return s;
        if (s->hash == hash && s->len == len && memcmp(s->key, key, len) == 0) return s;
    }
}

static am_status ami_names_grow(ami_names *m, size_t need)
{
    /* At most half full: probe runs stay short whatever the names look like. */
    if (need <= m->cap / 2) return AM_OK;
    size_t cap = m->cap ? m->cap : 16;
    while (cap / 2 < need) {
        if (cap > SIZE_MAX / 4 / sizeof(ami_name_slot)) return AM_E_NOMEM;
        cap *= 2;
    }
    ami_name_slot *slots = am_alloc_array(cap, sizeof *slots);
    if (!slots) return AM_E_NOMEM;
    ami_names grown = {slots, cap, 0};
    for (size_t i = 0; i < m->cap; i++) {
        const ami_name_slot *s = &m->slots[i];
        if (s->key) *ami_names_probe(&grown, s->key, s->len, s->hash) = *s;
    }
    am_free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return AM_OK;
}

am_status ami_names_reserve(ami_names *m, size_t count) { return ami_names_grow(m, count); }

am_status ami_names_add(ami_names *m, const char *key, size_t len, int32_t index, int32_t *prev)
{
    *prev = -1;
    if (len > UINT32_MAX) return AM_E_LIMIT;
    if (ami_names_grow(m, m->count + 1) != AM_OK) return AM_E_NOMEM;
    uint32_t hash = ami_names_hash(key, len);
    ami_name_slot *s = ami_names_probe(m, key, len, hash);
    if (s->key) {
        *prev = s->index;
        return AM_OK;
    }
    *s = (ami_name_slot){key, (uint32_t)len, hash, index};
    m->count++;
    return AM_OK;
}

int32_t ami_names_find(const ami_names *m, const char *key, size_t len)
{
    if (!m || m->count == 0 || !key) return -1;
    const ami_name_slot *s = ami_names_probe(m, key, len, ami_names_hash(key, len));
    return s->key ? s->index : -1;
}

int32_t ami_names_find_str(const ami_names *m, const char *key)
{
    return key ? ami_names_find(m, key, strlen(key)) : -1;
}

am_status ami_names_index(ami_names *m, const char *const *names, size_t n, size_t *dup_first,
                          size_t *dup_second)
{
    memset(m, 0, sizeof *m);
    if (n > INT32_MAX) return AM_E_LIMIT;
    if (ami_names_reserve(m, n) != AM_OK) return AM_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        int32_t prev;
        am_status s = ami_names_add(m, names[i], strlen(names[i]), (int32_t)i, &prev);
        if (s != AM_OK) return s;
        if (prev >= 0) {
            if (dup_first) *dup_first = (size_t)prev;
            if (dup_second) *dup_second = i;
            return AM_E_DUPLICATE;
        }
    }
    return AM_OK;
}

void ami_names_free(ami_names *m)
{
    if (!m) return;
    am_free(m->slots);
    memset(m, 0, sizeof *m);
}
