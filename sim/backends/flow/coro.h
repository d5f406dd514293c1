/* coro.h - the flow engine's ranks as coroutines: one stack each, switched
 * by hand.
 *
 * The flow engine (flow_engine.c) runs P ranks in one thread; each rank is a
 * coroutine that runs until it blocks (a wait, a sleep, the barrier) and
 * hands the core back to the scheduler, which resumes it when what it waits
 * for has happened.  A switch saves and restores only the registers a call
 * preserves (x86-64: rbx, rbp, r12-r15 and the stack pointer), a few
 * nanoseconds; elsewhere ucontext does it, with a system call per switch.
 * Stacks come from one mapping for all ranks, reserved, not committed: a
 * rank's stack costs the pages its code touches.
 */
#ifndef SPARSIM_FLOW_CORO_H
#define SPARSIM_FLOW_CORO_H

#include <stddef.h>

typedef struct spf_coro spf_coro;

/* n coroutines of `stack` bytes each (1 MiB at least under
 * AddressSanitizer, whose frames are larger), fn(arg_i) their body; NULL
 * with a message when the stacks cannot be mapped.  A body must not return: it
 * ends with spf_coro_exit. */
spf_coro *spf_coros_new(int n, size_t stack, void (*fn)(void *), void *const *args, char *err, size_t errlen);
void spf_coros_free(spf_coro *c);

/* the most coroutines whose stacks get guard pages (vm.max_map_count) */
long spf_coro_most_guarded(void);
/* Whether coroutine i has kept within its stack: with a guard page under
 * each stack an overflow faults there (and the process ends with a line
 * that names the coroutine); past vm.max_map_count's room for guards (or
 * where one could not be set), 0 with that line in why when the lowest
 * bytes above the guard page's place were written. */
int spf_coro_fits(const spf_coro *c, int i, char *why, size_t whylen);
/* from the scheduler: run coroutine i until it yields or exits */
void spf_coro_resume(spf_coro *c, int i);
/* from the scheduler: start bringing coroutine i's saved registers and the
 * frames above them into the caches, while another runs (at thousands of
 * ranks each one's stack is cold by its turn) */
void spf_coro_prefetch(const spf_coro *c, int i);
/* first thing in a coroutine's body (the sanitizers follow the switch) */
void spf_coro_started(spf_coro *c);
/* from coroutine i: back to the scheduler */
void spf_coro_yield(spf_coro *c, int i);
/* from coroutine i, at the end of its body: back for good */
void spf_coro_exit(spf_coro *c, int i) __attribute__((noreturn));

#endif
