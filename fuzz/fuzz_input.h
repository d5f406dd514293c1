/* fuzz_input.h - what every harness shares: the readers take paths, so each
 * input is written to a file in a folder of this process's own. */
#ifndef SPARSIM_FUZZ_INPUT_H
#define SPARSIM_FUZZ_INPUT_H

#define _GNU_SOURCE /* nftw, mkdtemp */
#include <ftw.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fuzz_dir_path[256];

static int fuzz_remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

/* the folder and everything the harness wrote in it */
static void fuzz_dir_remove(void)
{
    if (fuzz_dir_path[0])
        nftw(fuzz_dir_path, fuzz_remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* this process's folder, made on first use in $FUZZ_TMP (the runners give
 * their build folder's), else /dev/shm or $TMPDIR; removed at exit */
static const char *fuzz_dir(void)
{
    if (!fuzz_dir_path[0]) {
        const char *base = getenv("FUZZ_TMP");
        if (!base || !*base)
            base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        snprintf(fuzz_dir_path, sizeof fuzz_dir_path, "%s/sparsim-fuzz-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(fuzz_dir_path)) {
            perror("fuzz: mkdtemp");
            abort();
        }
        atexit(fuzz_dir_remove);
    }
    return fuzz_dir_path;
}

/* writes bytes to NAME in the folder (a subfolder in NAME is made); its path */
static const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(fuzz_dir())) {
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror("fuzz: writing the input");
        abort();
    }
    return path;
}

/* the readers that print tables print to /dev/null */
static void fuzz_quiet_stdout(void)
{
    if (!freopen("/dev/null", "w", stdout))
        abort();
}

#endif
