#PBS -l walltime=00:01:00
#PBS -j oe
echo from stdin
