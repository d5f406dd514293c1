/* disturbances.c - what the SimGrid backend injects into a disturbed run:
 * degraded links, other jobs' background traffic, a failed rank.
 *
 * The backend-independent half (who straggles, detours, the critical path
 * each rank carries, the report) is sim/shim/disturb.c; this file holds
 * what needs the simulated platform: links found by class or by a rank's
 * NIC and slowed in place before the run, an actor that starts a Poisson
 * stream of flows between hosts that no rank receives, and an actor that
 * suspends the failed rank at its time.  After a failure the engine finds
 * that nobody can go on, and the run ends with one line naming the rank
 * and those left waiting on it.  Every draw is keyed by the seed (streams
 * ST_LINKS and ST_BG), so a run repeats exactly.
 */
#include "simgrid_internal.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <xbt/dynar.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* other jobs' flows: between these hosts, until stop */
static struct {
    sg_host_t *hosts;
    int nhosts;
    int stop;
} background;

/* the failed rank (rank >= 0: it has stopped) and where it stopped */
static struct {
    int rank, iter, phase, in_sync;
    double time;
} failure;

enum { ST_LINKS = 201, ST_BG = 202 };

/* a link's full-duplex name: without its _UP or _DOWN half */
static void link_base(const char *name, char *out, size_t n)
{
    size_t len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, "_UP"))
        len -= 3;
    else if (len > 5 && !strcmp(name + len - 5, "_DOWN"))
        len -= 5;
    snprintf(out, n, "%.*s", (int)len, name);
}

/* the full-duplex link a rank's host reaches the network by: the first link
 * of its route to another rank's host */
