/* simgrid_nodes.cpp - platforms of multi-GPU nodes (dgx-h100, dgx-h200,
 * dgx-b200, roce, alps), built in code from the sp_fabric the platform table
 * fills (topologies/fabric.h, topologies/platforms.c: every number and its
 * source is there; this file only builds what the struct says).
 *
 * A rank is a GPU: host node-i is GPU i mod G of node i / G.  Hosts exist for
 * the ranks only; the links and switches are those of the nodes that hold
 * them, whole (and of whole groups on a dragonfly), so that a job's last
 * node is wired as on the machine.  The nodes of fabric.nodes beyond them
 * would carry no traffic of the job, and are not built (dgx-h100:1000 at 16
 * ranks builds 2 nodes).  Every link is full duplex (SimGrid's SPLITDUPLEX: _UP carries the
 * direction from its first end, as its name says it); switches have no link
 * of their own: a route adds fabric.switch_lat per switch it crosses.
 *
 * Two zones:
 *
 *   RailsZone (SP_FABRIC_LEAF_SPINE), a two-tier fat-tree.
 *     nvlink_N_J  GPU J of node N to the node's NVSwitch (_UP: from the GPU);
 *                 the NVSwitch is non-blocking, so GPU a to GPU b of one node
 *                 is a's port up and b's port down.
 *     nic_N_J     GPU J's NIC to its leaf (_UP: from the NIC).
 *     leaf_up_J_U rail-optimized: the uplinks of the leaf of rail J in
 *                 scalable unit U (nodes U x nodes_per_leaf ..), which holds
 *                 NIC J of each of its nodes;
 *     leaf_up_U   by racks: the uplinks of leaf U, which holds every NIC of
 *                 nodes U x nodes_per_leaf ..;
 *                 each is one link of bandwidth (downlinks x nic_bw) / S
 *                 (_UP: toward the spine): the fluid limit of ECMP or adaptive
 *                 spreading over the leaf's uplinks, as `daint` takes the
 *                 global links between two groups as one.  The spine layer
 *                 is non-blocking.
 *     nvls_N      where the NVSwitch reduces (fabric.nvls_bw, NVLink SHARP):
 *                 host nvswitch-N is the switch as an endpoint, and _UP the
 *                 rate at which it takes in what the GPUs push to it for
 *                 reducing or multicasting; GPU J to it is nvlink_N_J up,
 *                 nvls_N up; it to GPU J is nvlink_N_J down (a multicast
 *                 crosses each GPU's port once).
 *     Between nodes: a's NIC up; on the same leaf, b's NIC down (one switch);
 *     else a's leaf uplinks up, the spine, b's leaf uplinks down, b's NIC
 *     down (three switches).  A message from rail j to another rail crosses
 *     the spine: routes keep no traffic on rails by forwarding over NVLink
 *     first (no PXN); NCCL's algorithms keep their traffic on rails.
 *
 *   DragonflyZone (SP_FABRIC_DRAGONFLY), Alps' Slingshot.
 *     nvlink_N_A_B  GPUs A < B of node N, joined directly (_UP: A to B).
 *     nic_N_J       GPU J's NIC to its switch: NIC J of the nics_per_switch
 *                   nodes of a chassis goes to the chassis' switch J, so a
 *                   group has nodes_per_group / nics_per_switch x G switches.
 *     local_G_S     switch S of group G: its links to the other switches of
 *                   its group (one each) as one link of their summed
 *                   bandwidth (_UP: from the switch), adaptive routing's
 *                   fluid limit within a group: a switch's traffic to
 *                   another spreads over the direct link and the two-hop
 *                   paths through the others, not onto the one direct link
 *                   (which, taken alone, made 14 ring flows between two
 *                   switches of a chassis share one 200 Gb/s link).  With
 *                   31 x 200 Gb/s against 14 NICs of 200 Gb/s a switch, the
 *                   group is non-blocking in this model (even when every
 *                   path takes two links, 31 / 2 > 14).
 *     global_A_B    groups A < B: the links_per_pair global links between
 *                   them as one link of their summed bandwidth (_UP: A to B),
 *                   adaptive routing's fluid limit as `daint` models Aries':
 *                   the hops within the groups to and from the switches that
 *                   hold them, spread over many switches, are not a
 *                   bottleneck and add only their latency.
 *     Between nodes: a's NIC up; the same switch: b's NIC down (one switch);
 *     the same group: a's switch's local aggregate up, b's down (two
 *     switches, the minimal path's latency); other groups: the pair's
 *     global aggregate, at the latency of the minimal path of diameter 3
 *     (local, global, local: four switches), b's NIC down.
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

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;
using simgrid::s4u::Link;

using spg::Duplex;

std::string name_of(const char* prefix, int a, int b = -1, int c = -1)
{
  std::string s = prefix + std::to_string(a);
  if (b >= 0)
    s += "_" + std::to_string(b);
  if (c >= 0)
    s += "_" + std::to_string(c);
  return s;
}

/* what both zones share: the ranks' hosts, the NICs, the loopback */
class NodesZone : public simgrid::kernel::routing::NetZoneImpl, public spg::DirectRoutes {
public:
  NodesZone(const std::string& name, const sp_fabric& f, int ranks) : NetZoneImpl(name), f_(f), ranks_(ranks) {}
  virtual void build();
  void direct_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override
  {
    get_local_route(src, dst, into, latency);
  }

protected:
  const sp_fabric f_;
  int ranks_;
  int nodes_ = 0; /* the nodes built: those that hold the ranks */
  std::vector<int> rank_of_; /* netpoint id -> rank */
  std::vector<Duplex> nic_;  /* [node x G + j] */
  Link* loopback_ = nullptr;

