/* compare.c - `sparsim compare RUN_A RUN_B`: are two runs the same messages,
 * and how do their times compare?
 *
 * The message lists (iter, phase, src, dst, tag, bytes) of the two
 * messages.csv files are put in one canonical order (by iteration, sender,
 * receiver, tag, then the sender's posting order) and compared entry by
 * entry; the first difference is shown.  Then the time per iteration and per
 * phase of the two summary.json files, side by side with their ratio A/B.
 * Returns 0 when the message lists match, 1 when they differ, 2 for bad input:
 * a messages.csv whose header, field count or fields are not what sparsim
 * writes (non-negative integers, finite times with t_post <= t_done), or a
 * summary.json that is not JSON or lacks an iteration's time, refused with
 * one line naming the file, the line and the field, before anything is
 * printed.
 */
#include "analyze.h"
#include "traces/summary_keys.h"
#include "traces/trace.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const sp_msg_list *l;
    size_t i;
} ref;

static int cmp(const void *a, const void *b)
{
    const ref *x = a, *y = b;
    const sp_msg_event *p = &x->l->ev[x->i], *q = &y->l->ev[y->i];
    if (p->iter != q->iter)
        return p->iter < q->iter ? -1 : 1;
    if (p->src != q->src)
        return p->src < q->src ? -1 : 1;
    if (p->dst != q->dst)
        return p->dst < q->dst ? -1 : 1;
    if (p->tag != q->tag)
        return p->tag < q->tag ? -1 : 1;
    if (p->t_post != q->t_post)
        return p->t_post < q->t_post ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

static ref *canonical(const sp_msg_list *l)
{
    ref *r = malloc((l->n ? l->n : 1) * sizeof *r);
    if (!r)
        return NULL;
    for (size_t i = 0; i < l->n; i++)
        r[i] = (ref){l, i};
    qsort(r, l->n, sizeof *r, cmp);
    return r;
}

static void show(const char *label, const sp_msg_list *l, const sp_msg_event *e)
{
    printf("  %s: iter %d, phase %s, %d -> %d, tag %d, %llu bytes\n", label, e->iter, l->phase_names[e->phase], e->src,
           e->dst, e->tag, (unsigned long long)e->bytes);
}

/* ---- messages.csv, read strictly --------------------------------------------- */

static int phase_index(sp_msg_list *l, const char *name)
{
    for (int i = 0; i < l->nphases; i++)
        if (strcmp(l->phase_names[i], name) == 0)
            return i;
    char **np = realloc(l->phase_names, (size_t)(l->nphases + 1) * sizeof *np);
    if (!np)
        return -1;
    l->phase_names = np;
    if (!(np[l->nphases] = strdup(name)))
        return -1;
    return l->nphases++;
}

/* a whole number in [min, max], digits only (a sign only for min < 0) */
static int whole(const char *t, long long min, long long max, long long *out)
{
    if (!t[0] || (t[0] == '-' && min >= 0) || (t[0] != '-' && (t[0] < '0' || t[0] > '9')))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(t, &end, 10);
    if (*end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

static int seconds(const char *t, double *out)
{
    if (!t[0] || ((t[0] < '0' || t[0] > '9') && t[0] != '.'))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (*end || errno || !isfinite(v) || v < 0)
        return -1;
    *out = v;
    return 0;
}

static int read_messages(const char *path, sp_msg_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0, evcap = 0, lineno = 1;
    ssize_t len = getline(&line, &cap, f);
    const char *rest = len < 0 ? "" : line + strlen(SP_CSV_HEADER);
    int nodes = len >= 0 && !strncmp(line, SP_CSV_HEADER, strlen(SP_CSV_HEADER)) &&
                !strncmp(rest, SP_CSV_NODE_COLUMNS, strlen(SP_CSV_NODE_COLUMNS));
    if (nodes)
        rest += strlen(SP_CSV_NODE_COLUMNS);
    if (len < 0 || strncmp(line, SP_CSV_HEADER, strlen(SP_CSV_HEADER)) != 0 || strspn(rest, "\r\n") != strlen(rest)) {
        snprintf(err, errlen, "%s: not a sparsim messages.csv (bad header)", path);
        goto fail;
    }
    const int want = nodes ? 12 : 8; /* the node columns follow from src and dst: counted, not read */
    static const char *const names[8] = {"iter", "phase", "src", "dst", "tag", "bytes", "t_post", "t_done"};
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (memchr(line, '\0', (size_t)len)) {
            snprintf(err, errlen, "%s:%zu: a NUL byte in the row", path, lineno);
            goto fail;
        }
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        char *field[13];
        int nf = 0;
        for (char *s = line, *c; nf < want + 1; s = c + 1) {
            field[nf++] = s;
            if (!(c = strchr(s, ',')))
                break;
            *c = '\0';
        }
        if (nf != want) {
            snprintf(err, errlen, "%s:%zu: a row of %s fields, not %d (%s%s)", path, lineno,
                     nf > want ? "more" : "fewer", want, SP_CSV_HEADER, nodes ? SP_CSV_NODE_COLUMNS : "");
            goto fail;
        }
        long long v[6];
        double t[2];
        int bad = -1;
        const long long max[6] = {0x7fffffffLL, 0, 0x7fffffffLL, 0x7fffffffLL, 0x7fffffffLL, (long long)1 << 62};
        /* src and dst may be a node's switch, -1 - node (trace.h's SP_SWITCH_END), not both */
        const long long min[6] = {0, 0, -0x7fffffffLL, -0x7fffffffLL, 0, 0};
        for (int i = 0; i < 6 && bad < 0; i++)
            if (i != 1 && whole(field[i], min[i], max[i], &v[i]) != 0)
                bad = i;
        if (bad < 0 && v[2] < 0 && v[3] < 0)
            bad = 3;
        if (bad < 0 && !field[1][0])
            bad = 1;
        for (int i = 0; i < 2 && bad < 0; i++)
            if (seconds(field[6 + i], &t[i]) != 0)
                bad = 6 + i;
        if (bad >= 0) {
            snprintf(err, errlen, "%s:%zu: %s is '%.60s', not %s", path, lineno, names[bad], field[bad],
                     bad == 1   ? "a phase name"
                     : bad >= 6 ? "a non-negative number of seconds"
                     : bad == 2 || bad == 3 ? "a rank, or a switch (-1 - node) at one end"
                                            : "a non-negative integer");
            goto fail;
        }
        if (t[1] < t[0]) {
            snprintf(err, errlen, "%s:%zu: t_done %s comes before t_post %s", path, lineno, field[7], field[6]);
            goto fail;
        }
        if (out->n == evcap) {
            evcap = evcap ? evcap * 2 : 1024;
            sp_msg_event *ne = realloc(out->ev, evcap * sizeof *ne);
            if (!ne)
                goto oom;
            out->ev = ne;
        }
        int ph = phase_index(out, field[1]);
        if (ph < 0)
            goto oom;
        out->ev[out->n++] = (sp_msg_event){(int)v[0], ph, (int)v[2], (int)v[3], (int)v[4], (uint64_t)v[5], t[0], t[1]};
    }
    if (ferror(f)) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        goto fail;
    }
    free(line);
    fclose(f);
    return 0;
oom:
    snprintf(err, errlen, "out of memory reading %s", path);
fail:
    free(line);
    fclose(f);
    sp_msg_list_free(out);
    return -1;
}

/* ---- summary.json ---------------------------------------------------------------- */

/* a run's summary.json: NULL and no message when there is none; NULL with
 * a message when it is not JSON or an iteration lacks its time */
static cJSON *load_summary(const char *dir, char *err, size_t errlen)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return NULL;
    cJSON *j = sp_json_file_checked(path, (size_t)1 << 30, err, errlen);
    if (!j)
        return NULL;
    const cJSON *its = cJSON_GetObjectItemCaseSensitive(j, SPK_ITERATIONS), *it;
    int i = 0;
    if (!cJSON_IsObject(j) || !cJSON_IsArray(its)) {
        snprintf(err, errlen, "%s is not a sparsim summary (no %s)", path, SPK_ITERATIONS);
        cJSON_Delete(j);
        return NULL;
    }
    cJSON_ArrayForEach(it, its)
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, SPK_TIME);
        if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0) {
            snprintf(err, errlen, "%s: iteration %d has no %s (a non-negative number)", path, i, SPK_TIME);
            cJSON_Delete(j);
            return NULL;
        }
        i++;
    }
    return j;
}

