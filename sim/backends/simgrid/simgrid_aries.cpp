/* simgrid_aries.cpp - Piz Daint's Cray Aries dragonfly, wired as Aries is.
 *
 * SimGrid 3.32's DRAGONFLY cluster joins two groups by one aggregated link
 * on one router per group and routes minimally through it: every flow
 * between two groups crosses one router.  Aries spreads its global links
 * over every router of a group and routes adaptively.  This zone (platform
 * `daint`, first named `daint-aries`) builds the Aries wiring in code, since SimGrid's XML cannot
 * say which of many parallel links a route takes:
 *
 *   4 nodes per router, 16 routers per chassis, 6 chassis per group (384
 *   nodes); within a chassis every router has one link to each of the 15
 *   others (green, rank 1, backplane); within a group every router has 3
 *   links to the router of the same slot in each of the 5 other chassis
 *   (black, rank 2, copper; one link of 3x the bandwidth here); each router
 *   has 10 global ports (blue, rank 3, optical), so a group has 960, spread
 *   over the other groups of the machine: Piz Daint's 20 groups [M: about
 *   7,500 nodes / 384] give each pair of groups floor(960 / 19) = 50 links,
 *   the ports of group a toward its i-th other group being i*50 .. i*50+49,
 *   port p on router p mod 96 of the group.
 *   Sources: Alverson, Froese, Kaplan, Roweth, "Cray XC Series Network" (Cray
 *   white paper WP-Aries01-1112, 2012) for the structure and port counts;
 *   the reference notes (../shared/reference/simgrid.md, section 2.1) for
 *   the rates: 14 Gbps electrical and 12.5 Gbps optical lanes, 3 lanes per
 *   link, so green 5.25 GB/s, black 3 x 5.25 = 15.75 GB/s, blue 4.69 GB/s
 *   per direction; a node's NIC on PCIe 3.0 x16, about 10 GB/s per direction
 *   [M]; 100 ns per router hop and 0.5 us per NIC [M: about 1-1.5 us MPI
 *   latency between neighbours].
 *
 * Routing within a group, a static stand-in for Aries' adaptive routing
 * (minimal paths only, no non-minimal detours): within a chassis, the green
 * link; within a group, green to the destination's slot in the source
 * chassis, then black (dimension order: a hashed choice between the two
 * minimal paths made two ring neighbours share a link at P = 256).
 *
 * Between groups, two stand-ins (two platforms):
 *
 *   daint         spread: Aries chooses a packet's path at injection among
 *                 the minimal ones by load, so a stream of packets between
 *                 two groups spreads over all 50 global links between them.
 *                 Its fluid limit is what this routing models: the 50
 *                 links of a pair act as one link of their summed bandwidth
 *                 (50 x 4.69 = 234 GB/s each way), shared by every flow
 *                 between the two groups, and the hops within the groups to
 *                 and from the routers that hold them, spread the same way
 *                 over many routers, are not a bottleneck and add only their
 *                 latency.  A route between groups is then the two NICs and
 *                 the pair's aggregate; its latency is that of the minimal
 *                 path through the global link the static rule below picks,
 *                 with the global hop at the mean latency of the pair's 50
 *                 links.  A degraded global link (disturbances) takes its
 *                 lost bandwidth off the aggregate.  Flows between two groups
 *                 then share the same links at the same rates, which keeps
 *                 SimGrid's max-min solver from re-solving at each of
 *                 thousands of distinct ends (bench/README.md section 11).
 *   daint-static  per pair: the (source, destination) pair picks one global
 *                 link, (a + 2b) mod 50, among the 50 between the two groups,
 *                 with minimal paths within each group to and from the
 *                 routers that hold it.  Flows between two groups spread over
 *                 every global link and router that holds one, each flow
 *                 capped by one global link.  `daint-aries` is its first name.
 * Within a chassis, what adaptive routing does when a direct link is busy
 * (detours over a third router) is stood in for statically: of the 4 nodes
 * of a router, node 0 takes the direct green link to another router of its
 * chassis and nodes 1, 2, 3 go through the router whose slot is theirs XOR
 * 3, 5 and 6.  Partners at any power-of-two distance (recursive halving and
 * doubling: every router's 4 nodes to the 4 of router s XOR D) then use 4
 * disjoint paths, and a ring's one flow per pair of neighbouring routers
 * (from node 3) shares no link with another (neither XOR 6 nor its return
 * leg is a ring link).  Traffic among all routers at once (an alltoall)
 * pays for it: 3 of 4 flows cross two green links instead of one.
 *
 * Link names (degraded-link classes of the disturbances match their
 * prefixes): aries_nic_N, green_link_C_I_J (chassis C, slots I < J),
 * black_link_G_S_A_B (group G, slot S, chassis A < B of the group),
 * blue_link_A_B_J (groups A < B, J-th link).  Every link is full duplex
 * (SimGrid's SPLITDUPLEX: _UP carries the direction from the lower end).
 */
