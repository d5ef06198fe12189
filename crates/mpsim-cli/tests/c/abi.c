/* Prints the values of mpi.h's constants that a program compiled against another MPI-5
 * standard ABI header would use, one "NAME VALUE" a line, for the test to compare with the
 * standard ABI's values. Needs no MPI run. */
#include <mpi.h>
#include <stdio.h>

#define P(x) printf("%s %ld\n", #x, (long)(x))

int main(void) {
    P(MPI_ANY_SOURCE); P(MPI_ANY_TAG); P(MPI_PROC_NULL); P(MPI_ROOT); P(MPI_UNDEFINED);
    P(MPI_THREAD_SINGLE); P(MPI_THREAD_FUNNELED); P(MPI_THREAD_SERIALIZED); P(MPI_THREAD_MULTIPLE);
    P(MPI_IDENT); P(MPI_CONGRUENT); P(MPI_SIMILAR); P(MPI_UNEQUAL);
    P(MPI_CART); P(MPI_GRAPH); P(MPI_DIST_GRAPH);
    P(MPI_KEYVAL_INVALID); P(MPI_TAG_UB); P(MPI_UNIVERSE_SIZE);
    P(MPI_COMBINER_NAMED); P(MPI_COMBINER_STRUCT); P(MPI_DISTRIBUTE_BLOCK);
    P(MPI_ERR_QUOTA); P(MPI_ERR_UNSUPPORTED_OPERATION); P(MPI_ERR_PROC_ABORTED);
    P(MPI_ERR_SESSION); P(MPI_ERR_ABI); P(MPI_ERR_LASTCODE);
    P((long)MPI_ERRORS_ARE_FATAL); P((long)MPI_ERRORS_ABORT); P((long)MPI_ERRORS_RETURN);
    P((long)MPI_INTEGER); P((long)MPI_LOGICAL); P((long)MPI_CHARACTER); P((long)MPI_INTEGER8);
    P((long)MPI_COMM_WORLD); P((long)MPI_DOUBLE); P((long)MPI_REQUEST_NULL);
    return 0;
}
