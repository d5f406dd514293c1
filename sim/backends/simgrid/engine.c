/* engine.c - the SimGrid backend's sp_backend_run: the engine started, the
 * ranks placed and run, the run ended in one clear outcome.
 *
 * The steps read in order: the platform (a user file tried in a child first,
 * platform_check.c; a built-in one built or generated), the network model,
 * the hosts of the P ranks, the disturbances that live in the platform
 * (disturbances.c), one mailbox and one actor per rank (transport.c), the
 * postmen of --unshared-below (postbox.c), the simulation, and the outcome:
 * a failure a rank recorded, ranks left blocked, or success.  Every path
 * ends in free_all, so a second run in the same process starts clean.
 */
#include "simgrid_internal.h"
#include "topologies/platform.h"
#include "traces/trace.h"
#include "sim/backends/flow/flow_engine.h"

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sp_backend_name(void) { return "simgrid"; }
int sp_backend_is_root(void) { return 1; }

static void free_all(void)
{
    spg_transport_free(); /* every rank's state, the barrier, the recycled envelopes */
    spg_switches_free();
    spg_bg_cancel_all();
    spg_postboxes_free();
    spg_disturbances_free();
    free(spg_ranks.actors);
    free(spg_ranks.hosts);
    free(spg_ranks.mbox);
    free(spg_ranks.slots);
    memset(&spg_ranks, 0, sizeof spg_ranks);
}

/* crosstraffic: 0 as the model has it, 1 on, 2 off (sp_backend_config) */
static void set_network_model(const char *network, int crosstraffic)
{
    if (strcmp(network, "cm02") == 0) {
        sg_cfg_set_string("network/model", "CM02");
        sg_cfg_set_boolean("network/crosstraffic", "no");
    } else if (strcmp(network, "smpi") == 0) {
        sg_cfg_set_string("network/model", "SMPI");
    } else {
        sg_cfg_set_string("network/model", "LV08");
    }
    /* TCP's acknowledgements load the reverse direction of a flow's links
     * (SimGrid's crosstraffic, on in LV08 and SMPI); every flow then shares
     * links with the flows coming the other way, which couples far more of
     * them in the max-min solver */
    if (crosstraffic)
        sg_cfg_set_boolean("network/crosstraffic", crosstraffic == 1 ? "yes" : "no");
}

/* the actors' stacks: 1 MiB each (virtual; the rank code keeps its buffers
 * on the heap), each behind a guard page that turns an overflow into a
 * crash while the stacks' memory mappings fit.  A guarded stack is two
 * mappings (stack and guard), and Linux caps a process at vm.max_map_count
 * (65,530 by default): about 32,000 guarded actors, beyond which SimGrid
 * aborts creating them ("Failed to protect stack").  Past that the stacks go
 * unguarded: adjacent unguarded stacks merge into few mappings, and 65,536
 * ranks start (bench/README.md, section 18). */
static void set_contexts(long actors)
{
    sg_cfg_set_int("contexts/stack-size", 1024);
    long max_maps = 65530; /* the kernel's default, when /proc does not say */
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &max_maps) != 1)
            max_maps = 65530;
        fclose(f);
    }
    /* what the rest of the process maps: libraries, heap arenas, the
     * sanitizers' shadow (a chosen margin, about 4x what a run maps here) */
    const long others = 8192;
    if (2 * actors + others > max_maps)
        sg_cfg_set_int("contexts/guard-size", 0);
}

/* the hosts of the P ranks: node-0.. of a built-in, the first P of a file */
static int find_hosts(const sp_platform *plat, const char *platform, int P, char *err, size_t errlen)
{
    if (plat->host_prefix[0]) {
        char name[64];
        for (int r = 0; r < P; r++) {
            snprintf(name, sizeof name, "%s%d", plat->host_prefix, r);
            spg_ranks.hosts[r] = sg_host_by_name(name);
            if (!spg_ranks.hosts[r]) {
                snprintf(err, errlen, "platform has no host %s", name);
                return -1;
            }
        }
        return 0;
    }
    size_t nh = sg_host_count(); /* O(H log H): called once */
    if (nh < (size_t)P) {
        snprintf(err, errlen, "platform file '%s' has %zu hosts, fewer than --ranks %d", platform, nh, P);
        return -1;
    }
    sg_host_t *all = sg_host_list();
    if (!all) {
        snprintf(err, errlen, "out of memory listing the platform's hosts");
        return -1;
    }
    memcpy(spg_ranks.hosts, all, (size_t)P * sizeof *spg_ranks.hosts);
    free(all);
    return 0;
}