#include "simgrid_glue.h"
#include "zone_links.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/config.hpp>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;
using simgrid::s4u::Link;

constexpr int NODES_PER_ROUTER = 4;
constexpr int ROUTERS_PER_CHASSIS = 16;
constexpr int CHASSIS_PER_GROUP = 6;
constexpr int ROUTERS_PER_GROUP = ROUTERS_PER_CHASSIS * CHASSIS_PER_GROUP;
constexpr int GLOBAL_PORTS = 10;
constexpr int MACHINE_GROUPS = 20;
constexpr int LINKS_PER_GROUP_PAIR = GLOBAL_PORTS * ROUTERS_PER_GROUP / (MACHINE_GROUPS - 1); /* 50 */
constexpr double NIC_BW = 10e9, GREEN_BW = 5.25e9, BLACK_BW = 3 * 5.25e9, BLUE_BW = 3 * 12.5e9 / 8;
constexpr double NIC_LAT = 0.5e-6, HOP_LAT = 100e-9;

using spg::Duplex;

class AriesZone : public simgrid::kernel::routing::NetZoneImpl {
public:
  AriesZone(const std::string& name, int nodes, bool spread) : NetZoneImpl(name), nodes_(nodes), spread_(spread) {}
  void build();
  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override;

private:
  int nodes_, routers_ = 0, chassis_ = 0, groups_ = 0;
  bool spread_;
  std::vector<int> node_of_;  /* netpoint id -> node */
  std::vector<Duplex> nic_;   /* per node */
  std::vector<Duplex> green_; /* [chassis][i][j], i < j */
  std::vector<Duplex> black_; /* [group][slot][a][b], a < b */
  std::vector<Duplex> blue_;  /* [a][b][j], a < b */
  std::vector<int> blue_router_a_, blue_router_b_; /* the routers (global index) at each end */
  Link* loopback_ = nullptr; /* a node to itself, as SimGrid's zones have one */
  /* spread: per pair of groups [a][b], a < b, the aggregate of its global
   * links, the mean latency of those links per direction ([2 pair + 1]:
   * from b to a; < 0 until a route needs it), and which pair each global
   * link belongs to */
  std::vector<Duplex> pair_;
  std::vector<double> pair_lat_;
  std::unordered_map<const Link*, size_t> pair_of_;

  Duplex make(const std::string& name, double bw, double lat) { return spg::make_duplex(*this, name, bw, lat); }
  static void add(Route* into, double* latency, Link* l) { spg::add_link(into, latency, l); }
  /* the global link of the pair (a, b): (a + 2b) mod 50, so that the
   * flows of consecutive sources to their partners at a fixed distance d
   * (3a + 2d) take the 50 links in turn; a hash spread them unevenly, and
   * flows ending at different times cost the solver an event each */
  static int pick(int a, int b) { return static_cast<int>((static_cast<long>(a) + 2L * b) % LINKS_PER_GROUP_PAIR); }
  void intra_group(int r1, int r2, bool black_first, Route* into, double* latency) const;
  void green_path(int c, int s1, int s2, int node_in_router, Route* into, double* latency) const;
  void resum(size_t pair);
  double pair_latency(size_t pair, bool up);
};

