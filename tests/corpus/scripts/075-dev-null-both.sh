#PBS -N Work01P
#PBS -l nodes=1:ppn=16
#PBS -l walltime=0:20:00
#PBS -q workq@testsrv
#PBS -A 193000-990017
#PBS -o /dev/null
#PBS -e /dev/null
#PBS -r n
#PBS -V
cd $PBS_O_WORKDIR
