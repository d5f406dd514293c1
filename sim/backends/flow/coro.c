/* coro.c - coroutines for the flow engine (coro.h says why by hand). */
#define _GNU_SOURCE
#include "coro.h"
#include "sections.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define SPF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SPF_ASAN 1
#endif
#endif

#ifdef SPF_ASAN
/* ASan follows a stack switch only when told (its fake stacks and its view
 * of which stack is current) */
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old, size_t *size_old);
#endif

#if defined(__x86_64__) && !defined(SPF_CORO_UCONTEXT)
#define SPF_CORO_ASM 1
/* spf_swap(save, load): pushes the registers a call preserves, stores the
 * stack pointer in *save, takes load as the stack pointer and pops the
 * registers found there.  A new stack is laid out so that this pop ends in
 * spf_boot with r12 = the argument and r13 = the body. */
void spf_swap(void **save, void *load);
void spf_boot(void);
__asm__(".text\n"
        ".globl spf_swap\n"
        ".type spf_swap,@function\n"
        "spf_swap:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size spf_swap,.-spf_swap\n"
        ".globl spf_boot\n"
        ".type spf_boot,@function\n"
        "spf_boot:\n"
        "  movq %r12, %rdi\n"
        "  callq *%r13\n"
        "  ud2\n"
        ".size spf_boot,.-spf_boot\n");
#else
#include <ucontext.h>
#endif

typedef struct {
#ifdef SPF_CORO_ASM
    void *sp;
#else
    ucontext_t uc;
#endif
    char *stack;
} slot;

struct spf_coro {
    int n;
    size_t stack;
    char *map;
    size_t maplen;
    int guarded; /* a guard page under each stack */
    size_t page;
    void (*fn)(void *);
    slot *s;
    slot main;
#ifdef SPF_ASAN
    void *fake_main;
    const void *main_bottom;
    size_t main_size;
#endif
};

#ifndef SPF_CORO_ASM
static spf_coro *boot_c;
static void *boot_arg;
SPF_ENGINE static void boot_uc(void) { boot_c->fn(boot_arg); }
#endif

/* the line that names a coroutine that outgrew its stack, written at p
 * (under 160 bytes) by hand: the fault handler may call nothing else */
static char *put_num(char *p, size_t v)
{
    char d[24];
    int n = 0;
    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    while (n > 0)
        *p++ = d[--n];
    return p;
}

static char *put_str(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

static char *overflow_line(char *p, const spf_coro *c, size_t i)
{
    p = put_str(p, "rank ");
    p = put_num(p, i);
    p = put_str(p, " outgrew its stack (");
    p = put_num(p, c->stack >> 10);
    return put_str(p, " KiB, as the flow engine gives each rank); --engine simgrid gives 1 MiB");
}

/* A rank that outgrows its stack touches the guard page under it, and the
 * process would end on SIGSEGV with nothing said.  This handler runs on a
 * stack of its own: a fault in a guard page gets one line that says whose
 * stack it was, and the process ends (the parent passes the line on); any
 * other fault goes to the action that was there before.  Not under
 * AddressSanitizer, which reports stack overflows itself. */
#ifndef SPF_ASAN
static const spf_coro *live;
static struct sigaction old_segv;
static stack_t old_alt;
static char alt_stack[65536] __attribute__((aligned(16)));

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const spf_coro *c = live;
    const char *a = si->si_addr;
    if (c && c->guarded && a >= c->map && a < c->map + c->maplen && (size_t)(a - c->map) % c->stack < c->page) {
        char msg[256], *p = msg;
        p = put_str(p, "sparsim: ");
        p = overflow_line(p, c, (size_t)(a - c->map) / c->stack);
        p = put_str(p, "\n");
        ssize_t w = write(STDERR_FILENO, msg, (size_t)(p - msg));
        (void)w;
        _exit(1);
    }
    sigaction(sig, &old_segv, NULL); /* the fault happens again, under the earlier action */
}