void AriesZone::build()
{
  /* whole groups: a job's last group is part of a whole one on the
   * machine, whose routers (and global links) all exist */
  int used = (nodes_ + NODES_PER_ROUTER - 1) / NODES_PER_ROUTER;
  groups_  = (used + ROUTERS_PER_GROUP - 1) / ROUTERS_PER_GROUP;
  chassis_ = groups_ * CHASSIS_PER_GROUP;
  routers_ = chassis_ * ROUTERS_PER_CHASSIS;
  loopback_ = spg::make_loopback(*this);
  for (int n = 0; n < nodes_; n++) {
    spg::add_host(*this, n, node_of_);
    nic_.push_back(make("aries_nic_" + std::to_string(n), NIC_BW, NIC_LAT));
  }
  green_.resize(static_cast<size_t>(chassis_) * ROUTERS_PER_CHASSIS * ROUTERS_PER_CHASSIS);
  for (int c = 0; c < chassis_; c++)
    for (int i = 0; i < ROUTERS_PER_CHASSIS; i++)
      for (int j = i + 1; j < ROUTERS_PER_CHASSIS; j++)
        green_[(static_cast<size_t>(c) * ROUTERS_PER_CHASSIS + i) * ROUTERS_PER_CHASSIS + j] =
            make("green_link_" + std::to_string(c) + "_" + std::to_string(i) + "_" + std::to_string(j), GREEN_BW,
                 HOP_LAT);
  black_.resize(static_cast<size_t>(groups_) * ROUTERS_PER_CHASSIS * CHASSIS_PER_GROUP * CHASSIS_PER_GROUP);
  for (int g = 0; g < groups_; g++) {
    const int in_group = CHASSIS_PER_GROUP;
    for (int s = 0; s < ROUTERS_PER_CHASSIS; s++)
      for (int a = 0; a < in_group; a++)
        for (int b = a + 1; b < in_group; b++)
          black_[((static_cast<size_t>(g) * ROUTERS_PER_CHASSIS + s) * CHASSIS_PER_GROUP + a) * CHASSIS_PER_GROUP +
                 b] = make("black_link_" + std::to_string(g) + "_" + std::to_string(s) + "_" + std::to_string(a) +
                               "_" + std::to_string(b),
                           BLACK_BW, HOP_LAT);
  }
  size_t pairs = static_cast<size_t>(groups_) * groups_ * LINKS_PER_GROUP_PAIR;
  blue_.resize(pairs);
  blue_router_a_.assign(pairs, -1);
  blue_router_b_.assign(pairs, -1);
  for (int a = 0; a < groups_; a++)
    for (int b = a + 1; b < groups_; b++)
      for (int j = 0; j < LINKS_PER_GROUP_PAIR; j++) {
        size_t at = (static_cast<size_t>(a) * groups_ + b) * LINKS_PER_GROUP_PAIR + j;
        /* group a's ports toward its (b-1)-th other group, b's toward its a-th */
        int pa = (b - 1) * LINKS_PER_GROUP_PAIR + j, pb = a * LINKS_PER_GROUP_PAIR + j;
        blue_router_a_[at] = a * ROUTERS_PER_GROUP + pa % ROUTERS_PER_GROUP;
        blue_router_b_[at] = b * ROUTERS_PER_GROUP + pb % ROUTERS_PER_GROUP;
        blue_[at] = make("blue_link_" + std::to_string(a) + "_" + std::to_string(b) + "_" + std::to_string(j), BLUE_BW,
                         HOP_LAT);
      }
  if (!spread_)
    return;
  /* the aggregates: named with the "__" of SimGrid's internal links, which
   * the disturbances never pick (they degrade the global links, and the
   * aggregate follows their sum) */
  pair_.resize(static_cast<size_t>(groups_) * groups_);
  pair_lat_.assign(2 * pair_.size(), -1.0);
  for (int a = 0; a < groups_; a++)
    for (int b = a + 1; b < groups_; b++) {
      size_t pair = static_cast<size_t>(a) * groups_ + b;
      pair_[pair] = make("__blue_pair_" + std::to_string(a) + "_" + std::to_string(b),
                         LINKS_PER_GROUP_PAIR * BLUE_BW, 0.0);
      for (int j = 0; j < LINKS_PER_GROUP_PAIR; j++) {
        pair_of_[blue_[pair * LINKS_PER_GROUP_PAIR + j].up]   = pair;
        pair_of_[blue_[pair * LINKS_PER_GROUP_PAIR + j].down] = pair;
      }
    }
  Link::on_bandwidth_change_cb([this](Link const& l) {
    auto it = pair_of_.find(&l);
    if (it != pair_of_.end())
      resum(it->second);
  });
}

