/* analyze.c - `sparsim analyze DIR_OR_CSV`: measured volume and time held
 * against the closed forms.
 *
 * Input: a folder of runs (every summary.json below it, two levels deep) or a
 * sweep CSV.  Per run: the volume as the bounds count it against the
 * algorithm's own bound and the lower bound of its class (in words, bytes
 * beside), and the measured time against the alpha-beta prediction from the
 * platform's route latency and bandwidth.  The formulas and their papers are
 * listed under the table.  Reads files only; runs nothing.  Input that is
 * not what it should be (a summary.json that is not JSON or lacks a figure,
 * a CSV row with the wrong number of fields, a field that is not a number
 * or is negative) is refused with one line naming the file, the line and
 * the field.
 */
#include "analyze.h"
#include "bounds.h"
#include "speedup.h"
#include "traces/csv.h"
#include "traces/summary_keys.h"
#include "traces/sweep_columns.h"
#include "traces/trace.h"
#include "algorithms/algorithm.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char algo[64], platform[256];
    const sp_algo_facts *facts; /* the algorithm's row of the facts table (bounds.h); NULL: none */
    char level[200]; /* a sweep's disturbance level, NAME=LEVEL (analysis/speedup.h); "" none */
    int ranks;
    double n, k, time, predicted, volume;
    double iter, samples; /* a whole training iteration (s) and samples/s; -1: not asked for */
} run_row;

typedef struct {
    run_row *r;
    int n, cap;
    int oom; /* a row could not be kept */
} rows;

static int add(rows *rs, const run_row *r)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? rs->cap * 2 : 32;
        run_row *nr = realloc(rs->r, (size_t)cap * sizeof *nr);
        if (!nr) {
            rs->oom = 1;
            return -1;
        }
        rs->r = nr;
        rs->cap = cap;
    }
    rs->r[rs->n++] = *r;
    return 0;
}

/* the largest n a run takes (int32 indices; sparsim run's --n) */
#define SP_ANALYZE_MAX_N 2147483647.0

/* a figure of summary.json: a finite number of at least `min` */
static int figure(const cJSON *o, const char *a, const char *b, double min, double *out, const char *path,
                  const char *name, char *err, size_t errlen)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        x = cJSON_GetObjectItemCaseSensitive(x, b);
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || x->valuedouble < min) {
        snprintf(err, errlen, "%s: %s must be a number of at least %g", path, name, min);
        return -1;
    }
    *out = x->valuedouble;
    return 0;
}

/* one run's summary.json; 1 when there is none, 0 when read, -1 with a
 * message when it is not a sparsim summary */
