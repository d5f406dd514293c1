/* test_shim.c - the shim's contract on the SimGrid backend, driven by small
 * algorithms written here: MPI matching on (source, tag), non-overtaking per
 * pair, unexpected messages, truncation, concurrent arrivals sharing links,
 * a receive that can never be matched, and the collectives built on top. */
#include "helpers.h"
#include "algorithms/algorithm.h"
#include "algorithms/collectives.h"
#include "sim/driver/run.h"
#include "traces/trace.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures; /* counted by the test algorithms, read after the run */
static char g_why[256];

static void fail(const char *fmt, int a, long long b)
{
    if (!g_failures++)
        snprintf(g_why, sizeof g_why, fmt, a, b);
}

typedef int (*algo_fn)(sp_ctx *, sp_algo_io *);

static int g_gpus_per_node; /* run_algo's --gpus-per-node (0: the platform's) */

static int run_algo(int P, algo_fn fn, const char *out, sp_report *rep, char *err, size_t errlen)
{
    static sp_algorithm a;
    a.name = "test";
    a.summary = "test";
    a.run = fn;
    a.size_only_ok = 1;
    a.model_ok = 1;
    sp_plan p;
    sp_plan_defaults(&p);
    snprintf(p.algo, sizeof p.algo, "test");
    p.ranks = P;
    p.n = 16;
    p.payload = SP_PAYLOAD_SIZE;
    snprintf(p.network, sizeof p.network, "cm02");
    snprintf(p.out, sizeof p.out, "%s", out ? out : "");
    p.write_trace = 0;
    p.gpus_per_node = g_gpus_per_node;
    g_failures = 0;
    sp_error e;
    int rc = sp_run_algorithm(&p, &a, rep, &e);
    snprintf(err, errlen, "%.200s", rc ? e.msg : "");
    return rc;
}

/* ---- nodes and groups ------------------------------------------------------ */

/* 8 ranks on 2 nodes of 4: the rank's rail (local rank j on both nodes) and
 * its node, each entered as a group, speak in the group's ranks */
static int groups(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    sp_phase(c, "test");
    int r = sp_rank(c), G = sp_node_size(c);
    if (G != 4)
        fail("rank %d: %lld GPUs per node, not 4", r, G);
    if (sp_group_enter(c, (r + 1) % 4, 4, 2) != SP_ERR_ARG || sp_group_enter(c, 0, 1, 9) != SP_ERR_ARG)
        fail("rank %d entered a group that does not hold it (%lld)", r, 0);
    if (sp_size(c) != 8)
        fail("rank %d: a refused group left the size at %lld", r, sp_size(c));
    sp_group_enter(c, r % 4, 4, 2); /* rail r mod 4: ranks j and j + 4 */
    if (sp_size(c) != 2 || sp_rank(c) != r / 4)
        fail("rank %d: rank %lld in its rail", r, sp_rank(c));
    int peer = 1 - sp_rank(c), got = -1;
    sp_req *q[2] = {sp_isend(c, peer, 1, &r, sizeof r), sp_irecv(c, peer, 1, &got, sizeof got)};
    sp_waitall(c, q, 2, NULL);
    if (got != (r + 4) % 8)
        fail("rank %d: its rail peer sent %lld", r, got);
    sp_group_enter(c, r / 4 * 4, 1, 4); /* its node */
    int all[4] = {-1, -1, -1, -1};
    if (sp_allgather(c, &r, sizeof r, all, 2) != 0)
        fail("rank %d: the node's allgather failed (%lld)", r, 0);
    for (int i = 0; i < 4; i++)
        if (all[i] != r / 4 * 4 + i)
            fail("rank %d: the node's allgather gave %lld", r, all[i]);
    sp_group_leave(c);
    if (sp_size(c) != 8 || sp_rank(c) != r)
        fail("rank %d: back in the run as rank %lld", r, sp_rank(c));
    return SP_OK;
}

