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

/* one merge: the files read, the header, the sweep and its rows by run_index */
typedef struct {
    const char *out;
    const char **in;
    int nin;
    char **texts;     /* each file's text; the rows point into them */
    char *header;     /* the first file's header line */
    char sweep[64];   /* the sweep_id of the rows */
    const char *sweep_from; /* the file of its first row */
    int runs;         /* -1 until a row is read */
    merged_row *row;  /* by run_index */
    int c_id, c_index, c_runs, c_status;
    int failed;       /* rows whose status is not ok */
    char err[2400];
} merge_state;

/* the command line into m->out and m->in: -1 to go on, or the exit status
 * (0 after --help), the message printed */
static int parse_merge_args(int argc, char **argv, merge_state *m)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            merge_help();
            return 0;
        }
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            m->out = argv[++i];
        else if (!strncmp(argv[i], "--out=", 6))
            m->out = argv[i] + 6;
        else if (!strncmp(argv[i], "--", 2) && argv[i][2]) {
            char shown[80], msg[200];
            snprintf(msg, sizeof msg, "merge: unknown option %s (usage: sparsim merge --out FILE SHARD.csv ...)",
                     sp_opts_printable(argv[i], shown, sizeof shown));
            sp_opts_print_error(msg);
            return 2;
        } else
            m->in[m->nin++] = argv[i];
    }
    if (!m->out || !m->out[0] || m->nin == 0) {
        sp_opts_print_error("usage: sparsim merge --out FILE SHARD.csv [SHARD.csv ...] (sparsim merge --help says more)");
        return 2;
    }
    return -1;
}

/* file fi's header h: the first one sets the columns, the others must be
 * the same.  0, or the exit status with a message */
static int take_header(merge_state *m, int fi, const sp_csv_rec *h)
{
    const char *path = m->in[fi];
    size_t hl = (size_t)(h->end - h->start);
    if (hl && h->start[hl - 1] == '\r')
        hl--;
    if (m->header) {
        if (strlen(m->header) != hl || strncmp(m->header, h->start, hl) != 0) {
            snprintf(m->err, sizeof m->err,
                     "%s and %s have different columns (made by different versions of sparsim?)", m->in[0], path);
            return 2;
        }
        return 0;
    }
    m->c_id = column(h, SP_SC_SWEEP_ID);
    m->c_index = column(h, SP_SC_RUN_INDEX);
    m->c_runs = column(h, SP_SC_RUNS);
    m->c_status = column(h, SP_SC_STATUS);
    sp_sweep_col lacks = column(h, SP_SC_ALGO) != 0 ? SP_SC_ALGO
                         : m->c_id < 0              ? SP_SC_SWEEP_ID
                         : m->c_index < 0           ? SP_SC_RUN_INDEX
                         : m->c_runs < 0            ? SP_SC_RUNS
                                                    : SP_SC_STATUS;
    if (column(h, SP_SC_ALGO) != 0 || m->c_id < 0 || m->c_index < 0 || m->c_runs < 0 || m->c_status < 0) {
        snprintf(m->err, sizeof m->err,
                 "%s is not a sweep CSV of this version (its header lacks %s); only CSVs of sparsim sweep "
                 "merge",
                 path, sp_sweep_columns[lacks].name);
        return 2;
    }
    if (!(m->header = strndup(h->start, hl))) {
        snprintf(m->err, sizeof m->err, "out of memory");
        return 1;
    }
    return 0;
}

/* one row r of file fi at `line`, of nf fields: placed at its run_index.
 * 0, or the exit status with a message */
static int take_row(merge_state *m, int fi, int line, int nf, const sp_csv_rec *r)
{
    const char *path = m->in[fi];
    char shown[80];
    if (r->n != nf) {
        snprintf(m->err, sizeof m->err, "%s:%d: a row of %d fields, the header has %d", path, line, r->n, nf);
        return 2;
    }
    long n_runs = whole(r->f[m->c_runs], 100000000L);
    const char *id = r->f[m->c_id];
    if (n_runs < 1 || strlen(id) >= sizeof m->sweep || !id[0]) {
        snprintf(m->err, sizeof m->err, "%s:%d: runs is '%s', sweep_id '%.40s': not a sweep's row", path, line,
                 sp_opts_printable(r->f[m->c_runs], shown, sizeof shown), id);
        return 2;
    }
    if (!m->sweep_from) {
        snprintf(m->sweep, sizeof m->sweep, "%s", id);
        m->sweep_from = path;
        m->runs = (int)n_runs;
        if (!(m->row = calloc((size_t)m->runs, sizeof *m->row))) {
            snprintf(m->err, sizeof m->err, "out of memory for %d runs", m->runs);
            return 1;
        }
    } else if (strcmp(m->sweep, id) != 0 || n_runs != m->runs) {
        snprintf(m->err, sizeof m->err,
                 "%s:%d is a row of sweep %s (%ld runs), %s holds rows of sweep %s (%d runs): shards of "
                 "different sweeps do not merge",
                 path, line, sp_opts_printable(id, shown, sizeof shown), n_runs, m->sweep_from, m->sweep, m->runs);
        return 2;
    }
    long at = whole(r->f[m->c_index], m->runs);
    if (at < 0) {
        snprintf(m->err, sizeof m->err, "%s:%d: run_index is '%s', not a whole number below runs (%d)", path, line,
                 sp_opts_printable(r->f[m->c_index], shown, sizeof shown), m->runs);
        return 2;
    }
    size_t rl = (size_t)(r->end - r->start);
    if (rl && r->start[rl - 1] == '\r')
        rl--;
    merged_row *had = &m->row[at];
    if (had->text && (had->len != rl || memcmp(had->text, r->start, rl) != 0)) {
        snprintf(m->err, sizeof m->err, "run %ld of the sweep is in both %s and %s, with different rows", at,
                 m->in[had->file], path);
        return 2;
    }
    if (!had->text)
        m->failed += strcmp(r->f[m->c_status], "ok") != 0;
    *had = (merged_row){r->start, rl, fi};
    return 0;
}

