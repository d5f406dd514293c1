/* transport.c - the shim on real MPI: one process per rank, its messages.
 *
 * The same algorithm code runs unchanged: point to point is MPI_Isend and
 * MPI_Irecv (MPI's own matching and non-overtaking order), the collectives
 * are the shim's own, so the message list equals the simulated one.  Local
 * kernels really run and take real time; sp_compute charges nothing.
 * Every send and receive records its half of the message (replay.c), and
 * every wait is watched (watchdog.c).  Iterations start after a
 * synchronisation of all ranks (untraced), as in the reference codes; it
 * also tells every rank whether one has failed.
 */
#include "mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RETIRED_MAX 64

/* size-only payloads travel through one zeroed buffer, grown as needed:
 * sends only read it, and receives into it discard what arrives; smaller
 * ones that pending requests may still use are freed at the end.  Requests
 * are recycled, and so is the request array of a waitall. */
static struct {
    char *scratch;
    size_t scratch_cap;
    char *retired[RETIRED_MAX];
    int nretired;
    sp_req *free_reqs;
    MPI_Request *mr;
    int mrcap;
} recycled;

const char *sp_backend_name(void) { return "mpi"; }

int sp_backend_is_root(void)
{
    int r = 0, init = 0;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r == 0;
}

double spm_now(const sp_ctx *c)
{
    (void)c;
    return MPI_Wtime() + spm_clock.offset - spm_clock.origin;
}

static void *scratch_buf(size_t bytes)
{
    if (bytes > recycled.scratch_cap) {
        /* the buffer at least doubles each time, so 64 slots outlast any size */
        if (recycled.scratch && recycled.nretired < RETIRED_MAX)
            recycled.retired[recycled.nretired++] = recycled.scratch;
        recycled.scratch_cap = bytes * 2;
        recycled.scratch = calloc(1, recycled.scratch_cap);
        if (!recycled.scratch)
            recycled.scratch_cap = 0;
    }
    return recycled.scratch;
}

/* ---- point to point ---- */

static sp_req *req_new(void)
{
    sp_req *r = recycled.free_reqs;
    if (r) {
        recycled.free_reqs = r->next_free;
        memset(r, 0, sizeof *r);
        return r;
    }
    return calloc(1, sizeof *r);
}

static void req_free(sp_req *r)
{
    r->next_free = recycled.free_reqs;
    recycled.free_reqs = r;
}

static sp_req *mpi_isend(sp_ctx *c, int dst, int tag, const void *buf, size_t bytes, double t_post)
{
    (void)t_post; /* the shim leaves it 0 on ranks that write no trace; every send is timed here */
    if (bytes > (size_t)0x7fffffff) {
        sp_fail(c->shim, "rank %d: a message of %zu bytes is more than MPI's int count allows", c->rank, bytes);
        return NULL;
    }
    if (!buf && bytes && !(buf = scratch_buf(bytes)))
        return NULL;
    sp_req *r = req_new();
    if (!r)
        return NULL;
    r->is_send = 1;
    r->peer = dst;
    r->tag = tag;
    r->cap = bytes;
    MPI_Isend(buf, (int)bytes, MPI_BYTE, dst, tag, MPI_COMM_WORLD, &r->mpi);
    half_event e = {c->iter, c->phase, c->rank, dst, tag, spm_recorded.seq++, bytes, spm_now(c)};
    spm_record(&spm_recorded.sends, &e);
    return r;
}

static sp_req *mpi_irecv(sp_ctx *c, int src, int tag, void *buf, size_t cap)
{
    if (cap > (size_t)0x7fffffff) {
        sp_fail(c->shim, "rank %d: a receive of %zu bytes is more than MPI's int count allows", c->rank, cap);
        return NULL;
    }
    if (!buf && cap && !(buf = scratch_buf(cap)))
        return NULL;
    sp_req *r = req_new();
    if (!r)
        return NULL;
    r->peer = src;
    r->tag = tag;
    r->cap = cap;
    MPI_Irecv(buf, (int)cap, MPI_BYTE, src, tag, MPI_COMM_WORLD, &r->mpi);
    /* recorded in posting order, which is MPI's matching order for one (src, tag) */
    half_event e = {c->iter, -1, src, c->rank, tag, spm_recorded.seq++, 0, 0};
    r->rec = spm_recorded.recvs.n;
    if (!spm_record(&spm_recorded.recvs, &e))
        r->rec = (size_t)-1;
    return r;
}