  int G() const { return f_.gpus_per_node; }
  Duplex make(const std::string& name, double bw, double lat) { return spg::make_duplex(*this, name, bw, lat); }
  static void add(Route* into, double* latency, Link* l) { spg::add_link(into, latency, l); }
  void switches(double* latency, int count) const
  {
    if (latency)
      *latency += count * f_.switch_lat;
  }
  /* the ranks of src and dst; false for a host to itself (the loopback added) */
  bool ends(const NetPoint* src, const NetPoint* dst, Route* into, double* latency, int* a, int* b)
  {
    *a = rank_of_[src->id()];
    *b = rank_of_[dst->id()];
    if (*a == *b)
      add(into, latency, loopback_);
    return *a != *b;
  }
};

void NodesZone::build()
{
  if (f_.nodes < 1 || f_.gpus_per_node < 1 || static_cast<long>(f_.nodes) * f_.gpus_per_node < ranks_)
    throw std::invalid_argument("the fabric's nodes do not hold the ranks");
  nodes_ = (ranks_ + f_.gpus_per_node - 1) / f_.gpus_per_node;
  loopback_ = spg::make_loopback(*this);
  for (int r = 0; r < ranks_; r++)
    spg::add_host(*this, r, rank_of_);
  for (int n = 0; n < nodes_; n++)
    for (int j = 0; j < G(); j++)
      nic_.push_back(make(name_of("nic_", n, j), f_.nic_bw, f_.nic_lat));
}

class RailsZone : public NodesZone {
public:
  using NodesZone::NodesZone;
  void build() override;
  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override;

private:
  std::vector<Duplex> port_; /* [node x G + j] */
  std::vector<Duplex> leaf_; /* rail-optimized: [unit x G + j]; by racks: [leaf] */
  std::vector<Duplex> nvls_; /* [node], where the NVSwitch reduces */
  std::vector<int> switch_of_; /* netpoint id -> the node whose switch it is, or -1 */
  int switch_node(const NetPoint* p) const
  {
    return p->id() < switch_of_.size() ? switch_of_[p->id()] : -1;
  }
  int leaf_of(int node, int j) const
  {
    int unit = node / f_.nodes_per_leaf;
    return f_.rail_optimized ? unit * G() + j : unit;
  }
};