static int nic_of(int r, char *out, size_t n)
{
    if (spg_ranks.P < 2)
        return -1;
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(spg_ranks.hosts[r], spg_ranks.hosts[(r + 1) % spg_ranks.P], d);
    int ok = xbt_dynar_length(d) > 0;
    if (ok)
        link_base(sg_link_get_name(xbt_dynar_get_as(d, 0, sg_link_t)), out, n);
    xbt_dynar_free(&d);
    return ok ? 0 : -1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the prefix that names a built-in class of links (dragonfly colours) */
static const char *class_prefix(const char *cls)
{
    static const char *const known[][2] = {{"green", "green_link_"}, {"black", "black_link_"}, {"blue", "blue_link_"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(cls, known[i][0]))
            return known[i][1];
    return NULL;
}

/* The full-duplex names of the links the disturbance names (a rank's NIC,
 * every rank's, a class or a link's name, all) into bases[*nb...]; -1 when
 * memory runs out (the names so far are in bases[0..*nb), to be freed). */
static int target_links(const sp_disturb_opts *o, sg_link_t *all, size_t nl, char **bases, int *nb)
{
    char b[300];
    if (o->degrade_nic >= 0) {
        if (nic_of(o->degrade_nic, b, sizeof b) == 0 && !(bases[(*nb)++] = strdup(b)))
            return -1;
    } else if (!strcmp(o->degrade_links, "nic")) {
        for (int r = 0; r < spg_ranks.P; r++)
            if (nic_of(r, b, sizeof b) == 0 && !(bases[(*nb)++] = strdup(b)))
                return -1;
    } else {
        const char *pre = class_prefix(o->degrade_links);
        int every = !strcmp(o->degrade_links, "all");
        if (!pre)
            pre = o->degrade_links;
        for (size_t i = 0; i < nl; i++) {
            const char *name = sg_link_get_name(all[i]);
            /* "all" is the network's links: not a node's NVSwitch intake (nvls_N, which only its
             * own NVLS pushes cross), so that a seed degrades the same links with or without it */
            if (!strncmp(name, "__", 2) || (every && !strncmp(name, "nvls_", 5)) ||
                (!every && strncmp(name, pre, strlen(pre)) != 0))
                continue;
            link_base(name, b, sizeof b);
            if (!(bases[(*nb)++] = strdup(b)))
                return -1;
        }
    }
    return 0;
}

/* one entry per full-duplex link, in name order (the draw is then the same
 * whatever order SimGrid lists them in); how many */
static int unique_in_order(char **bases, int nb)
{
    qsort(bases, (size_t)nb, sizeof *bases, cmp_str);
    int w = 0;
    for (int i = 0; i < nb; i++) {
        if (w > 0 && !strcmp(bases[w - 1], bases[i])) {
            free(bases[i]);
            continue;
        }
        bases[w++] = bases[i];
    }
    return w;
}

/* no link matched: the line says which classes this platform has */
static void explain_no_links(const sp_disturb_opts *o, sg_link_t *all, size_t nl, const char *platform, char *err,
                             size_t errlen)
{
    char cls[200] = "";
    static const char *const names[] = {"green", "black", "blue"};
    for (int i = 0; i < 3; i++)
        for (size_t j = 0; j < nl; j++)
            if (!strncmp(sg_link_get_name(all[j]), class_prefix(names[i]), strlen(class_prefix(names[i])))) {
                strncat(cls, ", ", sizeof cls - strlen(cls) - 1);
                strncat(cls, names[i], sizeof cls - strlen(cls) - 1);
                break;
            }
    char shown[120];
    size_t k = 0;
    for (const char *t = o->degrade_links; *t && k + 5 < sizeof shown; t++)
        k += (unsigned char)*t < 0x20 ? (size_t)snprintf(shown + k, sizeof shown - k, "\\x%02x", *t)
                                      : (size_t)snprintf(shown + k, sizeof shown - k, "%c", *t);
    if (o->degrade_nic >= 0)
        snprintf(err, errlen, "--degrade-nic %d: rank %d's host has no link to the others on %s", o->degrade_nic,
                 o->degrade_nic, platform);
    else
        snprintf(err, errlen,
                 "--degrade-links: no link class or link '%s' on %s at P = %d (classes there: nic%s, all; or a "
                 "link's name)",
                 shown, platform, spg_ranks.P, cls);
}

/* how many of the nb links to degrade (--degrade-count, --degrade-fraction);
 * -1 with a message when the count is more than there are */
static int how_many(const sp_disturb_opts *o, int nb, const char *platform, char *err, size_t errlen)
{
    if (o->degrade_count > 0) {
        if (o->degrade_count > nb) {
            snprintf(err, errlen, "--degrade-count %d: '%s' has %d link%s on %s at P = %d", o->degrade_count,
                     o->degrade_links, nb, nb == 1 ? "" : "s", platform, spg_ranks.P);
            return -1;
        }
        return o->degrade_count;
    }
    if (o->degrade_fraction < 1.0) {
        int want = (int)floor(o->degrade_fraction * nb + 0.5);
        return want < 1 ? 1 : want;
    }
    return nb;
}

/* a partial shuffle keyed by the seed puts `want` of them first, in name order */
static void pick_links(const sp_disturb *d, char **bases, int nb, int want)
{
    for (int j = 0; j < want; j++) {
        int pick = j + (int)(sp_disturb_uniform(sp_disturb_seed(d), ST_LINKS, (uint64_t)j, 0) * (nb - j));
        if (pick >= nb)
            pick = nb - 1;
        char *t = bases[j];
        bases[j] = bases[pick];
        bases[pick] = t;
    }
    qsort(bases, (size_t)want, sizeof *bases, cmp_str);
}

/* both halves of each picked link, slowed as the options say */
static void slow_links(const sp_disturb_opts *o, sg_link_t *all, size_t nl, char **picked, int want)
{
    for (size_t i = 0; i < nl; i++) {
        char base[300];
        link_base(sg_link_get_name(all[i]), base, sizeof base);
        if (!bsearch(&(const char *){base}, picked, (size_t)want, sizeof *picked, cmp_str))
            continue;
        if (o->degrade_bw != 1.0)
            sg_link_set_bandwidth(all[i], sg_link_get_bandwidth(all[i]) * o->degrade_bw);
        if (o->degrade_latency > 0)
            sg_link_set_latency(all[i], sg_link_get_latency(all[i]) + o->degrade_latency);
    }
}

/* Degrades the links the disturbance names.  0, or 2 with a message (no such
 * links), or 1 (no memory). */
static int degrade_links(sp_shim *sh, const char *platform, char *err, size_t errlen)
{
    const sp_disturb_opts *o = sp_disturb_options(sh->disturb);
    sp_report_disturb *out = sh->rep->disturb;
    size_t nl = sg_link_count();
    sg_link_t *all = sg_link_list();
    char **bases = calloc(nl + (size_t)spg_ranks.P + 1, sizeof *bases);
    int nb = 0, rc = 1;
    if (!all || !bases || target_links(o, all, nl, bases, &nb) != 0)
        goto done;
    nb = unique_in_order(bases, nb);
    if (nb == 0) {
        explain_no_links(o, all, nl, platform, err, errlen);
        rc = 2;
        goto done;
    }
    int want = how_many(o, nb, platform, err, errlen);
    if (want < 0) {
        rc = 2;
        goto done;
    }
    pick_links(sh->disturb, bases, nb, want);
    slow_links(o, all, nl, bases, want);
    out->links_degraded = want;
    out->links_in_target = nb;
    for (int j = 0; j < want && j < SP_REPORT_NAMED; j++)
        snprintf(out->link_names[j], sizeof out->link_names[j], "%s", bases[j]);
    rc = 0;
done:
    if (rc == 1)
        snprintf(err, errlen, "out of memory degrading links");
    for (int i = 0; i < nb; i++)
        free(bases[i]);
    free(bases);
    free(all);
    return rc;
}

static void bg_done(void *arg, int src, int dst, double bytes, double t0, double t1)
{
    (void)arg;
    sp_slice_event e = {-1, "flow", t0, t1, -1, 0, src, dst, bytes};
    sp_disturb_slice(spg_ranks.sh->disturb, &e);
}

/* other jobs' flows: a Poisson stream of flows of --bg-flow bytes from every
 * host at --bg-load of its injection bandwidth, to a uniform random other
 * host or to the one half the machine away */
static void background_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sg_actor_daemonize(sg_actor_self());
    sp_disturb *d = spg_ranks.sh->disturb;
    const sp_disturb_opts *o = sp_disturb_options(d);
    sp_report_disturb *out = spg_ranks.sh->rep->disturb;
    uint64_t seed = sp_disturb_seed(d);
    int H = background.nhosts;
    double rate = out->bg_rate * H, t = 0, bytes = (double)o->bg_flow;
    for (uint64_t k = 0; !background.stop; k++) {
        t -= log(1.0 - sp_disturb_uniform(seed, ST_BG, k, 0)) / rate;
        double now = simgrid_get_clock();
        if (t > now)
            sg_actor_sleep_for(t - now);
        if (background.stop)
            break;
        int src = (int)(sp_disturb_uniform(seed, ST_BG, k, 1) * H), dst;
        if (src >= H)
            src = H - 1;
        if (o->bg_pattern == SP_BG_SHIFT) {
            dst = (src + (H / 2 > 0 ? H / 2 : 1)) % H;
        } else {
            int off = 1 + (int)(sp_disturb_uniform(seed, ST_BG, k, 2) * (H - 1));
            dst = (src + (off < H ? off : H - 1)) % H;
        }
        spg_bg_reap(bg_done, NULL);
        spg_bg_start(background.hosts[src], background.hosts[dst], bytes, src, dst);
        out->bg_flows++;
        out->bg_bytes += o->bg_flow;
    }
}

/* --fail-rank: the rank stops at --fail-at, as a crashed process would */
static void failure_actor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    sg_actor_daemonize(sg_actor_self());
    const sp_disturb_opts *o = sp_disturb_options(spg_ranks.sh->disturb);
    if (o->fail_at > simgrid_get_clock())
        sg_actor_sleep_until(o->fail_at);
    int R = o->fail_rank;
    if (spg_ranks.slots[R].s.finished)
        return; /* it had finished: nothing stops */
    const sp_ctx *c = &spg_ranks.slots[R].ctx;
    failure.iter = c->iter;
    failure.phase = c->phase;
    failure.in_sync = spg_ranks.slots[R].s.in_sync;
    failure.time = simgrid_get_clock();
    failure.rank = R;
    sg_actor_suspend(spg_ranks.actors[R]);
    background.stop = 1; /* the engine can then find that nobody can go on */
}

