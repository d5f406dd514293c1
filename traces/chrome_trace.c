/* chrome_trace.c - timeline in the Chrome trace event format (opens in Perfetto).
 *
 * Layout: one process ("sparsim"), one thread track per rank ("rank N") that
 * holds the rank's phase spans as complete ("X") events; messages are async
 * ("b"/"e") slices named after their phase, so overlapping transfers never
 * break the nesting Perfetto requires on a thread track.  Timestamps are in
 * microseconds as the format wants, printed with nanosecond resolution.
 * Message events are capped (--trace-msgs) because browsers choke on traces
 * of millions of events; phase spans are always written.  A disturbed run
 * adds its disturbances as complete events of category "disturbance" on the
 * rank's track (a straggler's compute, the detours that held it), within the
 * rank's phase spans; other jobs' flows are async slices of a second process,
 * "background traffic".
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

struct sp_chrome_writer {
    sp_part_file pf;
    FILE *f; /* = pf.f */
    const char *const *phases;
    uint64_t max_msgs, nmsgs, dropped;
    int first;
    int background; /* the background traffic's track is named */
    uint64_t nflows;
    int gpn; /* GPUs per node: > 1 gives each node a process of its own */
};

/* the process of a rank's track: 0 without nodes, 2 + its node with them
 * (1 is the background traffic's) */
static int pid_of(const sp_chrome_writer *w, int rank) { return w->gpn ? 2 + rank / w->gpn : 0; }

static void sep(sp_chrome_writer *w)
{
    if (!w->first)
        fputs(",\n", w->f);
    w->first = 0;
}

static long long to_ns(double seconds) { return (long long)(seconds * 1e9 + (seconds >= 0 ? 0.5 : -0.5)); }

/* microseconds with 3 decimals (= nanoseconds), no locale surprises */
static void put_ns(FILE *f, long long ns)
{
    long long us = ns / 1000, rem = ns % 1000;
    if (rem < 0) {
        rem += 1000;
        us -= 1;
    }
    fprintf(f, "%lld.%03lld", us, rem);
}

static void put_us(FILE *f, double seconds) { put_ns(f, to_ns(seconds)); }

/* a complete slice [t0, t1]: its start and its end are rounded, so that a
 * slice within another stays within it on the nanosecond grid */
static void put_span(FILE *f, double t0, double t1)
{
    long long a = to_ns(t0), b = to_ns(t1);
    fputs(",\"ts\":", f);
    put_ns(f, a);
    fputs(",\"dur\":", f);
    put_ns(f, b - a);
}

sp_chrome_writer *sp_chrome_open(const char *path, int nranks, int gpus_per_node, const char *const *phase_names,
                                 uint64_t max_msgs, char *err, size_t errlen)
{
    sp_chrome_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (sp_part_open(&w->pf, path, err, errlen) != 0) {
        free(w);
        return NULL;
    }
    w->f = w->pf.f;
    w->phases = phase_names;
    w->max_msgs = max_msgs;
    w->first = 1;
    w->gpn = gpus_per_node > 1 ? gpus_per_node : 0;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", w->f);
    if (!w->gpn) {
        sep(w);
        fputs("{\"ph\":\"M\",\"pid\":0,\"name\":\"process_name\",\"args\":{\"name\":\"sparsim\"}}", w->f);
    }
    for (int r = 0; r < nranks; r++) {
        int pid = pid_of(w, r);
        if (w->gpn && r % w->gpn == 0) {
            sep(w);
            fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"node %d\"}}", pid,
                    r / w->gpn);
            sep(w);
            fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
                    pid, pid);
        }
        sep(w);
        if (w->gpn)
            fprintf(w->f,
                    "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"rank %d (GPU %d)\"}}",
                    pid, r, r, r % w->gpn);
        else
            fprintf(w->f, "{\"ph\":\"M\",\"pid\":0,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"rank %d\"}}",
                    r, r);
        sep(w);
        fprintf(w->f, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
                pid, r, r);
    }
    return w;
}

