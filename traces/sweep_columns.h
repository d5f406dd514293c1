/* sweep_columns.h - the columns of a sweep CSV (sparsim sweep --out), declared
 * once: the writer (sim/commands/sweep.c), --resume, `sparsim merge` and
 * `sparsim analyze` all name them through this table, so a column cannot
 * drift between them.
 *
 * One row per column, in the file's order: its id (SP_SC_<ID>), its name in
 * the header, its type, how a value is written (a printf conversion of one
 * double, or "%s": text, quoted as RFC 4180 says when it must be) and what it
 * means.  Times in seconds, bytes per rank.  A figure the run did not produce
 * (a failed run, no training iterations, no disturbance) is an empty field.
 * Adding a column changes the header, so --resume refuses the CSVs of
 * earlier versions (merge and analyze find columns by name).  The columns
 * measured on the machine rather than simulated, which differ between two
 * runs of the same settings, are those whose names hold "wall", and
 * peak_rss_bytes. */
#ifndef SPARSIM_SWEEP_COLUMNS_H
#define SPARSIM_SWEEP_COLUMNS_H

#define SP_SWEEP_COLUMNS(X)                                                                                       \
    X(ALGO, "algo", SP_SC_TEXT, "%s", "the algorithm, as the registry names it")                                    \
    X(RANKS, "ranks", SP_SC_NUMBER, "%.0f", "P, the number of ranks")                                              \
    X(N, "n", SP_SC_NUMBER, "%.0f", "the gradient's length (entries)")                                             \
    X(DENSITY, "density", SP_SC_NUMBER, "%.10g", "k / n as given")                                                 \
    X(K, "k", SP_SC_NUMBER, "%.0f", "entries each rank selects")                                                    \
    X(PLATFORM, "platform", SP_SC_TEXT, "%s", "the platform's name or file")                                        \
    X(NETWORK, "network", SP_SC_TEXT, "%s", "SimGrid's network model")                                              \
    X(DEVICE, "device", SP_SC_TEXT, "%s", "the device profile's name or file")                                      \
    X(ITERS, "iters", SP_SC_NUMBER, "%.0f", "iterations of the run")                                               \
    X(PAYLOAD, "payload", SP_SC_TEXT, "%s", "the payload mode the run used (- when it failed)")                     \
    X(TIME_MEAN, "time_per_iter_mean_s", SP_SC_NUMBER, "%.9g", "time per iteration, mean over iterations (s)")     \
    X(TIME_MAX, "time_per_iter_max_s", SP_SC_NUMBER, "%.9g", "time per iteration, the largest (s)")               \
    X(SENT_MEAN, "sent_bytes_mean", SP_SC_NUMBER, "%.0f", "bytes sent per rank per iteration, mean over ranks")    \
    X(SENT_MAX, "sent_bytes_max", SP_SC_NUMBER, "%.0f", "bytes sent per iteration by the busiest rank")           \
    X(RECV_MEAN, "recv_bytes_mean", SP_SC_NUMBER, "%.0f", "bytes received per rank per iteration, mean")           \
    X(RECV_MAX, "recv_bytes_max", SP_SC_NUMBER, "%.0f", "bytes received per iteration by the busiest rank")       \
    X(VOLUME, "volume_bytes", SP_SC_NUMBER, "%.0f", "volume per iteration as the bounds count it (bytes)")         \
    X(BOUND_FORMULA, "bound_formula", SP_SC_TEXT, "%s", "the algorithm's closed-form bound (- without one)")       \
    X(BOUND_BYTES, "bound_bytes", SP_SC_NUMBER, "%.0f", "that bound (bytes; -1 without one)")                     \
    X(BOUND_RATIO, "bound_ratio", SP_SC_NUMBER, "%.6g", "volume_bytes / bound_bytes")                              \
    X(LOWER_BYTES, "lower_bytes", SP_SC_NUMBER, "%.0f", "the lower bound of the algorithm's class (bytes)")        \
    X(PREDICTED, "predicted_s", SP_SC_NUMBER, "%.9g", "alpha-beta prediction of the time per iteration (s)")      \
    X(MESSAGES, "messages", SP_SC_NUMBER, "%.0f", "messages of the whole run")                                    \
    X(DISTURBANCE, "disturbance", SP_SC_TEXT, "%s", "the option --disturb sweeps over, or empty")                 \
    X(LEVEL, "level", SP_SC_TEXT, "%s", "this run's value of that option, or empty")                              \
    X(SLOWDOWN, "slowdown", SP_SC_NUMBER, "%.6g", "disturbed over undisturbed time per iteration")                \
    X(ITERATION, "iteration_s", SP_SC_NUMBER, "%.9g", "a whole training iteration, compute + allreduce (s)")      \
    X(SAMPLES, "samples_per_s", SP_SC_NUMBER, "%.9g", "training throughput, P x batch / iteration_s")             \
    X(SPEEDUP, "speedup_vs_dense", SP_SC_NUMBER, "%.6f",                                                          \
      "the fastest dense iteration_s of the same setting in the rows before it, over this row's "                 \
      "(analysis/speedup.h)")                                                                                     \
    X(SETTINGS, "settings", SP_SC_TEXT, "%s", "the options of every run not at their defaults, name=value;...")   \
    X(SWEEP_ID, "sweep_id", SP_SC_TEXT, "%s", "a hash of the sweep's settings and runs: its shards share it")     \
    X(RUN_INDEX, "run_index", SP_SC_NUMBER, "%.0f", "the run's place in the sweep, 0 .. runs-1")                  \
    X(RUNS, "runs", SP_SC_NUMBER, "%.0f", "the runs of the whole sweep")                                           \
    X(MSG_RATE, "messages_per_wall_s", SP_SC_NUMBER, "%.0f", "simulated messages per second of the ranks' wall time") \
    X(WALL_MODEL, "wall_share_model", SP_SC_NUMBER, "%.3f", "share of the ranks' time in SimGrid's network model")  \
    X(WALL_ENGINE, "wall_share_engine", SP_SC_NUMBER, "%.3f", "share in the rest of SimGrid (actors, activities)")  \
    X(WALL_SPARSIM, "wall_share_sparsim", SP_SC_NUMBER, "%.3f", "share in sparsim's own code (the rest: libraries)") \
    X(WALL, "wall_s", SP_SC_NUMBER, "%.3f", "the run's wall-clock time (s)")                                       \
    X(PEAK_RSS, "peak_rss_bytes", SP_SC_NUMBER, "%.0f", "the run's peak resident memory (bytes)")                 \
    X(STATUS, "status", SP_SC_TEXT, "%s", "ok, failed or bad-input")                                               \
    X(PHASE_TIMES, "phase_times", SP_SC_TEXT, "%s", "mean seconds per iteration of each phase, phase:s;...")

typedef enum { SP_SC_TEXT, SP_SC_NUMBER } sp_sweep_col_type;

#define SP_SC_ID_(id, name, type, fmt, meaning) SP_SC_##id,
typedef enum { SP_SWEEP_COLUMNS(SP_SC_ID_) SP_SC_COUNT } sp_sweep_col;
#undef SP_SC_ID_

typedef struct {
    const char *name;
    sp_sweep_col_type type;
    const char *format; /* of one double (SP_SC_NUMBER), or "%s" */
    const char *meaning;
} sp_sweep_column;

/* the table, indexed by sp_sweep_col (sweep_columns.c) */
extern const sp_sweep_column sp_sweep_columns[SP_SC_COUNT];

/* the header line, without its newline: the names joined by commas */
#define SP_SC_HDR_(id, name, type, fmt, meaning) "," name
#define SP_SWEEP_HEADER (&(SP_SWEEP_COLUMNS(SP_SC_HDR_))[1])

#endif