/* does rank r wait on rank R (a receive from it, a send to it, or the
 * synchronisation it never reaches)? */
static int waits_on(int r, int R)
{
    spg_rank *s = &spg_ranks.slots[r].s;
    if (s->in_sync)
        return 1;
    for (const sp_req *q = s->posted_head; q; q = q->next)
        if (q->peer == R)
            return 1;
    for (size_t i = 0; i < s->nact; i++)
        if (!s->act_is_get[i] && ((const sp_req *)s->act_owner[i])->peer == R)
            return 1;
    return 0;
}

/* the engine found that nobody can go on: after a rank has stopped, this is
 * how the run ends, in one line naming it and those left waiting on it */
void spg_disturbances_on_deadlock(void)
{
    if (!spg_ranks.sh || failure.rank < 0)
        return;
    int R = failure.rank, nwait = 0, behind = 0;
    char list[400] = "";
    size_t w = 0;
    for (int r = 0; r < spg_ranks.P; r++) {
        if (r == R || spg_ranks.slots[r].s.finished)
            continue;
        if (waits_on(r, R)) {
            if (nwait < 16 && w < sizeof list)
                w += (size_t)snprintf(list + w, sizeof list - w, "%s%d", nwait ? ", " : "", r);
            nwait++;
        } else {
            behind++;
        }
    }
    if (nwait > 16 && w < sizeof list)
        snprintf(list + w, sizeof list - w, ", ... (%d in all)", nwait);
    char where[200];
    if (failure.in_sync)
        snprintf(where, sizeof where, "in the synchronisation after iteration %d", failure.iter);
    else
        snprintf(where, sizeof where, "in phase %s of iteration %d", spg_ranks.sh->rep->phase_names[failure.phase],
                 failure.iter);
    char more[80] = "";
    if (behind)
        snprintf(more, sizeof more, "; %d more blocked behind them", behind);
    sp_fail(spg_ranks.sh, "rank %d stopped at %.9g s (--fail-rank, --fail-at) %s; %d rank%s left waiting on it%s%s%s",
            R, failure.time, where, nwait, nwait == 1 ? " was" : "s were", nwait ? ": " : "", list, more);
}

