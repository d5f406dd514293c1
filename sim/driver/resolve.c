/* resolve.c - a plan and one algorithm in, every decision of the run out.
 *
 * The steps run in the order a user would want to hear about problems:
 * what was asked (the algorithm, the payload it allows, the device), then the
 * data (the gradient file or the workload's profile: n and the iterations, k),
 * then the payload mode `auto` becomes, then what this machine can hold, and
 * for a run the data itself (the trace read once, the generator, the model).
 * Each step that fails says so in one line with the status it asks for.
 */
#include "resolve.h"
#include "select_device.h"
#include "layers.h"
#include "training.h"
#include "algorithms/nccl_topo.h"
#include "algorithms/node_aware.h"
#include "analysis/bounds.h"
#include "sim/shim/backend.h"
#include "sim/workload/generator.h"
#include "sim/workload/model.h"
#include "topologies/platform.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define EXACT_MEMORY_BUDGET (6.0 * 1024 * 1024 * 1024) /* bytes, all ranks together */
/* what a run holds besides its payloads, measured with sparsim sweep's
 * peak_rss_bytes (bench/README.md has the method): the process, SimGrid and
 * the writers' buffers; SimGrid's actor and the shim's state per rank (12 to
 * 15 KiB); per rank pair, the algorithm's own (sp_algorithm.pair_bytes: the
 * per-peer counts, bounds and collective scratch every rank holds at once,
 * 4 to 90 bytes) */
#define RUN_BASE_BYTES (16.0 * 1024 * 1024)
#define RANK_BYTES (16.0 * 1024)

static const char *const payload_names[] = {"auto", "exact", "size", "model"};

/* the memory this process may still take, in bytes (-1: unknown): what the
 * kernel says it can give without swapping, lowered by a limit on the
 * address space or the data segment, and by a memory cgroup's room */
static double memory_limit(void)
{
    double avail = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kb;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
                avail = (double)kb * 1024.0;
        fclose(f);
    }
    if (avail < 0) {
        long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
        if (pages > 0 && psz > 0)
            avail = (double)pages * (double)psz;
    }
    const int limits[] = {RLIMIT_AS, RLIMIT_DATA};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(limits[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && (avail < 0 || (double)rl.rlim_cur < avail))
            avail = (double)rl.rlim_cur;
    }
    f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (f) {
        unsigned long long max, cur;
        FILE *g = fopen("/sys/fs/cgroup/memory.current", "r");
        if (fscanf(f, "%llu", &max) == 1 && g && fscanf(g, "%llu", &cur) == 1) {
            double room = max > cur ? (double)(max - cur) : 0.0;
            if (avail < 0 || room < avail)
                avail = room;
        }
        if (g)
            fclose(g);
        fclose(f);
    }
    return avail;
}

/* bytes a run of `mode` needs over all ranks: exact payloads hold P x n
 * floats of gradient and result (8 bytes per entry and rank), the
 * algorithm's extras, the report's sums and the generator's shared arrays
 * (28 bytes per entry); model and size payloads only the per-rank and
 * per-pair state */
static double memory_needed(const sp_plan *plan, const sp_algorithm *algo, uint64_t k, int mode)
{
    double P = plan->ranks, n = (double)plan->n;
    double need = RUN_BASE_BYTES + P * RANK_BYTES + algo->pair_bytes * P * P;
    if (mode == SP_PAYLOAD_EXACT)
        return need + P * n * 8.0 + 28.0 * n +
               (algo->exact_extra_bytes ? algo->exact_extra_bytes(plan->ranks, plan->n, k) : 0.0);
    return need;
}

/* the part of the run's memory this process holds: a real-MPI process holds
 * one rank of the P */
static double share_of_process(const sp_plan *plan, double total)
{
    double share = strcmp(sp_backend_name(), "simgrid") != 0 ? 1.0 / plan->ranks : 1.0;
    return RUN_BASE_BYTES + (total - RUN_BASE_BYTES) * share;
}

/* `auto` decided, once: exact payloads where they fit in memory (or where
 * exact data is asked for: a gradient file, a dumped result), else the model
 * where the algorithm reads its data through it, else sizes only; with
 * skipped iterations (--iters-at) never exact */
