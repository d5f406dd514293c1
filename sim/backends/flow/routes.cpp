/* routes.cpp - the platform's routes as the fluid network's links, and how
 * SimGrid 3.32's network models price a message on them (routes.h).
 *
 * The model, as SimGrid 3.32 sets up a comm (src/surf/network_cm02.cpp,
 * NetworkCm02Model::communicate and the comm_action_set_* helpers it calls),
 * for a message of S bytes on a route of links l with latencies lat_l and
 * bandwidths B_l, L = sum lat_l:
 *   latency   L x f_lat(S)                      (nothing moves meanwhile)
 *   penalty   L + sum over the route of weight_S / B_l; exactly 1 when the
 *             latency is 0 (the variable is created enabled with weight 1)
 *   bound     min(min_l B_l, gamma / (2 L)) on the solved value (gamma:
 *             network/TCP-gamma; the raw L, before the factor)
 *   rate      f_bw(S) x the solved value
 *   links     every SHARED link of the route with consumption 1, and with
 *             cross-traffic every link of the reverse route with 0.05 (one
 *             link in both: 1.05); a FATPIPE link never shares: it bounds
 *             the value at B_l / its consumption.
 * CM02: f_lat = f_bw = 1, weight_S = 0; LV08: 13.01, 0.97, 20537; SMPI:
 * piecewise in S (smpi/lat-factor, smpi/bw-factor), weight_S 8775.  The
 * model's own options are read back from SimGrid's configuration, so a
 * user's --cfg would be followed too.
 */
#include "routes.h"
#include "sim/backends/simgrid/simgrid_glue.h"
#include "sim/backends/simgrid/zone_links.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <stdexcept>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

/* a route as the model sees it, whatever the message's size */
struct route {
  std::vector<int> links;
  std::vector<double> coefs;
  double lat      = 0;        /* raw sum of the links' latencies */
  double min_bw   = INFINITY; /* smallest bandwidth of the route's links */
  double ws       = 0;        /* sum of weight_S / B_l over the route */
  double fat      = INFINITY; /* bound of the FATPIPE links */
  bool empty      = true;
};

/* what the routes need of a SimGrid link, read once: every route crosses
 * several, and a route is built for each pair an all-to-all meets */
struct linfo {
  int id     = -1;    /* in the fluid network; -1: not shared there (yet) */
  bool never = false; /* cannot bind (feeds_below) */
  simgrid::s4u::Link::SharingPolicy policy = simgrid::s4u::Link::SharingPolicy::SHARED;
  double bw  = 0;
};

} // namespace

/* a sender's last route: a ring's rank sends to the same peer at every step,
 * and this one look-up is an array's, not the hash map's (its nodes stay
 * where they are until the map is cleared, which `gen` counts) */
struct last_route {
  uint64_t key = 0;
  route* rt    = nullptr;
  uint64_t gen = 0;
};
struct spf_routes {
  spf_net* net;
  std::unordered_map<const simgrid::s4u::Link*, linfo> links;
  std::unordered_map<uint64_t, route> cache;
  std::vector<last_route> last; /* by sender */
  uint64_t gen = 1;
  std::vector<simgrid::s4u::Link*> fwd, back; /* a route as SimGrid gives it, reused */
  bool cross = false;
  double weight_s = 0, gamma = 0;
  route scratch;
};