/* file fi read: its header and each of its rows.  0, or the exit status with a message */
static int read_shard(merge_state *m, int fi)
{
    const char *path = m->in[fi];
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(m->err, sizeof m->err, "%s is not a regular file", path);
        return 2;
    }
    size_t len;
    if (!(m->texts[fi] = read_all(path, &len, m->err, sizeof m->err)))
        return 2;
    const char *pos = m->texts[fi], *end = m->texts[fi] + len;
    sp_csv_rec h = {0}, r = {0};
    int hr = sp_csv_next(&pos, end, &h);
    if (hr != 1 || !h.complete) {
        if (hr == 1)
            sp_csv_free(&h);
        snprintf(m->err, sizeof m->err, "%s is not a sweep CSV (no header line)", path);
        return 2;
    }
    int status = take_header(m, fi, &h), nf = h.n;
    sp_csv_free(&h);
    int line = 1;
    const char *counted = m->texts[fi];
    while (status == 0) {
        int got = sp_csv_next(&pos, end, &r);
        if (got == 0)
            break;
        if (got < 0 || !r.complete) /* a row cut short (an interrupted shard): that run is missing */
            break;
        for (; counted < r.start; counted++)
            line += *counted == '\n';
        if (!(r.n == 1 && !r.f[0][0])) /* an empty line is left out */
            status = take_row(m, fi, line, nf, &r);
        sp_csv_free(&r);
    }
    sp_csv_free(&r);
    return status;
}

/* the merged CSV, whole: the header, then the runs in the sweep's order;
 * the summary line, and the missing runs named.  The exit status */
static int write_merged(merge_state *m)
{
    const int runs = m->runs;
    sp_part_file pf;
    if (sp_part_open(&pf, m->out, m->err, sizeof m->err) != 0)
        return 1;
    int ok = fprintf(pf.f, "%s\n", m->header) > 0, have = 0;
    for (int i = 0; i < runs && ok; i++)
        if (m->row[i].text) {
            ok = fwrite(m->row[i].text, 1, m->row[i].len, pf.f) == m->row[i].len && fputc('\n', pf.f) != EOF;
            have++;
        }
    if (sp_part_close(&pf, ok, m->err, sizeof m->err) != 0 || !ok) {
        if (!m->err[0])
            snprintf(m->err, sizeof m->err, "cannot write %s", m->out);
        return 1;
    }
    printf("merge: %d of %d runs of sweep %s from %d file%s into %s (%d failed)\n", have, runs < 0 ? 0 : runs,
           m->sweep[0] ? m->sweep : "-", m->nin, m->nin == 1 ? "" : "s", m->out, m->failed);
    if (fflush(stdout) != 0) {
        snprintf(m->err, sizeof m->err, "cannot write the summary line: %s", strerror(errno));
        return 1;
    }
    if (have < runs || runs < 0) {
        char *err = m->err;
        size_t w = (size_t)snprintf(err, sizeof m->err, "merge: %d of %d runs are missing (run_index", runs - have,
                                    runs);
        int shown = 0;
        for (int i = 0; i < runs && w < sizeof m->err - 80; i++)
            if (!m->row[i].text)
                w += (size_t)snprintf(err + w, sizeof m->err - w, "%s %d", shown++ ? "," : "", i);
        if (shown < runs - have)
            w += (size_t)snprintf(err + w, sizeof m->err - w, ", ...");
        if (runs < 0)
            snprintf(err, sizeof m->err, "merge: no row in the files given; %s holds only the header", m->out);
        else
            snprintf(err + w, sizeof m->err - w, "); run their shards again with --resume and merge again");
        return 1;
    }
    return 0;
}

int sp_cmd_merge(int argc, char **argv)
{
    merge_state m = {.runs = -1, .c_id = -1, .c_index = -1, .c_runs = -1, .c_status = -1};
    m.in = calloc((size_t)argc + 1, sizeof *m.in);
    if (!m.in) {
        sp_opts_print_error("out of memory");
        return 1;
    }
    int status = parse_merge_args(argc, argv, &m);
    if (status >= 0) {
        free(m.in);
        return status;
    }
    status = 2;
    m.texts = calloc((size_t)m.nin, sizeof *m.texts);
    if (!m.texts) {
        snprintf(m.err, sizeof m.err, "out of memory");
        status = 1;
    } else if (sp_opts_output_ok(m.out, 0, "--out", m.err, sizeof m.err) == 0) {
        status = 0;
        for (int fi = 0; fi < m.nin && status == 0; fi++)
            status = read_shard(&m, fi);
        if (status == 0)
            status = write_merged(&m);
    }
    if (status != 0 && m.err[0])
        sp_opts_print_error(m.err);
    for (int i = 0; m.texts && i < m.nin; i++)
        free(m.texts[i]);
    free(m.texts);
    free(m.header);
    free(m.row);
    free(m.in);
    return status;
}
