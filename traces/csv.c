/* csv.c - RFC 4180 records read and fields quoted (csv.h), for every CSV
 * sparsim reads back. */
#include "csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_csv_free(sp_csv_rec *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->f[i]);
    free(r->f);
    memset(r, 0, sizeof *r);
}

/* where the field at s ends (at the comma, newline or end after it); NULL
 * for a quote that is never closed */
static const char *field_end(const char *s, const char *end)
{
    if (s < end && *s == '"') {
        for (s++;; s++) {
            if (s >= end)
                return NULL;
            if (*s == '"' && s + 1 < end && s[1] == '"')
                s++;
            else if (*s == '"')
                break;
        }
        s++;
    }
    while (s < end && *s != ',' && *s != '\n')
        s++;
    return s;
}

/* the field from s to e (field_end's), unquoted into val */
static void unquote(const char *s, const char *e, const char *end, char *val)
{
    size_t w = 0;
    if (s < e && *s == '"') {
        for (s++;; s++) {
            if (*s == '"' && s + 1 < end && s[1] == '"')
                val[w++] = *s++;
            else if (*s == '"')
                break;
            else
                val[w++] = *s;
        }
        s++;
    }
    while (s < e)
        val[w++] = *s++;
    if (w && val[w - 1] == '\r' && (e >= end || *e == '\n'))
        w--;
    val[w] = '\0';
}

int sp_csv_next(const char **pos, const char *end, sp_csv_rec *r)
{
    memset(r, 0, sizeof *r);
    const char *s = *pos;
    if (s >= end)
        return 0;
    r->start = s;
    int cap = 0;
    for (;;) {
        const char *e = field_end(s, end);
        if (!e) { /* never closed: a cut file */
            sp_csv_free(r);
            *pos = end;
            return -1;
        }
        char *val = malloc((size_t)(e - s) + 1);
        if (!val)
            goto oom;
        unquote(s, e, end, val);
        s = e;
        if (r->n == cap) {
            int nc = cap ? cap * 2 : 32;
            char **nf = realloc(r->f, (size_t)nc * sizeof *nf);
            if (!nf) {
                free(val);
                goto oom;
            }
            r->f = nf;
            cap = nc;
        }
        r->f[r->n++] = val;
        if (s < end && *s == ',') {
            s++;
            continue;
        }
        r->end = s;
        r->complete = s < end; /* at a newline */
        *pos = s < end ? s + 1 : s;
        return 1;
    }
oom:
    sp_csv_free(r);
    *pos = end;
    return -1;
}

int sp_csv_column(const sp_csv_rec *header, const char *name)
{
    for (int i = 0; i < header->n; i++)
        if (!strcmp(header->f[i], name))
            return i;
    return -1;
}

/* the one rule: a field is quoted when it holds any of these */
static int must_quote(const char *text) { return strpbrk(text, ",\"\r\n") != NULL; }

const char *sp_csv_field(const char *text, char *out, size_t n)
{
    if (!n)
        return out;
    if (!must_quote(text)) {
        snprintf(out, n, "%s", text);
        return out;
    }
    size_t w = 0;
    out[w++] = '"';
    for (const char *s = text; *s && w + 3 < n; s++) {
        if (*s == '"')
            out[w++] = '"';
        out[w++] = *s;
    }
    out[w++] = '"';
    out[w < n ? w : n - 1] = '\0';
    return out;
}

/* room for `more` bytes and a NUL at the end of the row; 0, or -1 (oom set) */
static int row_room(sp_csv_row *r, size_t more)
{
    if (r->oom)
        return -1;
    if (r->len + more + 1 <= r->cap)
        return 0;
    size_t cap = r->cap ? r->cap : 256;
    while (cap < r->len + more + 1)
        cap *= 2;
    char *t = realloc(r->text, cap);
    if (!t) {
        r->oom = 1;
        return -1;
    }
    r->text = t;
    r->cap = cap;
    return 0;
}

/* the comma before every field but the first */
static int row_sep(sp_csv_row *r, size_t more)
{
    if (row_room(r, more + 1) != 0)
        return -1;
    if (r->fields++)
        r->text[r->len++] = ',';
    r->text[r->len] = '\0';
    return 0;
}

void sp_csv_row_text(sp_csv_row *r, const char *text)
{
    size_t need = 2 * strlen(text) + 3; /* every byte a quote, and the two around */
    if (row_sep(r, need) != 0)
        return;
    sp_csv_field(text, r->text + r->len, need + 1);
    r->len += strlen(r->text + r->len);
}

void sp_csv_row_num(sp_csv_row *r, const char *fmt, double v)
{
    char buf[400]; /* %f of the largest double: 309 digits and the decimals */
    snprintf(buf, sizeof buf, fmt, v);
    if (row_sep(r, strlen(buf)) != 0)
        return;
    memcpy(r->text + r->len, buf, strlen(buf) + 1);
    r->len += strlen(buf);
}

void sp_csv_row_empty(sp_csv_row *r) { row_sep(r, 0); }

void sp_csv_row_end(sp_csv_row *r)
{
    if (row_room(r, 1) != 0)
        return;
    r->text[r->len++] = '\n';
    r->text[r->len] = '\0';
    r->fields = 0;
}

void sp_csv_row_free(sp_csv_row *r)
{
    free(r->text);
    memset(r, 0, sizeof *r);
}
