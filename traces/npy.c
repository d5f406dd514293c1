/* npy.c - minimal, strict reader and writer of NumPy .npy (format 1.0-3.0).
 *
 * Only what gradients need: dtype '<f4', C order.  Anything else is refused
 * with a message that says what was found, never silently reinterpreted.
 */
#include "npy.h"
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[] = "\x93NUMPY";

/* ---- the header's dictionary ----------------------------------------------
 * A Python literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
 * read strictly: these three keys once each and nothing else, quoted with '
 * or ", the shape a tuple of non-negative integers. */
typedef struct {
    const char *s, *end;
} cursor;

static void skip_spaces(cursor *c)
{
    while (c->s < c->end && (*c->s == ' ' || *c->s == '\t'))
        c->s++;
}

static int take(cursor *c, char ch)
{
    skip_spaces(c);
    if (c->s < c->end && *c->s == ch) {
        c->s++;
        return 1;
    }
    return 0;
}

/* a quoted string into out (n bytes); 0 if there is none */
static int quoted(cursor *c, char *out, size_t n)
{
    skip_spaces(c);
    if (c->s >= c->end || (*c->s != '\'' && *c->s != '"'))
        return 0;
    char q = *c->s++;
    const char *b = c->s;
    while (c->s < c->end && *c->s != q)
        c->s++;
    if (c->s >= c->end || (size_t)(c->s - b) >= n)
        return 0;
    memcpy(out, b, (size_t)(c->s - b));
    out[c->s - b] = '\0';
    c->s++;
    return 1;
}

static int parse_dict(const char *h, size_t len, const char *path, char *dtype, size_t dn, int *fortran,
                      sp_npy_info *info, char *err, size_t errlen)
{
    cursor c = {h, h + len};
    int have[3] = {0, 0, 0};
    if (!take(&c, '{'))
        goto bad;
    while (!take(&c, '}')) {
        char key[32];
        if (!quoted(&c, key, sizeof key) || !take(&c, ':'))
            goto bad;
        int k = !strcmp(key, "descr") ? 0 : !strcmp(key, "fortran_order") ? 1 : !strcmp(key, "shape") ? 2 : -1;
        if (k < 0 || have[k]) {
            snprintf(err, errlen, "%s: .npy header has %s key '%.31s'", path, k < 0 ? "an unknown" : "a repeated",
                     key);
            return -1;
        }
        have[k] = 1;
        if (k == 0 && !quoted(&c, dtype, dn))
            goto bad;
        if (k == 1) {
            skip_spaces(&c);
            if (c.end - c.s >= 4 && !strncmp(c.s, "True", 4)) {
                *fortran = 1;
                c.s += 4;
            } else if (c.end - c.s >= 5 && !strncmp(c.s, "False", 5)) {
                *fortran = 0;
                c.s += 5;
            } else {
                goto bad;
            }
        }
        if (k == 2) {
            if (!take(&c, '('))
                goto bad;
            while (!take(&c, ')')) {
                skip_spaces(&c);
                if (c.s >= c.end || *c.s < '0' || *c.s > '9')
                    goto bad;
                uint64_t v = 0;
                while (c.s < c.end && *c.s >= '0' && *c.s <= '9') {
                    if (v > (UINT64_MAX - 9) / 10) {
                        snprintf(err, errlen, "%s: shape too large", path);
                        return -1;
                    }
                    v = v * 10 + (uint64_t)(*c.s++ - '0');
                }
                if (info->ndim == 8) {
                    snprintf(err, errlen, "%s: more than 8 dimensions", path);
                    return -1;
                }
                info->shape[info->ndim++] = v;
                if (!take(&c, ',')) {
                    if (!take(&c, ')'))
                        goto bad;
                    break;
                }
            }
        }
        if (!take(&c, ',')) {
            if (!take(&c, '}'))
                goto bad;
            break;
        }
    }
    /* what follows the dictionary is padding: spaces, then one newline */
    skip_spaces(&c);
    if (c.s < c.end && *c.s == '\n')
        c.s++;
    if (c.s != c.end)
        goto bad;
    if (!have[0] || !have[1] || !have[2]) {
        snprintf(err, errlen, "%s: .npy header lacks '%s'", path, !have[0] ? "descr" : !have[1] ? "fortran_order" : "shape");
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "%s: malformed .npy header (at byte %ld of its dictionary)", path, (long)(c.s - h));
    return -1;
}

