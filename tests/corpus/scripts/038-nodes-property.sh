#PBS -q cs6210
#PBS -l nodes=4:sixcore
#PBS -l walltime=00:02:00
#PBS -N output_mpi_test0_4nodes
mpirun --hostfile $PBS_NODEFILE -np 4 ./mpi_test0
