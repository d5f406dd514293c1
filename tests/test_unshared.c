/* test_unshared.c - --unshared-below: messages that skip SimGrid's bandwidth
 * sharing.  A lone message takes exactly the time SimGrid gives it (for every
 * network model, on the Aries wiring and on the Ethernet crossbar, for sizes
 * across SMPI's piecewise factors); patterns without contention keep their
 * times, volumes and exact results; bad values and combinations with link
 * disturbances are refused with one line. */
#include "helpers.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double t;             /* mean simulated seconds per iteration */
    double messages, bytes;
} outcome;

/* a run's figures from DIR/summary.json */
static outcome summary_of(const char *dir)
{
    char *s = t_read_file(t_path(dir, "summary.json"), NULL);
    cr_assert_not_null(s);
    cJSON *j = cJSON_Parse(s);
    cr_assert_not_null(j);
    outcome o = {cJSON_GetObjectItem(cJSON_GetObjectItem(j, "time_per_iter_s"), "mean")->valuedouble,
                 cJSON_GetObjectItem(j, "messages")->valuedouble, cJSON_GetObjectItem(j, "bytes")->valuedouble};
    cJSON_Delete(j);
    free(s);
    return o;
}

static outcome run_summary(const char *const *args, const char *dir)
{
    t_proc p = t_run(args);
    cr_assert(p.exited && p.status == 0, "status %d: %s", p.status, p.err);
    t_proc_free(&p);
    return summary_of(dir);
}

/* a ring of P = 2: each rank sends n/2 floats to the other, alone on its
 * route (cross-traffic off: with it, the two directions share links) */
static outcome pair(const char *platform, const char *network, const char *n, const char *below)
{
    const char *dir = t_tmpdir();
    const char *args[] = {"run", "--algo", "ring", "--ranks", "2", "--n", n, "--payload", "size", "--platform",
                          platform, "--network", network, "--crosstraffic", "off", "--unshared-below", below,
                          "--no-trace", "--out", dir, "--quiet", NULL};
    return run_summary(args, dir);
}

Test(unshared, a_lone_message_takes_the_models_time)
{
    const char *platforms[] = {"daint", "1gbe"};
    const char *networks[] = {"cm02", "lv08", "smpi"};
    /* 8 B to 400 KB per message: below, inside and above SMPI's pieces */
    const char *sizes[] = {"4", "300", "2000", "9000", "200K"};
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < 3; b++)
            for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
                outcome shared = pair(platforms[a], networks[b], sizes[c], "0");
                outcome alone = pair(platforms[a], networks[b], sizes[c], "1G");
                cr_assert(fabs(alone.t - shared.t) <= 1e-12 * shared.t, "%s %s n=%s: bypassing %.15g s, shared %.15g s",
                          platforms[a], networks[b], sizes[c], alone.t, shared.t);
                cr_assert_eq(alone.bytes, shared.bytes);
            }
}

/* one message per rank per step, to a neighbour: nothing contends on the
 * crossbar, so every step costs alpha + m beta either way */
Test(unshared, a_ring_keeps_its_closed_form)
{
    outcome o[2];
    const char *below[] = {"0", "1G"};
    for (int i = 0; i < 2; i++) {
        const char *dir = t_tmpdir();
        const char *args[] = {"run", "--algo", "ring", "--ranks", "8", "--n", "64K", "--payload", "size",
                              "--network", "cm02", "--unshared-below", below[i], "--no-trace", "--out", dir, "--quiet",
                              NULL};
        o[i] = run_summary(args, dir);
    }
    /* 1gbe: alpha 100 us, beta 8 ns/B; 2(P-1) steps of 8K floats */
    double closed = 2.0 * 7 * (100e-6 + 8192 * 4 * 8e-9);
    cr_assert(fabs(o[0].t - closed) <= 1e-9 * closed, "shared %.12g s, closed form %.12g s", o[0].t, closed);
    cr_assert(fabs(o[1].t - closed) <= 1e-9 * closed, "bypassing %.12g s, closed form %.12g s", o[1].t, closed);
    cr_assert_eq(o[0].messages, o[1].messages);
    cr_assert_eq(o[0].bytes, o[1].bytes);
}

