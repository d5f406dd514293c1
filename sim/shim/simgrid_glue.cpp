/* sg_glue.cpp - the few SimGrid 3.32 calls the plain C API lacks.
 *
 * SimGrid reports platform errors and deadlocks with C++ exceptions, which C
 * cannot catch: an invalid platform file would abort the process instead of
 * giving one clear line.  This file catches them, and also exposes two
 * per-comm queries the SimGrid backend needs (the matched sender, used to keep
 * messages of one pair in order, and the exact completion time), flows between
 * hosts that no actor receives (other jobs' background traffic), and the
 * engine's signal that no actor can go on (a failed rank's run ends by it).
 */
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>

#include <cstdio>
#include <exception>
#include <vector>

extern "C" {

int spg_load_platform(const char* path, char* err, size_t errlen)
{
  try {
    simgrid_load_platform(path);
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(err, errlen, "%s", e.what());
  } catch (...) {
    std::snprintf(err, errlen, "unknown error");
  }
  return -1;
}

int spg_run(char* err, size_t errlen)
{
  try {
    simgrid_run();
    return 0;
  } catch (const std::exception& e) {
    std::snprintf(err, errlen, "%s", e.what());
  } catch (...) {
    std::snprintf(err, errlen, "unknown error");
  }
  return -1;
}

/* Like sg_comm_wait_any (same ownership rules: the finished comm's reference
 * is released, the others keep theirs), and also returns when the finished
 * comm completed, which can be earlier than now. */
long spg_wait_any(sg_comm_t* comms, size_t count, double* finish_time)
{
  std::vector<simgrid::s4u::CommPtr> v; /* not static: the actor blocks inside wait_any */
  v.reserve(count);
  for (size_t i = 0; i < count; i++)
    v.emplace_back(comms[i], false);
  ssize_t pos = -1;
  try {
    pos = simgrid::s4u::Comm::wait_any(v);
  } catch (...) {
    pos = -1;
  }
  if (pos >= 0 && finish_time)
    *finish_time = v[pos]->get_finish_time();
  for (size_t i = 0; i < count; i++)
    if (pos < 0 || static_cast<size_t>(pos) != i)
      v[i]->add_ref();
  return pos;
}

/* Waits for one comm (releasing its reference, as sg_comm_wait does);
 * returns 0, or -1 if it failed. */
long spg_wait_one(sg_comm_t comm, double* finish_time)
{
  simgrid::s4u::CommPtr c(comm, false);
  try {
    c->wait();
  } catch (...) {
    return -1;
  }
  if (finish_time)
    *finish_time = c->get_finish_time();
  return 0;
}

/* ---- background traffic: flows between hosts that no actor receives ---- */

namespace {
struct bg_flow {
  simgrid::s4u::CommPtr comm;
  int src;
  int dst;
  double bytes;
};
std::vector<bg_flow> bg_inflight;
} // namespace

/* starts a flow of `bytes` from one host to another (no actor on either side) */
void spg_bg_start(sg_host_t from, sg_host_t to, double bytes, int src, int dst)
{
  bg_inflight.push_back({simgrid::s4u::Comm::sendto_async(from, to, static_cast<uint64_t>(bytes)), src, dst, bytes});
}

/* the flows that have finished: done(arg, ...) for each, then forgotten */
void spg_bg_reap(void (*done)(void* arg, int src, int dst, double bytes, double t0, double t1), void* arg)
{
  for (size_t i = 0; i < bg_inflight.size();) {
    bg_flow& f = bg_inflight[i];
    bool finished = false;
    try {
      finished = f.comm->test();
    } catch (...) {
      finished = true; /* a failed flow is gone as well */
    }
    if (finished) {
      if (done)
        done(arg, f.src, f.dst, f.bytes, f.comm->get_start_time(), f.comm->get_finish_time());
      bg_inflight[i] = bg_inflight.back();
      bg_inflight.pop_back();
    } else {
      i++;
    }
  }
}

/* the run is over: flows still under way are cancelled (they would keep the
 * engine going after the last rank has finished) */
void spg_bg_cancel_all(void)
{
  for (auto& f : bg_inflight) {
    try {
      f.comm->cancel();
    } catch (...) {
    }
  }
  bg_inflight.clear();
}

/* fn() when the engine finds that no actor can go on, before it ends them */
void spg_on_deadlock(void (*fn)(void))
{
  static bool connected = false;
  static void (*callback)(void) = nullptr;
  callback = fn;
  if (not connected) {
    simgrid::s4u::Engine::on_deadlock_cb([]() {
      if (callback)
        callback();
    });
    connected = true;
  }
}

/* pid of the actor whose send matched this receive, or -1 if not matched yet */
long spg_comm_sender_pid(sg_comm_t comm)
{
  const simgrid::s4u::Actor* a = comm->get_sender();
  return a ? static_cast<long>(a->get_pid()) : -1L;
}
}
