/* merge.c - `sparsim merge`: the CSVs of a sweep's shards joined into one.
 *
 * Each row of a sweep CSV names its sweep (sweep_id: a hash of the settings
 * and of every run) and its place in it (run_index of runs), so shards run
 * anywhere, in any order, join back into the sweep's own order.  The columns
 * are whatever the first file's header says (later versions add some); every
 * file must have the same header and rows of the same sweep.  Runs that no
 * file holds are named: the merged CSV is written, and the exit status says
 * it is not complete.
 */
#include "cli.h"
#include "traces/csv.h"
#include "traces/sweep_columns.h"
#include "traces/trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const char *text; /* the record, its newline excluded */
    size_t len;
    int file;
} merged_row;

static void merge_help(void)
{
    printf("usage: sparsim merge --out FILE SHARD.csv [SHARD.csv ...]\n"
           "\n"
           "Joins the CSVs of one sweep's shards (sparsim sweep --shard I/N) into FILE, in\n"
           "the sweep's order (run_index).  Refused, with one line and exit status 2: a file\n"
           "that is not a sweep CSV, files with different columns, rows of different sweeps\n"
           "(sweep_id), a run in two files with different rows.  Runs that no file holds are\n"
           "named on stderr; FILE is written with the others and the exit status is 1.\n");
}

/* the whole file, NUL-terminated; NULL with a message */
static char *read_all(const char *path, size_t *len, char *err, size_t errlen)
{
    char *text = sp_read_file(path, (size_t)1 << 34, len, err, errlen);
    if (!text)
        return NULL;
    if (strlen(text) != *len) {
        free(text);
        snprintf(err, errlen, "%s is not a sweep CSV (a NUL byte in it)", path);
        return NULL;
    }
    return text;
}

/* the place of a column of the table (traces/sweep_columns.h) in a header */
static int column(const sp_csv_rec *h, sp_sweep_col c) { return sp_csv_column(h, sp_sweep_columns[c].name); }

/* a whole number in [0, max) from a field, or -1 */
static long whole(const char *s, long max)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
        return -1;
    long v = strtol(s, NULL, 10);
    return v < max ? v : -1;
}

