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

int sp_npy_read(const char *path, sp_npy *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char pre[10];
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, magic, 6) != 0) {
        snprintf(err, errlen, "%s is not a NumPy .npy file", path);
        goto fail;
    }
    int major = pre[6];
    uint32_t hlen;
    if (major == 1) {
        unsigned char b[2];
        if (fread(b, 1, 2, f) != 2)
            goto short_file;
        hlen = (uint32_t)b[0] | ((uint32_t)b[1] << 8);
    } else if (major == 2 || major == 3) {
        unsigned char b[4];
        if (fread(b, 1, 4, f) != 4)
            goto short_file;
        hlen = (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
    } else {
        snprintf(err, errlen, "%s: unsupported .npy format version %d", path, major);
        goto fail;
    }
    if (hlen > 1 << 20) {
        snprintf(err, errlen, "%s: .npy header too large", path);
        goto fail;
    }
    char *h = malloc(hlen + 1);
    if (!h) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (fread(h, 1, hlen, f) != hlen) {
        free(h);
        goto short_file;
    }
    h[hlen] = '\0';
    char *d = strstr(h, "'descr'");
    char *fo = strstr(h, "'fortran_order'");
    char *sh = strstr(h, "'shape'");
    if (!d || !fo || !sh) {
        snprintf(err, errlen, "%s: malformed .npy header", path);
        free(h);
        goto fail;
    }
    char dtype[16] = "";
    char *q = strchr(d + 7, '\'');
    if (q) {
        char *q2 = strchr(q + 1, '\'');
        if (q2 && q2 - q - 1 < (long)sizeof dtype) {
            memcpy(dtype, q + 1, (size_t)(q2 - q - 1));
            dtype[q2 - q - 1] = '\0';
        }
    }
    if (strcmp(dtype, "<f4") != 0) {
        snprintf(err, errlen, "%s: dtype is '%s', expected float32 ('<f4')", path, dtype);
        free(h);
        goto fail;
    }
    char *fv = fo + strlen("'fortran_order'");
    while (*fv == ' ' || *fv == ':')
        fv++;
    if (strncmp(fv, "False", 5) != 0) {
        snprintf(err, errlen, "%s: Fortran-order arrays are not supported (save with C order)", path);
        free(h);
        goto fail;
    }
    char *p = strchr(sh, '(');
    char *pe = p ? strchr(p, ')') : NULL;
    if (!p || !pe) {
        snprintf(err, errlen, "%s: malformed shape in .npy header", path);
        free(h);
        goto fail;
    }
    p++;
    uint64_t count = 1;
    while (p < pe) {
        while (p < pe && (*p == ' ' || *p == ','))
            p++;
        if (p >= pe)
            break;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || errno || out->ndim == 8) {
            snprintf(err, errlen, "%s: malformed shape in .npy header", path);
            free(h);
            goto fail;
        }
        out->shape[out->ndim++] = v;
        if (v && count > UINT64_MAX / v) {
            snprintf(err, errlen, "%s: shape too large", path);
            free(h);
            goto fail;
        }
        count *= v;
        p = end;
    }
    free(h);
    if (count > ((uint64_t)1 << 34)) {
        snprintf(err, errlen, "%s: array of %llu floats is too large", path, (unsigned long long)count);
        goto fail;
    }
    out->data = malloc(count ? count * sizeof(float) : 1);
    if (!out->data) {
        snprintf(err, errlen, "out of memory reading %s", path);
        goto fail;
    }
    if (fread(out->data, sizeof(float), count, f) != count)
        goto short_file;
    if (fgetc(f) != EOF) {
        snprintf(err, errlen, "%s: more data than its shape says", path);
        goto fail;
    }
    for (uint64_t i = 0; i < count; i++)
        if (!isfinite(out->data[i])) {
            snprintf(err, errlen, "%s: non-finite value at flat index %llu", path, (unsigned long long)i);
            goto fail;
        }
    fclose(f);
    return 0;
short_file:
    snprintf(err, errlen, "%s: file is shorter than its header says", path);
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

int sp_npy_write(const char *path, const float *data, int ndim, const uint64_t *shape, char *err, size_t errlen)
{
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
    uint64_t count = 1;
    for (int i = 0; i < ndim; i++) {
        len += snprintf(dict + len, sizeof dict - (size_t)len, "%llu,%s", (unsigned long long)shape[i],
                        (i + 1 < ndim) ? " " : "");
        count *= shape[i];
    }
    if (ndim > 1)
        len--; /* (a, b) rather than (a, b,) */
    len += snprintf(dict + len, sizeof dict - (size_t)len, "), }");
    /* pad so that data starts on a 64-byte boundary; header ends with '\n' */
    int total = 10 + len + 1;
    int pad = (64 - total % 64) % 64;
    char header[512];
    memcpy(header, magic, 6);
    header[6] = 1;
    header[7] = 0;
    uint16_t hl = (uint16_t)(len + pad + 1);
    header[8] = (char)(hl & 0xff);
    header[9] = (char)(hl >> 8);
    memcpy(header + 10, dict, (size_t)len);
    memset(header + 10 + len, ' ', (size_t)pad);
    header[10 + len + pad] = '\n';
    sp_part_file pf;
    if (sp_part_open(&pf, path, err, errlen) != 0)
        return -1;
    int ok = fwrite(header, 1, (size_t)(10 + len + pad + 1), pf.f) == (size_t)(10 + len + pad + 1) &&
             fwrite(data, sizeof(float), count, pf.f) == count;
    if (sp_part_close(&pf, ok, err, errlen) != 0 || !ok) {
        if (!ok)
            snprintf(err, errlen, "error writing %s", path);
        return -1;
    }
    return 0;
}
