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
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <algorithm>
#include <stdexcept>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <deque>
#include <utility>
#include <vector>

namespace {

/* a route as the model sees it, whatever the message's size; its links and
 * their consumptions lie in the cache's arenas, n of them from `at` */
struct route {
  double lat    = 0;        /* raw sum of the links' latencies */
  double min_bw = INFINITY; /* smallest bandwidth of the route's links */
  double ws     = 0;        /* sum of weight_S / B_l over the route */
  double fat    = INFINITY; /* bound of the FATPIPE links */
  uint32_t at = 0, n = 0;
  bool empty = true;
};

/* 64-bit keys to 32-bit indices: open addressing (linear probing, a power
 * of two, at most half full), emptied whole by a new generation with its
 * memory kept.  The routes' look-ups were an unordered_map's, whose nodes,
 * division hashing and rehashes cost more than the routes themselves. */
struct flat_index {
  struct slot {
    uint64_t key;
    uint32_t idx, gen;
  };
  std::vector<slot> slots;
  size_t n     = 0;
  uint32_t gen = 1;

  static size_t mix(uint64_t k)
  {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (size_t)k;
  }
  /* the slot of key, or the empty one where it would go */
  size_t where(uint64_t key) const
  {
    size_t mask = slots.size() - 1, h = mix(key) & mask;
    while (slots[h].gen == gen && slots[h].key != key)
      h = (h + 1) & mask;
    return h;
  }
  /* key's index, or -1 */
  long find(uint64_t key) const
  {
    if (slots.empty())
      return -1;
    const slot& s = slots[where(key)];
    return s.gen == gen ? (long)s.idx : -1;
  }
  /* files idx under key (not there yet); may throw bad_alloc, the index as it was */
  void put(uint64_t key, uint32_t idx)
  {
    if (2 * (n + 1) > slots.size()) {
      std::vector<slot> old(std::max<size_t>(1024, 2 * slots.size()));
      old.swap(slots);
      for (const slot& s : old)
        if (s.gen == gen)
          slots[where(s.key)] = s;
    }
    slots[where(key)] = slot{key, idx, gen};
    n++;
  }
  void clear()
  {
    n = 0;
    if (++gen == 0) { /* wrapped: no stale slot may match */
      for (slot& s : slots)
        s.gen = 0;
      gen = 1;
    }
  }
};

/* the routes met, by (from, to), their links and consumptions in two arenas;
 * emptied whole (memory kept) when cache_max() routes are in it */
struct route_cache {
  flat_index index;
  std::vector<route> routes;
  std::vector<int> links;
  std::vector<double> coefs;

