/* simgrid_glue.cpp - the few SimGrid 3.32 calls the plain C API lacks.
 *
 * SimGrid reports platform errors and deadlocks with C++ exceptions, which C
 * cannot catch: an invalid platform file would abort the process instead of
 * giving one clear line.  This file catches them, and also exposes two
 * per-comm queries the SimGrid backend needs (the matched sender, used to keep
 * messages of one pair in order, and the exact completion time), flows between
 * hosts that no actor receives (other jobs' background traffic), and the
 * engine's signal that no actor can go on (a failed rank's run ends by it),
 * and the time a message takes alone on its route under the network model
 * (for messages that bypass bandwidth sharing: --unshared-below).
 * simgrid_glue.h declares them for C.
 */
#include "simgrid_glue.h"
#include "catch_message.hpp"

#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

extern "C" {

int spg_load_platform(const char* path, char* err, size_t errlen)
{
  return spg::catch_message([&] { simgrid_load_platform(path); }, err, errlen);
}

int spg_run(char* err, size_t errlen)
{
  return spg::catch_message([&] { simgrid_run(); }, err, errlen);
}

/* Like sg_comm_wait_any (same ownership rules: the finished comm's reference
 * is released, the others keep theirs), and also returns when the finished
 * comm completed, which can be earlier than now. */
long spg_wait_any(sg_comm_t* comms, size_t count, double* finish_time)
{
  long pos = spg_wait_any_for(comms, count, -1, finish_time);
  return pos == -3 ? -1 : pos;
}

/* spg_wait_any with a timeout (< 0: none): -3 when it passed with no comm
 * finished (every comm keeps its reference), -1 if the wait failed */
long spg_wait_any_for(sg_comm_t* comms, size_t count, double timeout, double* finish_time)
{
  std::vector<simgrid::s4u::CommPtr> v; /* not static: the actor blocks inside wait_any_for */
  v.reserve(count);
  for (size_t i = 0; i < count; i++)
    v.emplace_back(comms[i], false);
  ssize_t pos = -1;
  bool failed = false;
  try {
    pos = simgrid::s4u::Comm::wait_any_for(v, timeout);
  } catch (...) {
    failed = true;
  }
  if (pos >= 0 && finish_time)
    *finish_time = v[pos]->get_finish_time();
  for (size_t i = 0; i < count; i++)
    if (pos < 0 || static_cast<size_t>(pos) != i)
      v[i]->add_ref();
  return failed ? -1 : pos < 0 ? -3 : pos;
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

/* a flow between two hosts that no actor receives (a push into a node's
 * switch, nvswitch.c): a comm the caller waits for like any other, with the
 * reference sg_mailbox_put_async's comms carry */
sg_comm_t spg_sendto_async(sg_host_t from, sg_host_t to, double bytes)
{
  simgrid::s4u::CommPtr c = simgrid::s4u::Comm::sendto_async(from, to, static_cast<uint64_t>(bytes));
  c->add_ref();
  return c.get();
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

/* cancels a comm that will never complete and releases its reference */
void spg_comm_cancel(sg_comm_t comm)
{
  simgrid::s4u::CommPtr c(comm, false);
  try {
    c->cancel();
  } catch (...) {
  }
}

/* pid of the actor whose send matched this receive, or -1 if not matched yet */
long spg_comm_sender_pid(sg_comm_t comm)
{
  const simgrid::s4u::Actor* a = comm->get_sender();
  return a ? static_cast<long>(a->get_pid()) : -1L;
}

/* ---- a message alone on its route, as the network model times it ----
 *
 * SimGrid 3.32's CM02 family (src/surf/network_cm02.cpp, comm_action_set_bounds
 * and comm_action_set_variable): a flow of S bytes over links of latencies
 * l_i and bandwidths b_i waits L * f_lat(S), L = sum l_i, then moves at
 * f_bw(S) * min(min_i b_i, gamma / (2 L)) when nothing shares its links
 * (gamma: network/TCP-gamma, the TCP window bound).  CM02 and LV08 have one
 * factor each (network/latency-factor, network/bandwidth-factor: 1 and 1,
 * 13.01 and 0.97); SMPI's are piecewise in S (smpi/lat-factor, smpi/bw-factor:
 * "S0:f0;S1:f1;...", the factor of the largest threshold below S, 1 below
 * the first).  tests/test_unshared.c holds this against SimGrid's own timing
 * of a lone message for each model and for sizes across SMPI's pieces. */
namespace {
struct piece_table {
  std::vector<std::pair<double, double>> pieces; /* threshold, factor; ascending */
  double at(double size) const
  {
    double current = 1.0;
    for (auto const& p : pieces) {
      if (size <= p.first)
        return current;
      current = p.second;
    }
    return current;
  }
};
struct uncontended_model {
  bool piecewise = false;
  double lat_factor = 1.0, bw_factor = 1.0, gamma = 0.0;
  piece_table lat, bw;
};
uncontended_model um;

piece_table parse_pieces(const std::string& text)
{
  piece_table t;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(pos, end - pos);
    size_t colon     = item.find(':');
    if (colon != std::string::npos)
      t.pieces.emplace_back(std::strtod(item.substr(0, colon).c_str(), nullptr),
                            std::strtod(item.substr(colon + 1).c_str(), nullptr));
    pos = end + 1;
  }
  std::sort(t.pieces.begin(), t.pieces.end());
  return t;
}
} // namespace

/* reads the network model's factors (after the model is chosen); -1 if
 * SimGrid does not know one of them */
int spg_uncontended_init(int piecewise)
{
  um           = uncontended_model();
  um.piecewise = piecewise != 0;
  try {
    um.gamma = simgrid::config::get_value<double>("network/TCP-gamma");
    if (um.piecewise) {
      um.lat = parse_pieces(simgrid::config::get_value<std::string>("smpi/lat-factor"));
      um.bw  = parse_pieces(simgrid::config::get_value<std::string>("smpi/bw-factor"));
    } else {
      um.lat_factor = simgrid::config::get_value<double>("network/latency-factor");
      um.bw_factor  = simgrid::config::get_value<double>("network/bandwidth-factor");
    }
  } catch (...) {
    return -1;
  }
  return 0;
}

namespace {
/* the time alone over a route of these links and total latency */
double alone_time(const std::vector<simgrid::s4u::Link*>& links, double lat, double bytes)
{
  double bw = -1;
  for (auto const* l : links)
    if (l->get_sharing_policy() != simgrid::s4u::Link::SharingPolicy::WIFI && (bw < 0 || l->get_bandwidth() < bw))
      bw = l->get_bandwidth();
  double lf = um.piecewise ? um.lat.at(bytes) : um.lat_factor;
  double bf = um.piecewise ? um.bw.at(bytes) : um.bw_factor;
  if (lat > 0 && um.gamma > 0 && (bw < 0 || um.gamma / (2.0 * lat) < bw))
    bw = um.gamma / (2.0 * lat);
  double t = lat * lf;
  if (bytes > 0 && bw > 0)
    t += bytes / (bf * bw);
  return t;
}
} // namespace

/* the network model's latency and bandwidth factors for a message of
 * `bytes` (after spg_uncontended_init; the flow engine prices with them too) */
void spg_model_factors(double bytes, double* lat_factor, double* bw_factor)
{
  *lat_factor = um.piecewise ? um.lat.at(bytes) : um.lat_factor;
  *bw_factor  = um.piecewise ? um.bw.at(bytes) : um.bw_factor;
}

/* seconds a message of `bytes` takes from `from` to `to` with nothing else
 * on its links; -1 if there is no route */
double spg_uncontended_time(sg_host_t from, sg_host_t to, double bytes)
{
  std::vector<simgrid::s4u::Link*> links;
  double lat = 0;
  from->route_to(to, links, &lat);
  if (links.empty() && lat <= 0)
    return -1;
  return alone_time(links, lat, bytes);
}

/* ---- messages that bypass the sharing: each link serves them in turn ----
 *
 * A message of S bytes posted at `start` occupies each link l of its route
 * for S / r_l (r_l: the link's bandwidth times the model's factor) from when
 * the link has finished the bypassing messages posted before it, all links
 * at once (cut-through: a message streams through its route); it arrives
 * when the last of them is done, and not before its time alone T(S):
 *   begin_l = max(start, free_l),  free_l = begin_l + S / r_l,
 *   arrive  = max(start + T(S), max_l free_l).
 * Alone, every begin_l is start and it arrives at start + T(S), exactly as
 * SimGrid would have it.  N equal messages through one link end at
 * start + N S / r, as under max-min sharing; they end one after another
 * instead of together, which a phase that waits for all of them does not
 * see.  What it leaves out: a message's rate does not change while it is
 * under way, and links serve in the order of posting. */
namespace {
std::unordered_map<const simgrid::s4u::Link*, double> link_free;
}

double spg_unshared_arrival(sg_host_t from, sg_host_t to, double bytes, double start)
{
  std::vector<simgrid::s4u::Link*> links;
  double lat = 0;
  from->route_to(to, links, &lat);
  if (links.empty() && lat <= 0)
    return -1;
  double bf = um.piecewise ? um.bw.at(bytes) : um.bw_factor;
  double arrive = start + alone_time(links, lat, bytes);
  for (auto const* l : links) {
    double rate = bf * l->get_bandwidth();
    if (l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE || rate <= 0)
      continue; /* not shared */
    double& f   = link_free[l];
    double begin = f > start ? f : start;
    f            = begin + bytes / rate;
    if (f > arrive)
      arrive = f;
  }
  return arrive;
}

/* a new run: every link idle */
void spg_unshared_reset(void)
{
  link_free.clear();
}
}
