/* Neighbourhood collectives on Cartesian grids (periodic or not, a dimension of size 1 or 2
 * where a rank is its own or a double neighbour) and on distributed graphs (adjacent and
 * general), with what MPI requires of each block. Rank 0 prints "neighbor: ok". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

/* Exchanges on a 2-D grid of `dims` with `periods`: each rank sends 100*rank + j to its j-th
 * neighbour; block i must hold what the i-th neighbour sent this way. */
static void grid(int d0, int d1, int p0, int p1) {
    int dims[2] = {d0, d1}, periods[2] = {p0, p1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    if (cart == MPI_COMM_NULL) return;
    int me, topo;
    MPI_Comm_rank(cart, &me);
    MPI_Topo_test(cart, &topo);
    CHECK(topo == MPI_CART, "Topo_test");
    int out[4], in[4] = {-1, -1, -1, -1}, gath[4] = {-1, -1, -1, -1};
    for (int j = 0; j < 4; j++) out[j] = 100 * me + j;
    MPI_Neighbor_alltoall(out, 1, MPI_INT, in, 1, MPI_INT, cart);
    MPI_Neighbor_allgather(&me, 1, MPI_INT, gath, 1, MPI_INT, cart);
    for (int dim = 0; dim < 2; dim++) {
        int src, dst;
        MPI_Cart_shift(cart, dim, 1, &src, &dst);
        /* Block 2*dim comes from the neighbour at -1 (src), which sent it as its +1 block. */
        int lo = 2 * dim, hi = 2 * dim + 1;
        if (src == MPI_PROC_NULL) CHECK(in[lo] == -1 && gath[lo] == -1, "block from off the edge untouched");
        else CHECK(in[lo] == 100 * src + hi && gath[lo] == src, "block from the -1 neighbour");
        if (dst == MPI_PROC_NULL) CHECK(in[hi] == -1, "block from off the edge untouched");
        else CHECK(in[hi] == 100 * dst + lo && gath[hi] == dst, "block from the +1 neighbour");
    }
    /* alltoallv with two ints per neighbour at reversed displacements. */
    int out2[8], in2[8], counts[4] = {2, 2, 2, 2}, sd[4] = {0, 2, 4, 6}, rd[4] = {6, 4, 2, 0};
    for (int j = 0; j < 8; j++) { out2[j] = 1000 * me + j; in2[j] = -1; }
    MPI_Neighbor_alltoallv(out2, counts, sd, MPI_INT, in2, counts, rd, MPI_INT, cart);
    int src, dst;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    if (src != MPI_PROC_NULL) CHECK(in2[6] == 1000 * src + 2 && in2[7] == 1000 * src + 3, "alltoallv block 0");
    MPI_Comm dup;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &topo);
    CHECK(topo == MPI_CART, "a duplicate keeps the topology");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int d[2] = {0, 0};
    MPI_Dims_create(size, 2, d);
    grid(d[0], d[1], 1, 1);
    grid(d[0], d[1], 0, 1);
    grid(size, 1, 1, 1);      /* a dimension of size 1: a rank is its own neighbour twice */
    if (size >= 2) grid(2, size / 2, 1, 0);

    /* A ring as an adjacent distributed graph: receive from the left, send to the right. */
    int left = (rank + size - 1) % size, right = (rank + 1) % size, topo;
    MPI_Comm ring;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &ring);
    MPI_Topo_test(ring, &topo);
    CHECK(topo == MPI_DIST_GRAPH, "Topo_test of a distributed graph");
    int got = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, &got, 1, MPI_INT, ring);
    CHECK(got == left, "ring neighbour allgather");
    int indeg, outdeg, weighted;
    MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && !weighted, "Dist_graph_neighbors_count");
    MPI_Comm_free(&ring);

    /* The same ring, each rank naming the edge to its right (Dist_graph_create), weighted. */
    int w = 7;
    MPI_Comm ring2;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, (int[]){1}, &right, &w, MPI_INFO_NULL, 0, &ring2);
    int srcs[2], dsts[2], sw[2], dw[2];
    MPI_Dist_graph_neighbors_count(ring2, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && weighted, "Dist_graph_create degrees");
    MPI_Dist_graph_neighbors(ring2, 2, srcs, sw, 2, dsts, dw);
    CHECK(srcs[0] == left && dsts[0] == right && sw[0] == 7 && dw[0] == 7, "Dist_graph_create neighbours");
    int sendv[1] = {rank * 3}, recvv[1] = {-1};
    MPI_Neighbor_alltoall(sendv, 1, MPI_INT, recvv, 1, MPI_INT, ring2);
    CHECK(recvv[0] == left * 3, "Dist_graph_create alltoall");
    MPI_Comm_free(&ring2);

    /* An MPI-1 graph: a ring in index/edges form (both neighbours). */
    if (size >= 3) {
        int *index = malloc(size * sizeof(int)), *edges = malloc(2 * size * sizeof(int));
        for (int r = 0; r < size; r++) {
            index[r] = 2 * (r + 1);
            edges[2 * r] = (r + size - 1) % size;
            edges[2 * r + 1] = (r + 1) % size;
        }
        MPI_Comm g;
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g);
        int nn, ne, nb, nbrs[2];
        MPI_Topo_test(g, &topo);
        MPI_Graphdims_get(g, &nn, &ne);
        MPI_Graph_neighbors_count(g, rank, &nb);
        MPI_Graph_neighbors(g, rank, 2, nbrs);
        CHECK(topo == MPI_GRAPH && nn == size && ne == 2 * size && nb == 2, "Graph_create queries");
        CHECK(nbrs[0] == left && nbrs[1] == right, "Graph_neighbors");
        int two[2] = {-1, -1};
        MPI_Neighbor_allgather(&rank, 1, MPI_INT, two, 1, MPI_INT, g);
        CHECK(two[0] == left && two[1] == right, "neighbour allgather on a graph");
        MPI_Comm_free(&g);
        free(index);
        free(edges);
    }

    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all ? "neighbor: %d failures\n" : "neighbor: ok\n", all);
    MPI_Finalize();
    return all != 0;
}
