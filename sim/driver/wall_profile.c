/* wall_profile.c - the sampling profile of wall_profile.h.
 *
 * The handler only stores the interrupted address in a buffer made before
 * the timer starts (nothing else is safe in a signal handler); when the
 * buffer is full it keeps every second sample and from then on stores one
 * sample in two (then four, ...), so a long run costs a fixed 2 MiB and
 * still samples its whole length evenly.  The classes are found after the
 * run: the addresses sorted, each distinct one looked up once (dladdr).
 */
#define _GNU_SOURCE
#include "wall_profile.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <ucontext.h>

#define CAP (1u << 18)

static uintptr_t *buf;
static volatile size_t nbuf;
static volatile uint64_t ticks; /* every interrupt, kept or not */
static volatile unsigned stride = 1;
static struct sigaction old_action;
static double cpu0;

static double cpu_now(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    uint64_t t = ticks++;
    if (t % stride)
        return;
#if defined(__x86_64__)
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
    uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.pc;
#else
    uintptr_t pc = 0;
    (void)uc;
#endif
    size_t n = nbuf;
    if (n == CAP) { /* full: every second one, and half as often from now on */
        for (size_t i = 0; i < CAP / 2; i++)
            buf[i] = buf[2 * i];
        n = CAP / 2;
        stride *= 2;
    }
    buf[n] = pc;
    nbuf = n + 1;
}

int sp_wall_profile_start(void)
{
    nbuf = 0;
    ticks = 0;
    stride = 1;
    buf = malloc(CAP * sizeof *buf);
    if (!buf)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_tick;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct itimerval it = {{0, 1000}, {0, 1000}};
    if (sigaction(SIGPROF, &sa, &old_action) != 0) {
        free(buf);
        buf = NULL;
        return -1;
    }
    if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
        sigaction(SIGPROF, &old_action, NULL);
        free(buf);
        buf = NULL;
        return -1;
    }
    cpu0 = cpu_now();
    return 0;
}

static int cmp_addr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* the flow engine's network model and engine (sim/backends/flow/sections.h);
 * weak: a program without them (sparsim-mpi) has none */
extern const char __start_spf_netmodel[] __attribute__((weak)), __stop_spf_netmodel[] __attribute__((weak));
extern const char __start_spf_engine[] __attribute__((weak)), __stop_spf_engine[] __attribute__((weak));

static int within(uintptr_t pc, const char *lo, const char *hi)
{
    return lo && hi && pc >= (uintptr_t)lo && pc < (uintptr_t)hi;
}

/* the class of one address (see wall_profile.h) */
static int class_of(uintptr_t pc, const char *self)
{
    if (within(pc, __start_spf_netmodel, __stop_spf_netmodel))
        return SP_WALL_MODEL;
    if (within(pc, __start_spf_engine, __stop_spf_engine))
        return SP_WALL_ENGINE;
    Dl_info di;
    if (!pc || !dladdr((void *)pc, &di) || !di.dli_fname)
        return SP_WALL_LIBS;
    if (self && strcmp(di.dli_fname, self) == 0)
        return SP_WALL_SPARSIM;
    const char *base = strrchr(di.dli_fname, '/');
    base = base ? base + 1 : di.dli_fname;
    if (strncmp(base, "libsimgrid", 10) != 0)
        return SP_WALL_LIBS;
    /* mangled names: simgrid::kernel::lmm::..., simgrid::kernel::resource::... */
    const char *s = di.dli_sname ? di.dli_sname : "";
    if (strstr(s, "3lmm") || strstr(s, "8resource"))
        return SP_WALL_MODEL;
    return SP_WALL_ENGINE;
}

void sp_wall_profile_stop(sp_wall_profile *out)
{
    memset(out, 0, sizeof *out);
    if (!buf)
        return;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    sigaction(SIGPROF, &old_action, NULL);
    out->cpu_s = cpu_now() - cpu0;
    size_t n = nbuf;
    unsigned w = stride; /* each kept sample stands for w interrupts */
    Dl_info me;
    const char *self = dladdr((void *)sp_wall_profile_stop, &me) ? me.dli_fname : NULL;
    qsort(buf, n, sizeof *buf, cmp_addr);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && buf[j] == buf[i])
            j++;
        out->in_class[class_of(buf[i], self)] += (uint64_t)(j - i) * w;
        i = j;
    }
    out->samples = (uint64_t)n * w;
    free(buf);
    buf = NULL;
}
