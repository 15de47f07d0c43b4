#PBS -q workq
#PBS -d /tmp/
#PBS -l nodes=1:ppn=1,walltime=10:00:00
#PBS -o /tmp/inp.out
#PBS -e /tmp/inp.err
#PBS -N spring_su
cd $1
