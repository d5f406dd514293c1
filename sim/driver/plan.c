/* plan.c - the options of `sparsim run`, one row each, and the plan they make.
 *
 * A config file holds the same keys as the long flags ("ranks", "grad-file",
 * ...); flags given on the command line override it.  Every value is checked
 * by its row (options.c), with a message that names the flag and what is
 * allowed; cross-field checks follow in sp_plan_validate.
 */
#include "plan.h"
#include "resolve.h"
#include "training.h"
#include "topologies/device.h"
#include "topologies/platform.h"
#include "sim/workload/profile.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define F(field) offsetof(sp_plan, field), sizeof(((sp_plan *)0)->field)

static const sp_opt_choice network_choices[] = {{"cm02", 0}, {"lv08", 1}, {"smpi", 2}, {NULL, 0}};
static const sp_opt_choice crosstraffic_choices[] = {{"model", -1}, {"on", 1}, {"off", 0}, {NULL, 0}};
static const sp_opt_choice payload_choices[] = {{"auto", SP_PAYLOAD_AUTO},
                                                {"exact", SP_PAYLOAD_EXACT},
                                                {"size", SP_PAYLOAD_SIZE},
                                                {"model", SP_PAYLOAD_MODEL},
                                                {NULL, 0}};
static const sp_opt_choice gaussian_choices[] = {{"authors", 0}, {"oktopk", 1}, {NULL, 0}};
static const sp_opt_choice preset_choices[] = {{"vgg16", 0}, {"lstm", 1}, {"bert", 2}, {NULL, 0}};
static const sp_opt_choice balance_choices[] = {{"on", 1}, {"off", 0}, {"preset", -1}, {NULL, 0}};
static const sp_opt_choice packing_choices[] = {{"pairs", 0}, {"separate", 1}, {NULL, 0}};
static const sp_opt_choice ablation_choices[] = {{"none", 0}, {"uniform", 1}, {"disjoint", 2}, {NULL, 0}};
static const sp_opt_choice quantile_choices[] = {{"authors", 0}, {"exact", 1}, {NULL, 0}};
static const sp_opt_choice noise_choices[] = {{"periodic", SP_NOISE_PERIODIC}, {"random", SP_NOISE_RANDOM}, {NULL, 0}};
static const sp_opt_choice train_choices[] = {{"none", 0},     {"vgg16", 1},    {"lstm", 2},     {"bert", 3},
                                              {"resnet20", 4}, {"alexnet", 5},  {"resnet50", 6}, {"lstm-ptb", 7},
                                              {NULL, 0}};
static const sp_opt_choice select_choices[] = {{"cpu", 0}, {"cuda", 1}, {NULL, 0}};
static const sp_opt_choice bg_choices[] = {{"uniform", SP_BG_UNIFORM}, {"shift", SP_BG_SHIFT}, {NULL, 0}};

#define MAXI 1e6
#define U64MAX 1.8446744073709552e19