static int read_summary(const char *path, rows *rs, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 1;
    cJSON *j = sp_json_file_checked(path, (size_t)1 << 30, err, errlen);
    if (!j)
        return -1;
    cJSON *cfg = cJSON_GetObjectItemCaseSensitive(j, SPK_CONFIG);
    const cJSON *algo = cJSON_GetObjectItemCaseSensitive(cfg, SPK_CFG_ALGO);
    if (!cJSON_IsObject(j) || !cJSON_IsString(algo) || !algo->valuestring[0]) {
        snprintf(err, errlen, "%s is not a sparsim summary (no %s.%s)", path, SPK_CONFIG, SPK_CFG_ALGO);
        cJSON_Delete(j);
        return -1;
    }
    run_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.algo, sizeof r.algo, "%s", algo->valuestring);
    snprintf(r.platform, sizeof r.platform, "%s", sp_json_str(cfg, SPK_CFG_PLATFORM, NULL));
    double ranks, alpha = -1, bw = -1;
    if (figure(cfg, SPK_CFG_RANKS, NULL, 1, &ranks, path, SPK_CONFIG "." SPK_CFG_RANKS, err, errlen) != 0 ||
        figure(cfg, SPK_CFG_N, NULL, 1, &r.n, path, SPK_CONFIG "." SPK_CFG_N, err, errlen) != 0 ||
        figure(j, SPK_K, NULL, 0, &r.k, path, SPK_K, err, errlen) != 0 ||
        figure(j, SPK_TIME_PER_ITER, SPK_MEAN, 0, &r.time, path, SPK_TIME_PER_ITER "." SPK_MEAN, err, errlen) != 0 ||
        figure(j, SPK_VOLUME, SPK_VOL_MAX, 0, &r.volume, path, SPK_VOLUME "." SPK_VOL_MAX, err, errlen) != 0) {
        cJSON_Delete(j);
        return -1;
    }
    if (ranks != floor(ranks) || ranks > 1e9) {
        snprintf(err, errlen, "%s: %s.%s must be a whole number of ranks", path, SPK_CONFIG, SPK_CFG_RANKS);
        cJSON_Delete(j);
        return -1;
    }
    /* n and k as a run takes them (int32 indices), before any conversion */
    if (r.n > SP_ANALYZE_MAX_N || r.n != floor(r.n) || r.k > r.n || r.k != floor(r.k)) {
        snprintf(err, errlen, "%s: %s.%s and %s must be whole numbers with k <= n <= 2^31-1", path, SPK_CONFIG,
                 SPK_CFG_N, SPK_K);
        cJSON_Delete(j);
        return -1;
    }
    r.ranks = (int)ranks;
    /* whole training iterations are optional; when there, they are figures */
    r.iter = r.samples = -1;
    if (cJSON_GetObjectItemCaseSensitive(j, SPK_TRAINING) &&
        (figure(j, SPK_TRAINING, SPK_TR_ITER, 0, &r.iter, path, SPK_TRAINING "." SPK_TR_ITER, err, errlen) != 0 ||
         figure(j, SPK_TRAINING, SPK_TR_SAMPLES, 0, &r.samples, path, SPK_TRAINING "." SPK_TR_SAMPLES, err,
                errlen) != 0)) {
        cJSON_Delete(j);
        return -1;
    }
    /* the platform's figures are optional (a run on real MPI has none) */
    const cJSON *pl = cJSON_GetObjectItemCaseSensitive(j, SPK_PLATFORM);
    if (pl) {
        alpha = sp_json_num(j, SPK_PLATFORM, SPK_ALPHA);
        bw = sp_json_num(j, SPK_PLATFORM, SPK_BANDWIDTH);
    }
    r.facts = sp_algo_facts_find(r.algo);
    r.predicted = bw > 0 && alpha >= 0 && isfinite(bw)
                      ? sp_facts_predict(r.facts, r.ranks, (uint64_t)r.n, (uint64_t)r.k, alpha, 1.0 / bw)
                      : -1;
    add(rs, &r);
    cJSON_Delete(j);
    return 0;
}