/* the links of the route from rank src's host to rank dst's, by name */
void spg_name_route(void *arg, int src, int dst, char *buf, size_t len)
{
    (void)arg;
    xbt_dynar_t d = xbt_dynar_new(sizeof(sg_link_t), NULL);
    sg_host_get_route(spg_ranks.hosts[src], spg_ranks.hosts[dst], d);
    size_t w = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < xbt_dynar_length(d); i++) {
        const char *name = sg_link_get_name(xbt_dynar_get_as(d, i, sg_link_t));
        if (w + strlen(name) + 5 >= len) { /* whole names only */
            snprintf(buf + w, len - w, "%s...", i ? "," : "");
            break;
        }
        w += (size_t)snprintf(buf + w, len - w, "%s%s", i ? "," : "", name);
    }
    xbt_dynar_free(&d);
}

/* the disturbances that live in the platform and in actors of their own;
 * 0, 2 (bad input: no such links) or 1, with a message */
int spg_disturbances_start(sp_shim *sh, const char *platform, char *err, size_t errlen)
{
    const sp_disturb_opts *o = sp_disturb_options(sh->disturb);
    sp_report_disturb *out = sh->rep->disturb;
    if (sp_disturb_links_on(o)) {
        int rc = degrade_links(sh, platform, err, errlen);
        if (rc)
            return rc;
    }
    if (sp_disturb_background_on(o)) {
        size_t all = sg_host_count(), nh = 0;
        sg_host_t *hl = sg_host_list();
        /* other jobs' endpoints: the platform's hosts, not a node's NVSwitch
         * (nvswitch-N: only its own node's GPUs reach it) */
        for (size_t i = 0; hl && i < all; i++)
            if (strncmp(sg_host_get_name(hl[i]), "nvswitch-", 9) != 0)
                hl[nh++] = hl[i];
        if (!hl || nh < 2) {
            free(hl);
            snprintf(err, errlen, nh < 2 ? "--bg-load needs a platform of at least two hosts" : "out of memory");
            return nh < 2 ? 2 : 1;
        }
        background.hosts = hl;
        background.nhosts = (int)nh;
        /* a host's injection bandwidth: the narrowest link of its route to another */
        double bw = spg_ranks.P > 1 ? sg_host_get_route_bandwidth(spg_ranks.hosts[0], spg_ranks.hosts[1])
                            : sg_host_get_route_bandwidth(hl[0], hl[1]);
        out->bg_hosts = background.nhosts;
        out->bg_rate = o->bg_load * bw / (double)o->bg_flow;
        sg_actor_t a = sg_actor_init("background", spg_ranks.hosts[0]);
        sg_actor_start(a, background_actor, 0, NULL);
    }
    if (sp_disturb_failure_on(o)) {
        sg_actor_t a = sg_actor_init("failure", spg_ranks.hosts[0]);
        sg_actor_start(a, failure_actor, 0, NULL);
    }
    return 0;
}

void spg_disturbances_reset(void)
{
    memset(&background, 0, sizeof background);
    memset(&failure, 0, sizeof failure);
    failure.rank = -1;
}

void spg_disturbances_free(void)
{
    free(background.hosts);
    memset(&background, 0, sizeof background);
    memset(&failure, 0, sizeof failure);
}

void spg_background_end(void)
{
    if (background.nhosts) {
        background.stop = 1;
        spg_bg_cancel_all();
    }
}
