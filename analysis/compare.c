/* compare.c - `sparsim compare RUN_A RUN_B`: are two runs the same messages,
 * and how do their times compare?
 *
 * The message lists (iter, phase, src, dst, tag, bytes) of the two
 * messages.csv files are put in one canonical order (by iteration, sender,
 * receiver, tag, then the sender's posting order) and compared entry by
 * entry; the first difference is shown.  Then the time per iteration and per
 * phase of the two summary.json files, side by side with their ratio A/B.
 * Returns 0 when the message lists match, 1 when they differ, 2 for bad input.
 */
#include "analyze.h"
#include "../traces/summary_keys.h"
#include "../traces/trace.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static cJSON *load_summary(const char *dir)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    return sp_json_file(path);
}

static void compare_times(const char *a, const char *b)
{
    cJSON *ja = load_summary(a), *jb = load_summary(b);
    if (!ja || !jb) {
        printf("times: no summary.json in %s\n", !ja ? a : b);
        cJSON_Delete(ja);
        cJSON_Delete(jb);
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
        double ta = 0, tb = 0;
        int found = 0;
        for (int it = 0; it < n; it++) {
            cJSON *xa = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(ia, it), SPK_PHASES), nm->valuestring);
            cJSON *xb = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(ib, it), SPK_PHASES), nm->valuestring);
            if (xa)
                ta += sp_json_num(xa, SPK_TIME, NULL) / n;
            if (xb) {
                tb += sp_json_num(xb, SPK_TIME, NULL) / n;
                found = 1;
            }
        }
        if (found)
            printf("  phase %-12.12s %14.6g %14.6g %8.3f\n", nm->valuestring, ta, tb, tb > 0 ? ta / tb : 0.0);
    }
    cJSON_Delete(ja);
    cJSON_Delete(jb);
}

int sp_compare(const char *run_a, const char *run_b, char *err, size_t errlen)
{
    sp_msg_list la, lb;
    char path[2048];
    snprintf(path, sizeof path, "%s/messages.csv", run_a);
    if (sp_csv_read(path, &la, err, errlen) != 0)
        return 2;
    snprintf(path, sizeof path, "%s/messages.csv", run_b);
    if (sp_csv_read(path, &lb, err, errlen) != 0) {
        sp_msg_list_free(&la);
        return 2;
    }
    ref *ra = canonical(&la), *rb = canonical(&lb);
    if (!ra || !rb) {
        free(ra);
        free(rb);
        sp_msg_list_free(&la);
        sp_msg_list_free(&lb);
        snprintf(err, errlen, "out of memory comparing the message lists");
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
    compare_times(run_a, run_b);
    free(ra);
    free(rb);
    sp_msg_list_free(&la);
    sp_msg_list_free(&lb);
    return same ? 0 : 1;
}
