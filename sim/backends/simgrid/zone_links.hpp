/* zone_links.hpp - what the platforms built in code (simgrid_aries.cpp,
 * simgrid_nodes.cpp) share: a full-duplex link as its two directions, made
 * and sealed in one call, and a route's link appended with its latency. */
#ifndef SPARSIM_ZONE_LINKS_HPP
#define SPARSIM_ZONE_LINKS_HPP

#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Link.hpp>

#include <string>

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

/* link l onto the route `into` and its latency onto `latency` (either may be
 * NULL: the latency only, or the links only) */
inline void add_link(simgrid::kernel::routing::Route* into, double* latency, simgrid::s4u::Link* l)
{
  if (into)
    into->link_list_.push_back(l->get_impl());
  if (latency)
    *latency += l->get_latency();
}

} // namespace spg

#endif