/* the header of an open .npy; the file position ends at the data.  The
 * file's size must be exactly the header plus what the shape says, so a
 * header that claims more than the file holds is refused before anything is
 * allocated. */
static int read_header(FILE *f, const char *path, sp_npy_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    unsigned char pre[10];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, magic, 6) != 0) {
        snprintf(err, errlen, "%s is not a NumPy .npy file", path);
        return -1;
    }
    int major = pre[6];
    uint32_t hlen;
    long at;
    if (major == 1) {
        unsigned char b[2];
        if (fread(b, 1, 2, f) != 2)
            goto short_file;
        hlen = (uint32_t)b[0] | ((uint32_t)b[1] << 8);
        at = 10;
    } else if (major == 2 || major == 3) {
        unsigned char b[4];
        if (fread(b, 1, 4, f) != 4)
            goto short_file;
        hlen = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
        at = 12;
    } else {
        snprintf(err, errlen, "%s: unsupported .npy format version %d", path, major);
        return -1;
    }
    char h[1 << 12];
    if (hlen >= sizeof h) {
        snprintf(err, errlen, "%s: .npy header too large (%lu bytes)", path, (unsigned long)hlen);
        return -1;
    }
    if (fread(h, 1, hlen, f) != hlen)
        goto short_file;
    h[hlen] = '\0';
    if (strlen(h) != hlen) {
        snprintf(err, errlen, "%s: malformed .npy header (a NUL byte in it)", path);
        return -1;
    }
    char dtype[16] = "";
    int fortran = 0;
    if (parse_dict(h, hlen, path, dtype, sizeof dtype, &fortran, info, err, errlen) != 0)
        return -1;
    if (strcmp(dtype, "<f4") != 0) {
        snprintf(err, errlen, "%s: dtype is '%s', expected float32 ('<f4')", path, dtype);
        return -1;
    }
    if (fortran) {
        snprintf(err, errlen, "%s: Fortran-order arrays are not supported (save with C order)", path);
        return -1;
    }
    uint64_t count = 1;
    for (int i = 0; i < info->ndim; i++) {
        uint64_t v = info->shape[i];
        if (v && count > (UINT64_MAX / 8) / v) {
            snprintf(err, errlen, "%s: shape too large", path);
            return -1;
        }
        count *= v;
    }
    info->count = count;
    info->data_offset = (uint64_t)at + hlen;
    /* the size before any allocation: a header may claim anything */
    if (fseek(f, 0, SEEK_END) != 0) {
        snprintf(err, errlen, "cannot read %s: not a regular file", path);
        return -1;
    }
    long size = ftell(f);
    if (size < 0 || fseek(f, (long)info->data_offset, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot read %s: not a regular file", path);
        return -1;
    }
    uint64_t want = info->data_offset + count * sizeof(float);
    if ((uint64_t)size < want) {
        snprintf(err, errlen, "%s: file is shorter than its header says (%llu bytes, header says %llu)", path,
                 (unsigned long long)size, (unsigned long long)want);
        return -1;
    }
    if ((uint64_t)size > want) {
        snprintf(err, errlen, "%s: more data than its shape says (%llu bytes, shape says %llu)", path,
                 (unsigned long long)size, (unsigned long long)want);
        return -1;
    }
    return 0;
short_file:
    snprintf(err, errlen, "%s: file is shorter than its header says", path);
    return -1;
}

int sp_npy_info_read(const char *path, sp_npy_info *info, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = read_header(f, path, info, err, errlen);
    fclose(f);
    return rc;
}

