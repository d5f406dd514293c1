/* messages_csv.c - the per-message CSV trace: writer and reader.
 *
 * One row per message, columns iter,phase,src,dst,tag,bytes,t_post,t_done,
 * times in seconds with nanosecond resolution; where ranks are GPUs on nodes,
 * each end's node and local rank follow (SP_CSV_NODE_COLUMNS).  The writer formats numbers by
 * hand into a large buffer (no printf per row): runs at thousands of ranks
 * produce millions of rows, and this file must not be what limits them.
 */
#include "trace.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sp_csv_writer {
    sp_part_file pf;
    const char *const *phases;
    char buf[1 << 16];
    size_t len;
    int failed;
    int gpn; /* GPUs per node: > 1 writes the node columns */
};

static int fmt_u64(char *out, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

static int fmt_i64(char *out, long long v)
{
    if (v < 0) {
        out[0] = '-';
        return 1 + fmt_u64(out + 1, (uint64_t)(-v));
    }
    return fmt_u64(out, (uint64_t)v);
}

int sp_format_seconds(char *buf, double t)
{
    if (!isfinite(t))
        return snprintf(buf, 32, "nan");
    int n = 0;
    if (t < 0) {
        buf[n++] = '-';
        t = -t;
    }
    uint64_t ns = (uint64_t)llround(t * 1e9);
    n += fmt_u64(buf + n, ns / 1000000000ull);
    buf[n++] = '.';
    uint64_t frac = ns % 1000000000ull;
    for (int d = 8; d >= 0; d--) {
        buf[n + d] = (char)('0' + frac % 10);
        frac /= 10;
    }
    buf[n + 9] = '\0';
    return n + 9;
}

static void flush_buf(sp_csv_writer *w)
{
    if (w->len && fwrite(w->buf, 1, w->len, w->pf.f) != w->len)
        w->failed = 1;
    w->len = 0;
}

sp_csv_writer *sp_csv_open(const char *path, const char *const *phase_names, int gpus_per_node, char *err,
                           size_t errlen)
{
    sp_csv_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (sp_part_open(&w->pf, path, err, errlen) != 0) {
        free(w);
        return NULL;
    }
    w->phases = phase_names;
    w->gpn = gpus_per_node > 1 ? gpus_per_node : 0;
    fputs(w->gpn ? SP_CSV_HEADER SP_CSV_NODE_COLUMNS "\n" : SP_CSV_HEADER "\n", w->pf.f);
    return w;
}

void sp_csv_write(sp_csv_writer *w, const sp_msg_event *e)
{
    if (w->len > sizeof w->buf - 256)
        flush_buf(w);
    char *p = w->buf + w->len;
    const char *ph = w->phases[e->phase];
    p += fmt_i64(p, e->iter);
    *p++ = ',';
    size_t pn = strlen(ph);
    memcpy(p, ph, pn);
    p += pn;
    *p++ = ',';
    p += fmt_i64(p, e->src);
    *p++ = ',';
    p += fmt_i64(p, e->dst);
    *p++ = ',';
    p += fmt_i64(p, e->tag);
    *p++ = ',';
    p += fmt_u64(p, e->bytes);
    *p++ = ',';
    p += sp_format_seconds(p, e->t_post);
    *p++ = ',';
    p += sp_format_seconds(p, e->t_done);
    if (w->gpn) {
        const int ends[4] = {sp_end_node(e->src, w->gpn), sp_end_local(e->src, w->gpn), sp_end_node(e->dst, w->gpn),
                             sp_end_local(e->dst, w->gpn)};
        for (int i = 0; i < 4; i++) {
            *p++ = ',';
            p += fmt_i64(p, ends[i]);
        }
    }
    *p++ = '\n';
    w->len = (size_t)(p - w->buf);
}

int sp_csv_close(sp_csv_writer *w, int ok, char *err, size_t errlen)
{
    flush_buf(w);
    int failed = w->failed;
    int rc = sp_part_close(&w->pf, ok && !failed, err, errlen);
    if (failed && ok) {
        snprintf(err, errlen, "error writing messages.csv");
        rc = -1;
    }
    free(w);
    return rc;
}

/* ---- reader ------------------------------------------------------------- */

static int phase_index(sp_msg_list *l, const char *name, size_t len)
{
    for (int i = 0; i < l->nphases; i++)
        if (strlen(l->phase_names[i]) == len && memcmp(l->phase_names[i], name, len) == 0)
            return i;
    char **np = realloc(l->phase_names, (size_t)(l->nphases + 1) * sizeof *np);
    if (!np)
        return -1;
    l->phase_names = np;
    np[l->nphases] = strndup(name, len);
    if (!np[l->nphases])
        return -1;
    return l->nphases++;
}

int sp_csv_read(const char *path, sp_msg_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char line[512];
    size_t cap = 0, lineno = 1;
    if (!fgets(line, sizeof line, f) || strncmp(line, SP_CSV_HEADER, strlen(SP_CSV_HEADER)) != 0 ||
        (line[strlen(SP_CSV_HEADER)] == ',' &&
         strncmp(line + strlen(SP_CSV_HEADER), SP_CSV_NODE_COLUMNS, strlen(SP_CSV_NODE_COLUMNS)) != 0)) {
        snprintf(err, errlen, "%s: not a sparsim messages.csv (bad header)", path);
        fclose(f);
        return -1;
    }
    int nodes = line[strlen(SP_CSV_HEADER)] == ',';
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (out->n == cap) {
            cap = cap ? cap * 2 : 1024;
            sp_msg_event *ne = realloc(out->ev, cap * sizeof *ne);
            if (!ne)
                goto oom;
            out->ev = ne;
        }
        sp_msg_event *e = &out->ev[out->n];
        char *s = line, *end;
        e->iter = (int)strtol(s, &end, 10);
        if (*end != ',')
            goto bad;
        s = end + 1;
        char *comma = strchr(s, ',');
        if (!comma)
            goto bad;
        e->phase = phase_index(out, s, (size_t)(comma - s));
        if (e->phase < 0)
            goto oom;
        s = comma + 1;
        long long v[4];
        for (int i = 0; i < 4; i++) {
            v[i] = strtoll(s, &end, 10);
            if (*end != ',')
                goto bad;
            s = end + 1;
        }
        e->src = (int)v[0];
        e->dst = (int)v[1];
        e->tag = (int)v[2];
        e->bytes = (uint64_t)v[3];
        e->t_post = strtod(s, &end);
        if (*end != ',')
            goto bad;
        s = end + 1;
        e->t_done = strtod(s, &end);
        if (*end != '\n' && *end != '\0' && *end != '\r' && !(nodes && *end == ','))
            goto bad; /* the node columns follow from src and dst: not read */
        out->n++;
    }
    fclose(f);
    return 0;
bad:
    snprintf(err, errlen, "%s:%zu: malformed row", path, lineno);
    fclose(f);
    sp_msg_list_free(out);
    return -1;
oom:
    snprintf(err, errlen, "out of memory reading %s", path);
    fclose(f);
    sp_msg_list_free(out);
    return -1;
}

void sp_msg_list_free(sp_msg_list *l)
{
    for (int i = 0; i < l->nphases; i++)
        free(l->phase_names[i]);
    free(l->phase_names);
    free(l->ev);
    memset(l, 0, sizeof *l);
}
