/* helpers.h - what the tests share: running the real binary, temp folders,
 * reference computations written the simplest way. */
#ifndef SPARSIM_TEST_HELPERS_H
#define SPARSIM_TEST_HELPERS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int exited;   /* 1 if it exited normally */
    int status;   /* exit status, or the signal */
    char *out;    /* stdout */
    char *err;    /* stderr */
} t_proc;

/* Runs SPARSIM_BIN with the NULL-terminated args; captures both streams. */
t_proc t_run(const char *const *args);
void t_proc_free(t_proc *p);

/* A fresh temporary folder (removed by the OS's tmp cleaning; tests keep it
 * for inspection on failure). */
const char *t_tmpdir(void);

char *t_read_file(const char *path, size_t *len);
int t_write_file(const char *path, const char *text);

/* number of '\n' in s */
int t_count_lines(const char *s);

#endif
