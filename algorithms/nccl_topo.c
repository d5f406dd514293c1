/* nccl_topo.c - rings, chains and double binary trees of NCCL's dense
 * allreduces (the construction is described in nccl_topo.h). */
#include "nccl_topo.h"

int sp_nccl_default_channels(int G) { return G < 1 ? 1 : G > 8 ? 8 : G; }

static int mod(int a, int m) { return ((a % m) + m) % m; }

int sp_nccl_ring_rank(int P, int G, int c, int p)
{
    int node = p / G, q = p % G, x = c % G;
    int local = node % 2 == 0 ? mod(x + q, G) : mod(x - 1 - q, G);
    (void)P;
    return node * G + local;
}

int sp_nccl_ring_pos(int P, int G, int c, int r)
{
    int node = r / G, g = r % G, x = c % G;
    int q = node % 2 == 0 ? mod(g - x, G) : mod(x - 1 - g, G);
    (void)P;
    return node * G + q;
}

/* tree t places node at a position of the in-order tree, and back; tree 1
 * at odd N holds node i at position i - 1 (NCCL's ncclGetDtree,
 * src/graph/trees.cc: shiftrank = (rank - 1 + nranks) % nranks) */
static int pos_of(int N, int t, int node) { return t == 0 ? node : N % 2 == 0 ? N - 1 - node : (node - 1 + N) % N; }
static int node_at(int N, int t, int pos) { return t == 0 ? pos : N % 2 == 0 ? N - 1 - pos : (pos + 1) % N; }

static int lowbit(int x) { return x & -x; }

/* the parent position of x >= 1: climb the natural parents (x - b or x + b,
 * whichever has lowest bit 2b) past the positions that do not exist; a power
 * of two at or above N only doubles, so the climb ends at the root 0 */
static int parent_pos(int N, int x)
{
    int y = x;
    do {
        if (y != x && (y & (y - 1)) == 0 && y >= N)
            return 0;
        int b = lowbit(y);
        y = (y & (2 * b)) ? y - b : y + b;
    } while (y >= N);
    return y;
}

static int children_pos(int N, int x, int kids[2])
{
    int n = 0;
    if (x == 0) {
        if (N > 1) {
            int r = 1;
            while (r * 2 <= N - 1)
                r *= 2;
            kids[n++] = r;
        }
        return n;
    }
    int b = lowbit(x);
    if (b < 2)
        return 0; /* odd positions are leaves */
    kids[n++] = x - b / 2;
    int y = x + b / 2; /* the right subtree's root: the largest level in (x, N) */
    while (y >= N && lowbit(y) >= 2)
        y -= lowbit(y) / 2;
    if (y < N)
        kids[n++] = y;
    return n;
}

int sp_nccl_tree_parent(int N, int t, int node)
{
    int x = pos_of(N, t, node);
    return x == 0 ? -1 : node_at(N, t, parent_pos(N, x));
}

int sp_nccl_tree_children(int N, int t, int node, int kids[2])
{
    int n = children_pos(N, pos_of(N, t, node), kids);
    for (int i = 0; i < n; i++)
        kids[i] = node_at(N, t, kids[i]);
    return n;
}

sp_nccl_lane sp_nccl_lane_of(int P, int G, int c, int t, int r)
{
    sp_nccl_lane l = {.parent = -1, .nkids = 0};
    int N = P / G, node = r / G, g = r % G;
    int h = (c + t * (G / 2)) % G, q = mod(g - h, G);
    if (q + 1 < G)
        l.kids[l.nkids++] = node * G + (h + q + 1) % G;
    if (q > 0) {
        l.parent = node * G + (h + q - 1) % G;
        return l;
    }
    int up = sp_nccl_tree_parent(N, t, node), kids[2];
    if (up >= 0)
        l.parent = up * G + h;
    int nk = sp_nccl_tree_children(N, t, node, kids);
    for (int i = 0; i < nk; i++)
        l.kids[l.nkids++] = kids[i] * G + h;
    return l;
}

int sp_nccl_tree_depth(int N)
{
    int d = 0;
    for (int r = 1; r * 2 <= N - 1; r *= 2)
        d++;
    return N > 1 ? d + 1 : 0;
}

int sp_nccl_lane_depth(int P, int G, int c, int t, int r)
{
    int N = P / G, node = r / G, h = (c + t * (G / 2)) % G, d = mod(r % G - h, G);
    while ((node = sp_nccl_tree_parent(N, t, node)) >= 0)
        d++;
    return d;
}