static void compare_times(const char *a, const char *b, cJSON *ja, cJSON *jb)
{
    if (!ja || !jb) {
        printf("times: no summary.json in %s\n", !ja ? a : b);
        return;
    }
    cJSON *ia = cJSON_GetObjectItem(ja, SPK_ITERATIONS), *ib = cJSON_GetObjectItem(jb, SPK_ITERATIONS);
    int n = cJSON_GetArraySize(ia) < cJSON_GetArraySize(ib) ? cJSON_GetArraySize(ia) : cJSON_GetArraySize(ib);
    const char *ba = cJSON_GetStringValue(cJSON_GetObjectItem(ja, SPK_BACKEND));
    const char *bb = cJSON_GetStringValue(cJSON_GetObjectItem(jb, SPK_BACKEND));
    printf("times (A: %s, B: %s; ratio A/B):\n", ba ? ba : "?", bb ? bb : "?");
    printf("  %-18s %14s %14s %8s\n", "", "A (s)", "B (s)", "A/B");
    for (int it = 0; it < n; it++) {
        double ta = sp_json_num(cJSON_GetArrayItem(ia, it), SPK_TIME, NULL);
        double tb = sp_json_num(cJSON_GetArrayItem(ib, it), SPK_TIME, NULL);
        printf("  iteration %-8d %14.6g %14.6g %8.3f\n", it, ta, tb, tb > 0 ? ta / tb : 0.0);
    }
    /* phases: mean over the common iterations */
    cJSON *pa = cJSON_GetObjectItem(ja, SPK_PHASES), *nm;
    cJSON_ArrayForEach(nm, pa)
    {
        if (!cJSON_IsString(nm))
            continue;
        double ta = 0, tb = 0;
        int found = 0;
        for (int it = 0; it < n; it++) {
            cJSON *xa = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(ia, it), SPK_PHASES), nm->valuestring);
            cJSON *xb = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(ib, it), SPK_PHASES), nm->valuestring);
            double va = sp_json_num(xa, SPK_TIME, NULL), vb = sp_json_num(xb, SPK_TIME, NULL);
            if (xa && va >= 0)
                ta += va / n;
            if (xb && vb >= 0) {
                tb += vb / n;
                found = 1;
            }
        }
        if (found)
            printf("  phase %-12.12s %14.6g %14.6g %8.3f\n", nm->valuestring, ta, tb, tb > 0 ? ta / tb : 0.0);
    }
}