static const sp_opt run_options[] = {
    {"algo", SP_OT_STRING, F(algo), 0, 0, "all", NULL, SP_OPT_LIST, "NAME", NULL,
     "algorithm: ring, recdoubling, rabenseifner, topka, gtopk, gaussiank, topkdsa, oktopk; a comma list; or "
     "'all' for every one",
     NULL, NULL},
    {"ranks", SP_OT_INT, F(ranks), 1, SP_MAX_RANKS, "64", NULL, SP_OPT_LIST, "P", NULL, "number of ranks", NULL,
     NULL},
    {"platform", SP_OT_STRING, F(platform), 0, 0, "1gbe", NULL, SP_OPT_LIST, "NAME",
     NULL,
     "1gbe (1 Gbps Ethernet crossbar), 1gbe-switch[:G] (the same behind a G Gbps backplane), daint (Piz Daint's "
     "Cray Aries dragonfly, wired as Aries is, traffic between groups spread over their global links, up to 7680 "
     "ranks), daint-static (the same wiring, one global link per pair of nodes), daint-simgrid (SimGrid's own "
     "dragonfly with "
     "Daint's sizes, the earlier daint, up to 6144 ranks), or a SimGrid platform XML file (rank i on its i-th host)",
     NULL, NULL},
    {"network", SP_OT_CHOICE, F(network), 0, 0, "lv08", network_choices, 0, "MODEL", NULL,
     "cm02 (pure alpha-beta with max-min sharing: matches the closed forms), lv08 (SimGrid's default "
     "TCP-calibrated model), smpi (piecewise MPI model)",
     NULL, NULL},
    {"crosstraffic", SP_OT_CHOICE, F(crosstraffic), 0, 0, "model", crosstraffic_choices, 0, "MODE", NULL,
     "whether a flow also loads the reverse direction of its links, as TCP's acknowledgements do: model (what "
     "--network implies: on for lv08 and smpi, off for cm02), on, or off. Off suits networks that are not TCP, "
     "such as daint's Aries, and makes large runs there many times faster to simulate (bench/README.md, section 9)",
     NULL, NULL},
    {"unshared-below", SP_OT_U64, F(unshared_below), 0, 1099511627776.0, "0", NULL, SP_OPT_SUFFIX, "BYTES", NULL,
     "messages smaller than BYTES skip SimGrid's bandwidth sharing: each takes the time it would take alone on its "
     "route (the network model's latency and bandwidth with its factors) and its send completes at once, as an "
     "eager MPI send; 0 (the default) shares every message. For P^2 small messages at thousands of ranks, where "
     "re-solving the sharing at every message's start and end is most of the run (bench/README.md, section 13); "
     "K, M suffixes",
     NULL, NULL},
    {"device", SP_OT_STRING, F(device), 0, 0, "none", NULL, 0, "NAME", NULL,
     "device profile for local kernels: none (local compute is free), p100, p102, v100, a100, h100, h200, or a JSON "
     "file (sparsim-mpi calibrate writes one)",
     NULL, NULL},
    {"n", SP_OT_U64, F(n), 1, 2147483647.0, "1M", NULL, SP_OPT_SUFFIX | SP_OPT_LIST, "N",
     "an integer in 1..2^31-1 (int32 indices)", "gradient length in floats; K, M, G suffixes are powers of 1024",
     NULL, NULL},
    {"density", SP_OT_DOUBLE, F(density), 0, 1, "0.01", NULL, SP_OPT_OPEN_MIN | SP_OPT_LIST, "D", NULL,
     "fraction of entries a sparse algorithm selects; k = floor(n * D)", NULL, NULL},
    {"iters", SP_OT_INT, F(iters), 1, MAXI, "1", NULL, 0, "I", NULL, "iterations, with error feedback between them",
     NULL, NULL},
    {"iters-at", SP_OT_STRING, F(iters_at), 0, 0, "", NULL, 0, "LIST", NULL,
     "simulate only these training iterations of a long run, e.g. 0,1,64,127 or 0-3,1000 (increasing); the state "
     "between them (residual, thresholds) comes from the model, so it needs --payload model for sparse algorithms",
     NULL, NULL},
    {"seed", SP_OT_U64, F(seed), 0, U64MAX, "1", NULL, 0, "S", "a non-negative integer",
     "seed of every random stream", NULL, NULL},
    {"out", SP_OT_STRING, F(out), 0, 0, "sparsim-out", NULL, SP_OPT_NO_ECHO, "DIR", NULL, "output folder", NULL,
     NULL},
    {"grad-file", SP_OT_STRING, F(grad_file), 0, 0, "", NULL, 0, "F", NULL,
     "gradients from a .npy of float32, shape (P, n) for one iteration or (I, P, n); sets n", NULL, NULL},
    {"dump-result", SP_OT_STRING, F(dump_result), 0, 0, "", NULL, SP_OPT_NO_ECHO, "F", NULL,
     "write the last iteration's global result (float32, (n,))", NULL, NULL},
    {"payload", SP_OT_CHOICE, F(payload), 0, 0, "auto", payload_choices, 0, "MODE", NULL,
     "exact (real vectors, real values travel; results checked), model (no vector of length n: a statistical "
     "model of the workload says what each rank selects, where it lies and how selections overlap; for paper "
     "scale), size (only sizes travel: algorithms whose sizes do not depend on data), auto (exact when it fits in "
     "memory, else model)",
     NULL, NULL},
    {"warmup", SP_OT_INT, F(warmup), 0, MAXI, "0", NULL, 0, "W", "a non-negative integer",
     "run the first W iterations as dense ring allreduce (as the reference codes warm up)", NULL, NULL},
    {"gaussian-variant", SP_OT_CHOICE, F(opts.gaussian_oktopk), 0, 0, "authors", gaussian_choices, 0, NULL, NULL,
     "Gaussian-k threshold adjustment: the Gaussian-k authors' loop (x0.5 / x1.5, 3 passes, band [2k/3, 4k/3]) or "
     "the Ok-Topk authors' (x/÷1.02, 20 passes, band [3k/4, 5k/4])",
     NULL, NULL},
    {"dsa-dense-at", SP_OT_DOUBLE, F(opts.dsa_dense_at), 0, 1, "0.3333333333333333", NULL, SP_OPT_OPEN_MIN, "F",
     "a fraction in (0, 1]",
     "TopkDSA all-gathers densely once the reduced non-zeros reach F x n (1/3 as in Ok-Topk's TopkDSA code)", NULL,
     "1/3"},
    {"bucket", SP_OT_INT, F(opts.bucket), 0, MAXI, "0", NULL, 0, "B", "a non-negative integer (0: min(4, P))",
     "steps per bucket of destination-rotation exchanges; 0 is min(4, P), the authors' rule", NULL, NULL},
    {"oktopk-preset", SP_OT_CHOICE, F(opts.oktopk_preset), 0, 0, "bert", preset_choices, 0, NULL, NULL,
     "the authors' settings per model: density (0.02, 0.02, 0.01) and warm-up (512, 128, 0) unless given, tau' "
     "(32, 32, 128), feedback factors, balancing (off, off, on); when not given, bert's factors without changing "
     "density or warm-up",
     "Ok-Topk", NULL},
    {"tau", SP_OT_INT, F(opts.tau), 1, MAXI, "64", NULL, 0, "N", "a positive integer",
     "iterations between space repartitions", NULL, NULL},
    {"tau-prime", SP_OT_INT, F(opts.tau_prime), 1, MAXI, NULL, NULL, 0, "N", "a positive integer",
     "iterations between exact threshold recomputations", NULL, "the preset's"},
    {"balance", SP_OT_CHOICE, F(opts.balance), 0, 0, "preset", balance_choices, 0, NULL, NULL,
     "data balancing before the allgatherv", NULL, NULL},
    {"quantiles", SP_OT_CHOICE, F(opts.exact_quantiles), 0, 0, "authors", quantile_choices, 0, NULL, NULL,
     "region boundaries at positions i*floor(m/P) of each rank's sorted selection (the authors' code: the last "
     "region gets the remainder) or at floor(i*m/P)",
     NULL, NULL},
    {"packing", SP_OT_CHOICE, F(opts.separate), 0, 0, "pairs", packing_choices, 0, NULL, NULL,
     "one message of (index, value) pairs per peer, or the authors' separate index and value messages", NULL,
     NULL},
    {"workload", SP_OT_STRING, F(workload), 0, 0, "generic", NULL, 0, "NAME",
     NULL,
     "the gradients' profile: generic, the papers' models vgg16, lstm, bert, resnet20, alexnet, resnet50, lstm-ptb "
     "(their real layer tables), or a "
     "profile JSON file (sparsim profile writes one); scaled to --n when it differs",
     "gradients (sim/workload/profile.h documents the model)", NULL},
    {"grad-layers", SP_OT_INT, F(grad_layers), 1, 4096, "16", NULL, 0, "L", NULL,
     "generic profile: layers, of sizes spread over three decades", NULL, NULL},
    {"grad-spread", SP_OT_DOUBLE, F(grad_spread), 1, 1e6, "10", NULL, 0, "S", NULL,
     "generic profile: layer scales log-uniform in [1/S, S]", NULL, NULL},
    {"grad-tail", SP_OT_DOUBLE, F(grad_tail), 0, 3, NULL, NULL, 0, "T", NULL,
     "spread of log10 scales within every layer (heavy tails within a layer)", NULL, "the profile's"},
    {"grad-zeros", SP_OT_DOUBLE, F(grad_zeros), 0, 0.999, NULL, NULL, 0, "F", NULL,
     "fraction of entries exactly zero in every layer", NULL, "the profile's"},
    {"grad-shared", SP_OT_DOUBLE, F(grad_shared), 0, 0.999, NULL, NULL, 0, "F", NULL,
     "variance fraction shared by all ranks in an iteration", NULL, "the profile's"},
    {"grad-mean", SP_OT_DOUBLE, F(grad_mean), 0, 0.999, NULL, NULL, 0, "F", NULL,
     "variance fraction of a per-coordinate direction that persists across iterations and ranks (a "
     "gradient's cosine with the previous one)",
     NULL, "the profile's"},
    {"grad-refresh", SP_OT_DOUBLE, F(grad_refresh), 0, 1e9, NULL, NULL, 0, "R", NULL,
     "iterations over which a coordinate's scale is redrawn (0: never)", NULL, "the profile's"},
    {"grad-persistence", SP_OT_DOUBLE, F(grad_persistence), 0, 1, NULL, NULL, 0, "F", NULL,
     "share of a coordinate's log-scale variance that survives a redraw", NULL, "the profile's"},
    {"grad-spikes", SP_OT_DOUBLE, F(grad_spikes), 0, 0.5, NULL, NULL, 0, "F", NULL,
     "probability that a rank's own noise is a spike (heavy tails of per-sample noise)", NULL, "the profile's"},
    {"grad-spike-scale", SP_OT_DOUBLE, F(grad_spike_scale), 1, 100, NULL, NULL, 0, "K", NULL,
     "a spike's standard deviation over the other draws'", NULL, "the profile's"},
    {"grad-scale-sd", SP_OT_DOUBLE, F(grad_scale_sd), 0, 3, NULL, NULL, 0, "S", NULL,
     "standard deviation of the log of the overall scale over iterations", NULL, "the profile's"},
    {"grad-scale-corr", SP_OT_DOUBLE, F(grad_scale_corr), 0, 0.999, NULL, NULL, 0, "R", NULL,
     "correlation of the log overall scale from one iteration to the next", NULL, "the profile's"},
    {"settle", SP_OT_INT, F(settle), 0, MAXI, "0", NULL, 0, "N", "a non-negative integer",
     "start from a settled residual: N iterations of local error feedback (each rank consumes its exact top-k) "
     "before the first simulated one, which then uses iteration N's gradient",
     NULL, NULL},
    {"model-ablation", SP_OT_CHOICE, F(model_ablation), 0, 0, "none", ablation_choices, 0, NULL, NULL,
     "for checking the model: leave out where large entries sit (uniform: selections spread evenly over the index "
     "space) or the overlap of the ranks' selections (disjoint); --payload model only",
     NULL, NULL},
    {"dump-grads", SP_OT_STRING, F(dump_grads), 0, 0, "", NULL, SP_OPT_NO_ECHO, "F", NULL,
     "write every gradient the run used as float32 .npy of shape (I, P, n)", NULL, NULL},
    /* whole training iterations (training.c) */
    {"train-model", SP_OT_CHOICE, F(train_model), 0, 0, "none", train_choices, 0, NULL, NULL,
     "report whole training iterations of this model: its forward and backward compute on --device (FLOPs per "
     "sample x --batch over the device's sustained FLOP/s; sources in sim/workload/paper_models.c) added to the "
     "simulated allreduce, as iteration time, samples/s and speedup over the fastest dense allreduce run alongside",
     "training iterations", NULL},
    {"train-compute", SP_OT_DOUBLE, F(train_compute), 0, 1e6, "0", NULL, 0, "S", NULL,
     "seconds of forward + backward per iteration on one rank, instead of the model's FLOPs on the device (a "
     "measured number); turns training iterations on (with --batch when no --train-model)",
     NULL, "from --train-model and --device"},
    {"batch", SP_OT_INT, F(batch), 0, MAXI, "0", NULL, 0, "B", "a non-negative integer",
     "samples per rank per iteration (throughput = P x B / iteration time)", NULL, "the model's"},
    {"overlap", SP_OT_BOOL, F(overlap), 0, 0, "false", NULL, 0, NULL, NULL,
     "overlap communication with the backward pass layer by layer where the algorithm allows it (dense "
     "allreduces; a sparse one selects over the whole gradient after backward)",
     NULL, NULL},
    /* disturbances (sim/shim/disturb.h): each at its zero level by default */
    {"compute", SP_OT_DOUBLE, F(disturb.compute), 0, 1e6, "0", NULL, 0, "S", NULL,
     "seconds of local compute (a backward pass) every rank does at the start of each iteration, in a phase of its "
     "own, before the allreduce; stragglers and noise act on it as on the device's kernels",
     "disturbances (simulated backends; seeded by --seed)", NULL},
    {"straggler-ranks", SP_OT_STRING, F(disturb.straggler_ranks), 0, 0, "", NULL, 0, "LIST", NULL,
     "ranks whose local compute is --straggler-factor times slower, e.g. 3 or 0,5,7", NULL, NULL},
    {"straggler-fraction", SP_OT_DOUBLE, F(disturb.straggler_fraction), 0, 1, "0", NULL, 0, "F", NULL,
     "a fraction of the ranks, drawn afresh every iteration, is --straggler-factor times slower", NULL, NULL},
    {"straggler-factor", SP_OT_DOUBLE, F(disturb.straggler_factor), 1, 1e6, "2", NULL, 0, "X", NULL,
     "how much slower a straggler's local compute is (1: not at all)", NULL, NULL},
    {"straggler-cv", SP_OT_DOUBLE, F(disturb.straggler_cv), 0, 100, "0", NULL, 0, "C", NULL,
     "every rank's local compute in every iteration slowed by a log-normal factor of mean 1 and this coefficient of "
     "variation (stragglers need local compute to slow: a device profile or --compute)",
     NULL, NULL},
    {"noise", SP_OT_DOUBLE, F(disturb.noise), 0, 0.9, "0", NULL, 0, "F", NULL,
     "system noise: detours take this fraction of every rank's time; a detour stretches compute it overlaps, holds "
     "a send about to be posted and holds a rank whose wait ends inside it",
     NULL, NULL},
    {"noise-length", SP_OT_DOUBLE, F(disturb.noise_length), 0, 1e3, "0.0001", NULL, SP_OPT_OPEN_MIN, "S",
     "a positive number of seconds", "seconds per detour", NULL, "100 us"},
    {"noise-kind", SP_OT_CHOICE, F(disturb.noise_kind), 0, 0, "periodic", noise_choices, 0, NULL, NULL,
     "periodic detours (a daemon's tick, each rank at its own offset) or random ones (exponential gaps)", NULL, NULL},
    {"degrade-links", SP_OT_STRING, F(disturb.degrade_links), 0, 0, "", NULL, 0, "CLASS", NULL,
     "links to degrade: nic (every rank's host link), green, black, blue (the dragonfly's links within a chassis, "
     "between chassis, between groups), all, or the name of a link (or the start of names)",
     NULL, NULL},
    {"degrade-nic", SP_OT_INT, F(disturb.degrade_nic), -1, SP_MAX_RANKS, "-1", NULL, 0, "R",
     "a rank, or -1 (none)", "degrade the link by which rank R's host reaches the network", NULL, "none"},
    {"degrade-fraction", SP_OT_DOUBLE, F(disturb.degrade_fraction), 0, 1, "1", NULL, SP_OPT_OPEN_MIN, "F", NULL,
     "degrade this fraction of the --degrade-links class, drawn with the seed", NULL, NULL},
    {"degrade-count", SP_OT_INT, F(disturb.degrade_count), 0, 1e6, "0", NULL, 0, "N", NULL,
     "degrade N links of the --degrade-links class, drawn with the seed (0: as --degrade-fraction says)", NULL,
     NULL},
    {"degrade-bw", SP_OT_DOUBLE, F(disturb.degrade_bw), 0, 1, "1", NULL, SP_OPT_OPEN_MIN, "X", NULL,
     "a degraded link's bandwidth, as a factor of its own", NULL, NULL},
    {"degrade-latency", SP_OT_DOUBLE, F(disturb.degrade_latency), 0, 1e3, "0", NULL, 0, "S", NULL,
     "seconds of latency a degraded link adds", NULL, NULL},
    {"bg-load", SP_OT_DOUBLE, F(disturb.bg_load), 0, 0.99, "0", NULL, 0, "L", NULL,
     "background traffic: other jobs' flows from every host of the platform at this share of its injection "
     "bandwidth (Poisson arrivals), sharing links with the run",
     NULL, NULL},
    {"bg-pattern", SP_OT_CHOICE, F(disturb.bg_pattern), 0, 0, "uniform", bg_choices, 0, NULL, NULL,
     "where background flows go: a uniform random other host, or the host half the machine away", NULL, NULL},
    {"bg-flow", SP_OT_U64, F(disturb.bg_flow), 1, 1099511627776.0, "1M", NULL, SP_OPT_SUFFIX, "B", NULL,
     "bytes per background flow; K, M, G suffixes", NULL, NULL},
    {"fail-rank", SP_OT_INT, F(disturb.fail_rank), -1, SP_MAX_RANKS, "-1", NULL, 0, "R", "a rank, or -1 (none)",
     "rank R stops at --fail-at: the run ends with one line naming it, where it was and the ranks left waiting on "
     "it, and writes nothing",
     NULL, "none"},
    {"fail-at", SP_OT_DOUBLE, F(disturb.fail_at), 0, 1e9, "0", NULL, 0, "S", NULL,
     "simulated seconds at which --fail-rank stops", NULL, NULL},
    {"disturb-baseline", SP_OT_BOOL, F(disturb.baseline), 0, 0, "true", NULL, SP_OPT_NO_ECHO, NULL, NULL,
     "do not run the plan undisturbed (same seed) too: no slowdowns in summary.json", NULL, NULL},
    {"csv", SP_OT_BOOL, F(write_csv), 0, 0, "true", NULL, SP_OPT_NO_ECHO, NULL, NULL, "do not write messages.csv",
     "outputs", NULL},
    {"trace", SP_OT_BOOL, F(write_trace), 0, 0, "true", NULL, SP_OPT_NO_ECHO, NULL, NULL, "do not write trace.json",
     NULL, NULL},
    {"trace-msgs", SP_OT_U64, F(trace_msgs), 0, U64MAX, "200000", NULL, SP_OPT_SUFFIX | SP_OPT_NO_ECHO, "N",
     "a non-negative integer", "at most N message events in trace.json", NULL, NULL},
    {"quiet", SP_OT_BOOL, F(quiet), 0, 0, "false", NULL, SP_OPT_NO_ECHO, NULL, NULL, "no summary on stdout", NULL,
     NULL},
    {"watchdog", SP_OT_DOUBLE, F(watchdog), 0, 1e9, "60", NULL, SP_OPT_OPEN_MIN | SP_OPT_NO_ECHO, "S",
     "a positive number of seconds",
     "sparsim-mpi only: end the job when a wait makes no progress for S seconds", NULL, NULL},
    {"select", SP_OT_CHOICE, F(select_dev), 0, 0, "cpu", select_choices, SP_OPT_NO_ECHO, NULL, NULL,
     "sparsim-mpi only: where the selection kernels run: cpu, or cuda (each rank's residual on a GPU, rank modulo "
     "the GPUs; only selected pairs come to the host, in a phase gpu-copy)",
     NULL, NULL},
    {"config", SP_OT_STRING, F(config), 0, 0, "", NULL, SP_OPT_NO_ECHO | SP_OPT_CLI_ONLY, "FILE", NULL,
     "read options from a JSON object first (keys: the names above)", NULL, NULL},
};

