/* sweep_csv.c - a sweep CSV as records, for the sweep's --resume and for merge.
 *
 * RFC 4180: fields separated by commas, records by newlines, a field in
 * double quotes may hold commas, newlines and doubled quotes.  A record
 * keeps where its text starts and ends, so that a reader can copy rows as
 * they are, and whether a newline ended it (the last record of a file cut
 * short is not complete).
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void sp_csv_free(sp_csv_rec *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->f[i]);
    free(r->f);
    memset(r, 0, sizeof *r);
}

/* the record at *pos (advanced past it); 0 at the end of the text, -1 when
 * memory runs out or a quote is never closed (then *pos is the end) */
int sp_csv_next(const char **pos, const char *end, sp_csv_rec *r)
{
    memset(r, 0, sizeof *r);
    const char *s = *pos;
    if (s >= end)
        return 0;
    r->start = s;
    int cap = 0;
    for (;;) {
        char *val = malloc((size_t)(end - s) + 1);
        size_t w = 0;
        if (!val)
            goto oom;
        if (s < end && *s == '"') {
            s++;
            for (;;) {
                if (s >= end) { /* never closed: a cut file */
                    free(val);
                    sp_csv_free(r);
                    *pos = end;
                    return -1;
                }
                if (*s == '"' && s + 1 < end && s[1] == '"') {
                    val[w++] = '"';
                    s += 2;
                } else if (*s == '"') {
                    s++;
                    break;
                } else {
                    val[w++] = *s++;
                }
            }
        }
        while (s < end && *s != ',' && *s != '\n')
            val[w++] = *s++;
        if (w && val[w - 1] == '\r' && (s >= end || *s == '\n'))
            w--;
        val[w] = '\0';
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

