/* helpers.c - running the real binary and small file helpers for tests. */
#define _GNU_SOURCE
#include "helpers.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

char *t_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
        }
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int t_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f);
}

const char *t_tmpdir(void)
{
    static char path[256];
    const char *base = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/sparsim-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(path))
        return NULL;
    return path;
}

t_proc t_run(const char *const *args)
{
    t_proc p = {0};
    char outp[] = "/tmp/sparsim-out-XXXXXX", errp[] = "/tmp/sparsim-err-XXXXXX";
    int fo = mkstemp(outp), fe = mkstemp(errp);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        int n = 0;
        while (args[n])
            n++;
        char **argv = calloc((size_t)n + 2, sizeof *argv);
        argv[0] = (char *)SPARSIM_BIN;
        for (int i = 0; i < n; i++)
            argv[i + 1] = (char *)args[i];
        execv(SPARSIM_BIN, argv);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    close(fo);
    close(fe);
    p.exited = WIFEXITED(st);
    p.status = p.exited ? WEXITSTATUS(st) : WTERMSIG(st);
    p.out = t_read_file(outp, NULL);
    p.err = t_read_file(errp, NULL);
    unlink(outp);
    unlink(errp);
    return p;
}

void t_proc_free(t_proc *p)
{
    free(p->out);
    free(p->err);
}

int t_count_lines(const char *s)
{
    int n = 0;
    for (; s && *s; s++)
        n += *s == '\n';
    return n;
}
