/* json_file.c - reading JSON files back: outputs (summary.json), device
 * profiles and config files, with the checks bad input needs. */
#include "trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sp_read_file(const char *path, size_t max_bytes, size_t *len, char *err, size_t errlen)
{
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n > max_bytes)
            break;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb)
                free(buf);
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f), e = errno;
    fclose(f);
    if (!buf || bad || n > max_bytes) {
        if (!buf)
            snprintf(err, errlen, "out of memory reading %s", path);
        else if (bad)
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(e));
        else
            snprintf(err, errlen, "%s is larger than %zu bytes", path, max_bytes);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

int sp_json_write(const char *path, const cJSON *doc, char *err, size_t errlen)
{
    char *text = doc ? cJSON_Print(doc) : NULL;
    if (!text) {
        snprintf(err, errlen, "out of memory writing %s", path);
        return -1;
    }
    sp_part_file pf;
    if (sp_part_open(&pf, path, err, errlen) != 0) {
        free(text);
        return -1;
    }
    int ok = fputs(text, pf.f) >= 0 && fputc('\n', pf.f) != EOF;
    free(text);
    if (sp_part_close(&pf, ok, err, errlen) != 0 || !ok) {
        if (!ok)
            snprintf(err, errlen, "error writing %s", path);
        return -1;
    }
    return 0;
}

cJSON *sp_json_file_checked(const char *path, size_t max_bytes, char *err, size_t errlen)
{
    size_t len;
    char *buf = sp_read_file(path, max_bytes, &len, err, errlen);
    if (!buf)
        return NULL;
    if (strlen(buf) != len) {
        free(buf);
        snprintf(err, errlen, "%s: malformed JSON (a NUL byte in the text)", path);
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(buf, &end, 1);
    if (!j) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= buf && at <= buf + len ? (long)(at - buf) : -1;
        snprintf(err, errlen, "%s: malformed JSON near byte %ld", path, off);
    }
    free(buf);
    return j;
}

cJSON *sp_json_file(const char *path)
{
    char err[8];
    return sp_json_file_checked(path, (size_t)1 << 30, err, sizeof err);
}

static const cJSON *item(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b && x)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    return x;
}

double sp_json_num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = item(o, a, b);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

const char *sp_json_str(const cJSON *o, const char *a, const char *b)
{
    const cJSON *x = item(o, a, b);
    return cJSON_IsString(x) ? x->valuestring : "-";
}