/* spread: a pair's aggregate carries, each way, the sum of its global
 * links' bandwidths in that direction */
void AriesZone::resum(size_t pair)
{
  double up = 0, down = 0;
  for (int j = 0; j < LINKS_PER_GROUP_PAIR; j++) {
    up += blue_[pair * LINKS_PER_GROUP_PAIR + j].up->get_bandwidth();
    down += blue_[pair * LINKS_PER_GROUP_PAIR + j].down->get_bandwidth();
  }
  if (pair_[pair].up->get_bandwidth() != up)
    pair_[pair].up->set_bandwidth(up);
  if (pair_[pair].down->get_bandwidth() != down)
    pair_[pair].down->set_bandwidth(down);
}

/* spread: the mean latency of a pair's global links in one direction,
 * read at the first route that takes it (the disturbances degrade links
 * before the first message) */
double AriesZone::pair_latency(size_t pair, bool up)
{
  double& lat = pair_lat_[2 * pair + (up ? 0 : 1)];
  if (lat < 0) {
    double sum = 0;
    for (int j = 0; j < LINKS_PER_GROUP_PAIR; j++) {
      const Duplex& d = blue_[pair * LINKS_PER_GROUP_PAIR + j];
      sum += (up ? d.up : d.down)->get_latency();
    }
    lat = sum / LINKS_PER_GROUP_PAIR;
  }
  return lat;
}

/* from router r1 to router r2 of the same group, minimally */
void AriesZone::intra_group(int r1, int r2, bool black_first, Route* into, double* latency) const
{
  if (r1 == r2)
    return;
  int c1 = r1 / ROUTERS_PER_CHASSIS, s1 = r1 % ROUTERS_PER_CHASSIS;
  int c2 = r2 / ROUTERS_PER_CHASSIS, s2 = r2 % ROUTERS_PER_CHASSIS;
  int g  = c1 / CHASSIS_PER_GROUP;
  auto green = [&](int c, int i, int j) {
    const Duplex& d = green_[(static_cast<size_t>(c) * ROUTERS_PER_CHASSIS + (i < j ? i : j)) * ROUTERS_PER_CHASSIS +
                             (i < j ? j : i)];
    add(into, latency, i < j ? d.up : d.down);
  };
  auto black = [&](int s, int a, int b) { /* chassis a -> b (global indices), slot s */
    int la = a - g * CHASSIS_PER_GROUP, lb = b - g * CHASSIS_PER_GROUP;
    const Duplex& d = black_[((static_cast<size_t>(g) * ROUTERS_PER_CHASSIS + s) * CHASSIS_PER_GROUP +
                              (la < lb ? la : lb)) *
                                 CHASSIS_PER_GROUP +
                             (la < lb ? lb : la)];
    add(into, latency, la < lb ? d.up : d.down);
  };
  if (c1 == c2) {
    green(c1, s1, s2);
  } else if (s1 == s2) {
    black(s1, c1, c2);
  } else if (black_first) {
    black(s1, c1, c2);
    green(c2, s1, s2);
  } else {
    green(c1, s1, s2);
    black(s2, c1, c2);
  }
}