  route* find(uint64_t key)
  {
    long i = index.find(key);
    return i < 0 ? nullptr : &routes[(size_t)i];
  }
  void clear()
  {
    routes.clear();
    links.clear();
    coefs.clear();
    index.clear();
  }
  /* back to `had` routes and `at` links: a route that could not be made */
  void drop(size_t had, size_t at)
  {
    routes.resize(had);
    links.resize(at);
    coefs.resize(at);
  }
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
 * and this one look-up is an array's, not the table's (valid while the
 * cache's generation is the one it was filed in; the generation wraps after
 * 2^32 emptyings of the cache, which no run reaches) */
struct last_route {
  uint64_t key = 0;
  uint32_t idx = 0;
  uint32_t gen = 0;
};
struct spf_routes {
  spf_net* net;
  std::deque<linfo> links; /* every link met (or, for a zone of sparsim's own, every link) */
  flat_index link_of;      /* a link's implementation (Link::get_impl) -> its place in links */
  route_cache cache;
  std::vector<last_route> last; /* by sender */
  std::vector<linfo*> fwd, back; /* a route's links as SimGrid gives them, reused */
  std::vector<simgrid::s4u::Link*> hops;  /* SimGrid's answer, reused */
  bool cross = false;
  double weight_s = 0, gamma = 0;
  spg::DirectRoutes* direct = nullptr; /* the root zone, where it is one of sparsim's (zone_links.hpp) */
  simgrid::kernel::routing::Route answer; /* its answer, reused */
};

namespace {
/* the whole cache goes when it is this full: an all-to-all at thousands of
 * ranks meets millions of pairs, each met about once per iteration.  A
 * route SimGrid finds takes microseconds, so a million are kept; a zone of
 * sparsim's own answers in less than a cache of a million takes to fault in
 * and miss in: 64 K (Ok-Topk, P = 1024, dgx-h100, 2 iterations: 1.15x the
 * CPU time with 1 M, 100 MB more; 4 K as fast as 64 K). */
size_t cache_max(const spf_routes* r) { return r->direct ? size_t(1) << 16 : size_t(1) << 20; }

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
  uint64_t key = (uint64_t)(uintptr_t)l->get_impl();
  long i       = r->link_of.find(key);
  if (i >= 0)
    return r->links[(size_t)i];
  r->links.emplace_back();
  try {
    r->link_of.put(key, (uint32_t)(r->links.size() - 1));
  } catch (...) {
    r->links.pop_back();
    throw;
  }
  linfo& li = r->links.back();
  li.policy = l->get_sharing_policy();
  li.bw     = l->get_bandwidth();
  li.never  = feeds_below(l);
  return li;
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
  std::vector<int>& links = r->cache.links;
  for (size_t i = out.at; i < links.size(); i++)
    if (links[i] == id) { /* a link met twice: its consumptions add, as in SimGrid's expand */
      r->cache.coefs[i] += coef;
      return;
    }
  links.push_back(id);
  r->cache.coefs.push_back(coef);
  out.n++;
}

/* the links from one host to another, as SimGrid routes them, into out.  A
 * zone of sparsim's own is asked directly, and its links were all read when
 * the routes were made (spf_routes_new): no allocation, and no search
 * through SimGrid's zones. */
void path(spf_routes* r, simgrid::s4u::Host* from, simgrid::s4u::Host* to, std::vector<linfo*>& out, double* lat)
{
  out.clear();
  if (!r->direct) {
    r->hops.clear();
    from->route_to(to, r->hops, lat);
    for (auto const* l : r->hops)
      out.push_back(&info(r, l));
    return;
  }
  r->answer.link_list_.clear();
  r->direct->direct_route(from->get_netpoint(), to->get_netpoint(), &r->answer, lat);
  for (auto const* l : r->answer.link_list_) {
    long i = r->link_of.find((uint64_t)(uintptr_t)l);
    if (i < 0)
      throw std::runtime_error("a link the platform did not list");
    out.push_back(&r->links[(size_t)i]);
  }
}

void build(spf_routes* r, simgrid::s4u::Host* from, simgrid::s4u::Host* to, route& out)
{
  std::vector<linfo*>& fwd = r->fwd;
  double lat = 0;
  path(r, from, to, fwd, &lat);
  out       = route();
  out.at    = (uint32_t)r->cache.links.size();
  out.lat   = lat;
  out.empty = fwd.empty() && lat <= 0;
  for (linfo* l : fwd) {
    linfo& li = *l;
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
    path(r, to, from, r->back, nullptr);
    for (linfo* l : r->back)
      add(r, out, *l, 0.05);
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
    auto* e   = simgrid::s4u::Engine::get_instance();
    r->direct = dynamic_cast<spg::DirectRoutes*>(e->get_netzone_root()->get_impl());
    if (r->direct)
      for (auto const* l : e->get_all_links())
        info(r, l);
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

void spf_routes_global(spf_routes* r) { r->direct = nullptr; }

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
    if (l->gen == r->cache.index.gen && l->key == key)
      rt = &r->cache.routes[l->idx];
  }
  if (!rt && !(rt = r->cache.find(key))) {
    route_cache& c = r->cache;
    if (c.routes.size() >= cache_max(r))
      c.clear();
    size_t at = c.links.size(), had = c.routes.size();
    try {
      route nr;
      build(r, from, to, nr);
      if (nr.empty) {
        c.drop(had, at);
        return -1;
      }
      c.routes.push_back(nr);
      c.index.put(key, (uint32_t)(c.routes.size() - 1));
    } catch (...) { /* out of memory, or a link the platform did not list: the cache as it was */
      c.drop(had, at);
      return -1;
    }
    rt = &c.routes.back();
  }
  if (l)
    *l = last_route{key, (uint32_t)(rt - r->cache.routes.data()), r->cache.index.gen};
  double lf, bf;
  spg_model_factors(bytes, &lf, &bf);
  double bound = std::min(rt->min_bw, rt->fat);
  if (rt->lat > 0 && r->gamma > 0)
    bound = std::min(bound, r->gamma / (2.0 * rt->lat));
  out->links   = r->cache.links.data() + rt->at;
  out->coefs   = r->cache.coefs.data() + rt->at;
  out->nlinks  = (int)rt->n;
  out->latency = rt->lat * lf;
  out->bound   = bound;
  out->penalty = out->latency > 0 ? rt->lat + rt->ws : 1.0;
  out->rf      = bf;
  return 0;
}
}
