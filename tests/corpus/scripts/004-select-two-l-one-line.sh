#PBS -l select=1:ncpus=2:mem=12GB -l place=scatter:excl
#PBS -l walltime=0:10:00
#PBS -q short_cpuQ
#PBS -o p2p.csv
#PBS -e p2p.err
mpirun -np 2 ./p2p