static int decide_payload(const sp_plan *plan, const sp_algorithm *algo, uint64_t k, double limit)
{
    if (plan->payload != SP_PAYLOAD_AUTO)
        return plan->payload;
    int fallback = algo->model_ok ? SP_PAYLOAD_MODEL : SP_PAYLOAD_SIZE;
    if (plan->at_given) /* skipped iterations: the model's state between them */
        return fallback;
    double need = memory_needed(plan, algo, k, SP_PAYLOAD_EXACT);
    int fits = need <= EXACT_MEMORY_BUDGET && (limit < 0 || share_of_process(plan, need) <= limit);
    return fits || plan->grad_file[0] || plan->grad_live >= 0 || plan->dump_result[0] ? SP_PAYLOAD_EXACT : fallback;
}

static const char *gib(double bytes, char *buf, size_t n)
{
    if (bytes >= 1024.0 * 1024 * 1024)
        snprintf(buf, n, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    else
        snprintf(buf, n, "%.0f MiB", ceil(bytes / (1024.0 * 1024)));
    return buf;
}

/* ---- node-aware forms (algorithms/node_aware.c) ----------------------------
 * rail:X and leader:X exist for a sparse X only; they need ranks on nodes
 * (G > 1), and rail:X needs k / G >= 1 entries to select on its shard; a
 * model workload answers for one rank's gradient, not a node's sum. */
static int node_form_unknown(const char *name, sp_error *e)
{
    const char *iname;
    sp_algo_form form = sp_algorithm_form_of(name, &iname);
    const sp_algorithm *x = form != SP_FORM_FLAT ? sp_algorithm_find(iname) : NULL;
    if (!x || x->form != SP_FORM_FLAT)
        return 0;
    char shown[160];
    return sp_error_set(e, SP_STATUS_USAGE, "--algo %s: node-aware forms are of sparse algorithms, and %s is %s",
                        sp_opts_printable(name, shown, sizeof shown), x->name, sp_algo_class_name(x->cls));
}

static int node_form_needs_nodes(const sp_algorithm *a, const sp_plan *p, sp_error *e)
{
    if (a->form == SP_FORM_FLAT || p->gpus_per_node > 1)
        return 0;
    return sp_error_set(e, SP_STATUS_USAGE,
                        "--algo %s needs ranks on nodes: a platform with nodes or --gpus-per-node G", a->name);
}

/* NVLS (needs_switch): a simulated platform whose nodes' NVSwitch reduces */
static int needs_switch(const sp_algorithm *a, const sp_plan *p, sp_error *e)
{
    if (!a->needs_switch)
        return 0;
    if (strcmp(sp_backend_name(), "simgrid") != 0)
        return sp_error_set(e, SP_STATUS_USAGE, "--algo %s is simulated: the %s backend has no switch to reduce in",
                            a->name, sp_backend_name());
    if (!(sp_platform_nvls(p->platform) > 0))
        return sp_error_set(e, SP_STATUS_USAGE,
                            "--algo %s needs nodes whose NVSwitch reduces (NVLink SHARP): dgx-h100, dgx-h200, dgx-b200 "
                            "or roce, not %s",
                            a->name, p->platform);
    if (p->gpus_per_node < 2)
        return sp_error_set(e, SP_STATUS_USAGE, "--algo %s needs at least 2 GPUs a node (--gpus-per-node)", a->name);
    return 0;
}

static int node_form_needs_k(const sp_algorithm *a, const sp_plan *p, uint64_t k, sp_error *e)
{
    if (a->form != SP_FORM_RAIL || k < 1 || sp_rail_k(k, p->gpus_per_node) >= 1)
        return 0;
    return sp_error_set(e, SP_STATUS_USAGE,
                        "--algo %s selects k / G = %llu / %d = 0 entries on a rail's shard: raise --n or --density "
                        "to k >= %d",
                        a->name, (unsigned long long)k, p->gpus_per_node, p->gpus_per_node);
}

static int node_form_payload(const sp_algorithm *a, int mode, sp_error *e)
{
    if (mode == SP_PAYLOAD_MODEL && !a->model_ok)
        return sp_error_set(e, SP_STATUS_USAGE, "%s cannot run on a model workload; use --payload exact", a->name);
    if (mode == SP_PAYLOAD_SIZE && !a->size_only_ok)
        return sp_error_set(e, SP_STATUS_USAGE,
                            "%s needs exact payloads or a model workload (its message sizes depend on the data); "
                            "use --payload model",
                            a->name);
    return 0;
}

const char *sp_resolve_nccl(const sp_plan *p)
{
    int g = p->gpus_per_node, nodes;
    char err[600];
    if (g <= 0 && sp_platform_nodes(p->platform, &g, &nodes, err, sizeof err) != 0)
        return NULL;
    sp_link_classes l = {0};
    if (sp_platform_link_classes(p->platform, &l.intra_alpha, &l.intra_beta, &l.inter_alpha, &l.inter_beta) != 0)
        return NULL;
    l.nvls_bw = strcmp(sp_backend_name(), "simgrid") == 0 ? sp_platform_nvls(p->platform) : 0.0;
    return sp_nccl_choose(p->ranks, g, p->n, &l);
}

const sp_algorithm *sp_resolve_algorithm(const char *name, sp_error *e)
{
    const sp_algorithm *a = sp_algorithm_find(name);
    if (a)
        return a;
    if (!strcmp(name, "nccl")) /* sp_plan_algorithms names its choice where the platform allows one */
        return sp_error_set(e, SP_STATUS_USAGE,
                            "--algo nccl chooses nccl-ring, nccl-tree or nccl-nvls by the platform's links: run "
                            "it on a platform of nodes (dgx-h100, dgx-h200, dgx-b200, roce, alps), or name one"),
               NULL;
    if (node_form_unknown(name, e) != 0)
        return NULL;
    int cnt;
    const sp_algorithm *list = sp_algorithm_list(&cnt);
    char known[256] = "", shown[160];
    for (int j = 0; j < cnt; j++) {
        strncat(known, list[j].name, sizeof known - strlen(known) - 1);
        strncat(known, j + 1 < cnt ? ", " : "", sizeof known - strlen(known) - 1);
    }
    sp_error_set(e, SP_STATUS_USAGE, "unknown algorithm '%s' (known: %s, all; rail:X, leader:X of a sparse X)",
                 sp_opts_printable(name, shown, sizeof shown), known);
    return NULL;
}

/* what a payload mode allows of an algorithm */
static int payload_allows(const sp_algorithm *a, int mode, sp_error *e)
{
    if (a->form != SP_FORM_FLAT)
        return node_form_payload(a, mode, e);
    if (mode == SP_PAYLOAD_SIZE && !a->size_only_ok)
        return sp_error_set(e, SP_STATUS_USAGE,
                            "%s needs exact payloads or a model workload (its message sizes depend on the data); "
                            "use --payload model",
                            a->name);
    if (mode == SP_PAYLOAD_MODEL && !a->model_ok)
        return sp_error_set(e, SP_STATUS_USAGE, "%s cannot run on a model workload; use --payload exact", a->name);
    return 0;
}

/* The gradients of a run: --grad-file's trace, checked against the plan (n
 * and the iterations may come from it). */
static int open_trace(sp_resolved *r, sp_error *e)
{
    sp_plan *plan = &r->plan;
    char err[600];
    sp_grad_source *src = sp_trace_open(plan->grad_file, err, sizeof err);
    if (!src)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    r->source = src;
    char why[200] = "";
    if (src->ranks < plan->ranks)
        snprintf(why, sizeof why, "has %d ranks, --ranks is %d", src->ranks, plan->ranks);
    else if (sp_plan_given(plan, "n") && src->n != plan->n)
        snprintf(why, sizeof why, "has n = %llu, --n is %llu", (unsigned long long)src->n,
                 (unsigned long long)plan->n);
    else if (src->iters <= plan->settle)
        snprintf(why, sizeof why, "holds %d iteration(s), --settle uses %d before the run", src->iters, plan->settle);
    else if (sp_plan_given(plan, "iters") && plan->settle + plan->iters > src->iters)
        snprintf(why, sizeof why, "holds %d iteration(s), --iters asks for %d%s", src->iters, plan->iters,
                 plan->settle ? " after the settling ones" : "");
    if (why[0])
        return sp_error_set(e, SP_STATUS_USAGE, "gradient file %s %s", plan->grad_file, why);
    /* ranks 0..P-1 use the trace's first P workers */
    plan->n = src->n;
    if (!sp_plan_given(plan, "iters"))
        plan->iters = src->iters - plan->settle;
    return 0;
}

/* The workload's profile, built once for the run; without a gradient file
 * n comes from it. */
static int build_profile(sp_resolved *r, sp_error *e)
{
    char err[600];
    if (sp_plan_profile(&r->plan, &r->profile, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    r->have_profile = 1;
    if (!r->plan.grad_file[0])
        r->plan.n = r->profile.n;
    return 0;
}

/* A gradient file is bad input when any value the run will read is not
 * finite: every one is read once before the run (one pass over the used
 * part of the trace), so that the run does not fail halfway through. */
static int check_trace(sp_resolved *r, sp_error *e)
{
    const sp_plan *plan = &r->plan;
    float *g = malloc((plan->n ? plan->n : 1) * sizeof *g);
    if (!g)
        return sp_error_set(e, SP_STATUS_USAGE, "out of memory checking %s", plan->grad_file);
    char err[600];
    int rc = 0;
    for (int it = 0; it < plan->settle + plan->iters && rc == 0; it++)
        for (int rk = 0; rk < plan->ranks && rc == 0; rk++)
            rc = r->source->fill(r->source, it, rk, g, 0, err, sizeof err);
    free(g);
    return rc ? sp_error_from(e, SP_STATUS_USAGE, err) : 0;
}

/* Generated gradients are float32: the largest entry the generator can draw
 * (every normal it draws lies within 8.3 standard deviations: the inverse
 * normal of 2^-54), summed over the ranks and accumulated by error feedback
 * over the iterations, must stay below FLT_MAX. */
static int check_magnitudes(const sp_plan *plan, const sp_profile *prof, sp_error *e)
{
    const double z = 8.3;
    double top = -INFINITY;
    for (int l = 0; l < prof->nlayers; l++) {
        double t = prof->layers[l].log10_scale + prof->layers[l].log10_spread * z;
        top = t > top ? t : top;
    }
    double own = 0; /* the widest normal of the rank's own noise: the profile's mixture, or its table's rows */
    for (int b = -1; b < prof->nnoise; b++) {
        double e = b < 0 ? prof->spikes : prof->noise[b].spikes, k = b < 0 ? prof->spike_scale : prof->noise[b].spike_scale;
        double x = sp_noise_base(e, k) * (e > 0 && k > 1 ? k : 1.0);
        own = x > own ? x : own;
    }
    double noise = z * (sqrt(prof->common) + sqrt(prof->mean) + sqrt(1.0 - prof->common - prof->mean) * own);
    double log10_entry = top + prof->scale_sd * z / log(10.0) + log10(noise);
    double log10_total = log10_entry + log10((double)plan->ranks) + log10((double)plan->settle + plan->iters);
    if (log10_total < log10(FLT_MAX))
        return 0;
    return sp_error_set(
        e, SP_STATUS_USAGE,
        "the workload's scales let a gradient entry reach 1e%.0f and a sum over %d ranks and %d iterations "
        "1e%.0f, beyond float32 (3.4e38): lower --grad-spread, --grad-tail, --grad-scale-sd or --grad-spike-scale "
        "(or the profile's log10_scale), or use --payload model",
        floor(log10_entry), plan->ranks, plan->settle + plan->iters, floor(log10_total));
}

/* refused before anything is allocated when this process cannot hold it */
static int check_memory(const sp_resolved *r, const sp_plan *asked, sp_error *e)
{
    const sp_plan *plan = &r->plan;
    if (r->limit < 0 || r->memory <= r->limit)
        return 0;
    int mode = plan->payload;
    char a[32], b[32], what[64];
    if (asked->payload != mode)
        snprintf(what, sizeof what, "--payload %s (here %s)", payload_names[asked->payload], payload_names[mode]);
    else
        snprintf(what, sizeof what, "--payload %s", payload_names[mode]);
    return sp_error_set(e, SP_STATUS_USAGE,
                        "%s needs about %s for %d ranks and n = %llu (%s), more than the %s this machine has "
                        "available: lower --ranks%s%s",
                        what, gib(r->memory, a, sizeof a), plan->ranks, (unsigned long long)plan->n,
                        mode == SP_PAYLOAD_EXACT ? "8 bytes per entry and rank, and the algorithm's buffers"
                                                 : "the state of every rank and rank pair",
                        gib(r->limit, b, sizeof b), mode == SP_PAYLOAD_EXACT ? " or --n" : "",
                        mode == SP_PAYLOAD_EXACT && r->algo->model_ok && !plan->grad_file[0] && !plan->dump_result[0]
                            ? ", or use --payload model"
                            : "");
}

/* what the plan asked, before the data: the algorithm and the payload it allows, the device */
/* what the platform decides unless told: GPUs per node, the network model
 * and the device; G must divide P */
int sp_resolve_platform(sp_plan *p, sp_error *e)
{
    char err[600];
    int g = 1, nodes = 0;
    if (sp_platform_nodes(p->platform, &g, &nodes, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    const sp_platform_row *row = sp_platform_find(p->platform);
    if (p->gpus_per_node > 0 && g > 1 && p->gpus_per_node != g)
        return sp_error_set(e, SP_STATUS_USAGE, "--gpus-per-node %d: platform %s has %d GPUs per node",
                            p->gpus_per_node, p->platform, g);
    if (p->gpus_per_node <= 0)
        p->gpus_per_node = g;
    if (p->ranks % p->gpus_per_node) {
        if (g > 1)
            return sp_error_set(e, SP_STATUS_USAGE, "--ranks %d is not a whole number of nodes of platform %s (%d GPUs each)",
                                p->ranks, p->platform, g);
        return sp_error_set(e, SP_STATUS_USAGE, "--gpus-per-node %d does not divide --ranks %d into whole nodes",
                            p->gpus_per_node, p->ranks);
    }
    if (!strcmp(p->network, "platform"))
        snprintf(p->network, sizeof p->network, "%s", row && row->network ? row->network : "lv08");
    if (!sp_plan_given(p, "device") && row && row->device)
        snprintf(p->device, sizeof p->device, "%s", row->device);
    return 0;
}

static int resolve_request(sp_resolved *r, const sp_algorithm *algo, sp_error *e)
{
    sp_plan *p = &r->plan;
    sp_plan_apply_preset(p);
    if (sp_resolve_platform(p, e) != 0)
        return -1;
    const char *choice = !algo && !strcmp(p->algo, "nccl") ? sp_resolve_nccl(p) : NULL;
    if (choice) /* NCCL's tuner's choice on this platform, P and n (a sweep's run, or a run of one) */
        snprintf(p->algo, sizeof p->algo, "%s", choice);
    r->algo = algo ? algo : sp_resolve_algorithm(p->algo, e);
    if (!r->algo || node_form_needs_nodes(r->algo, p, e) != 0 || needs_switch(r->algo, p, e) != 0)
        return -1;
    if (payload_allows(r->algo, p->payload, e) != 0)
        return -1;
    const sp_algorithm *flat = r->algo->form == SP_FORM_FLAT ? r->algo : r->algo->inner;
    int ranks_in = r->algo->form == SP_FORM_FLAT ? p->ranks : p->ranks / (p->gpus_per_node > 0 ? p->gpus_per_node : 1);
    if (flat && flat != r->algo && !strcmp(flat->name, "spardl") && p->opts.spardl_teams > 1)
        return sp_error_set(e, SP_STATUS_USAGE, "%s runs SparDL inside node groups: --spardl-teams must be 1",
                            r->algo->name);
    if (flat && !strcmp(flat->name, "spardl") && ranks_in % p->opts.spardl_teams)
        return sp_error_set(e, SP_STATUS_USAGE, "--spardl-teams %d does not divide %s%d into whole teams",
                            p->opts.spardl_teams, r->algo->form == SP_FORM_FLAT ? "--ranks " : "the nodes, ", ranks_in);
    r->opts = sp_plan_algo_opts(p);
    char err[600];
    r->dev = sp_device_find(p->device);
    if (!r->dev && !(r->dev = sp_device_load(p->device, err, sizeof err)))
        return sp_error_from(e, SP_STATUS_USAGE, err);
    return 0;
}

/* the data: n and the iterations (a gradient file, or the profile), k, and
 * what exact data allows */
static int resolve_data(sp_resolved *r, sp_resolve_depth depth, sp_error *e)
{
    sp_plan *p = &r->plan;
    if (p->grad_file[0] ? open_trace(r, e) != 0 : build_profile(r, e) != 0)
        return -1;
    if (sp_layers_build(p->grad_file[0] ? r->source : NULL, r->have_profile ? &r->profile : NULL, p->n, &r->layers,
                        &r->nlayers) != 0)
        return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
    if (depth == SP_RESOLVE_RUN && (sp_disturb_any(&p->disturb) || p->disturb.compute > 0) && strcmp(sp_backend_name(), "simgrid") != 0)
        return sp_error_set(e, SP_STATUS_USAGE,
                            "disturbances and --compute are simulated: the %s backend runs real processes",
                            sp_backend_name());
    r->k = sp_plan_k(p);
    if (r->k < 1 && r->algo->cls == SP_ALGO_SPARSE)
        return sp_error_set(e, SP_STATUS_USAGE, "n x density = %g selects no entry: raise --n or --density",
                            (double)p->n * p->density);
    if (node_form_needs_k(r->algo, p, r->k, e) != 0)
        return -1;
    if (r->algo->needs_switch && p->gpus_per_node > 1) { /* nccl-nvls tags each chunk: a bounded count */
        uint64_t cf = (p->opts.nccl_chunk ? p->opts.nccl_chunk : SP_NCCL_DEFAULT_CHUNK) / 4, shard;
        shard = (p->n + (uint64_t)p->gpus_per_node - 1) / (uint64_t)p->gpus_per_node;
        double chunks = (double)p->gpus_per_node * (double)((shard + (cf ? cf : 1) - 1) / (cf ? cf : 1));
        if (chunks > SP_NVLS_MAX_CHUNKS)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--nccl-chunk %llu makes %.0f chunks of n = %llu over %d GPUs; %s takes at most %d: "
                                "raise --nccl-chunk",
                                (unsigned long long)p->opts.nccl_chunk, chunks, (unsigned long long)p->n,
                                p->gpus_per_node, r->algo->name, SP_NVLS_MAX_CHUNKS);
    }
    if (p->payload == SP_PAYLOAD_SIZE || p->payload == SP_PAYLOAD_MODEL) {
        const char *mode = p->payload == SP_PAYLOAD_SIZE ? "size" : "model";
        if (p->grad_file[0])
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--grad-file needs exact payloads (a gradient file is exact data; not --payload %s)",
                                mode);
        if (p->dump_result[0])
            return sp_error_set(e, SP_STATUS_USAGE, "--dump-result needs exact payloads (not --payload %s)", mode);
    }
    return 0;
}

/* the payload mode and the memory it takes; for a run, what this machine
 * must have (a GPU for --select cuda, the memory) */
static int resolve_payload(sp_resolved *r, const sp_plan *asked, sp_resolve_depth depth, sp_error *e)
{
    sp_plan *p = &r->plan;
    r->limit = memory_limit();
    int mode = decide_payload(p, r->algo, r->k, r->limit);
    if (payload_allows(r->algo, mode, e) != 0)
        return -1;
    p->payload = mode; /* what the run does, as summary.json says */
    r->memory = share_of_process(p, memory_needed(p, r->algo, r->k, mode));
    if (depth != SP_RESOLVE_RUN)
        return 0;
    char err[600];
    int no_gpu = p->select_dev ? sp_seldev_check(mode == SP_PAYLOAD_EXACT, sp_backend_name(), err, sizeof err) : 0;
    if (no_gpu) /* no GPU here: the run fails; a plan it cannot run: bad input */
        return sp_error_from(e, no_gpu == -2 ? SP_STATUS_FAILED : SP_STATUS_USAGE, err);
    if (mode == SP_PAYLOAD_EXACT && p->at_given)
        return sp_error_set(e, SP_STATUS_USAGE,
                            "--iters-at cannot go with exact payloads: they need every iteration computed");
    return check_memory(r, asked, e);
}

/* rail:X on a model: X on rail j sees the node's sum on shard j, stood in
 * for by a model of shard j's entries (the profile's slice: its layers
 * there) among the N nodes, with a seed of its own per rail (derived from
 * the run's, so runs repeat).  The sum of G gradients is modelled as one
 * rank's gradient: its magnitudes are the model's, scaled, not summed. */
static int rail_models(sp_resolved *r, sp_error *e)
{
    const sp_plan *p = &r->plan;
    int G = p->gpus_per_node;
    char err[600];
    if (!(r->rail_models = calloc((size_t)G, sizeof *r->rail_models)))
        return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
    for (int j = 0; j < G; j++) {
        sp_profile shard;
        if (sp_profile_slice(&shard, &r->profile, sp_shard_lo(p->n, G, j), sp_shard_lo(p->n, G, j + 1)) != 0)
            return sp_error_set(e, SP_STATUS_FAILED, "out of memory");
        r->rail_models[j] = sp_model_new(&shard, p->seed + 7919u * (uint64_t)(j + 1), p->ranks / G, p->settle,
                                         p->warmup, p->density, (sp_model_ablation)p->model_ablation, err, sizeof err);
        sp_profile_free(&shard);
        if (!r->rail_models[j])
            return sp_error_from(e, SP_STATUS_FAILED, err);
        r->nrail_models = j + 1;
    }
    return 0;
}

/* for a run: the trace read once, the generator where values are needed,
 * the model of a model workload */
static int resolve_sources(sp_resolved *r, sp_error *e)
{
    sp_plan *p = &r->plan;
    char err[600];
    if (r->source && check_trace(r, e) != 0)
        return -1;
    int exact = p->payload == SP_PAYLOAD_EXACT;
    if (p->grad_live >= 0) { /* a trainer's gradients (traces/live.c) */
        if (!(r->source = sp_live_open(p->grad_live, p->n, p->ranks, p->iters, err, sizeof err)))
            return sp_error_from(e, SP_STATUS_USAGE, err);
        return 0;
    }
    if (!r->source && (exact || p->dump_grads[0])) {
        if (check_magnitudes(p, &r->profile, e) != 0)
            return -1;
        r->source = sp_generator_source(&r->profile, p->seed, p->ranks, p->settle + p->iters, err, sizeof err);
        if (!r->source)
            return sp_error_from(e, SP_STATUS_FAILED, err);
    }
    if (p->payload == SP_PAYLOAD_MODEL && r->algo->cls == SP_ALGO_SPARSE) { /* dense algorithms never ask it */
        if (r->algo->form == SP_FORM_RAIL)
            return rail_models(r, e);
        int ranks = r->algo->form == SP_FORM_LEADER ? p->ranks / p->gpus_per_node : p->ranks;
        r->model = sp_model_new(&r->profile, p->seed, ranks, p->settle, p->warmup, p->density,
                                (sp_model_ablation)p->model_ablation, err, sizeof err);
        if (!r->model)
            return sp_error_from(e, SP_STATUS_FAILED, err);
    }
    /* a dense allreduce overlapped layer by layer needs the layers, also of a trace's workload */
    if (p->grad_file[0] && p->overlap && r->algo->cls == SP_ALGO_DENSE && sp_training_on(p) && build_profile(r, e) != 0)
        return -1;
    return 0;
}

int sp_resolve(const sp_plan *plan, const sp_algorithm *algo, sp_resolve_depth depth, sp_resolved *r, sp_error *e)
{
    memset(r, 0, sizeof *r);
    r->plan = *plan;
    e->status = SP_STATUS_OK;
    e->msg[0] = '\0';
    if (resolve_request(r, algo, e) != 0 || resolve_data(r, depth, e) != 0 || resolve_payload(r, plan, depth, e) != 0 ||
        (depth == SP_RESOLVE_RUN && resolve_sources(r, e) != 0)) {
        sp_resolved_free(r);
        return -1;
    }
    return 0;
}

void sp_resolved_free(sp_resolved *r)
{
    if (r->source)
        r->source->close(r->source);
    sp_model_free(r->model);
    for (int j = 0; j < r->nrail_models; j++)
        sp_model_free(r->rail_models[j]);
    free(r->rail_models);
    free(r->layers);
    if (r->have_profile)
        sp_profile_free(&r->profile);
    memset(r, 0, sizeof *r);
}

double sp_resolve_memory_estimate(const sp_plan *plan, double *limit)
{
    sp_resolved r;
    sp_error e;
    double need = RUN_BASE_BYTES, lim = -1;
    if (sp_resolve(plan, NULL, SP_RESOLVE_CHECK, &r, &e) == 0) {
        need = r.memory;
        lim = r.limit;
        sp_resolved_free(&r);
    } else {
        lim = memory_limit();
    }
    if (limit)
        *limit = lim;
    return need;
}
