/* zone_links.hpp - what the platforms built in code (simgrid_aries.cpp,
 * simgrid_nodes.cpp) share: a full-duplex link as its two directions, made
 * and sealed in one call, a route's link appended with its latency, and the
 * root zone built, sealed and announced with its errors as a message. */
#ifndef SPARSIM_ZONE_LINKS_HPP
#define SPARSIM_ZONE_LINKS_HPP

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/config.hpp>

#include "catch_message.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace spg {

/* a full-duplex link: the direction from its lower (first) end, and back */
struct Duplex {
  simgrid::s4u::Link* up   = nullptr;
  simgrid::s4u::Link* down = nullptr;
};

/* a SPLITDUPLEX link of `bw` bytes/s and `lat` s each way, in zone z */
inline Duplex make_duplex(simgrid::kernel::routing::NetZoneImpl& z, const std::string& name, double bw, double lat)
{
  simgrid::s4u::SplitDuplexLink* l = z.create_split_duplex_link(name, {bw});
  l->set_latency(lat);
  l->seal();
  return {l->get_link_up(), l->get_link_down()};
}

/* the most that can ever enter link l: the summed bandwidth of the links that
 * all its traffic crosses first (the NICs below a leaf, say).  A link whose
 * feed is no more than its own bandwidth can never be the one that binds a
 * flow: when it fills, so does every link that feeds it, at the same level
 * and with the same flows.  The flow engine leaves it out of the sharing
 * (flow/routes.cpp), which gives the same rates over fewer links; SimGrid
 * shares it as any link. */
constexpr const char* FEED_PROPERTY = "sparsim_feed";
inline void set_feed(const Duplex& d, double bytes_per_s)
{
  char v[40];
  snprintf(v, sizeof v, "%.17g", bytes_per_s);
  d.up->set_property(FEED_PROPERTY, v);
  d.down->set_property(FEED_PROPERTY, v);
}

/* link l onto the route `into` and its latency onto `latency` (either may be
 * NULL: the latency only, or the links only) */
inline void add_link(simgrid::kernel::routing::Route* into, double* latency, simgrid::s4u::Link* l)
{
  if (into)
    into->link_list_.push_back(l->get_impl());
  if (latency)
    *latency += l->get_latency();
}

/* a host to itself, as SimGrid's own zones route it: over the network
 * model's loopback (network/loopback-bw and -lat), not shared */
inline simgrid::s4u::Link* make_loopback(simgrid::kernel::routing::NetZoneImpl& z)
{
  simgrid::s4u::Link* l = z.create_link("loopback", {simgrid::config::get_value<double>("network/loopback-bw")});
  l->set_sharing_policy(simgrid::s4u::Link::SharingPolicy::FATPIPE);
  l->set_latency(simgrid::config::get_value<double>("network/loopback-lat"));
  l->seal();
  return l;
}

/* host node-i of 1 Gflop/s in zone z, its netpoint's id mapped to i in index_of */
inline void add_host(simgrid::kernel::routing::NetZoneImpl& z, int i, std::vector<int>& index_of)
{
  simgrid::s4u::Host* h = z.create_host("node-" + std::to_string(i), {1e9});
  h->seal();
  unsigned long id = h->get_netpoint()->id();
  if (index_of.size() <= id)
    index_of.resize(id + 1, -1);
  index_of[id] = i;
}

/* A zone of sparsim's own, holding every host itself: a route between two
 * of its hosts is its local route, which SimGrid's global routing would
 * reach through the common-ancestor search and a new vector per call.  The
 * flow engine asks it directly (flow/routes.cpp), with a Route it reuses;
 * the links and latency are the same. */
class DirectRoutes {
public:
  virtual ~DirectRoutes() = default;
  virtual void direct_route(const simgrid::kernel::routing::NetPoint* src,
                            const simgrid::kernel::routing::NetPoint* dst, simgrid::kernel::routing::Route* into,
                            double* latency) = 0;
};

/* make() returns the root zone, new; it is built and sealed, and the engine
 * told the platform exists.  0, or -1 with the exception's message in err. */
template <class Make> int build_root_zone(Make make, char* err, size_t errlen)
{
  return catch_message(
      [&] {
        auto* zone = make();
        zone->build();
        zone->seal();
        simgrid::s4u::Engine::on_platform_created();
      },
      err, errlen);
}

} // namespace spg

#endif