/* the next request of recycled.mr[0..n) to complete, under the watchdog */
static void wait_any(int n, int *idx, MPI_Status *st)
{
#ifdef SPARSIM_SMPI
    MPI_Waitany(n, recycled.mr, idx, st);
#else
    int flag = 0;
    for (;;) {
        MPI_Testany(n, recycled.mr, idx, &flag, st);
        if (flag)
            return;
        if (spm_job.expired)
            spm_expire();
    }
#endif
}

static int mpi_waitall(sp_ctx *c, sp_req **reqs, int n, size_t *sizes)
{
    if (n > recycled.mrcap) {
        int cap = n > 2 * recycled.mrcap ? n : 2 * recycled.mrcap;
        MPI_Request *a = realloc(recycled.mr, (size_t)cap * sizeof *a);
        if (!a)
            return SP_ERR_MEM;
        recycled.mr = a;
        recycled.mrcap = cap;
    }
    int left = 0;
    for (int i = 0; i < n; i++) {
        recycled.mr[i] = reqs[i] ? reqs[i]->mpi : MPI_REQUEST_NULL;
        left += reqs[i] != NULL;
    }
    /* what the watchdog's line says of this wait */
    spm_job.phase = c->shim->rep->phase_names[c->phase];
    spm_job.reqs = reqs;
    spm_job.nreqs = n;
    while (left > 0) {
        int idx;
        MPI_Status one;
        spm_wait_begin(WAIT_P2P, NULL, c->iter, 0, 1);
        wait_any(n, &idx, &one);
        spm_wait_end();
        if (idx == MPI_UNDEFINED)
            break;
        left--;
        sp_req *r = reqs[idx];
        r->mpi = MPI_REQUEST_NULL; /* done: the watchdog's line looks for those still pending */
        if (!r->is_send) {
            int cnt = 0;
            MPI_Get_count(&one, MPI_BYTE, &cnt);
            /* a message larger than the buffer is MPI_ERR_TRUNCATE, fatal under MPI's default handler */
            if (r->rec != (size_t)-1) {
                half_event *e = (half_event *)spm_recorded.recvs.e + r->rec;
                e->bytes = (uint64_t)cnt;
                e->t = spm_now(c);
            }
            if (sizes)
                sizes[idx] = (size_t)cnt;
        } else if (sizes) {
            sizes[idx] = r->cap;
        }
    }
    spm_job.reqs = NULL;
    spm_job.nreqs = 0;
    for (int i = 0; i < n; i++) {
        if (!reqs[i]) {
            if (sizes)
                sizes[i] = 0;
            continue;
        }
        req_free(reqs[i]);
        reqs[i] = NULL;
    }
    return SP_OK;
}

static void mpi_advance(sp_ctx *c, double seconds)
{
    (void)c;
    (void)seconds; /* the kernel really ran: its time has passed already */
}

/* The synchronisation between iterations: every rank arrives, and all learn
 * whether one has failed (then every rank stops, with its reason). */
static void mpi_barrier(sp_ctx *c, void (*last)(void *), void *arg)
{
    sp_shim *sh = c->shim;
    int mine = sh->failed ? spm_run.size - spm_run.rank : 0, first = 0;
    MPI_Request rq;
    MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &rq);
    spm_wait_for(&rq, "the synchronisation between iterations", c->iter, 0);
    if (first) {
        int who = spm_run.size - first;
        char why[sizeof sh->errmsg];
        snprintf(why, sizeof why, "%s", sh->errmsg);
        MPI_Ibcast(why, (int)sizeof why, MPI_CHAR, who, MPI_COMM_WORLD, &rq);
        spm_wait_for(&rq, "the synchronisation between iterations", c->iter, 0);
        why[sizeof why - 1] = '\0';
        spm_name_failure(sh->errmsg, sizeof sh->errmsg, who, why);
        sh->failed = 1;
        spm_run.fail_agreed = 1;
    }
    if (last)
        last(arg); /* each process acts for its own rank (its events are recorded, not live) */
}

const sp_backend spm_transport = {"mpi", mpi_isend, mpi_irecv, mpi_waitall, spm_now, mpi_advance, mpi_barrier, NULL};

void spm_transport_free(void)
{
    while (recycled.free_reqs) {
        sp_req *r = recycled.free_reqs;
        recycled.free_reqs = r->next_free;
        free(r);
    }
    free(recycled.mr);
    for (int i = 0; i < recycled.nretired; i++)
        free(recycled.retired[i]);
    free(recycled.scratch);
    recycled.mr = NULL;
    recycled.mrcap = 0;
    recycled.nretired = 0;
    recycled.scratch = NULL;
    recycled.scratch_cap = 0;
}