_Static_assert(sizeof run_options / sizeof run_options[0] <= SP_PLAN_MAX_OPTS, "sp_plan.given is too small");

const sp_opt_table *sp_plan_options(void)
{
    static const sp_opt_table t = SP_OPT_TABLE(run_options);
    return &t;
}

void sp_plan_defaults(sp_plan *p)
{
    memset(p, 0, sizeof *p);
    sp_opts_defaults(sp_plan_options(), p);
}

int sp_plan_set(sp_plan *p, const char *name, const char *value, char *err, size_t errlen)
{
    int rc = sp_opts_set(sp_plan_options(), p, p->given, name, value, err, errlen);
    if (rc == 1)
        snprintf(err, errlen, "unknown option '--%s' (see --help)", name);
    return rc ? -1 : 0;
}

int sp_plan_given(const sp_plan *p, const char *name)
{
    int i = sp_opts_index(sp_plan_options(), name);
    return i >= 0 && p->given[i];
}

int sp_plan_parse(sp_plan *p, int argc, char **argv, char *err, size_t errlen)
{
    /* pass 1: --help and --config */
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
        if (strcmp(argv[i], "--config") == 0 || strncmp(argv[i], "--config=", 9) == 0) {
            const char *path = argv[i][8] == '=' ? argv[i] + 9 : (i + 1 < argc ? argv[i + 1] : NULL);
            if (!path) {
                snprintf(err, errlen, "--config needs a value");
                return -1;
            }
            cJSON *j = sp_opts_read_config(path, err, errlen);
            if (!j)
                return -1;
            int rc = sp_opts_apply_json(sp_plan_options(), p, p->given, j, 0, path, err, errlen);
            cJSON_Delete(j);
            if (rc)
                return -1;
        }
    }
    /* pass 2: flags override */
    return sp_opts_parse_argv(sp_plan_options(), p, p->given, argc, argv, NULL, NULL, err, errlen);
}