/* SimGrid started on the platform of cfg (its network model chosen): 0, or
 * 2 with a message (bad input).  plat keeps the hosts' names. */
static int load_platform(const sp_backend_config *cfg, sp_platform *plat, char *err, size_t errlen)
{
    int P = cfg->ranks;
    if (sp_platform_prepare(cfg->platform, P, plat, err, errlen) != 0)
        return 2;
    if (!plat->generated && !plat->builder[0] && spg_check_platform_file(plat->xml_path, err, errlen) != 0)
        return 2;

    /* SimGrid's own chatter (configuration changes) stays quiet; warnings pass */
    int argc = 1;
    char *argv[] = {"sparsim", NULL};
    xbt_log_control_set("root.thresh:warning");
    xbt_log_control_set("ker_engine.app:file:/dev/null"); /* its deadlock report; ours says which rank */
    /* SimGrid's init installs its own SIGINT handler, which logs and calls
     * exit() from the handler: an interrupt landing in the middle of the
     * init could hang the process there (exit's destructors and the leak
     * check meeting a lock the interrupted code holds) and left no cleanup.
     * The signals that end a run wait while SimGrid initialises and ours go
     * back (they remove the temporaries, the platform file among them); one
     * sent meanwhile is delivered to ours.  Again before the run (simulate). */
    sigset_t ends, before;
    sigemptyset(&ends);
    sigaddset(&ends, SIGINT);
    sigaddset(&ends, SIGTERM);
    sigaddset(&ends, SIGHUP);
    sigaddset(&ends, SIGQUIT);
    sigprocmask(SIG_BLOCK, &ends, &before);
    simgrid_init(&argc, argv);
    sp_part_cleanup_on_signals();
    sigprocmask(SIG_SETMASK, &before, NULL);
    set_network_model(cfg->network, cfg->crosstraffic);
    if (cfg->engine != 1) /* the flow engine has its own stacks (sim/backends/flow/coro.c) */
        set_contexts(cfg->unshared_below > 0 ? 2L * P : P); /* a postman per rank with --unshared-below */

    char perr[512] = "";
    int rc;
    if (!strcmp(plat->builder, "nodes")) /* in code: multi-GPU nodes */
        rc = spg_build_nodes(&plat->fabric, P, perr, sizeof perr);
    else if (plat->builder[0]) /* in code: Aries */
        rc = spg_build_aries(P, !strcmp(plat->builder, "aries"), perr, sizeof perr);
    else
        rc = spg_load_platform(plat->xml_path, perr, sizeof perr);
    sp_platform_release(plat);
    if (rc != 0) {
        perr[strcspn(perr, "\n")] = '\0';
        snprintf(err, errlen, "invalid platform file '%s': %s", cfg->platform, perr);
        return 2;
    }
    return 0;
}

/* the ranks' places: their hosts, and the alpha-beta facts of the route
 * between the first two; 0, 1 (no memory) or 2 (bad input), with a message */
static int place_ranks(sp_shim *sh, const sp_platform *plat, const char *platform, int P, char *err, size_t errlen)
{
    memset(&spg_ranks, 0, sizeof spg_ranks);
    spg_disturbances_reset();
    spg_ranks.P = P;
    spg_ranks.sh = sh;
    spg_ranks.hosts = calloc((size_t)P, sizeof *spg_ranks.hosts);
    spg_ranks.mbox = calloc((size_t)P, sizeof *spg_ranks.mbox);
    spg_ranks.slots = calloc((size_t)P, sizeof *spg_ranks.slots);
    spg_ranks.actors = calloc((size_t)P, sizeof *spg_ranks.actors);
    if (!spg_ranks.hosts || !spg_ranks.mbox || !spg_ranks.slots || !spg_ranks.actors) {
        snprintf(err, errlen, "out of memory for %d ranks", P);
        return 1;
    }
    if (find_hosts(plat, platform, P, err, errlen) != 0)
        return 2;
    /* alpha-beta facts of the route between the first two ranks */
    if (P >= 2) {
        sh->rep->alpha = sg_host_get_route_latency(spg_ranks.hosts[0], spg_ranks.hosts[1]);
        double bw = sg_host_get_route_bandwidth(spg_ranks.hosts[0], spg_ranks.hosts[1]);
        sh->rep->beta = bw > 0 ? 1.0 / bw : 0;
    }
    return 0;
}