/* exact payloads travel through the postbox as through the mailbox: the
 * same messages, the same bytes, the same global result to the bit, with
 * every message bypassing (1G) and with a mix (1K: Ok-Topk at P = 8 on 1gbe
 * once deadlocked on a bell that came before its message was due) */
Test(unshared, exact_results_are_unchanged)
{
    /* the three algorithms in one run a setting (several algorithms write
     * DIR/NAME/summary.json and RESULT.NAME.npy) */
    const char *algos[] = {"topkdsa", "oktopk", "gtopk"};
    const char *platforms[] = {"daint", "1gbe"};
    const char *below[] = {"0", "1K", "1G"};
    char list[64];
    snprintf(list, sizeof list, "%s,%s,%s", algos[0], algos[1], algos[2]);
    for (size_t pl = 0; pl < 2; pl++) {
        char dirs[3][512], res[3][512];
        for (int i = 0; i < 3; i++) {
            snprintf(dirs[i], sizeof dirs[i], "%s", t_tmpdir());
            snprintf(res[i], sizeof res[i], "%s", t_path(dirs[i], "result.npy"));
            const char *args[] = {"run", "--algo", list, "--ranks", "8", "--n", "64K", "--payload",
                                  "exact", "--platform", platforms[pl], "--network", "smpi", "--iters", "3",
                                  "--unshared-below", below[i], "--dump-result", res[i], "--no-trace", "--out",
                                  dirs[i], "--quiet", NULL};
            t_proc p = t_run(args);
            cr_assert(p.exited && p.status == 0, "%s %s: status %d: %s", platforms[pl], below[i], p.status, p.err);
            t_proc_free(&p);
        }
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            outcome o[3];
            char path[3][600];
            for (int i = 0; i < 3; i++) {
                o[i] = summary_of(t_path(dirs[i], algos[a]));
                snprintf(path[i], sizeof path[i], "%.500s/result.%.40s.npy", dirs[i], algos[a]);
            }
            size_t l0 = 0;
            char *r0 = t_read_file(path[0], &l0);
            cr_assert(r0 && l0 > 0, "%s %s: no result", algos[a], platforms[pl]);
            for (int i = 1; i < 3; i++) {
                cr_assert_eq(o[0].messages, o[i].messages, "%s %s %s", algos[a], platforms[pl], below[i]);
                cr_assert_eq(o[0].bytes, o[i].bytes, "%s %s %s", algos[a], platforms[pl], below[i]);
                size_t l1 = 0;
                char *r1 = t_read_file(path[i], &l1);
                cr_assert(r1 && l0 == l1 && memcmp(r0, r1, l0) == 0, "%s %s %s: the global results differ", algos[a],
                          platforms[pl], below[i]);
                free(r1);
            }
            free(r0);
        }
    }
}

Test(unshared, bad_values_and_link_disturbances_are_refused)
{
    const char *dir = t_tmpdir();
    const char *neg[] = {"run", "--algo", "ring", "--ranks", "4", "--unshared-below", "-1", "--out", dir, NULL};
    t_refused(neg, "--unshared-below");
    const char *word[] = {"run", "--algo", "ring", "--ranks", "4", "--unshared-below", "small", "--out", dir, NULL};
    t_refused(word, "--unshared-below");
    const char *links[] = {"run", "--algo", "ring", "--ranks", "4", "--degrade-links", "nic", "--degrade-bw", "0.5",
                           "--unshared-below", "4K", "--out", dir, NULL};
    t_refused(links, "--unshared-below cannot go with degraded links");
    const char *bg[] = {"run", "--algo", "ring", "--ranks", "4", "--bg-load", "0.2", "--unshared-below", "4K", "--out",
                        dir, NULL};
    t_refused(bg, "--unshared-below cannot go with background traffic");
}