int sp_plan_algorithms(const sp_plan *p, char names[][64], int max)
{
    int count = 0;
    if (strcmp(p->algo, "all") == 0) {
        int n;
        const sp_algorithm *a = sp_algorithm_list(&n);
        for (int i = 0; i < n && count < max; i++)
            snprintf(names[count++], 64, "%s", a[i].name);
        return count;
    }
    char buf[sizeof p->algo];
    snprintf(buf, sizeof buf, "%s", p->algo);
    char *save = NULL;
    for (char *s = strtok_r(buf, ",", &save); s && count < max; s = strtok_r(NULL, ",", &save))
        snprintf(names[count++], 64, "%.63s", s);
    return count;
}

int sp_plan_iter_index(const sp_plan *p, int slot) { return p->at_given ? p->at[slot] : slot; }

/* --iters-at: comma-separated iterations or ranges a-b, strictly increasing */
static int parse_iters_at(sp_plan *p, char *err, size_t errlen)
{
    char shown[120];
    const char *s = p->iters_at;
    int count = 0;
    long last = -1;
    while (*s) {
        char *end;
        errno = 0;
        long a = strtol(s, &end, 10), b;
        if (end == s || a < 0 || errno)
            goto bad;
        b = a;
        if (*end == '-') {
            const char *t = end + 1;
            b = strtol(t, &end, 10);
            if (end == t || b < a || errno)
                goto bad;
        }
        if (*end != ',' && *end != '\0')
            goto bad;
        if (a <= last) {
            snprintf(err, errlen, "--iters-at: iterations must increase (%ld comes after %ld)", a, last);
            return -1;
        }
        if (b > INT_MAX - 1 || b - a + 1 > SP_PLAN_MAX_AT - count) {
            snprintf(err, errlen, "--iters-at: at most %d iterations, each below %d", SP_PLAN_MAX_AT, INT_MAX);
            return -1;
        }
        for (long v = a; v <= b; v++)
            p->at[count++] = (int)v;
        last = b;
        s = *end ? end + 1 : end;
        if (*end == ',' && !*s)
            goto bad;
    }
    if (count == 0)
        goto bad;
    p->iters = count;
    p->at_given = 1;
    return 0;
bad:
    snprintf(err, errlen, "--iters-at: '%s' is not a list of iterations (e.g. 0,1,64,127 or 0-3,1000)",
             sp_opts_printable(p->iters_at, shown, sizeof shown));
    return -1;
}