void RailsZone::build()
{
  if (f_.nodes_per_leaf < 1 || !(f_.oversub > 0))
    throw std::invalid_argument("a leaf-spine needs nodes per leaf and a positive oversubscription");
  NodesZone::build();
  for (int n = 0; n < nodes_; n++)
    for (int j = 0; j < G(); j++)
      port_.push_back(make(name_of("nvlink_", n, j), f_.gpu_bw, f_.gpu_lat));
  for (int n = 0; f_.nvls_bw > 0 && n < nodes_; n++) {
    nvls_.push_back(make(name_of("nvls_", n), f_.nvls_bw, 0.0));
    simgrid::s4u::Host* h = create_host("nvswitch-" + std::to_string(n), {1e9});
    h->seal();
    unsigned long id = h->get_netpoint()->id();
    if (switch_of_.size() <= id)
      switch_of_.resize(id + 1, -1);
    switch_of_[id] = n;
  }
  int units = (nodes_ + f_.nodes_per_leaf - 1) / f_.nodes_per_leaf;
  /* a leaf's downlinks: those of a whole unit (its cabling) */
  int down    = f_.rail_optimized ? f_.nodes_per_leaf : f_.nodes_per_leaf * G();
  double upbw = down * f_.nic_bw / f_.oversub;
  for (int u = 0; u < units; u++) {
    if (!f_.rail_optimized) {
      leaf_.push_back(make(name_of("leaf_up_", u), upbw, 0.0));
    } else {
      for (int j = 0; j < G(); j++)
        leaf_.push_back(make(name_of("leaf_up_", j, u), upbw, 0.0));
    }
  }
  /* all that crosses a leaf's uplinks, either way, crosses one of its NICs
   * first or next: without oversubscription they never bind */
  for (const Duplex& d : leaf_)
    spg::set_feed(d, down * f_.nic_bw);
}

void RailsZone::get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency)
{
  int sa = switch_node(src), sb = switch_node(dst), a, b;
  if (sa >= 0 || sb >= 0) { /* to or from a node's NVSwitch, from or to a GPU of that node */
    unsigned long end = (sa >= 0 ? dst : src)->id();
    int gpu           = sa >= 0 && sb >= 0 ? -1 : end < rank_of_.size() ? rank_of_[end] : -1;
    if (gpu < 0 || gpu / G() != (sa >= 0 ? sa : sb))
      throw std::invalid_argument("an NVSwitch is reached from the GPUs of its own node only");
    if (sb >= 0) {
      add(into, latency, port_[gpu].up);
      add(into, latency, nvls_[sb].up);
    } else {
      add(into, latency, port_[gpu].down);
    }
    return;
  }
  if (!ends(src, dst, into, latency, &a, &b))
    return;
  int na = a / G(), ja = a % G(), nb = b / G(), jb = b % G();
  if (na == nb) {
    add(into, latency, port_[a].up);
    add(into, latency, port_[b].down);
    return;
  }
  add(into, latency, nic_[a].up);
  int la = leaf_of(na, ja), lb = leaf_of(nb, jb);
  if (la == lb) {
    switches(latency, 1);
  } else {
    add(into, latency, leaf_[la].up);
    add(into, latency, leaf_[lb].down);
    switches(latency, 3);
  }
  add(into, latency, nic_[b].down);
}

class DragonflyZone : public NodesZone {
public:
  using NodesZone::NodesZone;
  void build() override;
  void get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) override;

