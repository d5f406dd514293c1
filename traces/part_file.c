/* part_file.c - outputs that appear only when complete.
 *
 * Every output is written as NAME.part and renamed to NAME when the run has
 * succeeded (rename is atomic within a folder), so a crashed or failed run
 * never leaves a file that looks complete.
 */
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sp_part_open(sp_part_file *pf, const char *path, char *err, size_t errlen)
{
    memset(pf, 0, sizeof *pf);
    size_t pl = strlen(path) + 6;
    pf->path = strdup(path);
    pf->part = malloc(pl);
    if (!pf->path || !pf->part) {
        free(pf->path);
        free(pf->part);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(pf->part, pl, "%s.part", path);
    pf->f = fopen(pf->part, "w");
    if (!pf->f) {
        snprintf(err, errlen, "cannot write %s: %s", pf->part, strerror(errno));
        free(pf->path);
        free(pf->part);
        return -1;
    }
    return 0;
}

int sp_part_close(sp_part_file *pf, int ok, char *err, size_t errlen)
{
    int rc = 0;
    if (ferror(pf->f) | (fclose(pf->f) != 0)) {
        if (ok)
            snprintf(err, errlen, "error writing %s", pf->part);
        rc = ok ? -1 : 0;
        ok = 0;
    }
    if (ok && rename(pf->part, pf->path) != 0) {
        snprintf(err, errlen, "cannot rename %s: %s", pf->part, strerror(errno));
        rc = -1;
    }
    if (!ok)
        remove(pf->part);
    free(pf->path);
    free(pf->part);
    memset(pf, 0, sizeof *pf);
    return rc;
}