Test(shim, groups_of_a_node_and_of_a_rail)
{
    sp_report rep;
    char err[256] = "";
    g_gpus_per_node = 4;
    int rc = run_algo(8, groups, NULL, &rep, err, sizeof err);
    g_gpus_per_node = 0;
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(g_failures, 0, "%s", g_why);
    /* the messages kept the run's ranks: rail exchanges cross the nodes */
    cr_assert_eq(rep.gpus_per_node, 4);
    for (int r = 0; r < 8; r++)
        cr_assert_eq(rep.rank_sent_off[r], sizeof(int), "rank %d sent %llu bytes off its node", r,
                     (unsigned long long)rep.rank_sent_off[r]);
    sp_report_free(&rep);
}

/* ---- ordering and matching ---------------------------------------------- */

#define BIG (1 << 20)

static int non_overtaking(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    sp_phase(c, "test");
    if (sp_rank(c) == 1) {
        unsigned char *big = malloc(BIG);
        for (int i = 0; i < BIG; i++)
            big[i] = (unsigned char)(i * 7);
        uint64_t small = 0x1122334455667788ull;
        sp_req *q[2] = {sp_isend(c, 0, 5, big, BIG), sp_isend(c, 0, 5, &small, sizeof small)};
        sp_waitall(c, q, 2, NULL);
        free(big);
    } else if (sp_rank(c) == 0) {
        unsigned char *a = malloc(BIG), *b = malloc(BIG);
        sp_req *q[2] = {sp_irecv(c, 1, 5, a, BIG), sp_irecv(c, 1, 5, b, BIG)};
        size_t sz[2];
        sp_waitall(c, q, 2, sz);
        if (sz[0] != BIG || sz[1] != 8)
            fail("sizes out of order: first %d, second %lld", (int)sz[0], (long long)sz[1]);
        for (int i = 0; i < BIG && sz[0] == BIG; i++)
            if (a[i] != (unsigned char)(i * 7)) {
                fail("big message corrupted at byte %d (%lld)", i, a[i]);
                break;
            }
        uint64_t got;
        memcpy(&got, b, 8);
        if (got != 0x1122334455667788ull)
            fail("small message wrong (%d): %llx", 0, (long long)got);
        free(a);
        free(b);
    }
    return SP_OK;
}

