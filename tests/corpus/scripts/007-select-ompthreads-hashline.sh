######################################
#!/bin/sh
#
#PBS -l select=1:ncpus=3:mpiprocs=3:ompthreads=1:mem=300GB
#PBS -l walltime=900:00:00
#PBS -j oe
export OMP_NUM_THREADS=1
./a.out
