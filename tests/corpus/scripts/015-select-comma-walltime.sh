#PBS -A OPEN-00-00
#PBS -q qprod
#PBS -l select=1,walltime=02:00:00
TASK=$(sed -n "${PBS_ARRAY_INDEX}p" tasklist)