uint64_t sp_plan_k(const sp_plan *p) { return (uint64_t)floor((double)p->n * p->density); }

sp_algo_opts sp_plan_algo_opts(const sp_plan *p)
{
    sp_algo_opts o = p->opts;
    const sp_oktopk_preset *pre = sp_oktopk_preset_at(o.oktopk_preset);
    if (o.tau_prime <= 0)
        o.tau_prime = pre->tau_prime;
    if (o.balance < 0)
        o.balance = pre->balance;
    return o;
}

int sp_plan_profile(const sp_plan *p, sp_profile *out, char *err, size_t errlen)
{
    sp_profile_knobs k = {p->grad_layers, p->grad_spread, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    if (sp_plan_given(p, "grad-tail"))
        k.tail = p->grad_tail;
    if (sp_plan_given(p, "grad-zeros"))
        k.zeros = p->grad_zeros;
    if (sp_plan_given(p, "grad-shared"))
        k.common = p->grad_shared;
    if (sp_plan_given(p, "grad-mean"))
        k.mean = p->grad_mean;
    if (sp_plan_given(p, "grad-spikes"))
        k.spikes = p->grad_spikes;
    if (sp_plan_given(p, "grad-spike-scale"))
        k.spike_scale = p->grad_spike_scale;
    if (sp_plan_given(p, "grad-scale-sd"))
        k.scale_sd = p->grad_scale_sd;
    if (sp_plan_given(p, "grad-scale-corr"))
        k.scale_corr = p->grad_scale_corr;
    if (sp_plan_given(p, "grad-refresh"))
        k.refresh = p->grad_refresh;
    if (sp_plan_given(p, "grad-persistence"))
        k.keep = p->grad_persistence;
    /* a profile with an n of its own (the papers' models) keeps it unless --n is given */
    uint64_t n = sp_plan_given(p, "n") || !strcmp(p->workload, "generic") ? p->n : 0;
    return sp_profile_get(p->workload, n, p->seed, &k, out, err, errlen);
}

cJSON *sp_plan_echo(const sp_plan *p, const sp_profile *prof)
{
    sp_plan q = *p;
    q.opts = sp_plan_algo_opts(p); /* what the run used */
    cJSON *o = sp_opts_echo(sp_plan_options(), &q);
    /* the workload's knobs as the run used them: the profile's own values
     * where no flag overrode them; per-layer ones only when given */
    static const char *const per_layer[] = {"grad-tail", "grad-zeros"};
    static const char *const generic_only[] = {"grad-layers", "grad-spread"};
    for (size_t i = 0; i < 2; i++) {
        if (!sp_plan_given(p, per_layer[i]) || p->grad_file[0])
            cJSON_DeleteItemFromObjectCaseSensitive(o, per_layer[i]);
        if (strcmp(p->workload, "generic") != 0 || p->grad_file[0])
            cJSON_DeleteItemFromObjectCaseSensitive(o, generic_only[i]);
    }
    if (p->grad_file[0] || !prof) {
        static const char *const knobs[] = {"grad-shared", "grad-mean", "grad-refresh", "grad-persistence",
                                            "grad-spikes", "grad-spike-scale", "grad-scale-sd", "grad-scale-corr"};
        for (size_t i = 0; i < sizeof knobs / sizeof knobs[0]; i++)
            cJSON_DeleteItemFromObjectCaseSensitive(o, knobs[i]);
        return o;
    }
    const struct {
        const char *name;
        double v;
    } eff[] = {{"grad-shared", prof->common},   {"grad-mean", prof->mean},
               {"grad-refresh", prof->refresh}, {"grad-persistence", prof->keep},
               {"grad-spikes", prof->spikes},   {"grad-spike-scale", prof->spike_scale},
               {"grad-scale-sd", prof->scale_sd}, {"grad-scale-corr", prof->scale_corr}};
    for (size_t i = 0; i < sizeof eff / sizeof eff[0]; i++)
        cJSON_ReplaceItemInObjectCaseSensitive(o, eff[i].name, cJSON_CreateNumber(eff[i].v));
    cJSON *w = cJSON_AddObjectToObject(o, "workload-profile");
    if (w) {
        cJSON_AddStringToObject(w, "name", prof->name);
        cJSON_AddStringToObject(w, "source", prof->source);
        cJSON_AddNumberToObject(w, "layers", prof->nlayers);
    }
    return o;
}

static int plan_validate(sp_plan *p, sp_error *e)
{
    char err[600];
    if (sp_plan_given(p, "oktopk-preset")) { /* a named preset brings its density and warm-up, unless given */
        const sp_oktopk_preset *pre = sp_oktopk_preset_at(p->opts.oktopk_preset);
        if (!sp_plan_given(p, "density"))
            p->density = pre->density;
        if (!sp_plan_given(p, "warmup"))
            p->warmup = pre->warmup;
    }
    char names[32][64];
    int count = sp_plan_algorithms(p, names, 32);
    if (count == 0)
        return sp_error_set(e, SP_STATUS_USAGE, "--algo names no algorithm");
    const sp_algorithm *algos[32];
    for (int i = 0; i < count; i++)
        if (!(algos[i] = sp_resolve_algorithm(names[i], e)))
            return -1;
    /* a built-in platform is made for P ranks (daint and daint-simgrid have
     * a largest P); a file is read for what SimGrid would abort or crash on */
    sp_platform plat;
    if (sp_platform_prepare(p->platform, p->ranks, &plat, err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    sp_platform_release(&plat);
    if (!p->out[0])
        return sp_error_set(e, SP_STATUS_USAGE, "--out must name a folder");
    p->at_given = 0;
    if (sp_plan_given(p, "iters-at")) {
        if (sp_plan_given(p, "iters"))
            return sp_error_set(e, SP_STATUS_USAGE, "--iters and --iters-at both say which iterations run: give one");
        if (parse_iters_at(p, err, sizeof err) != 0)
            return sp_error_from(e, SP_STATUS_USAGE, err);
        const char *why = p->grad_file[0]      ? "--grad-file"
                          : p->dump_grads[0]   ? "--dump-grads"
                          : p->dump_result[0]  ? "--dump-result"
                          : p->payload == SP_PAYLOAD_EXACT ? "--payload exact"
                                                           : NULL;
        if (why)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--iters-at cannot go with %s: exact data needs every iteration computed (use --iters)",
                                why);
    }
    const sp_device *dev = NULL;
    for (int i = 0; i < count; i++) {
        sp_resolved r;
        if (sp_resolve(p, algos[i], SP_RESOLVE_CHECK, &r, e) != 0)
            return -1;
        if (!p->grad_file[0])
            p->n = r.plan.n; /* the workload's own n where it has one */
        dev = r.dev;
        sp_resolved_free(&r);
    }
    if (p->unshared_below > 0) {
        const sp_disturb_opts *d = &p->disturb;
        const char *what = sp_disturb_links_on(d)        ? "degraded links"
                           : sp_disturb_background_on(d) ? "background traffic"
                           : sp_disturb_failure_on(d)    ? "a failed rank"
                                                         : NULL;
        if (what)
            return sp_error_set(e, SP_STATUS_USAGE,
                                "--unshared-below cannot go with %s: messages that skip the links' sharing would "
                                "not feel it",
                                what);
    }
    if (sp_training_validate(p, dev, err, sizeof err) != 0 ||
        sp_disturb_check(&p->disturb, p->ranks, p->platform, strcmp(p->device, "none") != 0 || p->disturb.compute > 0,
                         err, sizeof err) != 0)
        return sp_error_from(e, SP_STATUS_USAGE, err);
    return 0;
}

/* The plan-wide checks, then every algorithm of the list resolved
 * (resolve.c) as its run will resolve it, before the first one runs. */
int sp_plan_validate(sp_plan *p, char *err, size_t errlen)
{
    sp_error e = {0, ""};
    int rc = plan_validate(p, &e);
    if (rc != 0)
        snprintf(err, errlen, "%s", e.msg);
    return rc;
}

void sp_plan_print_help(const char *prog, FILE *f)
{
    fprintf(f,
            "usage: %s run [options]\n"
            "\n"
            "Simulates P ranks running one allreduce algorithm (or several, one after\n"
            "the other) and writes what every message did.\n"
            "\n"
            "options (a JSON --config file takes the same names as keys; flags override it):\n",
            prog);
    sp_opts_help(sp_plan_options(), f);
    fprintf(f, "  -h, --help        this help\n"
               "\n"
               "outputs in DIR (per algorithm in DIR/NAME when several run):\n"
               "  messages.csv   iter,phase,src,dst,tag,bytes,t_post,t_done (seconds)\n"
               "  summary.json   configuration, time per iteration and phase, bytes per rank,\n"
               "                 volume as the bounds count it, bound and ratio\n"
               "  trace.json     Chrome trace event format: open in https://ui.perfetto.dev\n"
               "\n"
               "exit status: 0 success, 1 the run failed, 2 bad input\n");
}