Test(shim, messages_of_one_pair_do_not_overtake)
{
    sp_report rep;
    char err[256] = "";
    cr_assert_eq(run_algo(2, non_overtaking, NULL, &rep, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g_failures, 0, "%s", g_why);
    sp_report_free(&rep);
}

static int unexpected(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    sp_phase(c, "test");
    if (sp_rank(c) == 1) {
        int x = 7, y = 8;
        sp_req *q[2] = {sp_isend(c, 0, 7, &x, sizeof x), sp_isend(c, 0, 8, &y, sizeof y)};
        sp_waitall(c, q, 2, NULL);
    } else if (sp_rank(c) == 0) {
        int v = 0;
        sp_wait(c, sp_irecv(c, 1, 8, &v, sizeof v)); /* the later tag first */
        if (v != 8)
            fail("tag 8 carried %d (%lld)", v, 0);
        sp_wait(c, sp_irecv(c, 1, 7, &v, sizeof v));
        if (v != 7)
            fail("tag 7 carried %d (%lld)", v, 0);
    }
    return SP_OK;
}

Test(shim, receives_match_on_source_and_tag)
{
    sp_report rep;
    char err[256] = "";
    cr_assert_eq(run_algo(2, unexpected, NULL, &rep, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g_failures, 0, "%s", g_why);
    sp_report_free(&rep);
}

static int truncation(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    char buf[100] = {0};
    if (sp_rank(c) == 1)
        sp_wait(c, sp_isend(c, 0, 1, buf, 100));
    else if (sp_rank(c) == 0) {
        long long r = sp_wait(c, sp_irecv(c, 1, 1, buf, 50));
        if (r != SP_ERR_TRUNC)
            fail("receive of 100 bytes into 50 returned %d (%lld)", (int)r, r);
    }
    return SP_OK;
}

Test(shim, a_message_larger_than_the_buffer_is_an_error)
{
    sp_report rep;
    char err[256] = "";
    cr_assert_eq(run_algo(2, truncation, NULL, &rep, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g_failures, 0, "%s", g_why);
    sp_report_free(&rep);
}

static int never_matched(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    if (sp_rank(c) == 0) {
        int v;
        sp_wait(c, sp_irecv(c, 1, 9, &v, sizeof v)); /* nobody sends tag 9 */
    }
    return SP_OK;
}

Test(shim, a_receive_never_matched_ends_the_run_with_a_message)
{
    sp_report rep;
    char err[256] = "";
    int rc = run_algo(3, never_matched, NULL, &rep, err, sizeof err);
    cr_assert_eq(rc, 1);
    cr_assert(strstr(err, "deadlock") && strstr(err, "rank 0"), "%s", err);
    sp_report_free(&rep);
}

/* ---- timing: concurrent arrivals share the receiver's link --------------- */

static int two_senders(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    sp_phase(c, "test");
    if (sp_rank(c) > 0)
        sp_wait(c, sp_isend(c, 0, 1, NULL, 1000000));
    else {
        sp_req *q[2] = {sp_irecv(c, 1, 1, NULL, 1000000), sp_irecv(c, 2, 1, NULL, 1000000)};
        sp_waitall(c, q, 2, NULL);
    }
    return SP_OK;
}

Test(shim, concurrent_arrivals_share_the_link)
{
    const char *dir = t_tmpdir();
    sp_report rep;
    char err[256] = "", path[512];
    cr_assert_eq(run_algo(3, two_senders, dir, &rep, err, sizeof err), 0, "%s", err);
    snprintf(path, sizeof path, "%s/messages.csv", dir);
    sp_msg_list l;
    cr_assert_eq(sp_csv_read(path, &l, err, sizeof err), 0, "%s", err);
    cr_assert_eq(l.n, 2);
    /* both share rank 0's 125 MB/s link: 2 MB in 16 ms, plus 100 us latency;
     * served one after the other, the first would finish at 8.1 ms */
    for (int i = 0; i < 2; i++)
        cr_assert(fabs(l.ev[i].t_done - 0.0161) < 1e-4, "message %d done at %.6f s", i, l.ev[i].t_done);
    sp_msg_list_free(&l);
    sp_report_free(&rep);
}

/* ---- phases: bytes are counted in the sender's phase --------------------- */

static int two_phases(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    int P = sp_size(c), r = sp_rank(c);
    sp_phase(c, "one");
    sp_req *q[2] = {sp_irecv(c, (r - 1 + P) % P, 1, NULL, 100), sp_isend(c, (r + 1) % P, 1, NULL, 100)};
    sp_waitall(c, q, 2, NULL);
    sp_phase(c, "two");
    if (r == 0)
        for (int d = 1; d < P; d++)
            sp_wait(c, sp_isend(c, d, 2, NULL, 1000));
    else
        sp_wait(c, sp_irecv(c, 0, 2, NULL, 1000));
    return SP_OK;
}

Test(shim, volume_is_counted_per_phase)
{
    sp_report rep;
    char err[256] = "";
    cr_assert_eq(run_algo(4, two_phases, NULL, &rep, err, sizeof err), 0, "%s", err);
    int one = -1, two = -1;
    for (int i = 0; i < rep.nphases; i++) {
        if (strcmp(rep.phase_names[i], "one") == 0)
            one = i;
        if (strcmp(rep.phase_names[i], "two") == 0)
            two = i;
    }
    cr_assert(one >= 0 && two >= 0);
    cr_assert_eq(rep.iters[0].phase_volume[one], 100);
    cr_assert_eq(rep.iters[0].phase_volume[two], 3000); /* rank 0 sends 3 x 1000 */
    cr_assert_eq(rep.iters[0].phase_recv_max[two], 1000);
    cr_assert_eq(rep.rank_sent[0], 3100);
    cr_assert_eq(rep.rank_recv[1], 1100);
    sp_report_free(&rep);
}

/* ---- collectives, for every P from 1 to 9 -------------------------------- */

static int collectives(sp_ctx *c, sp_algo_io *io)
{
    (void)io;
    int P = sp_size(c), r = sp_rank(c);
    sp_phase(c, "coll");
    /* allgatherv: rank j contributes j+1 ints of value 100*j + i */
    size_t *bytes = malloc((size_t)P * sizeof *bytes);
    size_t total = 0;
    for (int j = 0; j < P; j++) {
        bytes[j] = (size_t)(j + 1) * sizeof(int);
        total += bytes[j];
    }
    int *mine = malloc(bytes[r]), *all = malloc(total);
    for (int i = 0; i <= r; i++)
        mine[i] = 100 * r + i;
    if (sp_allgatherv(c, mine, bytes, all, 10) != SP_OK)
        fail("allgatherv failed on rank %d (%lld)", r, 0);
    int pos = 0;
    for (int j = 0; j < P; j++)
        for (int i = 0; i <= j; i++, pos++)
            if (all[pos] != 100 * j + i)
                fail("allgatherv: rank %d got %lld", r, all[pos]);
    free(mine);
    free(all);
    free(bytes);
    /* allgatherv by counts: rank j contributes (j % 3) pairs of ints (some none) */
    uint64_t *cnt = malloc((size_t)P * sizeof *cnt);
    uint64_t nall = 0;
    for (int j = 0; j < P; j++)
        nall += cnt[j] = (uint64_t)(j % 3);
    int *mine2 = malloc(8 * cnt[r] + 1), *all2 = malloc(8 * nall + 1);
    for (int i = 0; i < 2 * (int)cnt[r]; i++)
        mine2[i] = 1000 * r + i;
    if (sp_allgatherv_counts(c, mine2, cnt, 8, all2, 15) != SP_OK)
        fail("allgatherv_counts failed on rank %d (%lld)", r, 0);
    pos = 0;
    for (int j = 0; j < P; j++)
        for (int i = 0; i < 2 * (int)cnt[j]; i++, pos++)
            if (all2[pos] != 1000 * j + i)
                fail("allgatherv_counts: rank %d got %lld", r, all2[pos]);
    free(mine2);
    free(all2);
    free(cnt);
    /* broadcast from the last rank */
    double v = r == P - 1 ? 3.25 : 0;
    sp_bcast(c, &v, sizeof v, P - 1, 11);
    if (v != 3.25)
        fail("bcast: rank %d got %lld", r, (long long)v);
    /* alltoall of counts: r sends 1000*r + j to j */
    uint32_t *s = malloc((size_t)P * 4), *g = malloc((size_t)P * 4);
    for (int j = 0; j < P; j++)
        s[j] = 1000u * (unsigned)r + (unsigned)j;
    sp_alltoall_counts(c, s, g, 12);
    for (int j = 0; j < P; j++)
        if (g[j] != 1000u * (unsigned)j + (unsigned)r)
            fail("alltoall: rank %d got %lld", r, (long long)g[j]);
    free(s);
    free(g);
    /* small allreduce: sum and max */
    int64_t x[2] = {r, r * 10};
    sp_allreduce_i64(c, x, 2, SP_OP_SUM, 13);
    if (x[0] != (int64_t)P * (P - 1) / 2 || x[1] != 10 * (int64_t)P * (P - 1) / 2)
        fail("allreduce sum: rank %d got %lld", r, (long long)x[0]);
    double m = r;
    sp_allreduce_f64(c, &m, 1, SP_OP_MAX, 14);
    if (m != P - 1)
        fail("allreduce max: rank %d got %lld", r, (long long)m);
    return SP_OK;
}

ParameterizedTestParameters(shim, collectives_any_p)
{
    static int Ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 17, 100};
    return cr_make_param_array(int, Ps, sizeof Ps / sizeof Ps[0]);
}

ParameterizedTest(int *P, shim, collectives_any_p)
{
    sp_report rep;
    char err[256] = "";
    cr_assert_eq(run_algo(*P, collectives, NULL, &rep, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g_failures, 0, "P=%d: %s", *P, g_why);
    sp_report_free(&rep);
}
