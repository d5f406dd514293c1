/* analyze.c - `sparsim analyze DIR_OR_CSV`: measured volume and time held
 * against the closed forms.
 *
 * Input: a folder of runs (every summary.json below it, two levels deep) or a
 * sweep CSV.  Per run: the volume as the bounds count it against the
 * algorithm's own bound and the lower bound of its class (in words, bytes
 * beside), and the measured time against the alpha-beta prediction from the
 * platform's route latency and bandwidth.  The formulas and their papers are
 * listed under the table.  Reads files only; runs nothing.
 */
#include "analyze.h"
#include "bounds.h"
#include "../traces/summary_keys.h"
#include "../traces/trace.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char algo[64], platform[256];
    int ranks;
    double n, k, time, predicted, volume;
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

static int read_summary(const char *path, rows *rs)
{
    cJSON *j = sp_json_file(path);
    cJSON *cfg = cJSON_GetObjectItem(j, SPK_CONFIG);
    if (!j || !cfg || !cJSON_IsString(cJSON_GetObjectItem(cfg, SPK_CFG_ALGO))) {
        cJSON_Delete(j);
        return -1;
    }
    run_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.algo, sizeof r.algo, "%s", cJSON_GetObjectItem(cfg, SPK_CFG_ALGO)->valuestring);
    snprintf(r.platform, sizeof r.platform, "%s", sp_json_str(cfg, SPK_CFG_PLATFORM, NULL));
    r.ranks = (int)sp_json_num(cfg, SPK_CFG_RANKS, NULL);
    r.n = sp_json_num(cfg, SPK_CFG_N, NULL);
    r.k = sp_json_num(j, SPK_K, NULL);
    r.time = sp_json_num(j, SPK_TIME_PER_ITER, SPK_MEAN);
    r.volume = sp_json_num(j, SPK_VOLUME, SPK_VOL_MAX);
    double alpha = sp_json_num(j, SPK_PLATFORM, SPK_ALPHA), bw = sp_json_num(j, SPK_PLATFORM, SPK_BANDWIDTH);
    r.predicted = bw > 0 ? sp_predict_time(r.algo, r.ranks, (uint64_t)r.n, (uint64_t)r.k, alpha, 1.0 / bw) : -1;
    add(rs, &r);
    cJSON_Delete(j);
    return 0;
}

static void scan_dir(const char *dir, int depth, rows *rs)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    read_summary(path, rs);
    if (depth == 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
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
    for (int i = 0; i < nn; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            scan_dir(path, depth - 1, rs);
        free(names[i]);
    }
    free(names);
}

/* a sweep CSV: the columns by name from its header */
static int read_sweep_csv(const char *path, rows *rs, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    char line[8192];
    if (!fgets(line, sizeof line, f) || strncmp(line, "algo,ranks,n,density,k,platform", 31) != 0) {
        snprintf(err, errlen, "%s is not a sparsim sweep CSV (bad header)", path);
        fclose(f);
        return -1;
    }
    char *cols[64];
    int nc = 0;
    char header[sizeof line];
    memcpy(header, line, sizeof line);
    for (char *s = strtok(header, ",\n"); s && nc < 64; s = strtok(NULL, ",\n"))
        cols[nc++] = s;
    int c_time = -1, c_vol = -1, c_pred = -1, c_status = -1;
    for (int i = 0; i < nc; i++) {
        if (!strcmp(cols[i], "time_per_iter_mean_s"))
            c_time = i;
        else if (!strcmp(cols[i], "volume_bytes"))
            c_vol = i;
        else if (!strcmp(cols[i], "predicted_s"))
            c_pred = i;
        else if (!strcmp(cols[i], "status"))
            c_status = i;
    }
    if (c_time < 0 || c_vol < 0 || c_pred < 0 || c_status < 0) {
        snprintf(err, errlen, "%s lacks columns of a sweep CSV", path);
        fclose(f);
        return -1;
    }
    while (fgets(line, sizeof line, f)) {
        /* split on commas outside quotes */
        char *field[64];
        int nf = 0, inq = 0;
        field[nf++] = line;
        for (char *c = line; *c && nf < 64; c++) {
            if (*c == '"')
                inq = !inq;
            else if (*c == ',' && !inq) {
                *c = '\0';
                field[nf++] = c + 1;
            }
        }
        if (nf <= c_status || strncmp(field[c_status], "ok", 2) != 0)
            continue;
        run_row r;
        memset(&r, 0, sizeof r);
        snprintf(r.algo, sizeof r.algo, "%.63s", field[0]);
        r.ranks = atoi(field[1]);
        r.n = atof(field[2]);
        r.k = atof(field[4]);
        snprintf(r.platform, sizeof r.platform, "%.255s", field[5]);
        r.time = atof(field[c_time]);
        r.volume = atof(field[c_vol]);
        r.predicted = field[c_pred][0] ? atof(field[c_pred]) : -1;
        add(rs, &r);
    }
    fclose(f);
    return 0;
}

int sp_analyze(const char *path, char *err, size_t errlen)
{
    rows rs = {0};
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return 2;
    }
    if (S_ISDIR(st.st_mode))
        scan_dir(path, 2, &rs);
    else if (read_sweep_csv(path, &rs, err, errlen) != 0)
        return 2;
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
    printf("%-12s %6s %10s %8s %-8s %12s %12s %12s %8s %12s %8s %11s %11s %7s\n", "algorithm", "P", "n", "k",
           "platform", "volume (B)", "volume (w)", "bound (w)", "ratio", "lower (w)", "/lower", "time (s)",
           "alpha-beta", "ratio");
    const char *seen[64];
    int nseen = 0;
    for (int i = 0; i < rs.n; i++) {
        run_row *r = &rs.r[i];
        sp_bound b;
        int have = sp_bound_volume(r->algo, r->ranks, (uint64_t)r->n, (uint64_t)r->k, &b) == 0;
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
        int known = 0;
        for (int s = 0; s < nseen; s++)
            known |= !strcmp(seen[s], r->algo);
        if (!known && nseen < 64)
            seen[nseen++] = r->algo;
    }
    printf("\nformulas (words of 4 bytes per rank; the ratio is measured / bound):\n");
    for (int s = 0; s < nseen; s++) {
        sp_bound b;
        if (sp_bound_volume(seen[s], 8, 1000, 10, &b) == 0)
            printf("  %-12s %-38s %s\n  %-12s lower bound %-26s %s\n", seen[s], b.formula, b.source, "",
                   b.lower_formula,
                   strcmp(b.lower_formula, "2k(P-1)/P") == 0 ? "Li & Hoefler, PPoPP 2022, Theorem 3.1"
                                                             : "Patarasuk & Yuan, JPDC 2009");
    }
    printf("alpha-beta: uncontended, one message of L bytes costs alpha + L beta (Hockney);\n"
           "  compute time is not in the prediction, so the ratio shows contention, the\n"
           "  network model's factors and the selection overhead together.\n");
    free(rs.r);
    return 0;
}