int sp_compare(const char *run_a, const char *run_b, char *err, size_t errlen)
{
    sp_msg_list la, lb;
    char path[2048];
    snprintf(path, sizeof path, "%s/messages.csv", run_a);
    if (read_messages(path, &la, err, errlen) != 0)
        return 2;
    snprintf(path, sizeof path, "%s/messages.csv", run_b);
    if (read_messages(path, &lb, err, errlen) != 0) {
        sp_msg_list_free(&la);
        return 2;
    }
    err[0] = '\0';
    cJSON *ja = load_summary(run_a, err, errlen), *jb = err[0] ? NULL : load_summary(run_b, err, errlen);
    ref *ra = err[0] ? NULL : canonical(&la), *rb = err[0] ? NULL : canonical(&lb);
    if (err[0] || !ra || !rb) {
        if (!err[0])
            snprintf(err, errlen, "out of memory comparing the message lists");
        free(ra);
        free(rb);
        cJSON_Delete(ja);
        cJSON_Delete(jb);
        sp_msg_list_free(&la);
        sp_msg_list_free(&lb);
        return 2;
    }
    size_t n = la.n < lb.n ? la.n : lb.n, diff = (size_t)-1;
    for (size_t i = 0; i < n && diff == (size_t)-1; i++) {
        const sp_msg_event *p = &la.ev[ra[i].i], *q = &lb.ev[rb[i].i];
        if (p->iter != q->iter || p->src != q->src || p->dst != q->dst || p->tag != q->tag || p->bytes != q->bytes ||
            strcmp(la.phase_names[p->phase], lb.phase_names[q->phase]) != 0)
            diff = i;
    }
    int same = diff == (size_t)-1 && la.n == lb.n;
    if (same)
        printf("message lists: identical (%zu messages)\n", la.n);
    else if (diff != (size_t)-1) {
        printf("message lists: differ at message %zu of %zu (canonical order)\n", diff, n);
        show("A", &la, &la.ev[ra[diff].i]);
        show("B", &lb, &lb.ev[rb[diff].i]);
    } else {
        printf("message lists: A has %zu messages, B %zu; the first %zu agree\n", la.n, lb.n, n);
    }
    compare_times(run_a, run_b, ja, jb);
    free(ra);
    free(rb);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    sp_msg_list_free(&la);
    sp_msg_list_free(&lb);
    return same ? 0 : 1;
}