void sp_chrome_span(sp_chrome_writer *w, const sp_span_event *e)
{
    if (!(e->t1 > e->t0))
        return; /* a phase a rank passed through without spending time */
    sep(w);
    fprintf(w->f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"phase\",\"name\":\"%s\"", pid_of(w, e->rank),
            e->rank, w->phases[e->phase]);
    put_span(w->f, e->t0, e->t1);
    fprintf(w->f, ",\"args\":{\"iter\":%d}}", e->iter);
}

void sp_chrome_slice(sp_chrome_writer *w, const sp_slice_event *e)
{
    if (!(e->t1 > e->t0))
        return;
    if (e->rank >= 0) {
        sep(w);
        fprintf(w->f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"disturbance\",\"name\":\"%s\"",
                pid_of(w, e->rank), e->rank, e->name);
        put_span(w->f, e->t0, e->t1);
        fprintf(w->f, ",\"args\":{\"iter\":%d", e->iter);
        if (e->factor > 0)
            fprintf(w->f, ",\"slowdown\":%.6g", e->factor);
        fputs("}}", w->f);
        return;
    }
    if (!w->background) {
        sep(w);
        fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"background traffic\"}}", w->f);
        sep(w);
        fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":1}}", w->f);
        w->background = 1;
    }
    uint64_t id = ++w->nflows; /* a category of their own: ids apart from the messages' */
    sep(w);
    fprintf(w->f, "{\"ph\":\"b\",\"pid\":1,\"tid\":0,\"cat\":\"background\",\"name\":\"%s\",\"id\":%llu,\"ts\":",
            e->name, (unsigned long long)id);
    put_us(w->f, e->t0);
    fprintf(w->f, ",\"args\":{\"src_host\":%d,\"dst_host\":%d,\"bytes\":%.0f}}", e->src, e->dst, e->bytes);
    sep(w);
    fprintf(w->f, "{\"ph\":\"e\",\"pid\":1,\"tid\":0,\"cat\":\"background\",\"name\":\"%s\",\"id\":%llu,\"ts\":",
            e->name, (unsigned long long)id);
    put_us(w->f, e->t1);
    fputs("}", w->f);
}

void sp_chrome_msg(sp_chrome_writer *w, const sp_msg_event *e)
{
    if (w->nmsgs >= w->max_msgs) {
        w->dropped++;
        return;
    }
    uint64_t id = ++w->nmsgs;
    int track = e->src >= 0 ? e->src : e->dst; /* a switch's message: on the GPU it goes to */
    sep(w);
    fprintf(w->f,
            "{\"ph\":\"b\",\"pid\":%d,\"tid\":%d,\"cat\":\"msg\",\"name\":\"%s\",\"id\":%llu,\"ts\":",
            pid_of(w, track), track, w->phases[e->phase], (unsigned long long)id);
    put_us(w->f, e->t_post);
    fprintf(w->f, ",\"args\":{\"iter\":%d,\"src\":%d,\"dst\":%d,\"tag\":%d,\"bytes\":%llu}}", e->iter, e->src,
            e->dst, e->tag, (unsigned long long)e->bytes);
    sep(w);
    fprintf(w->f, "{\"ph\":\"e\",\"pid\":%d,\"tid\":%d,\"cat\":\"msg\",\"name\":\"%s\",\"id\":%llu,\"ts\":",
            pid_of(w, track), track, w->phases[e->phase], (unsigned long long)id);
    put_us(w->f, e->t_done);
    fputs("}", w->f);
}

int sp_chrome_close(sp_chrome_writer *w, int ok, uint64_t *dropped, char *err, size_t errlen)
{
    fputs("\n]}\n", w->f);
    if (dropped)
        *dropped = w->dropped;
    int rc = sp_part_close(&w->pf, ok, err, errlen);
    free(w);
    return rc;
}
