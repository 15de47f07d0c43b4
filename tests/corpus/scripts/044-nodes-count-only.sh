#PBS -l nodes=20
#PBS -l walltime=24:00:00
#PBS -l pmem=24gb
#PBS -j oe
#PBS -A open
Rscript analysis.R 20
