/* The MPI hello of the system tests (tests/tests/system/mpi.rs): each rank prints its rank,
 * the size of the world and the host name gethostname gives, one line:
 *     hello rank <r> of <n> on <host> pid <pid>
 * With arguments `<seconds> <dir>` each rank also writes that line to <dir>/rank<r> and then
 * sleeps <seconds> (the qdel test records the ranks' pids and hosts this way).
 * Built by the test with mpicc.openmpi and mpicc.mpich; plain C99 and MPI-1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank = 0, size = 0;
    char host[256] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host - 1);
    printf("hello rank %d of %d on %s pid %ld\n", rank, size, host, (long)getpid());
    fflush(stdout);
    if (argc >= 3) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rank%d", argv[2], rank);
        FILE *file = fopen(path, "w");
        if (file == NULL) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(file, "%s %ld\n", host, (long)getpid());
        fclose(file);
        sleep((unsigned)atoi(argv[1]));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
