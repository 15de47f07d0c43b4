#
# BATCH OPTIONS FOR THE CLUSTER (PBS)
#
#PBS -l nodes=4:ppn=2
#PBS -l walltime=1:00:00
#PBS -j eo -N nometcas
#