/* one mailbox and one actor per rank, the actor ids contiguous (a get's
 * sender is known by its id); 0, or -1 with a message */
static int start_ranks(sp_shim *sh, int P, char *err, size_t errlen)
{
    char name[32];
    for (int r = 0; r < P; r++) {
        snprintf(name, sizeof name, "rank-%d", r);
        spg_ranks.mbox[r] = sg_mailbox_by_name(name);
    }
    spg_ranks.barrier = sg_barrier_init((unsigned)P);
    for (int r = 0; r < P; r++) {
        sp_ctx *c = &spg_ranks.slots[r].ctx;
        c->rank = r;
        c->size = P;
        c->be = &spg_transport;
        c->be_state = &spg_ranks.slots[r].s;
        c->shim = sh;
        snprintf(name, sizeof name, "rank-%d", r);
        sg_actor_t a = sg_actor_init(name, spg_ranks.hosts[r]);
        sg_actor_set_data(a, c);
        sg_actor_start(a, spg_rank_actor, 0, NULL);
        spg_ranks.actors[r] = a;
        long pid = (long)sg_actor_get_pid(a);
        if (r == 0)
            spg_ranks.pid_base = pid;
        else if (pid != spg_ranks.pid_base + r) {
            snprintf(err, errlen, "internal error: actor ids are not contiguous");
            return -1;
        }
    }
    return 0;
}

/* the simulation, and its outcome: 0, or 1 with a message */
static int simulate(sp_shim *sh, int P, char *err, size_t errlen)
{
    char rerr[512] = "";
    /* after SimGrid's own SIGINT handler (which exits without cleaning up):
     * an interrupted run removes its .part outputs */
    sp_part_cleanup_on_signals();
    spg_on_deadlock(sh->disturb ? spg_disturbances_on_deadlock : NULL);
    int rc = spg_run(rerr, sizeof rerr);
    int unfinished = 0, first_unfinished = -1;
    for (int r = 0; r < P; r++)
        if (!spg_ranks.slots[r].s.finished) {
            if (first_unfinished < 0)
                first_unfinished = r;
            unfinished++;
        }
    if (sh->disturb && !sh->failed)
        sp_disturb_name_routes(sh->disturb, spg_name_route, NULL);
    if (sh->failed) {
        snprintf(err, errlen, "%s", sh->errmsg);
    } else if (rc != 0 || unfinished) {
        snprintf(err, errlen,
                 "simulation ended with %d of %d ranks blocked (first: rank %d): a receive that can never be "
                 "matched, or a send nobody receives",
                 unfinished, P, first_unfinished);
    } else {
        return 0;
    }
    return 1;
}

int sp_backend_run(sp_shim *sh, const sp_backend_config *cfg, sp_error *e)
{
    int P = cfg->ranks;
    sp_platform plat;
    char err[sizeof e->msg] = "";
    const size_t errlen = sizeof err;
    if (load_platform(cfg, &plat, err, errlen) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    int ret = place_ranks(sh, &plat, cfg->platform, P, err, errlen);
    /* the route facts above are the undisturbed platform's */
    if (ret == 0 && sh->disturb)
        ret = spg_disturbances_start(sh, cfg->platform, err, errlen);
    if (ret == 0 && cfg->engine == 1) {
        /* sparsim's own event loop on this platform and its routes (sim/backends/flow) */
        ret = spf_run(sh, P, spg_ranks.hosts, cfg->unshared_below, cfg->flow_slack, err, errlen);
    } else if (ret == 0) {
        ret = 1;
        if (start_ranks(sh, P, err, errlen) == 0 &&
            (strcmp(plat.builder, "nodes") != 0 || spg_switches_start(&plat.fabric, P, err, errlen) == 0) &&
            (cfg->unshared_below <= 0 ||
             spg_postboxes_start(cfg->unshared_below, strcmp(cfg->network, "smpi") == 0, err, errlen) == 0)) {
            sh->node_switch = spg_switches_on(); /* sp_node_switch: the ranks may push to their switch */
            ret = simulate(sh, P, err, errlen);
        }
    }
    free_all();
    return ret == 0 ? 0 : sp_error_from(e, ret == 2 ? SP_STATUS_USAGE : SP_STATUS_FAILED, err[0] ? err : sh->errmsg);
}
