/* Datatypes of more separate runs of bytes than a list could hold: a vector of tens of
 * millions of strided blocks is sent and received whole; a vector of a billion blocks of
 * 16 bytes (more bytes than an int counts) answers the size, extent and element queries as
 * MPI says, without a byte of it sent. Vectors with negative strides and of vectors pack their
 * elements in MPI's order. Rank 0 prints "dtlarge: ok". Any number of ranks. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, failures = 0;
#define CHECK(cond, what) do { if (!(cond)) { failures++; fprintf(stderr, "rank %d: %s failed (line %d)\n", rank, what, __LINE__); } } while (0)

/* Packs one element of `t` from `buf` and compares the ints it holds with `want`. */
static void packs_as(MPI_Datatype t, const int *buf, const int *want, int n, const char *what) {
    int got[64] = {0}, pos = 0;
    MPI_Pack(buf, 1, t, got, (int)sizeof got, &pos, MPI_COMM_SELF);
    CHECK(pos == n * (int)sizeof(int), what);
    for (int i = 0; i < n; i++) CHECK(got[i] == want[i], what);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 20,000,000 blocks of one char, every other byte: beyond 2^24 separate runs. */
    const int blocks = 20000000;
    MPI_Datatype every_other;
    CHECK(MPI_Type_vector(blocks, 1, 2, MPI_CHAR, &every_other) == MPI_SUCCESS, "a vector of 2e7 blocks");
    MPI_Type_commit(&every_other);
    int tsize;
    MPI_Aint lb, extent;
    MPI_Type_size(every_other, &tsize);
    MPI_Type_get_extent(every_other, &lb, &extent);
    CHECK(tsize == blocks && lb == 0 && extent == 2 * (MPI_Aint)blocks - 1, "its size and extent");
    if (size > 1 && rank < 2) {
        char *buf = malloc(2 * (size_t)blocks);
        for (size_t i = 0; i < 2 * (size_t)blocks; i++) buf[i] = rank == 0 ? (char)(i * 7) : -1;
        if (rank == 0) {
            MPI_Send(buf, 1, every_other, 1, 0, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            MPI_Recv(buf, 1, every_other, 0, 0, MPI_COMM_WORLD, &st);
            int n = -1;
            MPI_Get_count(&st, MPI_CHAR, &n);
            CHECK(n == blocks, "the count received");
            int bad = 0;
            for (size_t i = 0; i < 2 * (size_t)blocks; i++)
                bad += buf[i] != (i % 2 ? -1 : (char)(i * 7));
            CHECK(bad == 0, "the strided bytes received, the gaps untouched");
        }
        free(buf);
    }
    MPI_Type_free(&every_other);

    /* A billion blocks of four ints, every third block: only queried. */
    MPI_Datatype four, huge;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_vector(INT_MAX / 2, 1, 3, four, &huge);
    CHECK(MPI_Type_commit(&huge) == MPI_SUCCESS, "a vector of a billion blocks");
    MPI_Count size_x, lb_x, extent_x, elems_x;
    MPI_Type_size(huge, &tsize);
    MPI_Type_size_x(huge, &size_x);
    CHECK(tsize == MPI_UNDEFINED && size_x == 16LL * (INT_MAX / 2), "a size beyond an int");
    MPI_Count ub = 3LL * 16 * (INT_MAX / 2 - 1) + 16;
    MPI_Type_get_extent_x(huge, &lb_x, &extent_x);
    CHECK(lb_x == 0 && extent_x == ub, "its extent");
    MPI_Type_get_true_extent_x(huge, &lb_x, &extent_x);
    CHECK(lb_x == 0 && extent_x == ub, "its true extent");
    MPI_Status st;
    MPI_Status_set_elements_x(&st, huge, 4LL * (INT_MAX / 2));
    MPI_Get_elements_x(&st, huge, &elems_x);
    int count = -1;
    MPI_Get_count(&st, huge, &count);
    CHECK(elems_x == 4LL * (INT_MAX / 2) && count == 1, "its elements");
    MPI_Type_free(&huge);

    int ints[32];
    for (int i = 0; i < 32; i++) ints[i] = i;
    /* A negative stride: the blocks in the order of the type map, the first at the buffer. */
    MPI_Datatype back;
    MPI_Type_vector(3, 1, -2, MPI_INT, &back);
    MPI_Type_commit(&back);
    MPI_Type_get_extent(back, &lb, &extent);
    CHECK(lb == -4 * (MPI_Aint)sizeof(int) && extent == 5 * (MPI_Aint)sizeof(int), "negative stride bounds");
    packs_as(back, ints + 4, (int[]){4, 2, 0}, 3, "negative stride packs");
    /* A vector of vectors whose blocks continue the inner stride packs as one long vector;
     * one whose blocks do not, block by block. */
    MPI_Datatype inner, continued, apart;
    MPI_Type_vector(3, 1, 2, MPI_INT, &inner);
    MPI_Type_create_hvector(2, 1, 6 * sizeof(int), inner, &continued);
    MPI_Type_commit(&continued);
    packs_as(continued, ints, (int[]){0, 2, 4, 6, 8, 10}, 6, "vector of vectors, continued");
    MPI_Type_vector(2, 2, 3, inner, &apart);
    MPI_Type_commit(&apart);
    packs_as(apart, ints, (int[]){0, 2, 4, 5, 7, 9, 15, 17, 19, 20, 22, 24}, 12, "vector of vectors, apart");
    MPI_Type_free(&back);
    MPI_Type_free(&inner);
    MPI_Type_free(&continued);
    MPI_Type_free(&apart);
    MPI_Type_free(&four);

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf(all == 0 ? "dtlarge: ok\n" : "dtlarge: %d failures\n", all);
    MPI_Finalize();
    return all != 0;
}
