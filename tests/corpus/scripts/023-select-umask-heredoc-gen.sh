#PBS -S /bin/bash -q K3-route -l select=1:ncpus=16:mpiprocs=16 -l walltime=00:20:00
#PBS -N c2s
#PBS -o c2s
#PBS -W umask=027
#PBS -m n
set -o errexit
