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
 * Two routings (two platforms), each a stand-in for Aries' adaptive routing,
 * which picks a packet's path at injection among the minimal ones (and
 * non-minimal ones through an intermediate router) by the load it sees:
 *
 *   daint         spread, the fluid limit of adaptive routing: a stream of
 *                 packets spreads over every path it may take, so parallel
 *                 links act as one link of their summed bandwidth, shared
 *                 by every flow that may use them, and the hops that only
 *                 lead to and from such links, spread over many routers,
 *                 are not a bottleneck and add only their latency.  So:
 *                 - within a chassis, each router's 15 green links as one
 *                   link of 15 x 5.25 = 78.75 GB/s per direction (out of
 *                   the router, into it), a route crossing its source
 *                   router's and its destination router's (as Alps'
 *                   switches in simgrid_nodes.cpp).  Paths of two green
 *                   hops use two links, which this does not charge; with
 *                   4 NICs of 10 GB/s on a router even the worst
 *                   permutation (every router's 40 GB/s to one other
 *                   router: 5.25 direct, the rest over two hops) needs
 *                   74.75 of a router's 78.75 GB/s, so the green links do
 *                   not bind there and the NICs do;
 *                 - between two chassis of a group, the 16 black links
 *                   joining them (one per slot) as one link of 16 x 15.75
 *                   = 252 GB/s per direction, the green hops to and from
 *                   the slots adding their latency only;
 *                 - between two groups, the 50 global links of the pair as
 *                   one link of 50 x 4.69 = 234 GB/s per direction, the
 *                   hops within the groups adding their latency only.
 *                 A route's latency is that of the static minimal path
 *                 below (within a chassis, the direct green link), with a
 *                 global hop at the mean latency of the pair's 50 links.
 *                 A degraded link (disturbances) takes its lost bandwidth
 *                 off every aggregate it belongs to.  Flows that share an
 *                 aggregate share it at the same rate, which keeps
 *                 SimGrid's max-min solver from re-solving at each of
 *                 thousands of distinct ends (bench/README.md section 11).
 *                 Until the adaptive routing within groups (section 20)
 *                 only the global links were spread and the routes within
 *                 a group were daint-static's: then TopkA's Bruck
 *                 allgather at P = 400 took 0.42 s against 0.18 s at 384,
 *                 its flows of distance 128 meeting on one green link.
 *   daint-static  static minimal paths (`daint-aries` is its first name).
 *                 Between groups, the (source, destination) pair picks one
 *                 global link, (a + 2b) mod 50, among the 50 between the
 *                 two groups, with minimal paths within each group to and
 *                 from the routers that hold it: flows spread over every
 *                 global link and router that holds one, each flow capped
 *                 by one global link.  Within a group, green to the
 *                 destination's slot in the source chassis, then black
 *                 (dimension order: a hashed choice between the two
 *                 minimal paths made two ring neighbours share a link at
 *                 P = 256).  Within a chassis, what adaptive routing does
 *                 when a direct link is busy (detours over a third router)
 *                 is stood in for statically: of the 4 nodes of a router,
 *                 node 0 takes the direct green link to another router of
 *                 its chassis and nodes 1, 2, 3 go through the router whose
 *                 slot is theirs XOR 3, 5 and 6.  Partners at any
 *                 power-of-two distance (recursive halving and doubling:
 *                 every router's 4 nodes to the 4 of router s XOR D) then
 *                 use 4 disjoint paths, and a ring's one flow per pair of
 *                 neighbouring routers (from node 3) shares no link with
 *                 another (neither XOR 6 nor its return leg is a ring
 *                 link).  Traffic among all routers at once (an alltoall)
 *                 pays for it: 3 of 4 flows cross two green links instead
 *                 of one.
 *
 * Link names (degraded-link classes of the disturbances match their
 * prefixes): aries_nic_N, green_link_C_I_J (chassis C, slots I < J),
 * black_link_G_S_A_B (group G, slot S, chassis A < B of the group),
 * blue_link_A_B_J (groups A < B, J-th link); daint's aggregates carry the
 * "__" of SimGrid's internal links, which the disturbances never pick:
 * __green_router_R (router R's green links; _UP: out of it),
 * __black_pair_C_D (chassis C < D of a group), __blue_pair_A_B (groups A < B).  Every link is full duplex
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

class AriesZone : public simgrid::kernel::routing::NetZoneImpl, public spg::DirectRoutes {
public:
  AriesZone(const std::string& name, int nodes, bool spread) : NetZoneImpl(name), nodes_(nodes), spread_(spread) {}
  void build();
  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override;
  void direct_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    get_local_route(src, dst, into, latency);
  }

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
  /* spread: the aggregates, per router [r] (its green links), per pair of
   * chassis of a group [group][a][b], a < b (their black links), per pair of
   * groups [a][b], a < b (their global links); the mean latency of a
   * group pair's global links per direction ([2 pair + 1]: from b to a;
   * < 0 until a route needs it) */
  std::vector<Duplex> router_, chassis_pair_, pair_;
  std::vector<double> pair_lat_;
  /* spread: each aggregate direction with the links it sums, and for each
   * such link the aggregate directions it belongs to */
  struct Sum {
    Link* agg;
    std::vector<const Link*> of;
  };
  std::vector<Sum> sums_;
  std::unordered_map<const Link*, std::vector<size_t>> sums_of_;

  Duplex make(const std::string& name, double bw, double lat) { return spg::make_duplex(*this, name, bw, lat); }
  static void add(Route* into, double* latency, Link* l) { spg::add_link(into, latency, l); }
  /* the global link of the pair (a, b): (a + 2b) mod 50, so that the
   * flows of consecutive sources to their partners at a fixed distance d
   * (3a + 2d) take the 50 links in turn; a hash spread them unevenly, and
   * flows ending at different times cost the solver an event each */
  static int pick(int a, int b) { return static_cast<int>((static_cast<long>(a) + 2L * b) % LINKS_PER_GROUP_PAIR); }
  void intra_group(int r1, int r2, bool black_first, Route* into, double* latency) const;
  void green_path(int c, int s1, int s2, int node_in_router, Route* into, double* latency) const;
  void sum_of(Link* agg, const std::vector<const Link*>& of);
  void spread_aggregates();
  /* the green link of chassis c from slot i to slot j != i, and the black
   * link of group g's slot s from its chassis a to its chassis b != a */
  Link* green_of(int c, int i, int j) const
  {
    const Duplex& d = green_[(static_cast<size_t>(c) * ROUTERS_PER_CHASSIS + (i < j ? i : j)) * ROUTERS_PER_CHASSIS +
                             (i < j ? j : i)];
    return i < j ? d.up : d.down;
  }
  Link* black_of(int g, int s, int a, int b) const
  {
    const Duplex& d = black_[((static_cast<size_t>(g) * ROUTERS_PER_CHASSIS + s) * CHASSIS_PER_GROUP + (a < b ? a : b)) *
                                 CHASSIS_PER_GROUP +
                             (a < b ? b : a)];
    return a < b ? d.up : d.down;
  }
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
  if (spread_)
    spread_aggregates();
}

/* spread: aggregate `agg` (one direction) carries the summed bandwidth of
 * the links `of`, now and whenever one of them changes */
void AriesZone::sum_of(Link* agg, const std::vector<const Link*>& of)
{
  for (const Link* l : of)
    sums_of_[l].push_back(sums_.size());
  sums_.push_back({agg, of});
}

/* spread: the aggregates of the top of the file */
void AriesZone::spread_aggregates()
{
  const int R = ROUTERS_PER_CHASSIS, C = CHASSIS_PER_GROUP;
  for (int r = 0; r < routers_; r++) {
    int c = r / R, s = r % R;
    router_.push_back(make("__green_router_" + std::to_string(r), (R - 1) * GREEN_BW, 0.0));
    spg::set_feed(router_.back(), NODES_PER_ROUTER * NIC_BW); /* its NICs' traffic within the chassis only */
    std::vector<const Link*> out, in;
    for (int t = 0; t < R; t++)
      if (t != s) {
        out.push_back(green_of(c, s, t));
        in.push_back(green_of(c, t, s));
      }
    sum_of(router_.back().up, out);
    sum_of(router_.back().down, in);
  }
  chassis_pair_.resize(static_cast<size_t>(groups_) * C * C);
  for (int g = 0; g < groups_; g++)
    for (int a = 0; a < C; a++)
      for (int b = a + 1; b < C; b++) {
        Duplex& agg = chassis_pair_[(static_cast<size_t>(g) * C + a) * C + b];
        agg = make("__black_pair_" + std::to_string(g * C + a) + "_" + std::to_string(g * C + b), R * BLACK_BW, 0.0);
        std::vector<const Link*> up, down;
        for (int s = 0; s < R; s++) {
          up.push_back(black_of(g, s, a, b));
          down.push_back(black_of(g, s, b, a));
        }
        sum_of(agg.up, up);
        sum_of(agg.down, down);
      }
  pair_.resize(static_cast<size_t>(groups_) * groups_);
  pair_lat_.assign(2 * pair_.size(), -1.0);
  for (int a = 0; a < groups_; a++)
    for (int b = a + 1; b < groups_; b++) {
      size_t pair = static_cast<size_t>(a) * groups_ + b;
      pair_[pair] = make("__blue_pair_" + std::to_string(a) + "_" + std::to_string(b),
                         LINKS_PER_GROUP_PAIR * BLUE_BW, 0.0);
      std::vector<const Link*> up, down;
      for (int j = 0; j < LINKS_PER_GROUP_PAIR; j++) {
        up.push_back(blue_[pair * LINKS_PER_GROUP_PAIR + j].up);
        down.push_back(blue_[pair * LINKS_PER_GROUP_PAIR + j].down);
      }
      sum_of(pair_[pair].up, up);
      sum_of(pair_[pair].down, down);
    }
  Link::on_bandwidth_change_cb([this](Link const& l) {
    auto it = sums_of_.find(&l);
    if (it == sums_of_.end())
      return;
    for (size_t k : it->second) {
      double bw = 0;
      for (const Link* m : sums_[k].of)
        bw += m->get_bandwidth();
      if (sums_[k].agg->get_bandwidth() != bw)
        sums_[k].agg->set_bandwidth(bw);
    }
  });
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
  auto green = [&](int c, int i, int j) { add(into, latency, green_of(c, i, j)); };
  auto black = [&](int s, int a, int b) { /* chassis a -> b (global indices), slot s */
    add(into, latency, black_of(g, s, a - g * CHASSIS_PER_GROUP, b - g * CHASSIS_PER_GROUP));
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
  auto green = [&](int i, int j) { add(into, latency, green_of(c, i, j)); };
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
  int ca = ra / ROUTERS_PER_CHASSIS, cb = rb / ROUTERS_PER_CHASSIS;
  if (ra == rb) {
    /* the same router: its two NICs */
  } else if (ca == cb && spread_) {
    /* the two routers' green aggregates, at the direct link's latency */
    add(into, nullptr, router_[ra].up);
    add(into, nullptr, router_[rb].down);
    green_path(ca, ra % ROUTERS_PER_CHASSIS, rb % ROUTERS_PER_CHASSIS, 0, nullptr, latency);
  } else if (ca == cb) {
    green_path(ca, ra % ROUTERS_PER_CHASSIS, rb % ROUTERS_PER_CHASSIS, a % NODES_PER_ROUTER, into, latency);
  } else if (ga == gb && spread_) {
    /* the two chassis' black aggregate, at the minimal path's latency */
    int la = ca % CHASSIS_PER_GROUP, lb = cb % CHASSIS_PER_GROUP;
    const Duplex& agg = chassis_pair_[(static_cast<size_t>(ga) * CHASSIS_PER_GROUP + (la < lb ? la : lb)) *
                                          CHASSIS_PER_GROUP +
                                      (la < lb ? lb : la)];
    add(into, nullptr, la < lb ? agg.up : agg.down);
    intra_group(ra, rb, black_1st, nullptr, latency);
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