int sp_cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    const char **in = calloc((size_t)argc + 1, sizeof *in);
    int nin = 0;
    if (!in) {
        sp_opts_print_error("out of memory");
        return 1;
    }
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            merge_help();
            free(in);
            return 0;
        }
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strncmp(argv[i], "--out=", 6))
            out = argv[i] + 6;
        else if (!strncmp(argv[i], "--", 2) && argv[i][2]) {
            char shown[80], msg[200];
            snprintf(msg, sizeof msg, "merge: unknown option %s (usage: sparsim merge --out FILE SHARD.csv ...)",
                     sp_opts_printable(argv[i], shown, sizeof shown));
            sp_opts_print_error(msg);
            free(in);
            return 2;
        } else
            in[nin++] = argv[i];
    }
    if (!out || !out[0] || nin == 0) {
        sp_opts_print_error("usage: sparsim merge --out FILE SHARD.csv [SHARD.csv ...] (sparsim merge --help says more)");
        free(in);
        return 2;
    }
    char err[2400] = "";
    int status = 2, runs = -1, c_id = -1, c_index = -1, c_runs = -1, c_status = -1, failed = 0;
    char **texts = calloc((size_t)nin, sizeof *texts);
    char *header = NULL, sweep[64] = "";
    const char *sweep_from = NULL;
    merged_row *row = NULL; /* by run_index */
    sp_csv_rec h, r;
    memset(&h, 0, sizeof h);
    memset(&r, 0, sizeof r);
    if (!texts) {
        snprintf(err, sizeof err, "out of memory");
        status = 1;
        goto out;
    }
    if (sp_opts_output_ok(out, 0, "--out", err, sizeof err) != 0)
        goto out;
    for (int fi = 0; fi < nin; fi++) {
        const char *path = in[fi];
        struct stat st;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            snprintf(err, sizeof err, "%s is not a regular file", path);
            goto out;
        }
        size_t len;
        if (!(texts[fi] = read_all(path, &len, err, sizeof err)))
            goto out;
        const char *pos = texts[fi], *end = texts[fi] + len;
        int hr = sp_csv_next(&pos, end, &h);
        if (hr != 1 || !h.complete) {
            if (hr == 1)
                sp_csv_free(&h);
            snprintf(err, sizeof err, "%s is not a sweep CSV (no header line)", path);
            goto out;
        }
        size_t hl = (size_t)(h.end - h.start);
        if (hl && h.start[hl - 1] == '\r')
            hl--;
        if (!header) {
            c_id = column(&h, SP_SC_SWEEP_ID);
            c_index = column(&h, SP_SC_RUN_INDEX);
            c_runs = column(&h, SP_SC_RUNS);
            c_status = column(&h, SP_SC_STATUS);
            sp_sweep_col lacks = column(&h, SP_SC_ALGO) != 0 ? SP_SC_ALGO
                                 : c_id < 0                  ? SP_SC_SWEEP_ID
                                 : c_index < 0               ? SP_SC_RUN_INDEX
                                 : c_runs < 0                ? SP_SC_RUNS
                                                             : SP_SC_STATUS;
            if (column(&h, SP_SC_ALGO) != 0 || c_id < 0 || c_index < 0 || c_runs < 0 || c_status < 0) {
                snprintf(err, sizeof err,
                         "%s is not a sweep CSV of this version (its header lacks %s); only CSVs of sparsim sweep "
                         "merge",
                         path, sp_sweep_columns[lacks].name);
                sp_csv_free(&h);
                goto out;
            }
            if (!(header = strndup(h.start, hl))) {
                snprintf(err, sizeof err, "out of memory");
                status = 1;
                sp_csv_free(&h);
                goto out;
            }
        } else if (strlen(header) != hl || strncmp(header, h.start, hl) != 0) {
            snprintf(err, sizeof err, "%s and %s have different columns (made by different versions of sparsim?)",
                     in[0], path);
            sp_csv_free(&h);
            goto out;
        }
        int nf = h.n;
        sp_csv_free(&h);
        int line = 1;
        const char *counted = texts[fi];
        for (;;) {
            int got = sp_csv_next(&pos, end, &r);
            if (got == 0)
                break;
            if (got < 0 || !r.complete) { /* a row cut short (an interrupted shard): that run is missing */
                if (got == 1)
                    sp_csv_free(&r);
                break;
            }
            for (; counted < r.start; counted++)
                line += *counted == '\n';
            if (r.n == 1 && !r.f[0][0]) {
                sp_csv_free(&r);
                continue;
            }
            if (r.n != nf) {
                snprintf(err, sizeof err, "%s:%d: a row of %d fields, the header has %d", path, line, r.n, nf);
                goto out;
            }
            long n_runs = whole(r.f[c_runs], 100000000L);
            if (n_runs < 1 || strlen(r.f[c_id]) >= sizeof sweep || !r.f[c_id][0]) {
                char shown[80];
                snprintf(err, sizeof err, "%s:%d: runs is '%s', sweep_id '%.40s': not a sweep's row", path, line,
                         sp_opts_printable(r.f[c_runs], shown, sizeof shown), r.f[c_id]);
                goto out;
            }
            if (!sweep_from) {
                snprintf(sweep, sizeof sweep, "%s", r.f[c_id]);
                sweep_from = path;
                runs = (int)n_runs;
                if (!(row = calloc((size_t)runs, sizeof *row))) {
                    snprintf(err, sizeof err, "out of memory for %d runs", runs);
                    status = 1;
                    goto out;
                }
            } else if (strcmp(sweep, r.f[c_id]) != 0 || n_runs != runs) {
                char shown[80];
                snprintf(err, sizeof err,
                         "%s:%d is a row of sweep %s (%ld runs), %s holds rows of sweep %s (%d runs): shards of "
                         "different sweeps do not merge",
                         path, line, sp_opts_printable(r.f[c_id], shown, sizeof shown), n_runs, sweep_from, sweep,
                         runs);
                goto out;
            }
            long at = whole(r.f[c_index], runs);
            if (at < 0) {
                char shown[80];
                snprintf(err, sizeof err, "%s:%d: run_index is '%s', not a whole number below runs (%d)", path, line,
                         sp_opts_printable(r.f[c_index], shown, sizeof shown), runs);
                goto out;
            }
            size_t rl = (size_t)(r.end - r.start);
            if (rl && r.start[rl - 1] == '\r')
                rl--;
            if (row[at].text && (row[at].len != rl || memcmp(row[at].text, r.start, rl) != 0)) {
                snprintf(err, sizeof err, "run %ld of the sweep is in both %s and %s, with different rows", at,
                         in[row[at].file], path);
                goto out;
            }
            if (!row[at].text)
                failed += strcmp(r.f[c_status], "ok") != 0;
            row[at] = (merged_row){r.start, rl, fi};
            sp_csv_free(&r);
        }
    }
    /* the merged CSV, whole: the header, then the runs in the sweep's order */
    status = 1;
    sp_part_file pf;
    if (sp_part_open(&pf, out, err, sizeof err) != 0)
        goto out;
    int ok = fprintf(pf.f, "%s\n", header) > 0, have = 0;
    for (int i = 0; i < runs && ok; i++)
        if (row[i].text) {
            ok = fwrite(row[i].text, 1, row[i].len, pf.f) == row[i].len && fputc('\n', pf.f) != EOF;
            have++;
        }
    if (sp_part_close(&pf, ok, err, sizeof err) != 0 || !ok) {
        if (!err[0])
            snprintf(err, sizeof err, "cannot write %s", out);
        goto out;
    }
    printf("merge: %d of %d runs of sweep %s from %d file%s into %s (%d failed)\n", have, runs < 0 ? 0 : runs,
           sweep[0] ? sweep : "-", nin, nin == 1 ? "" : "s", out, failed);
    if (fflush(stdout) != 0) {
        snprintf(err, sizeof err, "cannot write the summary line: %s", strerror(errno));
        goto out;
    }
    if (have < runs || runs < 0) {
        size_t w = (size_t)snprintf(err, sizeof err, "merge: %d of %d runs are missing (run_index", runs - have, runs);
        int shown = 0;
        for (int i = 0; i < runs && w < sizeof err - 80; i++)
            if (!row[i].text)
                w += (size_t)snprintf(err + w, sizeof err - w, "%s %d", shown++ ? "," : "", i);
        if (shown < runs - have)
            w += (size_t)snprintf(err + w, sizeof err - w, ", ...");
        if (runs < 0)
            snprintf(err, sizeof err, "merge: no row in the files given; %s holds only the header", out);
        else
            snprintf(err + w, sizeof err - w, "); run their shards again with --resume and merge again");
        goto out;
    }
    status = 0;
out:
    sp_csv_free(&r);
    sp_csv_free(&h);
    if (status != 0 && err[0])
        sp_opts_print_error(err);
    for (int i = 0; texts && i < nin; i++)
        free(texts[i]);
    free(texts);
    free(header);
    free(row);
    free(in);
    return status;
}
