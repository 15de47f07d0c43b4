#PBS -l walltime=0:10:00,nodes=3:ppn=4
#PBS -m abe
#PBS -M someone@gmail.com
#PBS -e ./error.txt
#PBS -o ./outputB.csv
mpirun main
