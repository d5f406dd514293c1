/* fuzz_input.h - what every harness shares: the readers take paths, so each
 * input is written to a file in a folder of this process's own. */
#ifndef SPARSIM_FUZZ_INPUT_H
#define SPARSIM_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* this process's folder (made on first use, in /dev/shm when there is one) */
static const char *fuzz_dir(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/sparsim-fuzz-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(dir)) {
            perror("fuzz: mkdtemp");
            abort();
        }
    }
    return dir;
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
