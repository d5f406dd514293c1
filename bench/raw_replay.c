/* raw_replay.c - the bare-SimGrid baseline for any message pattern: replays
 * the messages of a sparsim run (its messages.csv) with no shim, no
 * algorithm and no accounting, so that the wall time of the engine moving
 * the same messages stands beside sparsim's.
 *
 *   raw_replay PLATFORM.xml MESSAGES.csv P [lv08|cm02]
 *
 * Every message starts when the run posted it (t_post): its sender sleeps
 * until then and puts it (size only) into the receiver's mailbox, where the
 * receiver has a get posted since the message's post time as well.  Each
 * rank runs one actor doing its sends and receives in time order; a rank's
 * completed receives are reaped as it goes and the rest waited for at the
 * end.  The same flows start at the same simulated times as in the run, so
 * the engine solves the same sharing; what the replay leaves out is the
 * work between messages (matching by tag, the algorithms, the accounting).
 * It prints the simulated end and the messages moved.
 */
#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double t;      /* the run's t_post */
    int peer;      /* destination of a send, or -1 for a receive */
    uint64_t bytes;
} op;

static int P;
static op **ops;       /* per rank, in time order */
static size_t *nops;
static sg_mailbox_t *mbox;
static int dummy;

static int by_time(const void *a, const void *b)
{
    const op *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->peer >= 0) - (y->peer >= 0); /* receives first */
}

static void rank_main(int argc, char **argv)
{
    (void)argc;
    int me = atoi(argv[0]);
    size_t cap = 64, npend = 0;
    sg_comm_t *pend = malloc(cap * sizeof *pend);
    for (size_t i = 0; i < nops[me]; i++) {
        const op *o = &ops[me][i];
        if (o->t > simgrid_get_clock())
            sg_actor_sleep_until(o->t);
        if (npend == cap) {
            /* reap what has completed before growing */
            size_t keep = 0;
            for (size_t j = 0; j < npend; j++)
                if (!sg_comm_test(pend[j]))
                    pend[keep++] = pend[j];
            npend = keep;
            if (npend == cap) {
                cap *= 2;
                pend = realloc(pend, cap * sizeof *pend);
            }
        }
        if (o->peer < 0) {
            void *got;
            pend[npend++] = sg_mailbox_get_async(mbox[me], &got);
        } else {
            sg_comm_t c = sg_mailbox_put_init(mbox[o->peer], &dummy, (uint64_t)o->bytes);
            sg_comm_detach(c, NULL);
        }
    }
    if (npend)
        sg_comm_wait_all(pend, npend);
    free(pend);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: raw_replay PLATFORM.xml MESSAGES.csv P [lv08|cm02]\n");
        return 2;
    }
    P = atoi(argv[3]);
    const char *model = argc > 4 ? argv[4] : "lv08";
    FILE *f = fopen(argv[2], "r");
    if (!f || P < 1) {
        fprintf(stderr, "raw_replay: cannot read %s (or P < 1)\n", argv[2]);
        return 2;
    }
    ops = calloc((size_t)P, sizeof *ops);
    nops = calloc((size_t)P, sizeof *nops);
    size_t *caps = calloc((size_t)P, sizeof *caps);
    char line[512];
    uint64_t msgs = 0;
    if (!fgets(line, sizeof line, f)) /* header */
        return 2;
    while (fgets(line, sizeof line, f)) {
        /* iter,phase,src,dst,tag,bytes,t_post,t_done */
        char *p = strchr(line, ',');
        if (!p || !(p = strchr(p + 1, ',')))
            continue;
        int src = (int)strtol(p + 1, &p, 10);
        int dst = (int)strtol(p + 1, &p, 10);
        strtol(p + 1, &p, 10);
        uint64_t bytes = strtoull(p + 1, &p, 10);
        double t = strtod(p + 1, &p);
        if (src < 0 || src >= P || dst < 0 || dst >= P)
            continue;
        op add[2] = {{t, dst, bytes}, {t, -1, bytes}};
        int who[2] = {src, dst};
        for (int k = 0; k < 2; k++) {
            int r = who[k];
            if (nops[r] == caps[r]) {
                caps[r] = caps[r] ? 2 * caps[r] : 256;
                ops[r] = realloc(ops[r], caps[r] * sizeof *ops[r]);
            }
            ops[r][nops[r]++] = add[k];
        }
        msgs++;
    }
    fclose(f);
    free(caps);
    for (int r = 0; r < P; r++)
        qsort(ops[r], nops[r], sizeof *ops[r], by_time);
    int sargc = 1;
    char *sargv[] = {"raw_replay", NULL};
    xbt_log_control_set("root.thresh:warning");
    simgrid_init(&sargc, sargv);
    sg_cfg_set_string("network/model", strcmp(model, "cm02") == 0 ? "CM02" : "LV08");
    if (strcmp(model, "cm02") == 0)
        sg_cfg_set_boolean("network/crosstraffic", "no");
    sg_cfg_set_int("contexts/stack-size", 1024);
    simgrid_load_platform(argv[1]);
    mbox = malloc((size_t)P * sizeof *mbox);
    char name[64];
    for (int r = 0; r < P; r++) {
        snprintf(name, sizeof name, "rank-%d", r);
        mbox[r] = sg_mailbox_by_name(name);
    }
    for (int r = 0; r < P; r++) {
        snprintf(name, sizeof name, "node-%d", r);
        sg_host_t h = sg_host_by_name(name);
        char arg[16];
        snprintf(arg, sizeof arg, "%d", r);
        char *av[] = {arg, NULL};
        sg_actor_create(name, h, rank_main, 1, av);
    }
    simgrid_run();
    printf("simulated end %.9f s, %llu messages\n", simgrid_get_clock(), (unsigned long long)msgs);
    for (int r = 0; r < P; r++)
        free(ops[r]);
    free(ops);
    free(nops);
    free(mbox);
    return 0;
}