private:
  int groups_ = 0, per_group_ = 0; /* switches per group */
  std::vector<Duplex> pair_;       /* [node][a][b], a < b */
  std::vector<Duplex> local_;      /* [group x switches per group + switch] */
  std::vector<Duplex> global_;     /* [a][b], a < b */
  /* the switch (within its group) of GPU j of node n */
  int switch_of(int n, int j) const { return (n % f_.nodes_per_group) / f_.nics_per_switch * G() + j; }
  /* the link between ends x != y of an all-to-all of k, the direction from x */
  static Link* between(const std::vector<Duplex>& v, size_t base, int k, int x, int y)
  {
    const Duplex& d = v[base + static_cast<size_t>(x < y ? x : y) * k + (x < y ? y : x)];
    return x < y ? d.up : d.down;
  }
};

void DragonflyZone::build()
{
  if (f_.nics_per_switch < 1 || f_.nodes_per_group < 1 || f_.nodes_per_group % f_.nics_per_switch != 0)
    throw std::invalid_argument("a dragonfly group holds whole chassis");
  NodesZone::build();
  int g = G();
  pair_.resize(static_cast<size_t>(nodes_) * g * g);
  for (int n = 0; n < nodes_; n++)
    for (int x = 0; x < g; x++)
      for (int y = x + 1; y < g; y++)
        pair_[(static_cast<size_t>(n) * g + x) * g + y] = make(name_of("nvlink_", n, x, y), f_.gpu_bw, f_.gpu_lat);
  groups_    = (nodes_ + f_.nodes_per_group - 1) / f_.nodes_per_group;
  per_group_ = f_.nodes_per_group / f_.nics_per_switch * g;
  for (int grp = 0; grp < groups_; grp++)
    for (int x = 0; x < per_group_; x++)
      local_.push_back(make(name_of("local_", grp, x), (per_group_ - 1) * f_.local_bw, 0.0));
  /* a switch's local aggregate carries its own NICs' traffic only */
  for (const Duplex& d : local_)
    spg::set_feed(d, f_.nics_per_switch * f_.nic_bw);
  global_.resize(static_cast<size_t>(groups_) * groups_);
  for (int x = 0; x < groups_; x++)
    for (int y = x + 1; y < groups_; y++)
      global_[static_cast<size_t>(x) * groups_ + y] =
          make(name_of("global_", x, y), f_.links_per_pair * f_.global_bw, 0.0);
}

void DragonflyZone::get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency)
{
  int a, b;
  if (!ends(src, dst, into, latency, &a, &b))
    return;
  int g = G(), na = a / g, ja = a % g, nb = b / g, jb = b % g;
  if (na == nb) {
    add(into, latency, between(pair_, static_cast<size_t>(na) * g * g, g, ja, jb));
    return;
  }
  add(into, latency, nic_[a].up);
  int ga = na / f_.nodes_per_group, gb = nb / f_.nodes_per_group;
  int sa = switch_of(na, ja), sb = switch_of(nb, jb);
  if (ga != gb) {
    add(into, latency, between(global_, 0, groups_, ga, gb));
    switches(latency, 4);
  } else if (sa != sb) {
    add(into, latency, local_[static_cast<size_t>(ga) * per_group_ + sa].up);
    add(into, latency, local_[static_cast<size_t>(gb) * per_group_ + sb].down);
    switches(latency, 2);
  } else {
    switches(latency, 1);
  }
  add(into, latency, nic_[b].down);
}

} // namespace

extern "C" {

/* Builds the nodes and network of f for `ranks` hosts node-0 .. node-(ranks-1)
 * as the root zone (instead of loading a file).  0, or -1 with a message. */
int spg_build_nodes(const sp_fabric* f, int ranks, char* err, size_t errlen)
{
  return spg::build_root_zone(
      [&]() -> NodesZone* {
        if (f->kind == SP_FABRIC_LEAF_SPINE)
          return new RailsZone("nodes", *f, ranks);
        if (f->kind == SP_FABRIC_DRAGONFLY)
          return new DragonflyZone("nodes", *f, ranks);
        throw std::invalid_argument("no fabric to build");
      },
      err, errlen);
}
}