/* between two routers of chassis c: direct for a router's node 0, else
 * through slot s1 XOR 3, 5 or 6 (see the top of the file) */
void AriesZone::green_path(int c, int s1, int s2, int node_in_router, Route* into, double* latency) const
{
  static const int detour[NODES_PER_ROUTER] = {0, 3, 5, 6};
  auto green = [&](int i, int j) {
    const Duplex& d = green_[(static_cast<size_t>(c) * ROUTERS_PER_CHASSIS + (i < j ? i : j)) * ROUTERS_PER_CHASSIS +
                             (i < j ? j : i)];
    add(into, latency, i < j ? d.up : d.down);
  };
  int m = s1 ^ detour[node_in_router];
  if (node_in_router == 0 || m == s2) {
    green(s1, s2);
  } else {
    green(s1, m);
    green(m, s2);
  }
}

void AriesZone::get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency)
{
  int a = node_of_[src->id()], b = node_of_[dst->id()];
  if (a == b) {
    add(into, latency, loopback_);
    return;
  }
  add(into, latency, nic_[a].up);
  int ra = a / NODES_PER_ROUTER, rb = b / NODES_PER_ROUTER;
  bool black_1st = false;
  int ga = ra / ROUTERS_PER_GROUP, gb = rb / ROUTERS_PER_GROUP;
  if (ra / ROUTERS_PER_CHASSIS == rb / ROUTERS_PER_CHASSIS && ra != rb) {
    green_path(ra / ROUTERS_PER_CHASSIS, ra % ROUTERS_PER_CHASSIS, rb % ROUTERS_PER_CHASSIS, a % NODES_PER_ROUTER,
               into, latency);
  } else if (ga == gb) {
    intra_group(ra, rb, black_1st, into, latency);
  } else {
    int lo = ga < gb ? ga : gb, hi = ga < gb ? gb : ga;
    size_t pair = static_cast<size_t>(lo) * groups_ + hi;
    size_t at   = pair * LINKS_PER_GROUP_PAIR + pick(a, b);
    int from_rt = ga < gb ? blue_router_a_[at] : blue_router_b_[at];
    int to_rt   = ga < gb ? blue_router_b_[at] : blue_router_a_[at];
    /* spread: the hops within the groups add their latency only */
    Route* local = spread_ ? nullptr : into;
    intra_group(ra, from_rt, black_1st, local, latency);
    if (spread_) {
      add(into, nullptr, ga < gb ? pair_[pair].up : pair_[pair].down);
      if (latency)
        *latency += pair_latency(pair, ga < gb);
    } else {
      add(into, latency, ga < gb ? blue_[at].up : blue_[at].down);
    }
    intra_group(to_rt, rb, black_1st, local, latency);
  }
  add(into, latency, nic_[b].down);
}

} // namespace

extern "C" {

/* The largest P: the machine's groups. */
int spg_aries_max_nodes(void) { return MACHINE_GROUPS * ROUTERS_PER_GROUP * NODES_PER_ROUTER; }

/* Builds the platform of `nodes` hosts node-0 .. node-(nodes-1) as the root
 * zone (instead of loading a file); spread: the routing between groups of
 * `daint`, else that of `daint-static` (see the top of the file).  0, or -1
 * with a message. */
int spg_build_aries(int nodes, int spread, char* err, size_t errlen)
{
  return spg::build_root_zone([&] { return new AriesZone("daint", nodes, spread != 0); }, err, errlen);
}
}
