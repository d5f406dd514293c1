/* raw_pattern.c - the baseline for the shim-overhead benchmark: a minimal
 * SimGrid program that sends the same messages as sparsim's ring allreduce
 * or Bruck allgather (TopkA), with no shim: one mailbox per rank, size-only
 * payloads, put_async + get_async + wait per step, nothing recorded.
 *
 *   raw_pattern PLATFORM.xml ring|bruck P BYTES [lv08|cm02] [ITERS]
 *     ring:  2(P-1) steps of blocks of BYTES (n*4/P) to the right neighbour
 *     bruck: ceil(log2 P) rounds of min(h, P-h) blocks of BYTES (8k each)
 *   ITERS repetitions, separated by a barrier (as sparsim's iterations).
 */
#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int P, bruck, iters = 1;
static sg_bar_t barrier;
static long block;
static sg_mailbox_t *mbox;
static int dummy;

static void exchange(int me, int dst, int src, long bytes)
{
    (void)src;
    void *got = NULL;
    sg_comm_t c[2];
    c[0] = sg_mailbox_get_async(mbox[me], &got);
    c[1] = sg_mailbox_put_async(mbox[dst], &dummy, bytes);
    sg_comm_wait_all(c, 2);
}

static void rank_main(int argc, char **argv)
{
    (void)argc;
    int me = atoi(argv[0]);
    for (int it = 0; it < iters; it++) {
        sg_barrier_wait(barrier);
        if (!bruck) {
            for (int s = 0; s < 2 * (P - 1); s++)
                exchange(me, (me + 1) % P, (me - 1 + P) % P, block);
        } else {
            for (int held = 1; held < P;) {
                int cnt = held < P - held ? held : P - held;
                exchange(me, (me - held + P) % P, (me + held) % P, block * cnt);
                held += cnt;
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: raw_pattern PLATFORM.xml ring|bruck P BYTES [lv08|cm02] [ITERS]\n");
        return 2;
    }
    const char *plat = argv[1];
    bruck = strcmp(argv[2], "bruck") == 0;
    P = atoi(argv[3]);
    block = atol(argv[4]);
    const char *model = argc > 5 ? argv[5] : "lv08";
    if (argc > 6)
        iters = atoi(argv[6]);
    int sargc = 1;
    char *sargv[] = {"raw_pattern", NULL};
    xbt_log_control_set("root.thresh:warning");
    simgrid_init(&sargc, sargv);
    sg_cfg_set_string("network/model", strcmp(model, "cm02") == 0 ? "CM02" : "LV08");
    if (strcmp(model, "cm02") == 0)
        sg_cfg_set_boolean("network/crosstraffic", "no");
    sg_cfg_set_int("contexts/stack-size", 1024);
    simgrid_load_platform(plat);
    mbox = malloc((size_t)P * sizeof *mbox);
    char name[64];
    for (int r = 0; r < P; r++) {
        snprintf(name, sizeof name, "rank-%d", r);
        mbox[r] = sg_mailbox_by_name(name);
    }
    barrier = sg_barrier_init((unsigned)P);
    for (int r = 0; r < P; r++) {
        snprintf(name, sizeof name, "node-%d", r);
        sg_host_t h = sg_host_by_name(name);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", r);
        char *av[] = {arg, NULL};
        sg_actor_create(name, h, rank_main, 1, av);
    }
    simgrid_run();
    printf("simulated %.9f s\n", simgrid_get_clock() / iters);
    free(mbox);
    return 0;
}