static int scan_dir(const char *dir, int depth, rows *rs, char *err, size_t errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    if (read_summary(path, rs, err, errlen) < 0)
        return -1;
    if (depth == 0)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    char **names = NULL;
    int nn = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nn2 = realloc(names, (size_t)(nn + 1) * sizeof *names);
        if (!nn2 || !(nn2[nn] = strdup(e->d_name))) {
            names = nn2 ? nn2 : names;
            rs->oom = 1;
            break;
        }
        names = nn2;
        nn++;
    }
    closedir(d);
    /* a stable order: by name */
    for (int i = 1; i < nn; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    int rc = 0;
    for (int i = 0; i < nn; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (rc == 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            rc = scan_dir(path, depth - 1, rs, err, errlen);
        free(names[i]);
    }
    free(names);
    return rc;
}

/* ---- a sweep CSV (its columns: traces/sweep_columns.h) -------------------------- */

/* a field as a finite number of at least `min` (whole when `whole`) */
static int csv_number(const char *text, double min, int whole, double *out)
{
    char *end;
    errno = 0;
    if (!text[0] || text[0] == ' ')
        return -1;
    double v = strtod(text, &end);
    if (*end || errno || !isfinite(v) || v < min || (whole && v != floor(v)))
        return -1;
    *out = v;
    return 0;
}

/* the place of a column of the table in a header, or -1 */
static int column(const sp_csv_rec *h, sp_sweep_col c) { return sp_csv_column(h, sp_sweep_columns[c].name); }

static int read_sweep_csv(const char *path, rows *rs, char *err, size_t errlen)
{
    size_t len;
    char *text = sp_read_file(path, (size_t)1 << 32, &len, err, errlen);
    if (!text)
        return -1;
    if (strlen(text) != len) {
        free(text);
        snprintf(err, errlen, "%s is not a sparsim sweep CSV (a NUL byte in it)", path);
        return -1;
    }
    const char *pos = text, *end = text + len, *counted = text;
    int line = 1, rc = -1; /* where the record read last starts */
    sp_csv_rec h, r;
    memset(&r, 0, sizeof r);
    int hr = sp_csv_next(&pos, end, &h);
    /* the first six columns at their places; the others found by name */
    int nc = hr == 1 ? h.n : 0, lead = nc >= 6;
    for (int c = 0; lead && c < 6; c++)
        lead = !strcmp(h.f[c], sp_sweep_columns[c].name);
    if (!lead) {
        snprintf(err, errlen, "%s is not a sparsim sweep CSV (bad header)", path);
        goto out;
    }
    int c_time = column(&h, SP_SC_TIME_MEAN), c_vol = column(&h, SP_SC_VOLUME), c_pred = column(&h, SP_SC_PREDICTED);
    int c_status = column(&h, SP_SC_STATUS);
    /* optional: older sweeps lack them */
    int c_iter = column(&h, SP_SC_ITERATION), c_samples = column(&h, SP_SC_SAMPLES);
    int c_dist = column(&h, SP_SC_DISTURBANCE), c_level = column(&h, SP_SC_LEVEL);
    if (c_time < 0 || c_vol < 0 || c_pred < 0 || c_status < 0) {
        snprintf(err, errlen, "%s lacks columns of a sweep CSV", path);
        goto out;
    }
    for (;;) {
        for (; counted < pos; counted++)
            line += *counted == '\n';
        int got = sp_csv_next(&pos, end, &r);
        if (got == 0)
            break;
        if (got == 1 && r.n == 1 && !r.f[0][0]) { /* an empty line */
            sp_csv_free(&r);
            continue;
        }
        if (got < 0 || r.n != nc) {
            snprintf(err, errlen, "%s:%d: %s", path, line,
                     got < 0 ? "a quoted field is never closed (a cut file?)" : "the row's fields do not match the header");
            goto out;
        }
        char **field = r.f;
        if (strcmp(field[c_status], "ok") != 0) {
            sp_csv_free(&r);
            continue; /* failed and bad-input runs have no figures */
        }
        run_row rr;
        memset(&rr, 0, sizeof rr);
        snprintf(rr.algo, sizeof rr.algo, "%.63s", field[SP_SC_ALGO]);
        rr.facts = sp_algo_facts_find(rr.algo);
        snprintf(rr.platform, sizeof rr.platform, "%.255s", field[SP_SC_PLATFORM]);
        if (c_dist >= 0 && c_level >= 0)
            sp_speedup_level(field[c_dist], field[c_level], rr.level, sizeof rr.level);
        const struct {
            int col;
            double min;
            int whole;
            double *out;
            const char *what;
        } nums[] = {{SP_SC_RANKS, 1, 1, NULL, "a positive whole number"},
                    {SP_SC_N, 1, 1, &rr.n, "a positive whole number"},
                    {SP_SC_K, 0, 1, &rr.k, "a non-negative whole number"},
                    {c_time, 0, 0, &rr.time, "a non-negative number"},
                    {c_vol, 0, 0, &rr.volume, "a non-negative number"}};
        double ranks = 0;
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
            if (csv_number(field[nums[i].col], nums[i].min, nums[i].whole, nums[i].out ? nums[i].out : &ranks) != 0) {
                char shown[100];
                snprintf(shown, sizeof shown, "%.80s", field[nums[i].col]);
                snprintf(err, errlen, "%s:%d: %s is '%s', not %s", path, line, h.f[nums[i].col], shown,
                         nums[i].what);
                goto out;
            }
        if (ranks > 1e9) {
            snprintf(err, errlen, "%s:%d: ranks is too large", path, line);
            goto out;
        }
        if (rr.n > SP_ANALYZE_MAX_N || rr.k > rr.n) {
            snprintf(err, errlen, "%s:%d: n and k must satisfy k <= n <= 2^31-1 (as sparsim run takes them)", path,
                     line);
            goto out;
        }
        rr.ranks = (int)ranks;
        rr.predicted = -1;
        if (field[c_pred][0] && csv_number(field[c_pred], 0, 0, &rr.predicted) != 0) {
            snprintf(err, errlen, "%s:%d: predicted_s is '%.80s', not a non-negative number", path, line,
                     field[c_pred]);
            goto out;
        }
        rr.iter = rr.samples = -1;
        const int opt[2] = {c_iter, c_samples};
        double *optv[2] = {&rr.iter, &rr.samples};
        for (int i = 0; i < 2; i++)
            if (opt[i] >= 0 && field[opt[i]][0] && csv_number(field[opt[i]], 0, 0, optv[i]) != 0) {
                snprintf(err, errlen, "%s:%d: %s is '%.80s', not a non-negative number", path, line, h.f[opt[i]],
                         field[opt[i]]);
                goto out;
            }
        add(rs, &rr);
        sp_csv_free(&r);
    }
    rc = 0;
out:
    sp_csv_free(&r);
    if (hr == 1)
        sp_csv_free(&h);
    free(text);
    return rc;
}

/* whole training iterations (runs with --train-model or --train-compute):
 * each run's iteration and samples/s, and its speedup over the fastest dense
 * allreduce of the same setting among all the runs read (analysis/speedup.h) */
static void print_training(const rows *rs)
{
    int any = 0;
    for (int i = 0; i < rs->n; i++)
        any |= rs->r[i].iter > 0;
    if (!any)
        return;
    sp_speedup_run *set = malloc((size_t)rs->n * sizeof *set);
    for (int i = 0; set && i < rs->n; i++) {
        const run_row *r = &rs->r[i];
        set[i] = (sp_speedup_run){.algo = r->algo, .ranks = r->ranks, .n = r->n, .k = r->k,
                                  .platform = r->platform, .level = r->level, .iter = r->iter};
    }
    printf("\ntraining iterations (compute + allreduce; speedup over the fastest dense allreduce of the same P, n, k, "
           "platform and disturbance level):\n");
    printf("%-12s %6s %10s %8s %-8s %14s %14s %10s\n", "algorithm", "P", "n", "k", "platform", "iteration (s)",
           "samples/s", "vs dense");
    for (int i = 0; i < rs->n; i++) {
        const run_row *r = &rs->r[i];
        if (!(r->iter > 0))
            continue;
        double speedup = set ? sp_speedup_vs_dense(set, rs->n, &set[i], NULL) : 0;
        const char *plat = strrchr(r->platform, '/') ? strrchr(r->platform, '/') + 1 : r->platform;
        printf("%-12s %6d %10.0f %8.0f %-8.8s %14.6g %14.6g ", r->algo, r->ranks, r->n, r->k, plat, r->iter,
               r->samples);
        if (speedup > 0)
            printf("%10.4f\n", speedup);
        else
            printf("%10s\n", "-");
    }
    free(set);
}

/* ---- nccl-tests' figures, and the table for machines -------------------------- */

static int is_sparse(const char *algo)
{
    const sp_algorithm *a = sp_algorithm_find(algo);
    return a && a->cls == SP_ALGO_SPARSE;
}

/* the figures nccl-tests prints, per run (report.h: sp_nccl_figures_of) */
static void print_nccl(const rows *rs)
{
    printf("\nas nccl-tests prints an allreduce (size = 4n bytes of float32; for a sparse\n"
           "algorithm its effective size, the dense gradient it reduces; time per iteration;\n"
           "algbw = size / time; busbw = algbw x 2(P-1)/P):\n");
    printf("%-12s %6s %14s %12s %12s %12s\n", "algorithm", "P", "size (B)", "time (us)", "algbw (GB/s)",
           "busbw (GB/s)");
    for (int i = 0; i < rs->n; i++) {
        const run_row *r = &rs->r[i];
        sp_nccl_figures nc;
        sp_nccl_figures_of(r->n, r->ranks, r->time, &nc);
        printf("%-12s %6d %14.0f %12.2f %12.4f %12.4f%s\n", r->algo, r->ranks, nc.size_bytes, nc.time_s * 1e6,
               nc.algbw_Bps / 1e9, nc.busbw_Bps / 1e9, is_sparse(r->algo) ? "  (effective size)" : "");
    }
}

/* the columns of --format csv, json and markdown: bytes, words of 4 bytes,
 * seconds, bytes per second; a figure that does not apply is empty (csv),
 * null (json) or - (markdown) */
static const char *const table_cols[] = {
    "algo", "ranks", "n", "k", "platform", "volume_bytes", "volume_words", "bound_words", "bound_ratio",
    "lower_words", "lower_ratio", "time_per_iter_s", "predicted_s", "time_over_predicted", "size_bytes",
    "effective_size", "algbw_Bps", "busbw_Bps", "bus_factor", "iteration_s", "samples_per_s"};
#define NCOLS ((int)(sizeof table_cols / sizeof table_cols[0]))

static int print_table(const rows *rs, int format)
{
    cJSON *root = NULL, *runs = NULL;
    if (format == SP_ANALYZE_JSON) {
        root = cJSON_CreateObject();
        cJSON_AddNumberToObject(root, SPK_SCHEMA, SPK_SCHEMA_VERSION);
        cJSON *cols = cJSON_AddArrayToObject(root, "columns");
        for (int c = 0; c < NCOLS; c++)
            cJSON_AddItemToArray(cols, cJSON_CreateString(table_cols[c]));
        runs = cJSON_AddArrayToObject(root, "runs");
    } else {
        for (int c = 0; c < NCOLS; c++)
            printf(format == SP_ANALYZE_CSV ? "%s%s" : "%s %s", c ? (format == SP_ANALYZE_CSV ? "," : " |") : (format == SP_ANALYZE_CSV ? "" : "|"),
                   table_cols[c]);
        printf(format == SP_ANALYZE_CSV ? "\n" : " |\n");
        if (format == SP_ANALYZE_MARKDOWN) {
            for (int c = 0; c < NCOLS; c++)
                printf("|%s", c == 0 || c == 4 || c == 15 ? "---" : "---:");
            printf("|\n");
        }
    }
    for (int i = 0; i < rs->n; i++) {
        const run_row *r = &rs->r[i];
        sp_bound b;
        int have = sp_facts_bound(r->facts, r->ranks, (uint64_t)r->n, (uint64_t)r->k, &b) == 0;
        double w = r->volume / 4.0;
        sp_nccl_figures nc;
        sp_nccl_figures_of(r->n, r->ranks, r->time, &nc);
        int sparse = is_sparse(r->algo);
        /* every column as a number (NAN: does not apply), or text */
        double num[NCOLS];
        const char *text[NCOLS] = {r->algo, NULL, NULL, NULL, r->platform};
        for (int c = 0; c < NCOLS; c++)
            num[c] = NAN;
        num[1] = r->ranks;
        num[2] = r->n;
        num[3] = r->k;
        num[5] = r->volume;
        num[6] = w;
        if (have) {
            num[7] = b.words;
            num[8] = b.words > 0 ? w / b.words : NAN;
            num[9] = b.lower_words;
            num[10] = b.lower_words > 0 ? w / b.lower_words : NAN;
        }
        num[11] = r->time;
        if (r->predicted > 0) {
            num[12] = r->predicted;
            num[13] = r->time / r->predicted;
        }
        num[14] = nc.size_bytes;
        text[15] = sparse ? "true" : "false";
        num[16] = nc.time_s > 0 ? nc.algbw_Bps : NAN;
        num[17] = nc.time_s > 0 ? nc.busbw_Bps : NAN;
        num[18] = nc.bus_factor;
        num[19] = r->iter > 0 ? r->iter : NAN;
        num[20] = r->samples > 0 ? r->samples : NAN;
        cJSON *o = format == SP_ANALYZE_JSON ? cJSON_CreateObject() : NULL;
        sp_csv_row line = {0}; /* --format csv: the row, quoted where it must be */
        if (o)
            cJSON_AddItemToArray(runs, o);
        for (int c = 0; c < NCOLS; c++) {
            char buf[64];
            const char *v = text[c];
            if (!v && isfinite(num[c]))
                snprintf(buf, sizeof buf, "%.10g", num[c]);
            else if (!v)
                snprintf(buf, sizeof buf, "%s", format == SP_ANALYZE_MARKDOWN ? "-" : "");
            if (format == SP_ANALYZE_JSON) {
                if (c == 15)
                    cJSON_AddBoolToObject(o, table_cols[c], sparse);
                else if (v)
                    cJSON_AddStringToObject(o, table_cols[c], v);
                else if (isfinite(num[c]))
                    cJSON_AddNumberToObject(o, table_cols[c], num[c]);
                else
                    cJSON_AddNullToObject(o, table_cols[c]);
                continue;
            }
            if (format == SP_ANALYZE_CSV) {
                sp_csv_row_text(&line, v ? v : buf);
            } else { /* markdown: a pipe in a name is escaped */
                fputs(c ? " | " : "| ", stdout);
                for (const char *t = v ? v : buf; *t; t++) {
                    if (*t == '|')
                        putchar('\\');
                    putchar(*t == '\n' || *t == '\r' ? ' ' : *t);
                }
            }
        }
        if (format == SP_ANALYZE_CSV) {
            sp_csv_row_end(&line);
            int oom = line.oom;
            if (!oom)
                fputs(line.text, stdout);
            sp_csv_row_free(&line);
            if (oom)
                return 1;
        } else if (format == SP_ANALYZE_MARKDOWN) {
            printf(" |\n");
        }
    }
    if (format == SP_ANALYZE_JSON) {
        char *t = cJSON_Print(root);
        cJSON_Delete(root);
        if (!t)
            return 1;
        puts(t);
        free(t);
    }
    return 0;
}

int sp_analyze(const char *path, char *err, size_t errlen) { return sp_analyze_as(path, SP_ANALYZE_TEXT, err, errlen); }

int sp_analyze_as(const char *path, int format, char *err, size_t errlen)
{
    rows rs = {0};
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return 2;
    }
    if (S_ISDIR(st.st_mode) ? scan_dir(path, 2, &rs, err, errlen) != 0 : read_sweep_csv(path, &rs, err, errlen) != 0) {
        free(rs.r);
        return 2;
    }
    if (rs.oom) {
        free(rs.r);
        snprintf(err, errlen, "out of memory reading %s", path);
        return 1;
    }
    if (rs.n == 0) {
        free(rs.r);
        snprintf(err, errlen, "no finished run found in %s", path);
        return 2;
    }
    if (format != SP_ANALYZE_TEXT) {
        int rc = print_table(&rs, format);
        free(rs.r);
        if (rc)
            snprintf(err, errlen, "out of memory writing the table");
        return rc;
    }
    printf("%-12s %6s %10s %8s %-8s %12s %12s %12s %8s %12s %8s %11s %11s %7s\n", "algorithm", "P", "n", "k",
           "platform", "volume (B)", "volume (w)", "bound (w)", "ratio", "lower (w)", "/lower", "time (s)",
           "alpha-beta", "ratio");
    const sp_algo_facts *seen[64]; /* the algorithms met, in order, for the formulas under the table */
    int nseen = 0;
    for (int i = 0; i < rs.n; i++) {
        run_row *r = &rs.r[i];
        sp_bound b;
        int have = sp_facts_bound(r->facts, r->ranks, (uint64_t)r->n, (uint64_t)r->k, &b) == 0;
        double w = r->volume / 4.0;
        const char *plat = strrchr(r->platform, '/') ? strrchr(r->platform, '/') + 1 : r->platform;
        printf("%-12s %6d %10.0f %8.0f %-8.8s %12.0f %12.0f ", r->algo, r->ranks, r->n, r->k, plat, r->volume, w);
        if (have)
            printf("%12.0f %8.3f %12.0f %8.3f ", b.words, b.words > 0 ? w / b.words : 0.0, b.lower_words,
                   b.lower_words > 0 ? w / b.lower_words : 0.0);
        else
            printf("%12s %8s %12s %8s ", "-", "-", "-", "-");
        if (r->predicted > 0)
            printf("%11.5g %11.5g %7.3f\n", r->time, r->predicted, r->time / r->predicted);
        else
            printf("%11.5g %11s %7s\n", r->time, "-", "-");
        int known = !r->facts;
        for (int s = 0; s < nseen; s++)
            known |= seen[s] == r->facts;
        if (!known && nseen < 64)
            seen[nseen++] = r->facts;
    }
    printf("\nformulas (words of 4 bytes per rank; the ratio is measured / bound):\n");
    for (int s = 0; s < nseen; s++) {
        /* the formulas as written for P a power of two, and the lower bound of the class */
        const sp_algorithm *a = sp_algorithm_find(seen[s]->name);
        const sp_lower_bound *lb = a ? sp_lower_bound_of(a->cls) : NULL;
        if (lb)
            printf("  %-12s %-38s %s\n  %-12s lower bound %-26s %s\n", seen[s]->name, seen[s]->formula,
                   seen[s]->source, "", lb->formula, lb->source);
    }
    printf("alpha-beta: uncontended, one message of L bytes costs alpha + L beta (Hockney);\n"
           "  compute time is not in the prediction, so the ratio shows contention, the\n"
           "  network model's factors and the selection overhead together.\n");
    print_nccl(&rs);
    print_training(&rs);
    free(rs.r);
    return 0;
}