static void watch_guards(const spf_coro *c)
{
    stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaltstack(&ss, &old_alt) != 0)
        return;
    if (sigaction(SIGSEGV, &sa, &old_segv) != 0) {
        sigaltstack(&old_alt, NULL);
        return;
    }
    live = c;
}

static void unwatch_guards(const spf_coro *c)
{
    if (live != c)
        return;
    live = NULL;
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaltstack(&old_alt, NULL);
}
#else
static void watch_guards(const spf_coro *c) { (void)c; }
static void unwatch_guards(const spf_coro *c) { (void)c; }
#endif

/* a guard page under each stack while the mappings it makes (two a stack)
 * fit under the kernel's cap (vm.max_map_count) less 8,192 for the rest of
 * the process, as the SimGrid backend does */
long spf_coro_most_guarded(void)
{
    long max_maps = 65530;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%ld", &max_maps) != 1)
            max_maps = 65530;
        fclose(f);
    }
    return (max_maps - 8192) / 2;
}

SPF_ENGINE spf_coro *spf_coros_new(int n, size_t stack, void (*fn)(void *), void *const *args, char *err, size_t errlen)
{
    long page = sysconf(_SC_PAGESIZE);
#ifdef SPF_ASAN
    if (stack < ((size_t)1 << 20)) /* AddressSanitizer's frames are larger */
        stack = (size_t)1 << 20;
#endif
    stack = (stack + (size_t)page - 1) / (size_t)page * (size_t)page;
    spf_coro *c = calloc(1, sizeof *c);
    if (c)
        c->s = calloc((size_t)n, sizeof *c->s);
    if (!c || !c->s) {
        free(c);
        snprintf(err, errlen, "out of memory for %d ranks", n);
        return NULL;
    }
    c->n = n;
    c->stack = stack;
    c->fn = fn;
    c->maplen = (size_t)n * stack;
    c->map = mmap(NULL, c->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (c->map == MAP_FAILED) {
        snprintf(err, errlen, "cannot reserve %zu MiB of address space for %d ranks' stacks: %s", c->maplen >> 20, n,
                 strerror(errno));
        free(c->s);
        free(c);
        return NULL;
    }
    int guard = n <= spf_coro_most_guarded();
    c->guarded = guard;
    c->page = (size_t)page;
    for (int i = 0; i < n; i++) {
        slot *s = &c->s[i];
        s->stack = c->map + (size_t)i * stack;
        if (guard && mprotect(s->stack, (size_t)page, PROT_NONE) != 0)
            c->guarded = 0; /* some stacks go unguarded: each is checked when it ends */
#ifdef SPF_CORO_ASM
        /* the stacks' tops staggered by a few cache lines each, within a
         * page, so that they do not all fall in the same sets of the caches */
        size_t stagger = ((size_t)i * 320) % 4096;
        if (stagger + 4096 > stack / 2)
            stagger = 0;
        uintptr_t top = ((uintptr_t)(s->stack + stack - stagger)) & ~(uintptr_t)15;
        void **sp = (void **)(top - 56);
        sp[0] = 0;                      /* r15 */
        sp[1] = 0;                      /* r14 */
        sp[2] = (void *)fn;             /* r13: the body */
        sp[3] = args[i];                /* r12: its argument */
        sp[4] = 0;                      /* rbx */
        sp[5] = 0;                      /* rbp */
        sp[6] = (void *)spf_boot;       /* where the first switch returns to */
        s->sp = sp;
#else
        (void)args;
#endif
    }
    watch_guards(c);
#ifndef SPF_CORO_ASM
    /* ucontext: each context is made when it first runs (resume) */
    c->fn = fn;
    for (int i = 0; i < n; i++)
        c->s[i].uc.uc_link = (void *)args[i]; /* kept here until the first resume */
#endif
    return c;
}

SPF_ENGINE int spf_coro_fits(const spf_coro *c, int i, char *why, size_t whylen)
{
    if (c->guarded)
        return 1;
    /* the lowest 256 bytes above where the guard page would be (a rank may
     * use the stack less a page, guarded or not): never written by a rank
     * that fits (reading them maps no memory where nothing wrote) */
    const unsigned char *low = (const unsigned char *)c->s[i].stack + c->page;
    for (int b = 0; b < 256; b++)
        if (low[b]) {
            char line[160];
            *overflow_line(line, c, (size_t)i) = '\0';
            snprintf(why, whylen, "%s", line);
            return 0;
        }
    return 1;
}

SPF_ENGINE void spf_coros_free(spf_coro *c)
{
    if (!c)
        return;
    unwatch_guards(c);
    munmap(c->map, c->maplen);
    free(c->s);
    free(c);
}

#ifdef SPF_ASAN
#define ENTER_FIBER(c, i) __sanitizer_start_switch_fiber(&(c)->fake_main, (c)->s[i].stack, (c)->stack)
#define BACK_IN_MAIN(c) __sanitizer_finish_switch_fiber((c)->fake_main, NULL, NULL)
#define LEAVE_FIBER(c, fake) __sanitizer_start_switch_fiber(fake, (c)->main_bottom, (c)->main_size)
#define IN_FIBER(c, fake) __sanitizer_finish_switch_fiber(fake, &(c)->main_bottom, &(c)->main_size)
#else
#define ENTER_FIBER(c, i) ((void)0)
#define BACK_IN_MAIN(c) ((void)0)
#define LEAVE_FIBER(c, fake) ((void)0)
#define IN_FIBER(c, fake) ((void)0)
#endif

#ifndef SPF_CORO_ASM
SPF_ENGINE static int started_flag(spf_coro *c, int i) { return c->s[i].uc.uc_stack.ss_sp != NULL; }
#endif

SPF_ENGINE void spf_coro_resume(spf_coro *c, int i)
{
    ENTER_FIBER(c, i);
#ifdef SPF_CORO_ASM
    spf_swap(&c->main.sp, c->s[i].sp);
#else
    if (!started_flag(c, i)) {
        void *arg = c->s[i].uc.uc_link;
        getcontext(&c->s[i].uc);
        c->s[i].uc.uc_stack.ss_sp = c->s[i].stack;
        c->s[i].uc.uc_stack.ss_size = c->stack;
        c->s[i].uc.uc_link = NULL;
        boot_c = c;
        boot_arg = arg;
        makecontext(&c->s[i].uc, boot_uc, 0);
    }
    swapcontext(&c->main.uc, &c->s[i].uc);
#endif
    BACK_IN_MAIN(c);
}

/* the lines a resume reads first: the saved registers and the frames of
 * the wait that yielded (SPF_PREFETCH_LINES of 64 bytes from the saved
 * stack pointer up) */
#ifndef SPF_PREFETCH_LINES
#define SPF_PREFETCH_LINES 8
#endif
SPF_ENGINE void spf_coro_prefetch(const spf_coro *c, int i)
{
#ifdef SPF_CORO_ASM
    const char *sp = c->s[i].sp;
    for (int l = 0; l < SPF_PREFETCH_LINES; l++)
        __builtin_prefetch(sp + 64 * l, 1, 3);
#else
    (void)c;
    (void)i;
#endif
}

SPF_ENGINE void spf_coro_started(spf_coro *c)
{
#ifdef SPF_ASAN
    IN_FIBER(c, NULL);
#else
    (void)c;
#endif
}

SPF_ENGINE void spf_coro_yield(spf_coro *c, int i)
{
#ifdef SPF_ASAN
    void *fake = NULL;
#endif
    LEAVE_FIBER(c, &fake);
#ifdef SPF_CORO_ASM
    spf_swap(&c->s[i].sp, c->main.sp);
#else
    swapcontext(&c->s[i].uc, &c->main.uc);
#endif
    IN_FIBER(c, fake);
}

SPF_ENGINE void spf_coro_exit(spf_coro *c, int i)
{
#ifdef SPF_ASAN
    __sanitizer_start_switch_fiber(NULL, c->main_bottom, c->main_size);
#endif
#ifdef SPF_CORO_ASM
    spf_swap(&c->s[i].sp, c->main.sp);
#else
    swapcontext(&c->s[i].uc, &c->main.uc);
#endif
    __builtin_unreachable();
}