namespace {
/* the whole cache goes when it is this full: an all-to-all at thousands of
 * ranks meets millions of pairs, each met about once per iteration */
const size_t cache_max = size_t(1) << 20;

/* the platform builder's word that nothing but links of no more than this
 * link's bandwidth in all feed it (spg::set_feed) */
bool feeds_below(const simgrid::s4u::Link* l)
{
  const char* feed = l->get_property(spg::FEED_PROPERTY);
  return feed && l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::SHARED &&
         std::strtod(feed, nullptr) <= l->get_bandwidth();
}

/* a link's facts, read from SimGrid the first time it is met */
linfo& info(spf_routes* r, const simgrid::s4u::Link* l)
{
  auto [it, fresh] = r->links.try_emplace(l);
  if (fresh) {
    it->second.policy = l->get_sharing_policy();
    it->second.bw     = l->get_bandwidth();
    it->second.never  = feeds_below(l);
  }
  return it->second;
}

void add(spf_routes* r, route& out, linfo& li, double coef)
{
  if (li.policy == simgrid::s4u::Link::SharingPolicy::WIFI)
    return;
  if (li.policy == simgrid::s4u::Link::SharingPolicy::FATPIPE) {
    out.fat = std::min(out.fat, li.bw / coef);
    return;
  }
  if (li.id < 0)
    li.id = spf_net_add_link(r->net, li.bw);
  int id = li.id;
  for (size_t i = 0; i < out.links.size(); i++)
    if (out.links[i] == id) { /* a link met twice: its consumptions add, as in SimGrid's expand */
      out.coefs[i] += coef;
      return;
    }
  out.links.push_back(id);
  out.coefs.push_back(coef);
}

void build(spf_routes* r, simgrid::s4u::Host* from, simgrid::s4u::Host* to, route& out)
{
  std::vector<simgrid::s4u::Link*>& fwd = r->fwd;
  double lat = 0;
  fwd.clear();
  from->route_to(to, fwd, &lat);
  out       = route();
  out.lat   = lat;
  out.empty = fwd.empty() && lat <= 0;
  for (auto const* l : fwd) {
    linfo& li = info(r, l);
    if (li.policy != simgrid::s4u::Link::SharingPolicy::WIFI)
      out.min_bw = std::min(out.min_bw, li.bw);
    if (r->weight_s > 0)
      out.ws += r->weight_s / li.bw;
    /* a link that cannot bind shares nothing (zone_links.hpp, set_feed): left out, where each flow
     * through it takes it once and in full (without cross-traffic, crossed once) */
    if (!r->cross && li.never && std::count(fwd.begin(), fwd.end(), l) == 1)
      continue;
    add(r, out, li, 1.0);
  }
  if (r->cross) {
    r->back.clear();
    to->route_to(from, r->back, nullptr);
    for (auto const* l : r->back)
      add(r, out, info(r, l), 0.05);
  }
}
} // namespace

extern "C" {

spf_routes* spf_routes_new(spf_net* net, char* err, size_t errlen)
{
  auto* r = new (std::nothrow) spf_routes();
  if (!r) {
    snprintf(err, errlen, "out of memory for the routes");
    return nullptr;
  }
  r->net = net;
  try {
    std::string model = simgrid::config::get_value<std::string>("network/model");
    r->cross          = simgrid::config::get_value<bool>("network/crosstraffic");
    r->gamma          = simgrid::config::get_value<double>("network/TCP-gamma");
    r->weight_s       = simgrid::config::get_value<double>("network/weight-S");
    /* the factors, piecewise for SMPI, as the SimGrid backend reads them (simgrid_glue.cpp) */
    if (spg_uncontended_init(model == "SMPI") != 0)
      throw std::runtime_error("factors");
  } catch (...) {
    snprintf(err, errlen, "the network model's options could not be read from SimGrid's configuration");
    delete r;
    return nullptr;
  }
  return r;
}

void spf_routes_free(spf_routes* r) { delete r; }

int spf_route(spf_routes* r, sg_host_t from, int from_id, sg_host_t to, int to_id, double bytes, spf_route_info* out)
{
  uint64_t key = (uint64_t)(uint32_t)from_id << 32 | (uint32_t)to_id;
  route* rt     = nullptr;
  last_route* l = nullptr;
  if (from_id >= 0) {
    if ((size_t)from_id >= r->last.size()) {
      try {
        r->last.resize((size_t)from_id + 1);
      } catch (...) {
        return -1;
      }
    }
    l = &r->last[(size_t)from_id];
    if (l->gen == r->gen && l->key == key)
      rt = l->rt;
  }
  if (!rt) {
    auto it = r->cache.find(key);
    if (it != r->cache.end()) {
      rt = &it->second;
    } else {
      if (r->cache.size() >= cache_max) {
        r->cache.clear();
        r->gen++;
      }
      try {
        build(r, from, to, r->scratch);
        if (r->scratch.empty)
          return -1;
        rt = &r->cache.emplace(key, std::move(r->scratch)).first->second;
      } catch (...) {
        return -1;
      }
    }
    if (l)
      *l = last_route{key, rt, r->gen};
  }
  double lf, bf;
  spg_model_factors(bytes, &lf, &bf);
  double bound = std::min(rt->min_bw, rt->fat);
  if (rt->lat > 0 && r->gamma > 0)
    bound = std::min(bound, r->gamma / (2.0 * rt->lat));
  out->links   = rt->links.data();
  out->coefs   = rt->coefs.data();
  out->nlinks  = (int)rt->links.size();
  out->latency = rt->lat * lf;
  out->bound   = bound;
  out->penalty = out->latency > 0 ? rt->lat + rt->ws : 1.0;
  out->rf      = bf;
  return 0;
}
}
