/* A 2D Jacobi solver of the kind users have: a Cartesian grid of ranks (Dims_create,
 * Cart_create, Cart_shift), halo exchange by Sendrecv with a vector datatype for the columns,
 * the residual by Allreduce. Prints the residual after the iterations, the same (to 1e-9
 * relative) whatever the number of ranks. Arguments: N (global grid side), iterations. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int n = argc > 1 ? atoi(argv[1]) : 48, iters = argc > 2 ? atoi(argv[2]) : 20;
    int size, rank, dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Comm grid;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &grid);
    MPI_Comm_rank(grid, &rank);
    MPI_Cart_coords(grid, rank, 2, coords);
    int up, down, left, right;
    MPI_Cart_shift(grid, 0, 1, &up, &down);
    MPI_Cart_shift(grid, 1, 1, &left, &right);
    /* This rank's block: rows [r0, r1), columns [c0, c1) of the global grid, plus halos. */
    int r0 = coords[0] * n / dims[0], r1 = (coords[0] + 1) * n / dims[0];
    int c0 = coords[1] * n / dims[1], c1 = (coords[1] + 1) * n / dims[1];
    int rows = r1 - r0, cols = c1 - c0, w = cols + 2;
    double *u = calloc((size_t)(rows + 2) * w, sizeof(double)), *v = calloc((size_t)(rows + 2) * w, sizeof(double));
    for (int i = 1; i <= rows; i++)
        for (int j = 1; j <= cols; j++) {
            int gi = r0 + i - 1, gj = c0 + j - 1;
            u[i * w + j] = (gi == 0 || gj == 0 || gi == n - 1 || gj == n - 1) ? 1.0 : 0.0;
        }
    MPI_Datatype column;
    MPI_Type_vector(rows, 1, w, MPI_DOUBLE, &column);
    MPI_Type_commit(&column);
    double residual = 0;
    for (int it = 0; it < iters; it++) {
        MPI_Sendrecv(&u[1 * w + 1], cols, MPI_DOUBLE, up, 0, &u[(rows + 1) * w + 1], cols, MPI_DOUBLE, down, 0, grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[rows * w + 1], cols, MPI_DOUBLE, down, 1, &u[0 * w + 1], cols, MPI_DOUBLE, up, 1, grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[1 * w + 1], 1, column, left, 2, &u[1 * w + cols + 1], 1, column, right, 2, grid, MPI_STATUS_IGNORE);
        MPI_Sendrecv(&u[1 * w + cols], 1, column, right, 3, &u[1 * w + 0], 1, column, left, 3, grid, MPI_STATUS_IGNORE);
        double local = 0;
        for (int i = 1; i <= rows; i++)
            for (int j = 1; j <= cols; j++) {
                int gi = r0 + i - 1, gj = c0 + j - 1;
                if (gi == 0 || gj == 0 || gi == n - 1 || gj == n - 1) { v[i * w + j] = u[i * w + j]; continue; }
                v[i * w + j] = 0.25 * (u[(i - 1) * w + j] + u[(i + 1) * w + j] + u[i * w + j - 1] + u[i * w + j + 1]);
                double d = v[i * w + j] - u[i * w + j];
                local += d * d;
            }
        double *t = u; u = v; v = t;
        MPI_Allreduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, grid);
    }
    if (rank == 0) printf("jacobi %dx%d on %dx%d ranks: residual %.12e\n", n, n, dims[0], dims[1], sqrt(residual));
    MPI_Type_free(&column);
    MPI_Comm_free(&grid);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