int sp_npy_read(const char *path, sp_npy *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    sp_npy_info info;
    if (read_header(f, path, &info, err, errlen) != 0)
        goto fail;
    out->ndim = info.ndim;
    memcpy(out->shape, info.shape, sizeof out->shape);
    uint64_t count = info.count;
    if (count > ((uint64_t)1 << 34)) {
        snprintf(err, errlen, "%s: array of %llu floats is too large to read whole", path, (unsigned long long)count);
        goto fail;
    }
    out->data = malloc(count ? count * sizeof(float) : 1);
    if (!out->data) {
        snprintf(err, errlen, "out of memory reading %s", path);
        goto fail;
    }
    if (fread(out->data, sizeof(float), count, f) != count) {
        snprintf(err, errlen, "%s: file is shorter than its header says", path);
        goto fail;
    }
    for (uint64_t i = 0; i < count; i++)
        if (!isfinite(out->data[i])) {
            snprintf(err, errlen, "%s: non-finite value at flat index %llu", path, (unsigned long long)i);
            goto fail;
        }
    fclose(f);
    return 0;
fail:
    fclose(f);
    sp_npy_free(out);
    return -1;
}

void sp_npy_free(sp_npy *a)
{
    free(a->data);
    a->data = NULL;
}

/* a v1.0 header for a float32 C-order array, padded so the data starts on
 * a 64-byte boundary; returns its length */
static int make_header(char *header, int ndim, const uint64_t *shape)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    for (int i = 0; i < ndim; i++)
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%llu,%s", (unsigned long long)shape[i],
                        (i + 1 < ndim) ? " " : "");
    if (ndim > 1)
        len--; /* (a, b) rather than (a, b,) */
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    memcpy(header, magic, 6);
    header[6] = 1;
    header[7] = 0;
    uint16_t hl = (uint16_t)(len + pad + 1);
    header[8] = (char)(hl & 0xff);
    header[9] = (char)(hl >> 8);
    memcpy(header + 10, dict, (size_t)len);
    memset(header + 10 + len, ' ', (size_t)pad);
    header[10 + len + pad] = '\n';
    return 10 + len + pad + 1;
}

int sp_npy_write(const char *path, const float *data, int ndim, const uint64_t *shape, char *err, size_t errlen)
{
    sp_npy_stream st;
    if (sp_npy_stream_open(&st, path, ndim, shape, err, errlen) != 0)
        return -1;
    sp_npy_stream_write(&st, data, st.count);
    return sp_npy_stream_close(&st, 1, err, errlen);
}

int sp_npy_stream_open(sp_npy_stream *st, const char *path, int ndim, const uint64_t *shape, char *err,
                       size_t errlen)
{
    memset(st, 0, sizeof *st);
    char header[512];
    int hl = make_header(header, ndim, shape);
    st->count = 1;
    for (int i = 0; i < ndim; i++)
        st->count *= shape[i];
    if (sp_part_open(&st->pf, path, err, errlen) != 0)
        return -1;
    st->ok = fwrite(header, 1, (size_t)hl, st->pf.f) == (size_t)hl;
    st->error = st->ok ? 0 : errno;
    return 0;
}

void sp_npy_stream_write(sp_npy_stream *st, const float *data, uint64_t count)
{
    if (st->ok && st->written + count > st->count) {
        st->ok = 0;
        st->error = EINVAL;
    } else if (st->ok && fwrite(data, sizeof(float), count, st->pf.f) != count) {
        st->ok = 0;
        st->error = errno;
    }
    st->written += count;
}

int sp_npy_stream_close(sp_npy_stream *st, int ok, char *err, size_t errlen)
{
    char path[1100];
    snprintf(path, sizeof path, "%s", st->pf.part ? st->pf.part : "");
    int complete = st->ok && st->written == st->count;
    if (sp_part_close(&st->pf, ok && complete, err, errlen) != 0)
        return -1;
    if (ok && !complete) {
        snprintf(err, errlen, "error writing %s: %s", path,
                 st->error ? strerror(st->error) : "fewer values than its shape says");
        return -1;
    }
    return 0;
}
